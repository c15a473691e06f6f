// SPDX-License-Identifier: GPL-2.0

//! rrxe's tracepoints (`rust/helpers/rrxe_trace.h`, trace system `rrxe`).

use crate::bindings;
use kernel::prelude::*;

/// Traces a dropped packet (`rrxe:rrxe_drop`): device, destination QPN, PSN, opcode and the
/// reason. Costs a call and a static-key test when the event is off. Any context.
pub(crate) fn trace_drop(dev: &CStr, qpn: u32, psn: u32, opcode: u8, reason: &CStr) {
    // SAFETY: Both strings are NUL-terminated and live for the call; the tracepoint copies them.
    unsafe {
        bindings::rrxe_helper_trace_drop(dev.as_char_ptr(), qpn, psn, opcode, reason.as_char_ptr())
    };
}
