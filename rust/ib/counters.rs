// SPDX-License-Identifier: GPL-2.0

//! Hardware counters (`rdma statistic`, `/sys/class/infiniband/*/ports/1/hw_counters`): a static
//! table of names the driver declares, and values it reports on demand.

use crate::bindings;
use kernel::prelude::*;

/// One counter's descriptor (`struct rdma_stat_desc`), for a `static` table in the driver.
#[repr(transparent)]
pub(crate) struct StatDesc(bindings::rdma_stat_desc);

// SAFETY: The descriptor only holds a pointer to a static string; it is never written.
unsafe impl Sync for StatDesc {}

impl StatDesc {
    /// A counter called `name`.
    pub(crate) const fn new(name: &'static CStr) -> Self {
        Self(bindings::rdma_stat_desc {
            #[expect(
                clippy::disallowed_methods,
                reason = "`as_char_ptr` is not `const`; the pointer is the same"
            )]
            name: name.as_ptr().cast(),
            flags: 0,
            priv_: core::ptr::null(),
        })
    }
}

/// Allocates the port's counter set for ib_core (`alloc_hw_port_stats`).
pub(super) fn alloc_port_stats(descs: &'static [StatDesc]) -> *mut bindings::rdma_hw_stats {
    let Ok(n) = c_int::try_from(descs.len()) else {
        return core::ptr::null_mut();
    };
    // SAFETY: `descs` is a static table of `n` descriptors (the C layout, `repr(transparent)`),
    // which outlives the device.
    unsafe {
        bindings::rdma_alloc_hw_stats_struct(
            descs.as_ptr().cast(),
            n,
            bindings::RDMA_HW_STATS_DEFAULT_LIFESPAN as c_ulong,
        )
    }
}

/// Fills `stats` with the values `fill` writes, zeroed first (`get_hw_stats`,
/// `counter_update_stats`); returns the number of values.
///
/// # Safety
///
/// `stats` is a set [`alloc_port_stats`] allocated, locked by the core for this call.
pub(super) unsafe fn fill(
    stats: *mut bindings::rdma_hw_stats,
    fill: impl FnOnce(&mut [u64]),
) -> c_int {
    // SAFETY: Valid per the caller.
    let n = unsafe { (*stats).num_counters };
    // SAFETY: `value` has `num_counters` elements, ours to write under the lock.
    let out = unsafe { (*stats).value.as_mut_slice(usize::try_from(n).unwrap_or(0)) };
    out.fill(0);
    fill(out);
    n
}
