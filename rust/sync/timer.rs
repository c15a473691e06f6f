// SPDX-License-Identifier: GPL-2.0

//! A kernel timer (`struct timer_list`) that holds an [`ObjRef`] to its target while armed, so
//! the target cannot be destroyed under a pending expiry; destroying it cancels the timer.
//!
//! C header: [`include/linux/timer.h`](srctree/include/linux/timer.h).

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

/// What a [`RefTimer`] calls on expiry.
pub(crate) trait TimerTarget: Counted + Sized + 'static {
    /// Timer `id` expired (softirq context).
    fn timer_fired(this: ObjRef<Self>, id: u32);
}

/// A timer armed with a reference to its target.
///
/// # Examples
///
/// A QP's retransmission timer: armed from the data path with a reference to the QP, which
/// the expiry hands to [`TimerTarget::timer_fired`]; destroy closes it first.
///
/// ```ignore
/// impl TimerTarget for Qp<RrxeDevice> {
///     fn timer_fired(qp: ObjRef<Self>, _id: u32) {
///         kick(&qp);
///     }
/// }
///
/// qp.pipe().timer.arm(&ObjRef::new(qp), timeout_us); // holds the reference until it fires
/// qp.pipe().timer.close(); // destroy: cancelled, and never armed again
/// ```
#[pin_data(PinnedDrop)]
pub(crate) struct RefTimer<O: TimerTarget> {
    #[pin]
    timer: Opaque<bindings::timer_list>,
    #[pin]
    armed: SpinLockIrq<PendingRef<O>>,
    /// Tells the target which of its timers fired.
    id: u32,
}

// SAFETY: The timer list is used through the kernel's own locking; `armed` is locked.
unsafe impl<O: TimerTarget> Send for RefTimer<O> {}
// SAFETY: As above.
unsafe impl<O: TimerTarget> Sync for RefTimer<O> {}

/// The timer callback.
///
/// # Safety
///
/// Called by the timer core with the `timer` field of a live `RefTimer<O>`.
unsafe extern "C" fn fired<O: TimerTarget>(t: *mut bindings::timer_list) {
    // SAFETY: `t` is the `timer` field of a live `RefTimer<O>`: its drop shuts the timer down
    // (waiting for this callback) before the memory goes.
    let this = unsafe { &*kernel::container_of!(Opaque::cast_from(t), RefTimer<O>, timer) };
    let target = this.armed.lock().take();
    if let Some(target) = target {
        O::timer_fired(target, this.id);
    }
}

impl<O: TimerTarget> RefTimer<O> {
    /// An unarmed timer, reported to its target as `id`.
    pub(crate) fn new(id: u32) -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `timer_setup` initialises the timer in place.
            timer <- Opaque::ffi_init(|t| unsafe { bindings::rrxe_helper_timer_setup(t, Some(fired::<O>)) }),
            armed <- new_spinlock_irq!(PendingRef::new(), "rrxe_timer"),
            id,
        })
    }

    /// (Re)arms the timer to fire `usecs` from now with `target`. Any context. Does nothing
    /// once the timer is closed.
    pub(crate) fn arm(&self, target: &ObjRef<O>, usecs: u64) {
        let mut armed = self.armed.lock();
        if !armed.hold(target) {
            return;
        }
        // SAFETY: The timer is initialised.
        unsafe {
            bindings::rrxe_helper_timer_arm_us(self.timer.get(), usecs.try_into().unwrap_or(!0))
        };
    }

    /// Whether the timer is armed.
    pub(crate) fn is_armed(&self) -> bool {
        self.armed.lock().is_held()
    }

    /// Stops the timer for good (its target is going away): later [`Self::arm`] calls, from a
    /// pass still running on another CPU or from the expiry itself, do nothing; waits for a
    /// running expiry and drops the reference, so the target's users can reach zero. Not from
    /// the timer's own callback.
    pub(crate) fn close(&self) {
        let r = self.armed.lock().close();
        // SAFETY: The timer is initialised. No arm can follow (`closed` is set under the lock
        // that arming holds while it arms), so after this the timer is not pending.
        unsafe { bindings::timer_delete_sync(self.timer.get()) };
        // An expiry that ran concurrently took its own reference out before we looked.
        drop(r);
        let late = self.armed.lock().take();
        drop(late);
    }
}

#[pinned_drop]
impl<O: TimerTarget> PinnedDrop for RefTimer<O> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: The timer is initialised; after this it cannot fire or be re-armed.
        unsafe { bindings::timer_shutdown_sync(self.timer.get()) };
    }
}
