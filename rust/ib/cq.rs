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
    marker::PhantomData,
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
    ///
    /// `on` says where: [`NotifyOn::Idle`] as above, or [`NotifyOn::Here`], a work item of
    /// the high-priority workqueue of this CPU (no wakeup of another CPU, at the price of the
    /// handler's work staying here).
    pub(crate) fn notify_completion(&self, n: &CompletionNotifier, on: NotifyOn) {
        n.queue(self.as_raw(), on);
    }

    /// Reports `IB_EVENT_CQ_ERR` (the CQ overran: an affiliated asynchronous error) to the
    /// CQ's consumer: its event handler (the async event file for user CQs) runs from `n`,
    /// this CQ's error notifier, soon after, for the reasons of [`Self::notify_completion`]:
    /// any context, never from inside the caller (which may hold locks the handler takes, or
    /// be one of the consumer's verb calls).
    pub(crate) fn report_error(&self, n: &CqErrorNotifier) {
        n.queue(self.as_raw(), NotifyOn::Idle);
    }
}

/// Where a CQ's handler runs ([`Obj::notify_completion`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NotifyOn {
    /// A work item of the unbound workqueue: the scheduler places it, on an idle CPU if there
    /// is one.
    Idle,
    /// A work item of this CPU's high-priority workqueue.
    Here,
}

/// What a [`CqNotifier`] calls.
pub(crate) trait CqCallback {
    /// Calls the consumer's handler of `cq`.
    ///
    /// # Safety
    ///
    /// `cq` is a created CQ, alive for the duration of the call.
    unsafe fn call(cq: *mut bindings::ib_cq);
}

/// Calls the consumer's completion handler (`ib_cq.comp_handler`).
pub(crate) enum CompletionHandler {}

impl CqCallback for CompletionHandler {
    unsafe fn call(cq: *mut bindings::ib_cq) {
        // SAFETY: `cq` is a created CQ (the caller's guarantee): `comp_handler` and
        // `cq_context` are set by the core before the CQ is used.
        unsafe { bindings::rrxe_helper_cq_comp_handler(cq) };
    }
}

/// Calls the consumer's event handler (`ib_cq.event_handler`) with `IB_EVENT_CQ_ERR`.
pub(crate) enum ErrorEventHandler {}

impl CqCallback for ErrorEventHandler {
    unsafe fn call(cq: *mut bindings::ib_cq) {
        let mut ev = bindings::ib_event {
            device: core::ptr::null_mut(),
            event: bindings::ib_event_type_IB_EVENT_CQ_ERR,
            ..Default::default()
        };
        // SAFETY: `cq` is a created CQ (the caller's guarantee): `device`, `event_handler` and
        // `cq_context` are set by the core before it is used and stay valid until it is
        // destroyed. A kernel CQ of `ib_alloc_cq` has no event handler.
        unsafe {
            ev.device = (*cq).device;
            ev.element.cq = cq;
            if let Some(handler) = (*cq).event_handler {
                handler(&mut ev, (*cq).cq_context);
            }
        }
    }
}

/// A CQ's completion notifier.
pub(crate) type CompletionNotifier = CqNotifier<CompletionHandler>;

/// A CQ's error notifier (`IB_EVENT_CQ_ERR`).
pub(crate) type CqErrorNotifier = CqNotifier<ErrorEventHandler>;

/// Calls one of a CQ's consumer handlers (`K`): a work item on the unbound workqueue that
/// calls it (with BHs disabled, so the softirq work it schedules runs when it returns). One per
/// CQ and handler, so the handler never runs on two CPUs at once for one CQ (the workqueue does
/// not run a work item concurrently with itself), and it runs outside every verb call of the
/// consumer and every lock of the driver. The CQ's driver data holds it; dropping it cancels
/// the work.
#[pin_data(PinnedDrop)]
pub(crate) struct CqNotifier<K: CqCallback> {
    #[pin]
    work: Opaque<bindings::work_struct>,
    /// The CQ to notify (set by [`Self::queue`] before each queueing).
    cq: AtomicPtr<bindings::ib_cq>,
    _handler: PhantomData<K>,
}

// SAFETY: The work item is used through the workqueue's own synchronisation; `cq` is atomic.
unsafe impl<K: CqCallback> Send for CqNotifier<K> {}
// SAFETY: As above.
unsafe impl<K: CqCallback> Sync for CqNotifier<K> {}

/// The notifier's work function.
///
/// # Safety
///
/// Called by the workqueue with the `work` field of a live `CqNotifier<K>`.
unsafe extern "C" fn notify_work<K: CqCallback>(w: *mut bindings::work_struct) {
    // SAFETY: `w` is the `work` field of a live notifier: its drop cancels the work (waiting
    // for this function) before the memory goes.
    let this = unsafe { &*kernel::container_of!(Opaque::cast_from(w), CqNotifier<K>, work) };
    let cq = this.cq.load(Acquire);
    if !cq.is_null() {
        // SAFETY: `cq` was stored by `queue` from the CQ that owns this notifier, whose C
        // structure lives as long as its driver data (and so this notifier).
        unsafe { K::call(cq) };
    }
}

impl<K: CqCallback> CqNotifier<K> {
    /// A notifier with nothing queued.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // Process-context work: the lockdep class of the sleeping kind, not the BH one.
            // SAFETY: `INIT_WORK` initialises the work in place.
            work <- Opaque::ffi_init(|w| unsafe {
                bindings::rrxe_helper_work_init_sleeping(w, Some(notify_work::<K>))
            }),
            cq: AtomicPtr::new(core::ptr::null_mut()),
            _handler: PhantomData,
        })
    }

    /// Queues the call for `cq`, the CQ whose driver data holds this notifier, where `on`
    /// says (a no-op while one is queued and has not started).
    fn queue(&self, cq: *mut bindings::ib_cq, on: NotifyOn) {
        self.cq.store(cq, Release);
        // SAFETY: The work is initialised; the notifier cancels it before it goes away.
        unsafe {
            match on {
                NotifyOn::Idle => bindings::rrxe_helper_work_queue_unbound(self.work.get()),
                NotifyOn::Here => bindings::rrxe_helper_work_queue_here(self.work.get()),
            }
        };
    }
}

#[pinned_drop]
impl<K: CqCallback> PinnedDrop for CqNotifier<K> {
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
