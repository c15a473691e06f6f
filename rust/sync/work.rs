// SPDX-License-Identifier: GPL-2.0

//! A work item that holds an [`ObjRef`] to its target while queued, as [`super::RefTimer`] does
//! for timers. On the BH workqueue (`system_bh_wq`: softirq context, soon after it is queued)
//! it is what a context that may not do the work itself (interrupts disabled, or a run that used
//! up its budget) hands it to, without waiting a timer tick; on the unbound workqueue it is the
//! process context for short work that sleeps (an SRQ's limit event). Work that may wait on user
//! space for as long as user space likes (page faults) is a [`super::FaultWork`] instead.
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
use core::marker::PhantomData;
use kernel::{
    prelude::*,
    types::Opaque, //
};

/// Where a [`RefWork`] runs.
pub(crate) trait WorkKind: Send + Sync + 'static {
    /// Whether the work may sleep (process context) rather than run in softirq context.
    const SLEEPS: bool;
}

/// The BH workqueue: softirq context, soon after queueing.
pub(crate) struct Bh;

impl WorkKind for Bh {
    const SLEEPS: bool = false;
}

/// The unbound workqueue: process context, the work may sleep.
pub(crate) struct Sleeping;

impl WorkKind for Sleeping {
    const SLEEPS: bool = true;
}

/// What a [`RefWork`] of kind `K` runs.
pub(crate) trait WorkTarget<K: WorkKind = Bh>: Counted + Sized + 'static {
    /// The work runs (softirq context for [`Bh`], process context for [`Sleeping`]).
    fn work_run(this: ObjRef<Self>);
}

/// A work item queued with a reference to its target. The workqueue never runs it on two CPUs
/// at once; queued again while it runs, it runs once more afterwards.
#[pin_data(PinnedDrop)]
pub(crate) struct RefWork<O: WorkTarget<K>, K: WorkKind = Bh> {
    #[pin]
    work: Opaque<bindings::work_struct>,
    #[pin]
    queued: SpinLockIrq<PendingRef<O>>,
    kind: PhantomData<K>,
}

// SAFETY: The work item is used through the workqueue's own synchronisation; `queued` is
// locked.
unsafe impl<O: WorkTarget<K>, K: WorkKind> Send for RefWork<O, K> {}
// SAFETY: As above.
unsafe impl<O: WorkTarget<K>, K: WorkKind> Sync for RefWork<O, K> {}

/// The work function.
///
/// # Safety
///
/// Called by the workqueue with the `work` field of a live `RefWork<O, K>`.
unsafe extern "C" fn run<O: WorkTarget<K>, K: WorkKind>(w: *mut bindings::work_struct) {
    // SAFETY: `w` is the `work` field of a live `RefWork<O, K>`: its drop and `close` cancel
    // the work (waiting for this function) before the memory goes.
    let this = unsafe { &*kernel::container_of!(Opaque::cast_from(w), RefWork<O, K>, work) };
    let target = this.queued.lock().take();
    if let Some(target) = target {
        <O as WorkTarget<K>>::work_run(target);
    }
}

impl<O: WorkTarget<K>, K: WorkKind> RefWork<O, K> {
    /// A work item with nothing queued.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `INIT_WORK` initialises the work in place (one lockdep class per kind:
            // the contexts they run in differ).
            work <- Opaque::ffi_init(|w| unsafe {
                if K::SLEEPS {
                    bindings::rrxe_helper_work_init_sleeping(w, Some(run::<O, K>))
                } else {
                    bindings::rrxe_helper_work_init(w, Some(run::<O, K>))
                }
            }),
            queued <- new_spinlock_irq!(PendingRef::new(), "rrxe_work"),
            kind: PhantomData,
        })
    }

    /// Queues the work for `target`. Any context. Does nothing once closed.
    pub(crate) fn queue(&self, target: &ObjRef<O>) {
        self.queue_where(target, None);
    }

    /// As [`Self::queue`], on the BH workqueue of `cpu` (this CPU's if it is not online); a
    /// sleeping kind goes to the unbound workqueue as always.
    pub(crate) fn queue_on(&self, target: &ObjRef<O>, cpu: u32) {
        self.queue_where(target, Some(cpu));
    }

    fn queue_where(&self, target: &ObjRef<O>, cpu: Option<u32>) {
        let mut q = self.queued.lock();
        if !q.hold(target) {
            return;
        }
        // SAFETY: The work is initialised; queued under the lock, so `close` (which sets
        // `closed` under it first) cancels every queueing that happened.
        unsafe {
            match cpu {
                _ if K::SLEEPS => bindings::rrxe_helper_work_queue_unbound(self.work.get()),
                Some(cpu) => bindings::rrxe_helper_work_queue_bh_on(cpu, self.work.get()),
                None => bindings::rrxe_helper_work_queue_bh(self.work.get()),
            };
        }
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
impl<O: WorkTarget<K>, K: WorkKind> PinnedDrop for RefWork<O, K> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: The work is initialised; after this it neither runs nor is queued.
        unsafe { bindings::rrxe_helper_work_cancel_sync(self.work.get()) };
    }
}
