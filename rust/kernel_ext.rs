// SPDX-License-Identifier: GPL-2.0

//! Abstractions over kernel facilities that the `kernel` crate does not wrap yet: notifier
//! chains, module load events, a driver-wide mutex defined in C, the monotonic clock and
//! debugfs settings.

mod cpus;
mod crc;
mod debugfs;
mod errno;
mod irq;
mod link_lock;
mod module_watch;
mod notifier;
mod random;
mod sched;
mod time;
mod trace;

pub(crate) use cpus::{
    cpu_online,
    nth_online_cpu,
    this_cpu, //
};
pub(crate) use crc::crc32_le;
pub(crate) use debugfs::{
    DebugfsRoot,
    DebugfsU32s, //
};
pub(crate) use errno::{
    ehostunreach,
    eopnotsupp, //
};
pub(crate) use irq::{
    irqs_disabled,
    BhDisabled, //
};
pub(crate) use link_lock::LinkLock;
pub(crate) use module_watch::{
    module_loaded,
    ModuleEvents,
    ModuleWatch, //
};
pub(crate) use notifier::{
    NotifierBlock,
    NotifierChain,
    NotifierHandler, //
};
pub(crate) use random::random_u8;
pub(crate) use sched::{
    cond_resched,
    fatal_signal_pending, //
};
pub(crate) use time::now_ns;
pub(crate) use trace::trace_drop;
