// SPDX-License-Identifier: GPL-2.0

//! Trains: consecutive RoCEv2 packets to one destination sent as one UDP GSO buffer.
//!
//! The stack (or the NIC) cuts a UDP GSO buffer into segments of `gso_size` UDP payload bytes,
//! the last possibly shorter, and gives each segment its own IPv4 and UDP lengths and an IP
//! identification: the buffer's plus the segment's index (`inet_gso_segment`). A train is
//! therefore a run of packets, each with its own BTH, payload and ICRC, all of one length but
//! the last, which may be shorter. The ICRC of each packet must cover the headers its segment
//! will carry, which [`segment_headers`] derives from the train's; the host tests check that
//! they are the headers the packet has when sent alone (the UDP checksum aside: the ICRC masks
//! it), so the driver builds every packet of a train as if it were sent alone.

use super::icrc::{
    IPV4_HDR_LEN,
    UDP_HDR_LEN, //
};

/// The most bytes one IPv4 datagram carries (its total length is 16 bits).
pub(crate) const IPV4_MAX_LEN: usize = 65535;

/// The most UDP payload bytes a train may hold behind one IPv4 and one UDP header.
pub(crate) const MAX_TRAIN_BYTES: usize = IPV4_MAX_LEN - IPV4_HDR_LEN - UDP_HDR_LEN;

/// How many of the packets of lengths `lens` (UDP payload bytes each, in sending order) form a
/// train from the first, and their total length: packets of the first one's length, then at
/// most one shorter packet, which ends the train; no more than `max_packets` packets and
/// [`MAX_TRAIN_BYTES`] bytes. A count below 2 means no train (the first is sent alone).
pub(crate) fn train_len(
    lens: impl IntoIterator<Item = usize>,
    max_packets: usize,
) -> (usize, usize) {
    let mut it = lens.into_iter();
    let Some(first) = it.next() else {
        return (0, 0);
    };
    if first == 0 || first > MAX_TRAIN_BYTES {
        return (1, first);
    }
    let (mut count, mut total) = (1usize, first);
    for len in it {
        if count >= max_packets || len == 0 || len > first {
            break;
        }
        let Some(t) = total.checked_add(len).filter(|&t| t <= MAX_TRAIN_BYTES) else {
            break;
        };
        count += 1;
        total = t;
        if len < first {
            break;
        }
    }
    (count, total)
}

/// The IPv4 and UDP headers of segment `index` (from 0) of a train, `len` UDP payload bytes
/// long, as the kernel's segmentation writes them from the train's headers `ip` and `udp`: the
/// IP total length and the UDP length of the segment, the IP identification advanced by
/// `index`. The IP header checksum and the UDP checksum are left as they are: the ICRC masks
/// both. `None` if the lengths do not fit their fields.
pub(crate) fn segment_headers(
    ip: &[u8; IPV4_HDR_LEN],
    udp: &[u8; UDP_HDR_LEN],
    index: u16,
    len: usize,
) -> Option<([u8; IPV4_HDR_LEN], [u8; UDP_HDR_LEN])> {
    let udp_len = u16::try_from(len.checked_add(UDP_HDR_LEN)?).ok()?;
    let tot_len = udp_len.checked_add(IPV4_HDR_LEN as u16)?;
    let id = u16::from_be_bytes([ip[4], ip[5]]).wrapping_add(index);
    let mut sip = *ip;
    sip[2..4].copy_from_slice(&tot_len.to_be_bytes());
    sip[4..6].copy_from_slice(&id.to_be_bytes());
    let mut sudp = *udp;
    sudp[4..6].copy_from_slice(&udp_len.to_be_bytes());
    Some((sip, sudp))
}
