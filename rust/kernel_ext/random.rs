// SPDX-License-Identifier: GPL-2.0

//! Random numbers from the kernel's CRNG.

use crate::bindings;

/// A random byte (`get_random_u8`).
pub(crate) fn random_u8() -> u8 {
    // SAFETY: No preconditions; callable from any context.
    unsafe { bindings::rrxe_helper_random_u8() }
}
