// SPDX-License-Identifier: GPL-2.0

//! Completion queues (`struct ib_cq`) with the driver's data as a Rust tail.
//!
//! ib_core allocates `size_ib_cq` bytes (our [`Cq<T>`]), calls `create_cq`, where the driver
//! data is written in place, and frees the memory after `destroy_cq` dropped it. ib_core refuses
//! to destroy a CQ that QPs still use.

use super::{
    object::{
        CqKind,
        Obj, //
    },
    DeviceOps, //
};
use crate::bindings;
use core::{
    ptr::NonNull,
    sync::atomic::{
        AtomicPtr,
        Ordering::{
            Acquire,
            Release, //
        },
    },
};
use kernel::{
    prelude::*,
    types::Opaque, //
};

/// A completion queue: the C `struct ib_cq` at offset 0, then the driver data.
pub(crate) type Cq<T> = Obj<T, CqKind>;

impl<T: DeviceOps> Obj<T, CqKind> {
    /// Raises a completion event: the consumer's completion handler (an event on the uverbs
    /// completion channel for user CQs) runs from `n`, this CQ's notifier, soon after. Any
    /// context. Never calls the handler itself: the caller may be inside one of the consumer's
    /// own verb calls (`post_send` running a pass inline, a flush in `modify_qp`), which must not
    /// call back (`Documentation/infiniband/core_locking.rst`).
    ///
    /// The notifier runs on the unbound workqueue, where the scheduler places it (an idle CPU
    /// if there is one), not on this CPU's BH workqueue: queued from a task (a kernel
    /// consumer's `post_send`, the pipeline running inline), BH work wakes this CPU's
    /// ksoftirqd, which preempts the task, and everything the handler starts (the consumer's
    /// `ib_comp_wq` work, `irq_poll`) then runs on this CPU too while the others idle.
    pub(crate) fn notify_completion(&self, n: &CompletionNotifier) {
        n.cq.store(self.as_raw(), Release);
        // SAFETY: The work is initialised; the notifier cancels it before it goes away.
        unsafe { bindings::rrxe_helper_work_queue_unbound(n.work.get()) };
    }
}

/// A CQ's completion notifier: a work item on the unbound workqueue that calls the consumer's
/// completion handler (with BHs disabled, so the softirq work it schedules runs when it
/// returns). One per CQ, so the handler never runs on two CPUs at once for one CQ
/// (the workqueue does not run a work item concurrently with itself), and it runs outside every
/// verb call of the consumer. The CQ's driver data holds it; dropping it cancels the work.
#[pin_data(PinnedDrop)]
pub(crate) struct CompletionNotifier {
    #[pin]
    work: Opaque<bindings::work_struct>,
    /// The CQ to notify (set by [`Obj::notify_completion`] before each queueing).
    cq: AtomicPtr<bindings::ib_cq>,
}

// SAFETY: The work item is used through the workqueue's own synchronisation; `cq` is atomic.
unsafe impl Send for CompletionNotifier {}
// SAFETY: As above.
unsafe impl Sync for CompletionNotifier {}

/// The notifier's work function.
///
/// # Safety
///
/// Called by the workqueue with the `work` field of a live `CompletionNotifier`.
unsafe extern "C" fn notify_work(w: *mut bindings::work_struct) {
    // SAFETY: `w` is the `work` field of a live notifier: its drop cancels the work (waiting
    // for this function) before the memory goes.
    let this = unsafe { &*kernel::container_of!(Opaque::cast_from(w), CompletionNotifier, work) };
    let cq = this.cq.load(Acquire);
    if !cq.is_null() {
        // SAFETY: `cq` was stored by `notify_completion` of the CQ that owns this notifier,
        // whose C structure lives as long as its driver data (and so this notifier);
        // `comp_handler` and `cq_context` are set by the core before the CQ is used.
        unsafe { bindings::rrxe_helper_cq_comp_handler(cq) };
    }
}

impl CompletionNotifier {
    /// A notifier with nothing queued.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // Process-context work: the lockdep class of the sleeping kind, not the BH one.
            // SAFETY: `INIT_WORK` initialises the work in place.
            work <- Opaque::ffi_init(|w| unsafe {
                bindings::rrxe_helper_work_init_sleeping(w, Some(notify_work))
            }),
            cq: AtomicPtr::new(core::ptr::null_mut()),
        })
    }
}

#[pinned_drop]
impl PinnedDrop for CompletionNotifier {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: The work is initialised; after this it neither runs nor is queued (the CQ is
        // being destroyed: nothing notifies it any more).
        unsafe { bindings::rrxe_helper_work_cancel_sync(self.work.get()) };
    }
}

/// A CQ a QP was created with.
///
/// ib_core counts the QP as a user of the CQ (`usecnt`) and refuses to destroy the CQ before the
/// QP, so the reference is valid as long as the QP's driver data lives: store it only there.
///
/// # Invariants
///
/// Points to a created `Cq<T>` that outlives the QP holding this reference.
pub(crate) struct CqRef<T: DeviceOps>(NonNull<Cq<T>>);

// SAFETY: `Cq<T>` is shared between contexts through `&`; `T::Cq: Send + Sync`.
unsafe impl<T: DeviceOps> Send for CqRef<T> {}
// SAFETY: As above.
unsafe impl<T: DeviceOps> Sync for CqRef<T> {}

impl<T: DeviceOps> CqRef<T> {
    /// A reference to the CQ of a QP being created.
    ///
    /// # Safety
    ///
    /// `cq` is NULL or a created CQ of a `Device<T>` that ib_core keeps alive until the QP being
    /// created is destroyed.
    pub(super) unsafe fn new(cq: *mut bindings::ib_cq) -> Option<Self> {
        NonNull::new(cq.cast::<Cq<T>>()).map(Self)
    }
}

impl<T: DeviceOps> core::ops::Deref for CqRef<T> {
    type Target = Cq<T>;

    fn deref(&self) -> &Cq<T> {
        // SAFETY: By the type invariant the CQ is alive.
        unsafe { self.0.as_ref() }
    }
}

/// The attributes of `ibv_create_cq`/`ib_alloc_cq`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CqAttr {
    /// Minimum number of entries requested.
    pub(crate) cqe: u32,
    /// `IB_UVERBS_CQ_FLAGS_*` creation flags; rxe supports none.
    pub(crate) flags: u32,
}

/// Which completions trigger the next event (`enum ib_cq_notify_flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NotifyFlags(u32);

impl NotifyFlags {
    /// From the raw value.
    pub(super) fn from_raw(raw: u32) -> Self {
        Self(raw)
    }

    /// Arm for the next solicited completion only.
    pub(crate) fn solicited(self) -> bool {
        self.0 & bindings::ib_cq_notify_flags_IB_CQ_SOLICITED_MASK
            == bindings::ib_cq_notify_flags_IB_CQ_SOLICITED
    }

    /// Arm for the next completion of any kind.
    pub(crate) fn next_comp(self) -> bool {
        self.0 & bindings::ib_cq_notify_flags_IB_CQ_NEXT_COMP != 0
    }

    /// Report whether completions arrived before arming (return 1 from `req_notify_cq`).
    pub(crate) fn report_missed(self) -> bool {
        self.0 & bindings::ib_cq_notify_flags_IB_CQ_REPORT_MISSED_EVENTS != 0
    }
}
