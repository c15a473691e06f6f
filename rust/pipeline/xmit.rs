// SPDX-License-Identifier: GPL-2.0

//! Packet output: building a RoCEv2 packet (transport headers, payload, pad, ICRC room) in a
//! socket buffer, and sending it: to a QP of the same device directly (loopback, no IP, UDP or
//! ICRC work, the packet never leaves the host), or over IPv4/UDP port 4791 with the ICRC.

use super::{
    crc::Icrc,
    recv,
    Kicks,
    TxItem,
    OUTBOX, //
};
use crate::{
    counters::Counter,
    device::RrxeDevice,
    ib::{
        AddressVector,
        Device,
        NetworkType,
        Qp, //
    },
    kernel_ext::ehostunreach,
    mm::Fill,
    net::{
        Route4,
        Route6,
        SkBuff,
        SkbTrain,
        TxOwner,
        TxSocket, //
    },
    proto::{
        cnp, ecn, gso,
        hdr::{
            ICRC_LEN,
            ROCE_V2_UDP_PORT, //
        },
        icrc,
        packet::{
            ip_packet_len,
            packet_len,
            TransportHeaders, //
        },
    },
};
use kernel::{
    prelude::*,
    sync::atomic::Relaxed, //
};

/// Room in front of the transport headers: an IPv6 header is the largest, then UDP.
const HEADROOM: usize = 40 + 8;

/// `ETH_P_IP`.
const ETH_P_IP: u16 = 0x0800;
/// `ETH_P_IPV6`.
const ETH_P_IPV6: u16 = 0x86dd;

/// Builds a packet with headers `h` and `payload` bytes that `fill` writes, then the pad and
/// the room for the ICRC (zeroed). Only the headers and the tail are zeroed: the payload is
/// copied in without zeroing first, and the packet is built only if every byte was written.
pub(crate) fn build(
    dev: &Device<RrxeDevice>,
    h: &TransportHeaders,
    payload: usize,
    fill: impl FnOnce(&mut Fill<'_>) -> Result,
) -> Result<SkBuff> {
    let info = h.bth.opcode.info().ok_or(EINVAL)?;
    let len = packet_len(&info, payload).ok_or(EINVAL)?;
    let tail = len.checked_sub(info.header_len + payload).ok_or(EINVAL)?;
    let mut skb = SkBuff::alloc(dev.netdev(), len, HEADROOM)?;
    let hl = h
        .write(skb.put_zeroed(info.header_len)?)
        .map_err(|_| EINVAL)?;
    if hl != info.header_len {
        return Err(EINVAL);
    }
    skb.put_filled(payload, fill)?;
    skb.put_zeroed(tail)?;
    Ok(skb)
}

/// Builds a CNP to QP `dest_qpn` ([`cnp`]), with zeroed room for the ICRC.
pub(crate) fn build_cnp(dev: &Device<RrxeDevice>, dest_qpn: u32) -> Result<SkBuff> {
    let mut skb = SkBuff::alloc(dev.netdev(), cnp::CNP_LEN + ICRC_LEN, HEADROOM)?;
    cnp::write_cnp(skb.put_zeroed(cnp::CNP_LEN)?, dest_qpn).map_err(|_| EINVAL)?;
    skb.put_zeroed(ICRC_LEN)?;
    Ok(skb)
}

/// Sends one packet of `qp`. Not with interrupts disabled (the IP output path enables BHs). A
/// QP of this device that receives it is listed in `kicks`, not run here.
fn send(qp: &Qp<RrxeDevice>, item: TxItem, kicks: &mut Kicks) {
    let dev = qp.device();
    let TxItem {
        mut skb,
        av,
        src_port,
    } = item;
    qp.counts()
        .packet_sent(ip_packet_len(skb.len(), av.network == NetworkType::Ipv6));
    if dev.is_local(&av) {
        recv::loopback(dev, skb, &av, kicks);
        return;
    }
    // Multicast reaches the group's QPs on this device directly (a copy), and the wire.
    if crate::mcast::is_multicast(&av.dgid) {
        if let Ok(local) = skb.try_copy() {
            recv::loopback(dev, local, &av, kicks);
        }
    }
    let r = match av.network {
        NetworkType::Ipv4 => {
            send_ipv4(qp, &mut skb, &av, src_port).and_then(|rt| rt.output(charge(qp, skb)?))
        }
        NetworkType::Ipv6 => {
            send_ipv6(dev, &mut skb, &av, src_port).and_then(|rt| rt.output(charge(qp, skb)?))
        }
    };
    if r.is_err() {
        qp.counts().inc(Counter::SendErr);
    }
}

/// Marks a packet ready for the stack as `qp`'s: counted in its flow until released.
/// `EHOSTUNREACH` for a QP that has no socket (set up for loopback only).
fn charge(qp: &Qp<RrxeDevice>, mut skb: SkBuff) -> Result<SkBuff> {
    TxSocket::charge(qp, &mut skb)?;
    qp.pipe().flow.sent();
    Ok(skb)
}

/// Sends a batch of `qp`'s packets in order: runs of packets to one IPv4 peer as trains (one
/// UDP GSO buffer each, [`gso`]), the others one by one.
pub(crate) fn send_batch(qp: &Qp<RrxeDevice>, items: &mut KVec<TxItem>, kicks: &mut Kicks) {
    let dev = qp.device();
    let bytes = items.iter().map(|it| it.skb.len() as u64).sum::<u64>();
    qp.pipe().tx_bytes.fetch_add(bytes, Relaxed);
    // Plan first (packet counts and bytes of each train, in order), then move the packets out.
    let mut plan = [(0usize, 0usize); OUTBOX];
    let (mut nplan, mut i) = (0, 0);
    // Asked of the reaction point only when a train would form (its lock, once per batch).
    let mut trains = None;
    while let Some(rest) = items.get(i..).filter(|r| !r.is_empty()) {
        let (mut n, mut total) = train_at(dev, rest);
        if n > 1 && !*trains.get_or_insert_with(|| super::congestion::sends_trains(qp)) {
            (n, total) = (1, rest[0].skb.len());
        }
        let Some(slot) = plan.get_mut(nplan) else {
            break;
        };
        *slot = (n.max(1), total);
        nplan += 1;
        i += n.max(1);
    }
    let mut packets = items.drain_all();
    for &(n, total) in &plan[..nplan] {
        if n < 2 {
            if let Some(item) = packets.next() {
                send(qp, item, kicks);
            }
            continue;
        }
        let mut train = packets.by_ref().take(n);
        if send_train(qp, &mut train, n, total).is_err() {
            qp.counts().inc(Counter::SendErr);
        }
        // What a failed train left is dropped (RC retransmits it), never sent out of order.
        train.for_each(|item| item.skb.consume());
    }
    // Packets past the plan (none: the batch holds at most `OUTBOX`) are sent alone.
    for item in packets {
        send(qp, item, kicks);
    }
}

/// The packets at the start of `items` that form a train, and their bytes: IPv4 packets to
/// the wire with the same address vector and source port, lengths as [`gso::train_len`]
/// allows. FLUSH requests go alone (C rxe's ICRC for them is computed over other bytes), and
/// so does every packet of a QP that DCQCN limits ([`send_batch`],
/// [`super::congestion::sends_trains`]).
fn train_at(dev: &Device<RrxeDevice>, items: &[TxItem]) -> (usize, usize) {
    let Some(first) = items.first() else {
        return (0, 0);
    };
    let eligible = |it: &TxItem| {
        it.av.network == NetworkType::Ipv4
            && it.av == first.av
            && it.src_port == first.src_port
            && !icrc::is_rc_flush(it.skb.data())
    };
    if !crate::params::gso()
        || !eligible(first)
        || dev.is_local(&first.av)
        || crate::mcast::is_multicast(&first.av.dgid)
    {
        return (1, first.skb.len());
    }
    let lens = items
        .iter()
        .take_while(|it| eligible(it))
        .map(|it| it.skb.len());
    gso::train_len(lens, OUTBOX)
}

/// Sends the `n` packets of `packets` (`total` bytes) as one train ([`SkbTrain`]): each gets
/// its own IPv4 and UDP headers, with the identifications the route reserved for the train (the
/// first's plus the packet's index, as the stack rewrites them when it cuts the train), and its
/// ICRC over them, exactly as it would be sent alone; the first one's UDP header then covers
/// the whole train until the stack cuts it.
fn send_train(
    qp: &Qp<RrxeDevice>,
    packets: &mut impl Iterator<Item = TxItem>,
    n: usize,
    total: usize,
) -> Result {
    let first = packets.next().ok_or(EINVAL)?;
    qp.counts()
        .packet_sent(ip_packet_len(first.skb.len(), false));
    let (av, src_port) = (first.av, first.src_port);
    let mut head = first.skb;
    let segs = u16::try_from(n).map_err(|_| EINVAL)?;
    let gso_size = u16::try_from(head.len()).map_err(|_| EINVAL)?;
    let rt = ipv4_headers(qp, &mut head, &av, src_port, segs)?;
    write_icrc(&mut head, 20)?;
    let id0 = head.data().get(4..6).ok_or(EINVAL)?;
    let id0 = u16::from_be_bytes([id0[0], id0[1]]);
    let udp_len = u16::try_from(total + 8).map_err(|_| EINVAL)?;
    head.data_mut()
        .get_mut(24..26)
        .ok_or(EINVAL)?
        .copy_from_slice(&udp_len.to_be_bytes());
    let mut train = SkbTrain::new(head);
    for (i, item) in (1u16..).zip(packets) {
        qp.counts()
            .packet_sent(ip_packet_len(item.skb.len(), false));
        let mut skb = item.skb;
        push_ipv4_udp(&mut skb, &av, src_port)?;
        skb.data_mut()
            .get_mut(4..6)
            .ok_or(EINVAL)?
            .copy_from_slice(&id0.wrapping_add(i).to_be_bytes());
        write_icrc(&mut skb, 20)?;
        train.push(skb)?;
    }
    rt.output(charge(qp, train.finish(gso_size)?)?)
}

/// Pushes the UDP header (checksum 0, as RoCEv2 senders do).
fn push_udp(skb: &mut SkBuff, src_port: u16) -> Result {
    let udp_len = u16::try_from(skb.len() + 8).map_err(|_| EINVAL)?;
    let udp = skb.push(8).ok_or(ENOMEM)?;
    udp[0..2].copy_from_slice(&src_port.to_be_bytes());
    udp[2..4].copy_from_slice(&ROCE_V2_UDP_PORT.to_be_bytes());
    udp[4..6].copy_from_slice(&udp_len.to_be_bytes());
    skb.reset_transport_header();
    Ok(())
}

/// Writes the ICRC over the final headers: `l3` bytes of IP header, then UDP, then the rest.
fn write_icrc(skb: &mut SkBuff, l3: usize) -> Result {
    let data = skb.data_mut();
    let (hdrs, rest) = data.split_at_mut_checked(l3 + 8).ok_or(EINVAL)?;
    let covered = rest.len().checked_sub(ICRC_LEN).ok_or(EINVAL)?;
    let udp: &[u8; 8] = hdrs[l3..].try_into().map_err(|_| EINVAL)?;
    let transport = &rest[..covered];
    // C rxe checks FLUSH requests against its own ICRC (see `icrc::rxe_flush_icrc_ipv4`).
    let rxe_flush = icrc::is_rc_flush(transport) && crate::params::rxe_flush_icrc();
    let crc = if l3 == 20 {
        let ip: &[u8; 20] = hdrs[..20].try_into().map_err(|_| EINVAL)?;
        if rxe_flush {
            Icrc::rxe_flush_ipv4(ip, udp, transport)
        } else {
            Icrc::of_ipv4(ip, udp, transport)
        }
    } else {
        let ip: &[u8; 40] = hdrs[..40].try_into().map_err(|_| EINVAL)?;
        if rxe_flush {
            Icrc::rxe_flush_ipv6(ip, udp, transport)
        } else {
            Icrc::of_ipv6(ip, udp, transport)
        }
    };
    rest[covered..].copy_from_slice(&icrc::icrc_to_wire(crc));
    Ok(())
}

/// Pushes UDP and IPv6 headers, routes, and writes the ICRC.
fn send_ipv6(
    dev: &Device<RrxeDevice>,
    skb: &mut SkBuff,
    av: &AddressVector,
    src_port: u16,
) -> Result<Route6> {
    if !dev.tunnels().has_ipv6() {
        return Err(ehostunreach());
    }
    let rt = Route6::lookup(dev.netdev(), &av.sgid, &av.dgid)?;
    push_udp(skb, src_port)?;
    let payload = u16::try_from(skb.len()).map_err(|_| EINVAL)?;
    {
        let ip = skb.push(40).ok_or(ENOMEM)?;
        let flow = av.flow_label & 0xf_ffff;
        let word = (6u32 << 28) | (u32::from(av.traffic_class) << 20) | flow;
        ip[0..4].copy_from_slice(&word.to_be_bytes());
        ip[4..6].copy_from_slice(&payload.to_be_bytes());
        ip[6] = 17;
        ip[7] = if av.hop_limit == 0 { 64 } else { av.hop_limit };
        ip[8..24].copy_from_slice(&av.sgid);
        ip[24..40].copy_from_slice(&av.dgid);
    }
    skb.set_protocol(ETH_P_IPV6);
    skb.set_priority(ecn::priority_of_tclass(av.traffic_class));
    rt.prepare(skb)?;
    write_icrc(skb, 40)?;
    Ok(rt)
}

/// The IPv4 address of an IPv4-mapped GID.
fn v4(gid: &[u8; 16]) -> [u8; 4] {
    [gid[12], gid[13], gid[14], gid[15]]
}

/// Pushes UDP and IPv4 headers, routes, and writes the ICRC.
fn send_ipv4(
    qp: &Qp<RrxeDevice>,
    skb: &mut SkBuff,
    av: &AddressVector,
    src_port: u16,
) -> Result<Route4> {
    let rt = ipv4_headers(qp, skb, av, src_port, 1)?;
    // The ICRC covers the final IP header (identification included).
    write_icrc(skb, 20)?;
    Ok(rt)
}

/// Pushes UDP and IPv4 headers in front of the data and routes them (the route cached in the
/// QP's socket, as C rxe caches it per QP), with `segs` IP identifications for the packets the
/// buffer becomes.
fn ipv4_headers(
    qp: &Qp<RrxeDevice>,
    skb: &mut SkBuff,
    av: &AddressVector,
    src_port: u16,
    segs: u16,
) -> Result<Route4> {
    let (saddr, daddr) = (v4(&av.sgid), v4(&av.dgid));
    let socket = qp.tx_socket().ok_or_else(ehostunreach)?;
    let rt = Route4::lookup_cached(socket, qp.device().netdev(), saddr, daddr)?;
    push_ipv4_udp(skb, av, src_port)?;
    rt.prepare(skb, segs)?;
    Ok(rt)
}

/// Pushes UDP and IPv4 headers in front of the data (identification 0: routing picks it).
fn push_ipv4_udp(skb: &mut SkBuff, av: &AddressVector, src_port: u16) -> Result {
    let (saddr, daddr) = (v4(&av.sgid), v4(&av.dgid));
    push_udp(skb, src_port)?;
    let total = u16::try_from(skb.len() + 20).map_err(|_| EINVAL)?;
    {
        let ip = skb.push(20).ok_or(ENOMEM)?;
        ip[0] = 0x45;
        ip[1] = av.traffic_class;
        ip[2..4].copy_from_slice(&total.to_be_bytes());
        // Don't fragment.
        ip[6] = 0x40;
        ip[8] = if av.hop_limit == 0 { 64 } else { av.hop_limit };
        ip[9] = 17;
        ip[12..16].copy_from_slice(&saddr);
        ip[16..20].copy_from_slice(&daddr);
    }
    skb.set_protocol(ETH_P_IP);
    skb.set_priority(ecn::priority_of_tclass(av.traffic_class));
    skb.reset_network_header();
    Ok(())
}
