// SPDX-License-Identifier: GPL-2.0

//! The UDP port 4791 sockets of a network namespace: IPv4, and IPv6 where the namespace has it.
//! All rrxe devices of a namespace share one [`Tunnels`]; received datagrams find their device
//! by the netdev they arrived on, not by the socket.

use super::Receiver;
use crate::{
    net::{
        NetDevice,
        UdpTunnel, //
    },
    proto::hdr::ROCE_V2_UDP_PORT,
};
use kernel::prelude::*;

/// The tunnel sockets of one network namespace.
pub(crate) struct Tunnels {
    _v4: UdpTunnel<Receiver>,
    v6: Option<UdpTunnel<Receiver>>,
}

impl Tunnels {
    /// Opens the sockets in the namespace of `ndev`. IPv4 must work; IPv6 is optional (a
    /// kernel or namespace without IPv6 only loses IPv6 GIDs).
    pub(crate) fn open(ndev: &NetDevice) -> Result<Self> {
        let v4 = UdpTunnel::open(ndev, ROCE_V2_UDP_PORT, false)?;
        let v6 = UdpTunnel::open(ndev, ROCE_V2_UDP_PORT, true)
            .inspect_err(|e| pr_info!("no IPv6 RoCE socket in this namespace: {:?}\n", e))
            .ok();
        Ok(Self { _v4: v4, v6 })
    }

    /// The IPv6 socket, for route lookups.
    pub(crate) fn v6(&self) -> Option<&UdpTunnel<Receiver>> {
        self.v6.as_ref()
    }
}
