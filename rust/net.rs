// SPDX-License-Identifier: GPL-2.0

//! Networking abstractions: network devices and their event notifier.
//!
//! C headers: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h).

mod netdev;
mod notifier;

pub(crate) use netdev::NetDevice;
pub(crate) use notifier::{
    NetdevEvent,
    NetdevEvents,
    NetdevNotifier, //
};
