// SPDX-License-Identifier: GPL-2.0

//! UDP tunnel sockets shared by the users of one network namespace, and closed when the last
//! user goes or when the namespace goes, whichever comes first (`register_pernet_subsys`).
//!
//! A kernel socket keeps only a passive reference on its namespace (its memory: `sk_alloc` in
//! 7.2), not the namespace alive. A user that outlives the namespace (an RDMA device whose
//! netdev went back to the initial namespace and whose unregistration waits for a process
//! holding it open) would otherwise keep a socket of a dismantled namespace open, and the
//! namespace's memory with it, until that process exits. The namespace's exit closes the
//! sockets instead, as C rxe's `rxe_ns.c` does; the user keeps a share that names no socket.
//!
//! C header: [`include/net/net_namespace.h`](srctree/include/net/net_namespace.h).

use super::{
    NetDevice,
    UdpReceiver,
    UdpTunnel, //
};
use crate::bindings;
use core::sync::atomic::{
    AtomicBool,
    AtomicU64,
    Ordering, //
};
use kernel::{
    error::to_result,
    prelude::*,
    types::Opaque, //
};

/// The sockets on one port of one namespace.
struct Entry {
    /// The namespace's address, as an identity only: never dereferenced here.
    net: usize,
    port: u16,
    /// Shares handed out and not yet dropped.
    users: usize,
    /// Names the entry for its shares (a namespace's address may be reused after it is freed).
    id: u64,
    _v4: UdpTunnel,
    v6: Option<UdpTunnel>,
}

kernel::sync::global_lock! {
    // SAFETY: `NetnsTunnels::register` initialises it once (`TABLE_READY`) before anything
    // else uses it; everything else checks `TABLE_READY` first.
    unsafe(uninit) static TABLE: Mutex<KVec<Entry>> = KVec::new();
}

/// Set once `TABLE` is initialised (never cleared: the static lives as long as the module).
static TABLE_READY: AtomicBool = AtomicBool::new(false);
/// Whether a [`NetnsTunnels`] is registered (at most one: the exit hook serves all shares).
static REGISTERED: AtomicBool = AtomicBool::new(false);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The table, if initialised.
fn table() -> Option<&'static kernel::sync::lock::GlobalLock<TABLE>> {
    TABLE_READY.load(Ordering::Acquire).then_some(&TABLE)
}

/// Removes the entries `f` selects, returning them to be dropped (their sockets released)
/// after the lock: a release waits for an RCU grace period.
fn take_entries(f: impl Fn(&mut Entry) -> bool) -> KVec<Entry> {
    let mut gone = KVec::new();
    let Some(table) = table() else {
        return gone;
    };
    let mut t = table.lock();
    let mut i = 0;
    while i < t.len() {
        if f(&mut t[i]) {
            if let Ok(e) = t.remove(i) {
                // Out of memory: this one is released under the lock instead.
                let _ = gone.push(e, GFP_KERNEL);
            }
        } else {
            i += 1;
        }
    }
    gone
}

/// A user's share of the tunnel sockets on a port of its namespace.
pub(crate) struct NetnsTunnel {
    id: u64,
    ipv6: bool,
}

impl NetnsTunnel {
    /// The sockets on `port` in the namespace of `ndev`: shared with earlier users there, or
    /// opened with `R` as their receiver (IPv4 must open; IPv6 is optional: a kernel or
    /// namespace without IPv6 only loses IPv6). Process context; may sleep.
    pub(crate) fn get<R: UdpReceiver>(ndev: &NetDevice, port: u16) -> Result<Self> {
        let table = table().ok_or(ENODEV)?;
        let net = ndev.net_id();
        let mut t = table.lock();
        if let Some(e) = t.iter_mut().find(|e| e.net == net && e.port == port) {
            e.users += 1;
            return Ok(Self {
                id: e.id,
                ipv6: e.v6.is_some(),
            });
        }
        // Opened under the lock: a concurrent exit of this namespace cannot run (a caller in
        // it, or holding its netdev, keeps it alive), but a concurrent `get` must not open a
        // second pair.
        let v4 = UdpTunnel::open::<R>(ndev, port, false)?;
        let v6 = UdpTunnel::open::<R>(ndev, port, true)
            .inspect_err(|e| pr_info!("no IPv6 UDP tunnel in this namespace: {:?}\n", e))
            .ok();
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let ipv6 = v6.is_some();
        t.push(
            Entry {
                net,
                port,
                users: 1,
                id,
                _v4: v4,
                v6,
            },
            GFP_KERNEL,
        )?;
        Ok(Self { id, ipv6 })
    }

    /// Whether the namespace had an IPv6 socket when the sockets were opened.
    pub(crate) fn has_ipv6(&self) -> bool {
        self.ipv6
    }
}

impl Drop for NetnsTunnel {
    fn drop(&mut self) {
        let id = self.id;
        // Gone already if the namespace exited first.
        drop(take_entries(|e| {
            if e.id != id {
                return false;
            }
            e.users -= 1;
            e.users == 0
        }));
    }
}

/// The namespace exit hook of [`NetnsTunnel`]s, registered while this object lives (one per
/// module).
///
/// # Invariants
///
/// `ops` is registered with `register_pernet_subsys` from construction until drop.
#[pin_data(PinnedDrop)]
pub(crate) struct NetnsTunnels {
    #[pin]
    ops: Opaque<bindings::pernet_operations>,
}

// SAFETY: The operations are only touched by the namespace core under its own lock.
unsafe impl Send for NetnsTunnels {}
// SAFETY: As above; `&NetnsTunnels` exposes nothing.
unsafe impl Sync for NetnsTunnels {}

impl NetnsTunnels {
    /// Registers the exit hook (and sets up the table of sockets). Process context.
    pub(crate) fn register() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            ops <- Opaque::try_ffi_init(|ops: *mut bindings::pernet_operations| {
                if REGISTERED.swap(true, Ordering::AcqRel) {
                    return Err(EBUSY);
                }
                if !TABLE_READY.load(Ordering::Acquire) {
                    // SAFETY: Only here, once: `REGISTERED` admits one caller at a time and
                    // `TABLE_READY` is never cleared once set.
                    unsafe { TABLE.init() };
                    TABLE_READY.store(true, Ordering::Release);
                }
                // SAFETY: `ops` is valid for writes and pinned inside `Self`. All-zero is a
                // valid `pernet_operations` (no callbacks, no per-net storage).
                unsafe {
                    ops.write(core::mem::zeroed());
                    (*ops).exit = Some(Self::exit);
                }
                // SAFETY: `ops` is initialised and pinned; `PinnedDrop` unregisters it.
                let ret = to_result(unsafe { bindings::register_pernet_subsys(ops) });
                if ret.is_err() {
                    REGISTERED.store(false, Ordering::Release);
                }
                ret
            }),
        })
    }

    /// Closes the sockets of a namespace that is going away.
    ///
    /// # Safety
    ///
    /// Called by the namespace core with the namespace being dismantled.
    unsafe extern "C" fn exit(net: *mut bindings::net) {
        let net = net as usize;
        drop(take_entries(|e| e.net == net));
    }
}

#[pinned_drop]
impl PinnedDrop for NetnsTunnels {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: By the type invariant `ops` is registered. Unregistering runs the exit hook
        // for every namespace, so no socket stays open.
        unsafe { bindings::unregister_pernet_subsys(self.ops.get()) };
        // A static is never dropped: free the table's buffer (and anything left) before the
        // module's memory goes.
        if let Some(table) = table() {
            drop(core::mem::replace(&mut *table.lock(), KVec::new()));
        }
        REGISTERED.store(false, Ordering::Release);
    }
}
