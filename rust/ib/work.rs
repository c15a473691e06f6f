// SPDX-License-Identifier: GPL-2.0

//! A work item on the BH workqueue (`system_bh_wq`: softirq context, soon after it is queued)
//! that holds an [`ObjRef`] to its target while queued, as [`super::RefTimer`] does for timers.
//! It is what a context that may not do the work itself (interrupts disabled, or a run that used
//! up its budget) hands it to, without waiting a timer tick.
//!
//! C header: [`include/linux/workqueue.h`](srctree/include/linux/workqueue.h).

use super::live::{
    Counted,
    ObjRef,
    PendingRef, //
};
use crate::{
    bindings,
    new_spinlock_irq,
    sync::SpinLockIrq, //
};
use kernel::{
    prelude::*,
    types::Opaque, //
};

/// What a [`RefWork`] runs.
pub(crate) trait WorkTarget: Counted + Sized + 'static {
    /// The work runs (softirq context).
    fn work_run(this: ObjRef<Self>);
}

/// A work item queued with a reference to its target. The workqueue never runs it on two CPUs
/// at once; queued again while it runs, it runs once more afterwards.
#[pin_data(PinnedDrop)]
pub(crate) struct RefWork<O: WorkTarget> {
    #[pin]
    work: Opaque<bindings::work_struct>,
    #[pin]
    queued: SpinLockIrq<PendingRef<O>>,
}

// SAFETY: The work item is used through the workqueue's own synchronisation; `queued` is
// locked.
unsafe impl<O: WorkTarget> Send for RefWork<O> {}
// SAFETY: As above.
unsafe impl<O: WorkTarget> Sync for RefWork<O> {}

/// The work function.
///
/// # Safety
///
/// Called by the workqueue with the `work` field of a live `RefWork<O>`.
unsafe extern "C" fn run<O: WorkTarget>(w: *mut bindings::work_struct) {
    // SAFETY: `w` is the `work` field of a live `RefWork<O>`: its drop and `close` cancel the
    // work (waiting for this function) before the memory goes.
    let this = unsafe { &*kernel::container_of!(Opaque::cast_from(w), RefWork<O>, work) };
    let target = this.queued.lock().take();
    if let Some(target) = target {
        O::work_run(target);
    }
}

impl<O: WorkTarget> RefWork<O> {
    /// A work item with nothing queued.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `INIT_WORK` initialises the work in place.
            work <- Opaque::ffi_init(|w| unsafe { bindings::rrxe_helper_work_init(w, Some(run::<O>)) }),
            queued <- new_spinlock_irq!(PendingRef::new(), "rrxe_work"),
        })
    }

    /// Queues the work for `target`. Any context. Does nothing once closed.
    pub(crate) fn queue(&self, target: &ObjRef<O>) {
        let mut q = self.queued.lock();
        if !q.hold(target) {
            return;
        }
        // SAFETY: The work is initialised; queued under the lock, so `close` (which sets
        // `closed` under it first) cancels every queueing that happened.
        unsafe { bindings::rrxe_helper_work_queue_bh(self.work.get()) };
    }

    /// Stops the work for good (its target is going away): later [`Self::queue`] calls do
    /// nothing; waits for a running instance and drops the reference. Process context; not
    /// from the work itself.
    pub(crate) fn close(&self) {
        let r = self.queued.lock().close();
        // SAFETY: The work is initialised; no queueing can follow.
        unsafe { bindings::rrxe_helper_work_cancel_sync(self.work.get()) };
        drop(r);
        // A run that started before took its reference out; one that was cancelled left it.
        let late = self.queued.lock().take();
        drop(late);
    }
}

#[pinned_drop]
impl<O: WorkTarget> PinnedDrop for RefWork<O> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: The work is initialised; after this it neither runs nor is queued.
        unsafe { bindings::rrxe_helper_work_cancel_sync(self.work.get()) };
    }
}
