// SPDX-License-Identifier: GPL-2.0

//! rrxe's own workqueue for work that may block on user space for as long as user space likes
//! (the page faults of on-demand-paging MRs: a FUSE server that never answers a READ), and the
//! work item that runs there.
//!
//! Such work must not wedge anything else. So it has a workqueue of its own ([`FaultQueue`],
//! unbound, allocated at module load and destroyed at unload), not a system one a few hundred
//! stuck items would starve; and its item ([`FaultWork`]) is owned by reference counting, not
//! by the object it works for: while queued or running it holds an [`Arc`] of its target, so
//! the object that asked for it may be destroyed without waiting ([`FaultWork::close`] returns
//! at once), and what the stuck work still uses stays allocated until it returns. It also holds
//! a reference to the module: unloading is refused (`EBUSY`) while such work is queued or
//! running, instead of blocking in the workqueue's drain.
//!
//! C header: [`include/linux/workqueue.h`](srctree/include/linux/workqueue.h).

use crate::{
    bindings,
    new_spinlock_irq,
    sync::SpinLockIrq, //
};
use core::{
    ptr,
    sync::atomic::{
        AtomicPtr,
        Ordering, //
    },
};
use kernel::{
    prelude::*,
    sync::Arc,
    types::Opaque, //
};

/// The fault workqueue while the module is loaded (null before and after).
static QUEUE: AtomicPtr<bindings::workqueue_struct> = AtomicPtr::new(ptr::null_mut());

/// The fault workqueue: allocated by [`Self::new`] at module load, destroyed when dropped at
/// unload (after every device, so nothing queues on it any more).
pub(crate) struct FaultQueue(());

impl FaultQueue {
    /// Allocates the workqueue. Once, at module load.
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: Process context (module init).
        let wq = unsafe { bindings::rrxe_helper_fault_wq_alloc() };
        if wq.is_null() {
            return Err(ENOMEM);
        }
        QUEUE.store(wq, Ordering::Release);
        Ok(Self(()))
    }
}

impl Drop for FaultQueue {
    fn drop(&mut self) {
        let wq = QUEUE.swap(ptr::null_mut(), Ordering::AcqRel);
        if !wq.is_null() {
            // SAFETY: Allocated by `new`, destroyed once. Every item queued on it held a module
            // reference until its function had nothing left but to return, and the module is
            // being unloaded: the destroy's drain waits for those returns, none waits on user
            // space.
            unsafe { bindings::rrxe_helper_wq_destroy(wq) };
        }
    }
}

/// What a [`FaultWork`] runs: process context, on the fault workqueue; it may sleep, also on
/// user space.
pub(crate) trait FaultTarget: Send + Sync + Sized + 'static {
    /// The work runs with a reference to its target.
    fn fault_run(this: Arc<Self>);
}

/// A queued run: the reference to the target, and whether the item was closed for good.
struct Queued<T> {
    target: Option<Arc<T>>,
    closed: bool,
}

/// A work item on the fault workqueue, part of its target `T` (which lives in an [`Arc`]).
///
/// # Invariants
///
/// `queued.target` is `Some` from a queueing until the run it queued takes it out (or a cancel
/// of that run does), and then it is a reference to the `T` this item is part of, counted with
/// one reference to the module; so the item is never pending without one. A run takes both
/// over.
#[pin_data]
pub(crate) struct FaultWork<T: FaultTarget> {
    #[pin]
    work: Opaque<bindings::work_struct>,
    #[pin]
    queued: SpinLockIrq<Queued<T>>,
}

// SAFETY: The work item is used through the workqueue's own synchronisation; `queued` is
// locked.
unsafe impl<T: FaultTarget> Send for FaultWork<T> {}
// SAFETY: As above.
unsafe impl<T: FaultTarget> Sync for FaultWork<T> {}

/// The work function.
///
/// # Safety
///
/// Called by the workqueue with the `work` field of a `FaultWork<T>` that was queued.
unsafe extern "C" fn run<T: FaultTarget>(w: *mut bindings::work_struct) {
    // SAFETY: `w` is the `work` field of a `FaultWork<T>`; pending, it held a reference to the
    // `T` it is part of (the invariant), which only this run or a successful cancel takes out:
    // the memory is valid until the reference is dropped below.
    let this = unsafe { &*kernel::container_of!(Opaque::cast_from(w), FaultWork<T>, work) };
    let target = this.queued.lock().target.take();
    // `this` is not used past here: the target may be the last reference to it.
    if let Some(target) = target {
        T::fault_run(target);
        // SAFETY: The module reference the queueing took with the target (the invariant).
        // Only the return is left; the workqueue's destroy at unload waits for it.
        unsafe { bindings::rrxe_helper_module_put() };
    }
}

impl<T: FaultTarget> FaultWork<T> {
    /// A work item with nothing queued.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `INIT_WORK` initialises the work in place.
            work <- Opaque::ffi_init(|w| unsafe {
                bindings::rrxe_helper_work_init_sleeping(w, Some(run::<T>))
            }),
            queued <- new_spinlock_irq!(Queued { target: None, closed: false }, "rrxe_fault_work"),
        })
    }

    /// Queues a run for `target`, the `T` this item is part of, unless one is queued already.
    /// Any context. `false` once closed, or when the module is going away (nothing queued).
    pub(crate) fn queue(&self, target: &Arc<T>) -> bool {
        let mut q = self.queued.lock();
        if q.closed {
            return false;
        }
        if q.target.is_some() {
            return true;
        }
        // SAFETY: No preconditions (any context).
        if !unsafe { bindings::rrxe_helper_module_tryget() } {
            return false;
        }
        let wq = QUEUE.load(Ordering::Acquire);
        if wq.is_null() {
            // SAFETY: Taken just above.
            unsafe { bindings::rrxe_helper_module_put() };
            return false;
        }
        // INVARIANT: Not pending (no target): this queueing makes it pending, with a target and
        // a module reference.
        q.target = Some(target.clone());
        // SAFETY: The work is initialised and `wq` is the live fault workqueue (devices, whose
        // objects queue, are all gone before it is destroyed).
        unsafe { bindings::rrxe_helper_work_queue_on(wq, self.work.get()) };
        true
    }

    /// Stops the item for good: later [`Self::queue`] calls do nothing, and a run still queued
    /// is cancelled. Does not wait for a run in progress, which keeps its target alive until it
    /// returns. The caller holds a reference to the target. Any context.
    pub(crate) fn close(&self) {
        self.queued.lock().closed = true;
        // SAFETY: The work is initialised.
        if unsafe { bindings::rrxe_helper_work_cancel(self.work.get()) } {
            // The pending run will not happen: its reference and module reference are ours.
            let target = self.queued.lock().target.take();
            if target.is_some() {
                drop(target);
                // SAFETY: Taken with the target by `queue`.
                unsafe { bindings::rrxe_helper_module_put() };
            }
        }
    }
}
