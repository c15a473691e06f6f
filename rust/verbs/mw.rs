// SPDX-License-Identifier: GPL-2.0

//! Memory windows (types 1 and 2B): a remote key onto part of a memory region, with its own
//! rights, bound and moved by `IB_WR_BIND_MW` work requests and (type 2) invalidated by
//! `IB_WR_LOCAL_INV` or a SEND with invalidate.
//!
//! An MW's index lies above the MR indices, so an rkey says by itself whether it names a window
//! (`index << 8 | key byte`; a bind changes the key byte). The data path finds windows in the
//! device's MW table. A binding names its MR by key, never holds it: instead it counts itself
//! in the MR, which then refuses deregistration while bound (IBA o10-36; C rxe does the same).

use crate::{
    device::RrxeDevice,
    ib::{
        Access,
        AccessFlags,
        Device,
        Mr,
        MwType, //
    },
    index::PoolIndex,
    kernel_ext::random_u8,
    table::SparseTable,
};
use crate::{
    new_spinlock_irq,
    sync::SpinLockIrq, //
};
use kernel::{
    prelude::*,
    sync::{
        atomic::{
            Atomic,
            Relaxed, //
        },
        Arc,
    },
};

/// The window rights a bind may grant.
const WINDOW_ACCESS: AccessFlags = AccessFlags::of(&[
    Access::RemoteRead,
    Access::RemoteWrite,
    Access::RemoteAtomic,
    Access::ZeroBased,
    Access::FlushGlobal,
]);

/// The rights a bind request may name: the window's, plus the local rights of a region and the
/// optional hints (`IB_ACCESS_OPTIONAL`: relaxed ordering, which a driver may ignore).
/// rdma-core's callers bind with the rights they registered the region with (its test suite
/// binds with `REMOTE_WRITE | LOCAL_WRITE`) and C rxe accepts every right a region may have
/// (`RXE_ACCESS_SUPPORTED_MW`). Local rights mean nothing for a window, which only remote
/// requests use: they are accepted and dropped, never recorded.
const BIND_ACCESS: AccessFlags = WINDOW_ACCESS
    .with(AccessFlags::of(&[Access::LocalWrite, Access::MwBind]))
    .with(AccessFlags::OPTIONAL);

/// The table the data path finds windows in, by index.
pub(crate) type MwTable = SparseTable<Arc<MwState>>;

/// Identifies a QP for the type 2 windows bound to it. Held by the QP and by its windows, so
/// the identity outlives the QP and is never reused while a window still names it.
pub(crate) type QpToken = Arc<()>;

/// What a window is bound to.
struct Binding {
    /// The key of the MR the window lies in.
    mr_key: u32,
    /// The MR's count of bound windows.
    mr_binds: Arc<Atomic<u32>>,
    /// The first MR address of the window.
    addr: u64,
    length: u64,
    /// The window's rights.
    access: AccessFlags,
    /// The QP a type 2 window is bound to.
    qp: Option<QpToken>,
}

impl Drop for Binding {
    fn drop(&mut self) {
        self.mr_binds.fetch_sub(1, Relaxed);
    }
}

/// The mutable part of a window.
struct MwInner {
    /// The current rkey.
    rkey: u32,
    binding: Option<Binding>,
}

/// A window as the data path sees it.
#[pin_data]
pub(crate) struct MwState {
    mw_type: MwType,
    /// Protection domain identity.
    pd: usize,
    #[pin]
    inner: SpinLockIrq<MwInner>,
}

/// A bind work request (`wr.mw` of the send WQE).
pub(crate) struct BindRequest {
    /// The first MR address of the window.
    pub(crate) addr: u64,
    pub(crate) length: u64,
    /// The window's current rkey, as the consumer knows it.
    pub(crate) mw_rkey: u32,
    /// The rkey after the bind: only its low byte is taken.
    pub(crate) new_rkey: u32,
    pub(crate) access: AccessFlags,
}

/// Where a remote access through a window lands.
pub(crate) struct WindowTarget {
    /// The key of the MR holding the window.
    pub(crate) mr_key: u32,
    /// That MR's count of bound windows: its identity (a region registered later under the
    /// same key has its own).
    pub(crate) mr_binds: Arc<Atomic<u32>>,
    /// The MR address of the first byte accessed.
    pub(crate) va: u64,
}

impl MwState {
    /// Binds the window to `[req.addr, req.addr + req.length)` of `mr`, for a bind posted on a
    /// QP of PD `pd` identified by `qp`. `EINVAL` when any rule of IBA 10.6.7 is broken; the
    /// window is then unchanged.
    pub(crate) fn bind(
        &self,
        req: &BindRequest,
        mr: Option<&Mr<RrxeDevice>>,
        pd: usize,
        qp: &QpToken,
    ) -> Result {
        if self.pd != pd || req.access.outside(BIND_ACCESS) {
            return Err(EINVAL);
        }
        let access = req.access & WINDOW_ACCESS;
        if self.mw_type == MwType::Type1 && access.contains(Access::ZeroBased) {
            return Err(EINVAL);
        }
        // A zero-length bind names no region (it unbinds a type 1 window).
        let target = match mr {
            Some(mr) if req.length != 0 => {
                if mr.pd_id() != pd
                    || !mr.access().contains(Access::MwBind)
                    || !mr.can_hold_window(req.addr, req.length)
                {
                    return Err(EINVAL);
                }
                // Remote writes and atomics through a window need the MR's local write right.
                if access.contains_any(Access::RemoteWrite | Access::RemoteAtomic)
                    && !mr.access().contains(Access::LocalWrite)
                {
                    return Err(EINVAL);
                }
                Some((mr.key(), mr.binds().clone()))
            }
            None if req.length != 0 => return Err(EINVAL),
            _ => None,
        };
        let mut inner = self.inner.lock();
        if inner.rkey != req.mw_rkey {
            return Err(EINVAL);
        }
        // A type 2 window must be invalidated before it is bound again.
        if self.mw_type == MwType::Type2 && inner.binding.is_some() {
            return Err(EINVAL);
        }
        inner.rkey = (inner.rkey & !0xff) | (req.new_rkey & 0xff);
        let old = core::mem::replace(
            &mut inner.binding,
            target.map(|(mr_key, mr_binds)| {
                mr_binds.fetch_add(1, Relaxed);
                Binding {
                    mr_key,
                    mr_binds,
                    addr: req.addr,
                    length: req.length,
                    access,
                    qp: (self.mw_type == MwType::Type2).then(|| qp.clone()),
                }
            }),
        );
        drop(inner);
        drop(old);
        Ok(())
    }

    /// Invalidates a type 2 window by `rkey` (`IB_WR_LOCAL_INV`, or a SEND with invalidate
    /// arriving on the QP it is bound to when `on` is given). `EINVAL` for type 1 windows, a
    /// stale key or another QP's window.
    pub(crate) fn invalidate(&self, rkey: u32, pd: usize, on: Option<&QpToken>) -> Result {
        if self.mw_type != MwType::Type2 || self.pd != pd {
            return Err(EINVAL);
        }
        let mut inner = self.inner.lock();
        if inner.rkey != rkey {
            return Err(EINVAL);
        }
        let Some(b) = inner.binding.as_ref() else {
            return Err(EINVAL);
        };
        if let (Some(on), Some(bound)) = (on, b.qp.as_ref()) {
            if !Arc::ptr_eq(on, bound) {
                return Err(EINVAL);
            }
        }
        let old = inner.binding.take();
        drop(inner);
        drop(old);
        Ok(())
    }

    /// Checks a remote access of `len` bytes at window address `va` needing every right in
    /// `access`, from QP `qp` of PD `pd` with key `rkey`; returns where in which MR it lands.
    pub(crate) fn resolve(
        &self,
        rkey: u32,
        pd: usize,
        qp: &QpToken,
        access: AccessFlags,
        va: u64,
        len: u64,
    ) -> Option<WindowTarget> {
        if self.pd != pd {
            return None;
        }
        let inner = self.inner.lock();
        let b = inner.binding.as_ref()?;
        if inner.rkey != rkey || !b.access.contains_all(access) {
            return None;
        }
        if let Some(bound) = b.qp.as_ref() {
            if !Arc::ptr_eq(bound, qp) {
                return None;
            }
        }
        let off = if b.access.contains(Access::ZeroBased) {
            va
        } else {
            va.checked_sub(b.addr)?
        };
        if off.checked_add(len)? > b.length {
            return None;
        }
        Some(WindowTarget {
            mr_key: b.mr_key,
            mr_binds: b.mr_binds.clone(),
            va: b.addr.checked_add(off)?,
        })
    }
}

/// The driver data of a memory window.
pub(crate) struct RrxeMw {
    /// The MW index, returned to the device's pool on dealloc.
    index: PoolIndex,
    state: Arc<MwState>,
    table: Arc<MwTable>,
}

impl RrxeMw {
    /// Allocates a window in PD `pd`; returns it with its initial rkey. A type 1 window is
    /// usable (unbound) at once; a type 2 window waits for its first bind.
    pub(crate) fn alloc(
        dev: &Device<RrxeDevice>,
        mw_type: MwType,
        pd: usize,
    ) -> Result<(Self, u32)> {
        let index = PoolIndex::alloc(dev.mw_pool())?;
        let rkey = index.get() << 8 | u32::from(random_u8());
        let state = Arc::pin_init(
            try_pin_init!(MwState {
                mw_type,
                pd,
                inner <- new_spinlock_irq!(MwInner { rkey, binding: None }, "rrxe_mw"),
            }? Error),
            GFP_KERNEL,
        )?;
        let table = dev.mw_table().clone();
        table.insert(index.get(), state.clone(), GFP_KERNEL)?;
        Ok((
            Self {
                index,
                state,
                table,
            },
            rkey,
        ))
    }
}

impl Drop for RrxeMw {
    fn drop(&mut self) {
        drop(self.table.remove(self.index.get()));
        // Deallocation unbinds: the MR may be deregistered again.
        let old = self.state.inner.lock().binding.take();
        drop(old);
    }
}
