// SPDX-License-Identifier: GPL-2.0

//! A high-resolution timer (`struct hrtimer`, soft mode: it expires in softirq context, as a
//! [`super::RefTimer`] does) that holds an [`ObjRef`] to its target while armed, for delays
//! too short for jiffies: a rate-limited QP waits microseconds between bursts of packets.
//!
//! C header: [`include/linux/hrtimer.h`](srctree/include/linux/hrtimer.h).

use super::{
    live::{
        ObjRef,
        PendingRef, //
    },
    TimerTarget,
};
use crate::{
    bindings,
    new_spinlock_irq,
    sync::SpinLockIrq, //
};
use kernel::{
    prelude::*,
    sync::atomic::{
        Atomic,
        Relaxed, //
    },
    types::Opaque, //
};

/// A high-resolution timer armed with a reference to its target.
///
/// # Examples
///
/// A paced QP waits for its next burst: the expiry kicks it; destroy closes the timer first.
///
/// ```ignore
/// qp.pipe().pace.arm_ns(&ObjRef::new(qp), wait_ns); // no-op while already armed
/// qp.pipe().pace.close();
/// ```
#[pin_data(PinnedDrop)]
pub(crate) struct RefHrTimer<O: TimerTarget> {
    #[pin]
    timer: Opaque<bindings::hrtimer>,
    #[pin]
    armed: SpinLockIrq<PendingRef<O>>,
    /// Tells the target which of its timers fired.
    id: u32,
    /// When the armed timer expires (monotonic ns), under `armed`'s lock.
    expires: Atomic<u64>,
}

// SAFETY: The timer is used through the kernel's own locking; `armed` is locked.
unsafe impl<O: TimerTarget> Send for RefHrTimer<O> {}
// SAFETY: As above.
unsafe impl<O: TimerTarget> Sync for RefHrTimer<O> {}

/// The expiry callback (softirq context).
///
/// # Safety
///
/// Called by the hrtimer core with the `timer` field of a live `RefHrTimer<O>`.
unsafe extern "C" fn fired<O: TimerTarget>(t: *mut bindings::hrtimer) -> bindings::hrtimer_restart {
    // SAFETY: `t` is the `timer` field of a live `RefHrTimer<O>`: its drop cancels the timer
    // (waiting for this callback) before the memory goes.
    let this = unsafe { &*kernel::container_of!(Opaque::cast_from(t), RefHrTimer<O>, timer) };
    let target = this.armed.lock().take();
    if let Some(target) = target {
        O::timer_fired(target, this.id);
    }
    bindings::hrtimer_restart_HRTIMER_NORESTART
}

impl<O: TimerTarget> RefHrTimer<O> {
    /// An unarmed timer, reported to its target as `id`.
    pub(crate) fn new(id: u32) -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `hrtimer_setup` initialises the timer in place.
            timer <- Opaque::ffi_init(|t| unsafe { bindings::rrxe_helper_hrtimer_setup(t, Some(fired::<O>)) }),
            armed <- new_spinlock_irq!(PendingRef::new(), "rrxe_hrtimer"),
            id,
            expires: Atomic::new(0),
        })
    }

    /// Arms the timer to fire `ns` from now with `target`, unless it is closed. Armed already,
    /// it fires at the earlier of the two times (its users share it: a pacing wait and a tail
    /// probe of one QP). Any context.
    pub(crate) fn arm_ns(&self, target: &ObjRef<O>, ns: u64) {
        // SAFETY: Reads the monotonic clock; callable in any context.
        let at = unsafe { bindings::rrxe_helper_ktime_get_ns() }.saturating_add(ns);
        let mut armed = self.armed.lock();
        if armed.is_held() {
            if at >= self.expires.load(Relaxed) {
                return;
            }
        } else if !armed.hold(target) {
            return;
        }
        self.expires.store(at, Relaxed);
        // SAFETY: The timer is initialised. Armed already (its expiry has not taken the
        // reference: that happens under this lock), starting it again moves its expiry.
        unsafe { bindings::rrxe_helper_hrtimer_start_ns(self.timer.get(), ns) };
    }

    /// Whether the timer is armed.
    pub(crate) fn is_armed(&self) -> bool {
        self.armed.lock().is_held()
    }

    /// Stops the timer for good (its target is going away): later [`Self::arm_ns`] calls do
    /// nothing; waits for a running expiry and drops the reference. Not from the timer's own
    /// callback.
    pub(crate) fn close(&self) {
        let r = self.armed.lock().close();
        // SAFETY: The timer is initialised. No arm can follow (`closed` is set under the lock
        // that arming holds while it arms), so after this the timer is not pending.
        unsafe { bindings::hrtimer_cancel(self.timer.get()) };
        drop(r);
        let late = self.armed.lock().take();
        drop(late);
    }
}

#[pinned_drop]
impl<O: TimerTarget> PinnedDrop for RefHrTimer<O> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: The timer is initialised; `close` (or no arm at all) came first, so it
        // cannot be re-armed; this waits for a running expiry.
        unsafe { bindings::hrtimer_cancel(self.timer.get()) };
    }
}
