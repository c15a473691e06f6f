// SPDX-License-Identifier: GPL-2.0

//! Long loops in process context: reschedule points and the fatal-signal check.
//!
//! C header: [`include/linux/sched/signal.h`](srctree/include/linux/sched/signal.h).

use crate::bindings;

/// Lets other tasks run if this one has run long (`cond_resched`). Process context, no lock
/// held.
pub(crate) fn cond_resched() {
    // SAFETY: The caller is in process context without locks (a sleeping context).
    unsafe { bindings::rrxe_helper_cond_resched() }
}

/// Whether the calling task was sent a fatal signal (`fatal_signal_pending(current)`): a
/// long call should give up (`EINTR`), the task is dying.
pub(crate) fn fatal_signal_pending() -> bool {
    // SAFETY: No preconditions; `current` is always valid.
    unsafe { bindings::rrxe_helper_fatal_signal_pending() }
}
