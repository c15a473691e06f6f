// SPDX-License-Identifier: GPL-2.0

//! The online CPUs: which one is the `n`-th, whether one is online, and which one the caller
//! runs on.
//!
//! C header: [`include/linux/cpumask.h`](srctree/include/linux/cpumask.h).

use crate::bindings;

/// The `n`-th online CPU, counting round them (`cpumask_local_spread`: `n` modulo their number,
/// those of the local NUMA node first).
pub(crate) fn nth_online_cpu(n: u32) -> u32 {
    // SAFETY: No preconditions: any `n` is taken modulo the number of online CPUs.
    unsafe { bindings::rrxe_helper_nth_online_cpu(n) }
}

/// Whether `cpu` is online now (it may go offline right after: a hint for where to queue work,
/// which falls back to this CPU).
pub(crate) fn cpu_online(cpu: u32) -> bool {
    // SAFETY: No preconditions: the helper checks `cpu` against `nr_cpu_ids`.
    unsafe { bindings::rrxe_helper_cpu_online(cpu) }
}

/// The CPU the caller runs on: exact while preemption is disabled (a softirq, a spinlock held,
/// [`super::BhDisabled`]), a hint otherwise.
pub(crate) fn this_cpu() -> u32 {
    kernel::cpu::CpuId::current().as_u32()
}
