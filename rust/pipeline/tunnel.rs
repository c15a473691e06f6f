// SPDX-License-Identifier: GPL-2.0

//! The UDP port 4791 sockets of a network namespace: IPv4, and IPv6 where the namespace has it.
//! All rrxe devices of a namespace share them ([`NetnsTunnel`]); they close with the last of
//! those devices, or when the namespace goes away first. Received datagrams find their device
//! by the netdev they arrived on, not by the socket.

use super::Receiver;
use crate::{
    net::{
        NetDevice,
        NetnsTunnel, //
    },
    proto::hdr::ROCE_V2_UDP_PORT,
};
use kernel::prelude::*;

/// A device's share of the sockets of the namespace of `ndev`, opened if no rrxe device there
/// has them yet, with the pipeline's receive path behind them. IPv4 must work; IPv6 is optional
/// (a kernel or namespace without IPv6 only loses IPv6 GIDs). Process context.
pub(crate) fn open_tunnel(ndev: &NetDevice) -> Result<NetnsTunnel> {
    NetnsTunnel::get::<Receiver>(ndev, ROCE_V2_UDP_PORT)
}
