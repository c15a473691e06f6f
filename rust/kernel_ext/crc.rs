// SPDX-License-Identifier: GPL-2.0

//! The kernel's CRC-32 (`crc32_le`), which uses the CPU's carry-less multiplication
//! (PCLMULQDQ/VPCLMULQDQ on x86, PMULL on arm64) where there is one.
//!
//! C header: [`include/linux/crc32.h`](srctree/include/linux/crc32.h).

use crate::bindings;

/// Advances the IEEE 802.3 CRC-32 register `reg` over `data` (least significant bit first,
/// polynomial `0xedb88320`, no inversion at either end). Any context.
pub(crate) fn crc32_le(reg: u32, data: &[u8]) -> u32 {
    // SAFETY: `data` is valid for reads of `data.len()` bytes for the duration of the call.
    unsafe { bindings::crc32_le(reg, data.as_ptr().cast(), data.len()) }
}
