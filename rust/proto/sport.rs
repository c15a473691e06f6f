// SPDX-License-Identifier: GPL-2.0

//! RoCEv2 UDP source ports: the entropy that ECMP routers and NICs' receive-side scaling hash
//! on. The destination port is always 4791; the source port is the only field of a RoCEv2
//! packet's UDP header that tells one QP's flow from another's.
//!
//! A connected (RC or UC) QP takes its port from the flow label of its address vector, as
//! ib_core's `rdma_get_udp_sport` defines it and C rxe and RoCE NICs use it: a user steers a
//! connection onto a path by its flow label (rdma_cm derives one from the connection's ports,
//! perftest has `--flow_label`). Without one the label is computed from the two QP numbers,
//! symmetrically, so both ends of a connection, whichever driver runs them, send on the same
//! port. Datagram QPs (UD, QP1) have one port for every destination, from their QP number.

/// The lowest source port RoCEv2 uses: ports `0xc000..=0xffff` carry the flow's 14 bits.
pub(crate) const SPORT_MIN: u16 = 0xc000;

/// The 20 bits of an IPv6 flow label.
pub(crate) const FLOW_LABEL_MASK: u32 = 0xf_ffff;

/// The port of a datagram QP (and of a connected one before it has an address vector): its
/// QP number folded into 14 bits.
pub(crate) fn of_qpn(qpn: u32) -> u16 {
    SPORT_MIN | ((qpn ^ (qpn >> 14)) & 0x3fff) as u16
}

/// The flow label of a connection whose address vector sets none, from its two QP numbers.
/// Symmetric: `flow_label_of(a, b) == flow_label_of(b, a)`.
pub(crate) fn flow_label_of(lqpn: u32, rqpn: u32) -> u32 {
    let mut v = u64::from(lqpn) * u64::from(rqpn);
    v ^= v >> 20;
    v ^= v >> 40;
    (v & u64::from(FLOW_LABEL_MASK)) as u32
}

/// A flow label's port: its low 14 bits, with its high 6 bits folded into the lowest 6.
/// Bits above the label's 20 are ignored.
pub(crate) fn of_flow_label(flow_label: u32) -> u16 {
    let low = flow_label & 0x3fff;
    let high = flow_label & 0xf_c000;
    SPORT_MIN | ((low ^ (high >> 14)) & 0x3fff) as u16
}

/// The port of a connected QP `lqpn` whose peer is `rqpn`: from the address vector's flow
/// label, or from the two QP numbers if that is 0.
pub(crate) fn of_connection(flow_label: u32, lqpn: u32, rqpn: u32) -> u16 {
    let label = if flow_label == 0 {
        flow_label_of(lqpn, rqpn)
    } else {
        flow_label
    };
    of_flow_label(label)
}
