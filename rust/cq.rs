// SPDX-License-Identifier: GPL-2.0

//! Completion queues: a kernel-produced ring in the rxe layout, mapped by user space (librxe
//! polls it without system calls), and the notification arming state.
//!
//! Lock: `state` is held while the ring is replaced (resize) and, with the completer, while a
//! completion is written. TODO[IRQLOCK]: the completer produces from softirq context; the lock
//! must become irq-safe when it lands.

use crate::{
    device::RrxeDevice,
    ib::{
        Cq,
        CqAttr,
        Device,
        MmapHandle,
        NotifyFlags,
        Udata, //
    },
    kernel_ext::eopnotsupp,
    limits,
    proto::{
        cqe::CQE_LEN,
        ring::{
            RingGeometry,
            UVERBS_WC_SIZE, //
        },
    },
    queue::{
        ring_errno,
        KernelProducedRing, //
    },
};
use kernel::{
    new_spinlock,
    prelude::*,
    sync::{
        atomic::{
            Atomic,
            Relaxed, //
        },
        SpinLock,
    },
};

/// What the ring lock protects.
struct CqState {
    ring: KernelProducedRing,
    /// The ring's mmap entry, for user CQs; dropping it unpublishes the ring.
    _mmap: Option<MmapHandle>,
    /// Armed `NOTIFY_*` bits, cleared when an event is raised.
    armed: u32,
}

/// The driver data of a completion queue.
pub(crate) struct RrxeCq {
    state: Pin<KBox<SpinLock<CqState>>>,
    /// Capacity of the current ring, reported as `ib_cq.cqe`.
    capacity: Atomic<u32>,
}

/// Allocates a ring of at least `cqe` completions and, for user CQs, publishes it and writes the
/// `struct rxe_create_cq_resp` / `rxe_resize_cq_resp` (one `struct mminfo`).
fn new_ring(
    cqe: u32,
    udata: Option<&mut Udata<'_>>,
) -> Result<(KernelProducedRing, Option<MmapHandle>)> {
    let geo = RingGeometry::new(cqe, UVERBS_WC_SIZE, limits::MAX_CQE).map_err(ring_errno)?;
    let ring = KernelProducedRing::new(geo)?;
    let Some(udata) = udata else {
        return Ok((ring, None));
    };
    let handle = udata.publish(ring.buf().clone())?;
    udata.respond(&handle.info().to_bytes())?;
    Ok((ring, Some(handle)))
}

impl RrxeCq {
    /// Creates the CQ of `ibv_create_cq`/`ib_alloc_cq`.
    pub(crate) fn create(
        _dev: &Device<RrxeDevice>,
        attr: &CqAttr,
        udata: Option<&mut Udata<'_>>,
    ) -> Result<Self> {
        if attr.flags != 0 {
            return Err(eopnotsupp());
        }
        let (ring, mmap) = new_ring(attr.cqe, udata)?;
        let capacity = ring.capacity();
        Ok(Self {
            state: KBox::pin_init(
                new_spinlock!(
                    CqState {
                        ring,
                        _mmap: mmap,
                        armed: 0
                    },
                    "rrxe_cq"
                ),
                GFP_KERNEL,
            )?,
            capacity: Atomic::new(capacity),
        })
    }

    /// The number of completions the CQ holds (`ib_cq.cqe`).
    pub(crate) fn capacity(&self) -> u32 {
        self.capacity.load(Relaxed)
    }

    /// Replaces the ring with one of at least `cqe` entries, keeping unread completions. Fails
    /// with `EINVAL` when they would not fit.
    pub(crate) fn resize(cq: &Cq<RrxeDevice>, cqe: u32, udata: &mut Udata<'_>) -> Result {
        // Build the new ring outside the lock (allocation sleeps), then move entries under it.
        let (mut ring, mmap) = new_ring(cqe, Some(udata))?;
        let mut st = cq.state.lock();
        st.ring.move_unread_into(&mut ring)?;
        let capacity = ring.capacity();
        // The old mmap entry is unpublished; an existing mapping of the old ring stays valid
        // until user space unmaps it.
        let armed = st.armed;
        let old = core::mem::replace(
            &mut *st,
            CqState {
                ring,
                _mmap: mmap,
                armed,
            },
        );
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
        flags.report_missed() && st.ring.unread().is_ok_and(|n| n > 0)
    }
}

impl RrxeCq {
    /// Writes a completion (`struct ib_uverbs_wc`) and raises the completion event if the CQ is
    /// armed for it. Any context; does not sleep.
    pub(crate) fn push(cq: &Cq<RrxeDevice>, cqe: &[u8; CQE_LEN], solicited: bool) -> Result {
        let mut st = cq.state.lock();
        st.ring.produce(cqe)?;
        let fire =
            st.armed & NOTIFY_NEXT_COMP != 0 || (st.armed & NOTIFY_SOLICITED != 0 && solicited);
        if fire {
            st.armed = 0;
        }
        drop(st);
        if fire {
            cq.notify_completion();
        }
        Ok(())
    }
}

/// Armed for a solicited completion.
const NOTIFY_SOLICITED: u32 = 1;
/// Armed for any completion.
const NOTIFY_NEXT_COMP: u32 = 2;
