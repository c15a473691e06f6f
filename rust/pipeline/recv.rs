// SPDX-License-Identifier: GPL-2.0

//! Packet input: RoCEv2 datagrams from the UDP tunnel socket (softirq) and loopback packets
//! from this host's requesters. Every header is validated (IP and UDP lengths, ICRC, BTH,
//! opcode, extension headers) before the packet is queued to its QP; anything else is a
//! counted drop with its reason. CNPs ([`cnp`]) go to their QP too.

use super::{
    crc::Icrc,
    drop_packet,
    drop_qp_packet,
    responder::GRH_LEN,
    DropReason,
    Kicks, //
};
use crate::{
    device::RrxeDevice,
    ib::{
        AddressVector,
        Device,
        DeviceRef,
        Qp, //
    },
    net::{
        NetDevice,
        SkBuff,
        UdpReceiver, //
    },
    proto::{
        cnp,
        hdr::{
            Bth,
            MULTICAST_QPN, //
        },
        opcode::OpcodeInfo,
        packet::ip_packet_len,
    },
};
use kernel::prelude::*;

/// `IPPROTO_UDP`.
const IPPROTO_UDP: u8 = 17;

/// The receiver of the UDP tunnel sockets.
pub(crate) struct Receiver;

fn device_of(nd: &NetDevice) -> Option<DeviceRef<RrxeDevice>> {
    Device::<RrxeDevice>::get_by_netdev(nd).or_else(|| {
        nd.with_real_dev(Device::<RrxeDevice>::get_by_netdev)
            .flatten()
    })
}

impl UdpReceiver for Receiver {
    fn receive(mut skb: SkBuff) {
        let Some(dev) = skb.with_dev(device_of).flatten() else {
            return;
        };
        // A segment of a train (one UDP GSO buffer the socket split) with more to come is
        // only queued: the last one runs its QP (or leaves a busy QP to its deferred kick:
        // `Batch`), which then handles the whole train in one pass and answers it with one
        // ACK. The deferred kick stands in should the rest of the train not reach us.
        let follows = skb.segments_follow();
        match strip_ip_udp(&mut skb) {
            Ok(grh) => {
                let mut kicks = Kicks::new();
                deliver(&dev, skb, &grh, &mut kicks);
                if follows {
                    kicks.defer_all();
                } else {
                    kicks.run_or_batch(crate::params::rx_batch());
                }
            }
            Err(reason) => drop_packet(&dev, reason, None),
        }
    }
}

/// Checks the IP and UDP headers and the ICRC of a received datagram, leaves the packet with
/// `data` at the BTH and returns the GRH area a UD receive reports.
fn strip_ip_udp(skb: &mut SkBuff) -> Result<[u8; GRH_LEN], DropReason> {
    skb.linearize().map_err(|_| DropReason::Malformed)?;
    let bytes = skb.network_bytes();
    let first = *bytes.first().ok_or(DropReason::Malformed)?;
    let mut grh = [0u8; GRH_LEN];
    let l3 = match first >> 4 {
        4 => {
            let ihl = usize::from(first & 0xf) * 4;
            if ihl != 20 {
                // RoCEv2 senders use no IP options; the ICRC is defined over a 20-byte header.
                return Err(DropReason::Malformed);
            }
            let ip: &[u8; 20] = bytes
                .get(..20)
                .and_then(|b| b.try_into().ok())
                .ok_or(DropReason::Malformed)?;
            if ip[9] != IPPROTO_UDP {
                return Err(DropReason::Malformed);
            }
            grh[20..].copy_from_slice(ip);
            20
        }
        6 => {
            let ip = bytes.get(..40).ok_or(DropReason::Malformed)?;
            // No extension headers: the UDP header must follow the fixed header (and the
            // ICRC is defined over exactly that layout).
            if ip[6] != IPPROTO_UDP {
                return Err(DropReason::Malformed);
            }
            grh.copy_from_slice(ip);
            40
        }
        _ => return Err(DropReason::Malformed),
    };
    let udp: &[u8; 8] = bytes
        .get(l3..l3 + 8)
        .and_then(|b| b.try_into().ok())
        .ok_or(DropReason::Malformed)?;
    let transport = bytes.get(l3 + 8..).ok_or(DropReason::Malformed)?;
    let udp_len = usize::from(u16::from_be_bytes([udp[4], udp[5]]));
    if udp_len != transport.len() + 8 {
        return Err(DropReason::Malformed);
    }
    let ok = if l3 == 20 {
        let ip: &[u8; 20] = grh[20..].try_into().map_err(|_| DropReason::Malformed)?;
        Icrc::verify_ipv4(ip, udp, transport).is_ok()
    } else {
        Icrc::verify_ipv6(&grh, udp, transport).is_ok()
    };
    if !ok {
        return Err(DropReason::BadIcrc);
    }
    // `data` is at the UDP header, which the checks above found right after the IP header:
    // anything else (a layout the stack parsed differently) is malformed.
    let strip = skb.len().checked_sub(transport.len());
    if strip != Some(8) {
        return Err(DropReason::Malformed);
    }
    skb.pull(8).map_err(|_| DropReason::Malformed)?;
    Ok(grh)
}

/// Delivers a packet a requester of `dev` addressed to `dev` itself: no IP, UDP or ICRC work.
pub(crate) fn loopback(
    dev: &Device<RrxeDevice>,
    skb: SkBuff,
    av: &AddressVector,
    kicks: &mut Kicks,
) {
    let mut grh = [0u8; GRH_LEN];
    match av.network {
        crate::ib::NetworkType::Ipv4 => {
            let ip = &mut grh[20..];
            ip[0] = 0x45;
            ip[8] = 64;
            ip[9] = 17;
            ip[12..16].copy_from_slice(&av.sgid[12..16]);
            ip[16..20].copy_from_slice(&av.dgid[12..16]);
        }
        crate::ib::NetworkType::Ipv6 => {
            grh[0] = 0x60;
            grh[6] = 17;
            grh[7] = 64;
            grh[8..24].copy_from_slice(&av.sgid);
            grh[24..40].copy_from_slice(&av.dgid);
        }
    }
    deliver(dev, skb, &grh, kicks);
}

/// The length of a received packet (`data` at its BTH) from its IP header through its ICRC;
/// `grh` tells IPv6 from IPv4 (an IPv4 header is kept in its last 20 bytes).
fn received_len(skb: &SkBuff, grh: &[u8; GRH_LEN]) -> usize {
    ip_packet_len(skb.len(), grh[0] >> 4 == 6)
}

/// The destination GID of a packet from its GRH area (IPv4-mapped for IPv4).
pub(super) fn dest_gid(grh: &[u8; GRH_LEN]) -> [u8; 16] {
    gid_at(grh, 36, 24)
}

/// The source GID of a packet from its GRH area (IPv4-mapped for IPv4).
pub(super) fn source_gid(grh: &[u8; GRH_LEN]) -> [u8; 16] {
    gid_at(grh, 32, 8)
}

/// The GID at byte `v4` of the IPv4 header (at byte 20 of the area) or `v6` of the IPv6 one.
fn gid_at(grh: &[u8; GRH_LEN], v4: usize, v6: usize) -> [u8; 16] {
    let mut gid = [0u8; 16];
    if grh[20] >> 4 == 4 {
        gid[10] = 0xff;
        gid[11] = 0xff;
        gid[12..].copy_from_slice(&grh[v4..v4 + 4]);
    } else {
        gid.copy_from_slice(&grh[v6..v6 + 16]);
    }
    gid
}

/// Delivers a UD packet for QPN 0xffffff to every QP attached to its destination GID: a clone
/// each, the last one the packet itself. A group without members is a counted drop.
fn multicast(
    dev: &Device<RrxeDevice>,
    mut skb: SkBuff,
    grh: &[u8; GRH_LEN],
    bth: &Bth,
    info: &OpcodeInfo,
    kicks: &mut Kicks,
) {
    let mut qpns = [0u32; crate::limits::MAX_MCAST_QP_ATTACH as usize];
    let n = dev.mcast_members(&dest_gid(grh), &mut qpns);
    if n == 0 {
        return drop_packet(dev, DropReason::Multicast, Some(bth));
    }
    skb.cb()[..GRH_LEN].copy_from_slice(grh);
    dev.count_received(received_len(&skb, grh));
    let (last, others) = match qpns[..n].split_last() {
        Some(x) => x,
        None => return,
    };
    // Clones share the (read-only from here on) data and copy the control buffer.
    for &qpn in others {
        if let (Some(qp), Ok(c)) = (dev.lookup_qp(qpn), skb.try_clone()) {
            queue(&qp, c, bth, Some(info));
            kicks.push(qp);
        }
    }
    if let Some(qp) = dev.lookup_qp(*last) {
        queue(&qp, skb, bth, Some(info));
        kicks.push(qp);
    }
}

/// Reads the BTH, queues the packet to its QP and lists the QP in `kicks`. The other headers
/// are parsed once, by the QP's pass that handles the packet; a packet whose opcode this
/// driver does not implement is dropped here.
fn deliver(dev: &Device<RrxeDevice>, mut skb: SkBuff, grh: &[u8; GRH_LEN], kicks: &mut Kicks) {
    let Ok(bth) = Bth::parse(skb.data()) else {
        return drop_packet(dev, DropReason::Malformed, None);
    };
    // A CNP goes to its QP's pass like any packet (the pass checks where it came from).
    let info = bth.opcode.info();
    if info.is_none() && !cnp::is_cnp(skb.data(), &bth) {
        return drop_packet(dev, DropReason::Malformed, None);
    }
    let qpn = bth.dest_qpn;
    if qpn == MULTICAST_QPN {
        let Some(info) = info else {
            return drop_packet(dev, DropReason::Malformed, Some(&bth));
        };
        return multicast(dev, skb, grh, &bth, &info, kicks);
    }
    let Some(qp) = dev.lookup_qp(qpn) else {
        return drop_packet(dev, DropReason::UnknownQp, Some(&bth));
    };
    skb.cb()[..GRH_LEN].copy_from_slice(grh);
    qp.counts().packet_received(received_len(&skb, grh));
    queue(&qp, skb, &bth, info.as_ref());
    kicks.push(qp);
}

/// The packets a QP's inbox holds at most: a flood beyond what the QP's runs drain is dropped
/// (and counted), not queued without bound.
const INBOX_MAX: u32 = 4096;

/// Queues a packet (header `bth`, opcode `info`; none for a CNP) to `qp`'s inbox, or drops it
/// when the inbox is full.
fn queue(qp: &Qp<RrxeDevice>, skb: SkBuff, bth: &Bth, info: Option<&OpcodeInfo>) {
    if qp.pipe().inbox.push_bounded(skb, INBOX_MAX).is_err() {
        return drop_qp_packet(qp, DropReason::InboxFull, Some(bth));
    }
    if let Some(info) = info {
        qp.pipe().arrived(info);
    }
}
