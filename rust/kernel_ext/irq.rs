// SPDX-License-Identifier: GPL-2.0

//! The interrupt state of the current context.

use crate::bindings;

/// Whether local interrupts are disabled (`irqs_disabled()`).
pub(crate) fn irqs_disabled() -> bool {
    // SAFETY: Reads the current CPU's interrupt flag; no preconditions.
    unsafe { bindings::rrxe_helper_irqs_disabled() }
}

/// Softirqs disabled on this CPU until dropped (`local_bh_disable`): the context stays on this
/// CPU, and softirqs raised meanwhile (a packet queued to this CPU's backlog) run when it is
/// dropped. Not with interrupts disabled.
pub(crate) struct BhDisabled {
    /// Not `Send`: enabled again on the CPU that disabled them.
    _cpu: core::marker::PhantomData<*mut ()>,
}

impl BhDisabled {
    /// Disables softirqs.
    pub(crate) fn new() -> Self {
        // SAFETY: No preconditions; undone by `drop` in the same context (the guard is not
        // `Send`).
        unsafe { bindings::rrxe_helper_local_bh_disable() };
        Self {
            _cpu: core::marker::PhantomData,
        }
    }

    /// The CPU this context runs on (fixed while softirqs, and with them preemption and
    /// migration, are disabled).
    pub(crate) fn cpu(&self) -> u32 {
        kernel::cpu::CpuId::current().as_u32()
    }
}

impl Drop for BhDisabled {
    fn drop(&mut self) {
        // SAFETY: Disabled by `new` in this context.
        unsafe { bindings::rrxe_helper_local_bh_enable() };
    }
}
