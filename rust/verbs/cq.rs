// SPDX-License-Identifier: GPL-2.0

//! Completion queues. A user CQ is a kernel-produced ring in the rxe layout, mapped by user
//! space (librxe polls it without system calls); a kernel CQ keeps completions as `ib::Wc`
//! values that `poll_cq` hands out. Both carry the notification arming state.
//!
//! A completion that does not fit puts the CQ in error for good (IBA, affiliated asynchronous
//! errors: a CQ error, here a CQ overrun): nothing more is written to it, `IB_EVENT_CQ_ERR` is
//! reported once, and every QP that then tries to complete to it goes to ERR (a local work
//! queue catastrophic error). [`Pushed`] says which happened; the caller must act on it.
//!
//! Lock: `state` (interrupt-safe: completions are written and polled from any context) is held
//! while a completion is written, polled, or the ring replaced (resize); nothing allocates under
//! it.

use crate::{
    device::RrxeDevice,
    ib::{
        CompletionNotifier,
        Cq,
        CqAttr,
        CqErrorNotifier,
        Device,
        MmapHandle,
        NotifyFlags,
        QpHandle,
        ResEntry,
        Udata,
        Wc,
        WcOut, //
    },
    kernel_ext::eopnotsupp,
    limits,
    proto::{
        abi::CQE_LEN,
        cqe::{
            self,
            Cqe, //
        },
        ring::RingGeometry, //
    },
    queue::{
        ring_errno,
        KernelProducedRing, //
    },
};
use crate::{
    new_spinlock_irq,
    sync::SpinLockIrq, //
};
use kernel::{
    prelude::*,
    sync::atomic::{
        Atomic,
        Relaxed, //
    },
};

/// Completions of a kernel CQ: a fixed circular buffer, allocated at creation.
struct KernelCqRing {
    slots: KVec<Wc>,
    head: usize,
    len: usize,
}

impl KernelCqRing {
    fn push(&mut self, wc: Wc) -> Result {
        if self.len >= self.slots.len() {
            return Err(EOVERFLOW);
        }
        let i = self
            .head
            .checked_add(self.len)
            .and_then(|i| i.checked_rem(self.slots.len()))
            .ok_or(EOVERFLOW)?;
        *self.slots.get_mut(i).ok_or(EOVERFLOW)? = wc;
        self.len += 1;
        Ok(())
    }

    fn pop(&mut self) -> Option<Wc> {
        if self.len == 0 {
            return None;
        }
        let wc = *self.slots.get(self.head)?;
        self.head = self.head.checked_add(1)?.checked_rem(self.slots.len())?;
        self.len -= 1;
        Some(wc)
    }
}

/// Where a CQ's completions go.
enum CqRing {
    /// Mapped by user space: `struct ib_uverbs_wc` entries.
    User {
        ring: KernelProducedRing,
        /// Dropping it unpublishes the ring.
        _mmap: MmapHandle,
    },
    /// A kernel consumer's, polled through `poll_cq`.
    Kernel(KernelCqRing),
}

impl CqRing {
    fn unread(&self) -> u32 {
        match self {
            Self::User { ring, .. } => ring.unread().unwrap_or(0),
            Self::Kernel(k) => u32::try_from(k.len).unwrap_or(u32::MAX),
        }
    }
}

/// What the ring lock protects.
struct CqState {
    ring: CqRing,
    /// Armed `NOTIFY_*` bits, cleared when an event is raised.
    armed: u32,
    /// A completion did not fit: the CQ takes no more.
    overrun: bool,
}

/// What became of a completion given to a CQ.
#[must_use = "a completion its CQ did not take must move its QP to ERR"]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pushed {
    /// Written, and the completion event raised if the CQ was armed for it.
    Written,
    /// Lost: the CQ overran, now or before, and is in error. The QP that completed must move
    /// to ERR.
    Lost,
}

/// The driver data of a completion queue, initialised in place in the CQ object.
#[pin_data]
pub(crate) struct RrxeCq {
    #[pin]
    state: SpinLockIrq<CqState>,
    /// Runs the consumer's completion handler (never from the context that completes work).
    #[pin]
    notifier: CompletionNotifier,
    /// Reports the overrun to the consumer's event handler (from its own context, as
    /// `notifier`).
    #[pin]
    error_event: CqErrorNotifier,
    /// Capacity of the current ring, reported as `ib_cq.cqe`.
    capacity: Atomic<u32>,
}

/// The geometry of a CQ of at least `cqe` entries (the same rounding for user and kernel CQs).
fn geometry(cqe: u32) -> Result<RingGeometry> {
    RingGeometry::new(cqe, CQE_LEN as u32, limits::MAX_CQE).map_err(ring_errno)
}

/// A user ring of at least `cqe` completions, published, with the `struct rxe_create_cq_resp` /
/// `rxe_resize_cq_resp` (one `struct mminfo`) written.
fn user_ring(cqe: u32, udata: &mut Udata<'_>) -> Result<(CqRing, u32)> {
    let ring = KernelProducedRing::new(geometry(cqe)?)?;
    let mmap = udata.publish(ring.buf().clone())?;
    udata.respond(&mmap.info().to_bytes())?;
    let cap = ring.capacity();
    Ok((CqRing::User { ring, _mmap: mmap }, cap))
}

/// A kernel completion from a CQE and its QP.
fn kernel_wc(c: &Cqe, qp: QpHandle, network: u8) -> Wc {
    Wc {
        wr_id: c.wr_id,
        status: c.status,
        opcode: c.opcode,
        vendor_err: c.vendor_err,
        byte_len: c.byte_len,
        qp,
        ex: c.ex,
        src_qp: c.src_qp,
        wc_flags: c.wc_flags.to_kernel(),
        pkey_index: c.pkey_index,
        sl: c.sl,
        port_num: c.port_num,
        network,
    }
}

impl RrxeCq {
    /// Creates the CQ of `ibv_create_cq`/`ib_alloc_cq`.
    pub(crate) fn create(
        _dev: &Device<RrxeDevice>,
        attr: &CqAttr,
        udata: Option<&mut Udata<'_>>,
    ) -> Result<impl PinInit<Self, Error>> {
        if attr.flags != 0 {
            return Err(eopnotsupp());
        }
        let (ring, capacity) = match udata {
            Some(u) => user_ring(attr.cqe, u)?,
            None => {
                let cap = geometry(attr.cqe)?.capacity();
                let n = usize::try_from(cap).map_err(|_| EINVAL)?;
                let mut slots = KVec::with_capacity(n, GFP_KERNEL)?;
                // Every slot starts as the same placeholder, written over before it is read.
                let blank = kernel_wc(&cqe::flush_cqe(0, 0, None), QpHandle::NONE, 0);
                for _ in 0..n {
                    slots.push(blank, GFP_KERNEL)?;
                }
                (
                    CqRing::Kernel(KernelCqRing {
                        slots,
                        head: 0,
                        len: 0,
                    }),
                    cap,
                )
            }
        };
        Ok(try_pin_init!(Self {
            state <- new_spinlock_irq!(
                CqState {
                    ring,
                    armed: 0,
                    overrun: false,
                },
                "rrxe_cq"
            ),
            notifier <- CompletionNotifier::new(),
            error_event <- CqErrorNotifier::new(),
            capacity: Atomic::new(capacity),
        }? Error))
    }

    /// The number of completions the CQ holds (`ib_cq.cqe`).
    pub(crate) fn capacity(&self) -> u32 {
        self.capacity.load(Relaxed)
    }

    /// The CQ's state for `rdma -dd res show cq`: completions not yet read, the armed notify
    /// bits, and whether it overran.
    pub(crate) fn report(cq: &Cq<RrxeDevice>, e: &mut ResEntry) -> Result {
        let (unread, armed, overrun) = {
            let st = cq.state.lock();
            (st.ring.unread(), st.armed, st.overrun)
        };
        e.u32(c"unread", unread)?;
        e.u32_hex(c"armed", armed)?;
        e.u32(c"overrun", u32::from(overrun))
    }

    /// Replaces a user CQ's ring with one of at least `cqe` entries, keeping unread completions.
    /// Fails with `EINVAL` when they would not fit.
    pub(crate) fn resize(cq: &Cq<RrxeDevice>, cqe: u32, udata: &mut Udata<'_>) -> Result {
        // Build the new ring outside the lock (allocation sleeps), then move entries under it.
        let (mut new, capacity) = user_ring(cqe, udata)?;
        let mut st = cq.state.lock();
        match (&st.ring, &mut new) {
            (CqRing::User { ring: old, .. }, CqRing::User { ring, .. }) => {
                old.move_unread_into(ring)?
            }
            _ => return Err(eopnotsupp()),
        }
        // The old mmap entry is unpublished; an existing mapping of the old ring stays valid
        // until user space unmaps it.
        let old = core::mem::replace(&mut st.ring, new);
        drop(st);
        drop(old);
        cq.capacity.store(capacity, Relaxed);
        Ok(())
    }

    /// Arms the CQ; returns whether completions are already waiting when `REPORT_MISSED_EVENTS`
    /// is set.
    pub(crate) fn req_notify(cq: &Cq<RrxeDevice>, flags: NotifyFlags) -> bool {
        let bits = if flags.solicited() {
            NOTIFY_SOLICITED
        } else if flags.next_comp() {
            NOTIFY_NEXT_COMP
        } else {
            0
        };
        let mut st = cq.state.lock();
        st.armed |= bits;
        flags.report_missed() && st.ring.unread() > 0
    }

    /// Writes a completion of `qp` and raises the completion event if the CQ is armed for it.
    /// Any context; does not sleep. A completion that does not fit (or comes after one that
    /// did not) is [`Pushed::Lost`]: the first puts the CQ in error and reports
    /// `IB_EVENT_CQ_ERR`, from the CQ's error notifier (never from this call).
    pub(crate) fn push(cq: &Cq<RrxeDevice>, cqe: &Cqe, qp: QpHandle, solicited: bool) -> Pushed {
        Self::push_net(cq, cqe, qp, solicited, 0)
    }

    /// As [`Self::push`], for a UD receive whose GRH area holds an IPv4 (`network` 4) or IPv6
    /// (6) header: kernel consumers (the CM) learn the header type from the completion.
    pub(crate) fn push_net(
        cq: &Cq<RrxeDevice>,
        cqe: &Cqe,
        qp: QpHandle,
        solicited: bool,
        network: u8,
    ) -> Pushed {
        let mut st = cq.state.lock();
        if st.overrun {
            return Pushed::Lost;
        }
        let written = match &mut st.ring {
            CqRing::User { ring, .. } => ring.produce(&cqe.to_uverbs()),
            CqRing::Kernel(k) => k.push(kernel_wc(cqe, qp, network)),
        };
        if written.is_err() {
            st.overrun = true;
            drop(st);
            cq.report_error(&cq.error_event);
            return Pushed::Lost;
        }
        let fire =
            st.armed & NOTIFY_NEXT_COMP != 0 || (st.armed & NOTIFY_SOLICITED != 0 && solicited);
        if fire {
            st.armed = 0;
        }
        drop(st);
        if fire {
            cq.notify_completion(&cq.notifier, crate::params::cq_notify_on());
        }
        Pushed::Written
    }

    /// Hands out completions of a kernel CQ until `out` is full or the CQ empty.
    pub(crate) fn poll(cq: &Cq<RrxeDevice>, out: &mut WcOut<'_>) {
        let mut st = cq.state.lock();
        let CqRing::Kernel(k) = &mut st.ring else {
            return;
        };
        while !out.is_full() {
            let Some(wc) = k.pop() else {
                break;
            };
            out.push(&wc);
        }
    }
}

/// Armed for a solicited completion.
const NOTIFY_SOLICITED: u32 = 1;
/// Armed for any completion.
const NOTIFY_NEXT_COMP: u32 = 2;
