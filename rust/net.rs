// SPDX-License-Identifier: GPL-2.0

//! Networking abstractions: network devices and their event notifier, socket buffers, IPv4
//! routes and output, UDP tunnel sockets shared per network namespace, and the sockets that
//! own what a QP transmits.
//!
//! C headers: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h),
//! [`include/linux/skbuff.h`](srctree/include/linux/skbuff.h),
//! [`include/net/udp_tunnel.h`](srctree/include/net/udp_tunnel.h),
//! [`include/net/net_namespace.h`](srctree/include/net/net_namespace.h).

mod netdev;
mod netns_tunnels;
mod notifier;
mod route;
mod skb;
mod tx_socket;
mod udp_tunnel;

pub(crate) use netdev::{
    NetDevice,
    NetDeviceRef, //
};
pub(crate) use netns_tunnels::{
    NetnsTunnel,
    NetnsTunnels, //
};
pub(crate) use notifier::{
    NetdevEvent,
    NetdevEvents,
    NetdevNotifier, //
};
pub(crate) use route::{
    Route4,
    Route6, //
};
pub(crate) use skb::{
    SkBuff,
    SkbQueue,
    SkbTrain, //
};
pub(crate) use tx_socket::{
    TxOwner,
    TxSocket, //
};
pub(crate) use udp_tunnel::{
    UdpReceiver,
    UdpTunnel, //
};
