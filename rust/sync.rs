// SPDX-License-Identifier: GPL-2.0

//! Synchronisation the kernel crate does not offer yet: an interrupt-safe spinlock
//! (`spin_lock_irqsave`), and references that keep an object alive while deferred work holds
//! it ([`ObjRef`], counted by the object's [`Users`]: [`live`]), with the timer and work item
//! built on them ([`RefTimer`], [`RefHrTimer`], [`RefWork`]); and rrxe's own workqueue for work that may wait on
//! user space, with a work item that holds an `Arc` of its owner instead ([`FaultQueue`],
//! [`FaultWork`]).
//!
//! CQ, QP and SRQ state is touched from process context (verbs), softirq (packet receive, CQ
//! polling by `irq_poll`) and hard interrupt context (kernel consumers may post and poll from
//! completion handlers), so their locks disable interrupts while held.

mod fault_work;
mod hrtimer;
mod live;
mod timer;
mod work;

pub(crate) use fault_work::{
    FaultQueue,
    FaultTarget,
    FaultWork, //
};
pub(crate) use hrtimer::RefHrTimer;
pub(crate) use live::{
    Counted,
    ObjRef,
    Users, //
};
pub(crate) use timer::{
    RefTimer,
    TimerTarget, //
};
pub(crate) use work::{
    RefWork,
    Sleeping,
    WorkKind,
    WorkTarget, //
};

use crate::bindings;

use kernel::{
    ffi::{
        c_char,
        c_ulong, //
    },
    sync::lock::{
        Backend,
        Lock, //
    },
};

/// A `spinlock_t` taken with interrupts disabled; the saved flags are the guard state.
pub(crate) struct SpinLockIrqBackend;

/// A spinlock that disables interrupts while held. Create with [`new_spinlock_irq!`].
pub(crate) type SpinLockIrq<T> = Lock<T, SpinLockIrqBackend>;

// SAFETY: The kernel's `spinlock_t` provides mutual exclusion; interrupts stay disabled until
// `unlock` restores the flags `lock` saved, and `relock` takes the same path as `lock`.
unsafe impl Backend for SpinLockIrqBackend {
    type State = kernel::bindings::spinlock_t;
    type GuardState = c_ulong;

    unsafe fn init(
        ptr: *mut Self::State,
        name: *const c_char,
        key: *mut kernel::bindings::lock_class_key,
    ) {
        // SAFETY: The caller guarantees `ptr` is writable and `name`/`key` live forever.
        unsafe { kernel::bindings::__spin_lock_init(ptr, name, key) }
    }

    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: The caller guarantees the lock is initialised.
        unsafe { bindings::rrxe_helper_spin_lock_irqsave(ptr.cast()) }
    }

    unsafe fn try_lock(ptr: *mut Self::State) -> Option<Self::GuardState> {
        let mut flags: c_ulong = 0;
        // SAFETY: The caller guarantees the lock is initialised; `flags` is a valid output.
        let ok = unsafe { bindings::rrxe_helper_spin_trylock_irqsave(ptr.cast(), &mut flags) };
        ok.then_some(flags)
    }

    unsafe fn unlock(ptr: *mut Self::State, guard_state: &Self::GuardState) {
        // SAFETY: The caller owns the lock; `guard_state` holds the flags `lock` saved.
        unsafe { bindings::rrxe_helper_spin_unlock_irqrestore(ptr.cast(), *guard_state) }
    }

    unsafe fn assert_is_held(ptr: *mut Self::State) {
        // SAFETY: The caller guarantees the lock is initialised.
        unsafe { bindings::rrxe_helper_spin_assert_held(ptr.cast()) }
    }
}

/// Creates a [`SpinLockIrq`] initialiser with a lockdep class of its own call site.
#[macro_export]
macro_rules! new_spinlock_irq {
    ($inner:expr $(, $name:literal)? $(,)?) => {
        $crate::sync::SpinLockIrq::new(
            $inner,
            ::kernel::optional_name!($($name)?),
            ::kernel::static_lock_class!(),
        )
    };
}
