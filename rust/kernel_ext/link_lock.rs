// SPDX-License-Identifier: GPL-2.0

//! The driver-wide link mutex, a C `DEFINE_MUTEX` in `rust/helpers/helpers.c`.
//!
//! It serialises `rdma link add` (check for an existing device on the netdev, then register)
//! so two concurrent requests cannot both bind the same netdev. It may sleep: never take it
//! from an atomic context.

use crate::bindings;

/// Holds the driver-wide link mutex until dropped.
pub(crate) struct LinkLock(());

impl LinkLock {
    /// Takes the mutex, sleeping if another task holds it.
    pub(crate) fn lock() -> Self {
        // SAFETY: The mutex is statically initialised; this is process context (`newlink`).
        unsafe { bindings::rrxe_helper_link_lock() };
        Self(())
    }
}

impl Drop for LinkLock {
    fn drop(&mut self) {
        // SAFETY: `self` proves this task holds the mutex.
        unsafe { bindings::rrxe_helper_link_unlock() };
    }
}
