// SPDX-License-Identifier: GPL-2.0

//! The monotonic clock.
//!
//! C header: [`include/linux/timekeeping.h`](srctree/include/linux/timekeeping.h).

use crate::bindings;

/// Nanoseconds of the monotonic clock (`ktime_get_ns`). Any context.
pub(crate) fn now_ns() -> u64 {
    // SAFETY: No preconditions; callable from any context.
    unsafe { bindings::rrxe_helper_ktime_get_ns() }
}
