// SPDX-License-Identifier: GPL-2.0

//! The interrupt state of the current context.

use crate::bindings;

/// Whether local interrupts are disabled (`irqs_disabled()`).
pub(crate) fn irqs_disabled() -> bool {
    // SAFETY: Reads the current CPU's interrupt flag; no preconditions.
    unsafe { bindings::rrxe_helper_irqs_disabled() }
}
