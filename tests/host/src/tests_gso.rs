// SPDX-License-Identifier: GPL-2.0

//! Tests of `proto::gso`: which packets form a train, and that the packets the kernel cuts out
//! of a train are byte for byte the packets sent one by one (but the UDP checksum, which the
//! segmentation fills and the ICRC masks).

use crate::proto::gso::segment_headers;
use crate::proto::gso::train_len;
use crate::proto::gso::MAX_TRAIN_BYTES;
use crate::proto::icrc::icrc_ipv4;
use crate::proto::icrc::icrc_to_wire;
use crate::proto::icrc::verify_ipv4;

#[test]
fn trains_are_equal_packets_and_one_shorter_last() {
    assert_eq!(train_len([], 16), (0, 0));
    assert_eq!(train_len([1040], 16), (1, 1040));
    // A FIRST with a RETH is longer than the MIDDLEs behind it: the next one ends its train.
    assert_eq!(train_len([1056, 1040, 1040], 16), (2, 2096));
    assert_eq!(train_len([1040, 1040, 1040], 16), (3, 3120));
    // A shorter LAST ends the train; nothing after it joins.
    assert_eq!(train_len([1040, 1040, 500, 1040], 16), (3, 2580));
    // A longer packet (a LAST with immediate data) does not join.
    assert_eq!(train_len([1040, 1044], 16), (1, 1040));
    assert_eq!(train_len([1040; 20], 16), (16, 16 * 1040));
    assert_eq!(train_len([0, 0], 16), (1, 0));
}

#[test]
fn trains_fit_one_ipv4_datagram() {
    let (n, total) = train_len([4112usize; 64], 64);
    assert_eq!(n, MAX_TRAIN_BYTES / 4112);
    assert!(total + 28 <= 65535);
    assert_eq!(
        train_len([MAX_TRAIN_BYTES + 1, 1], 16),
        (1, MAX_TRAIN_BYTES + 1)
    );
}

/// A transport packet of `len` bytes (BTH through ICRC room) with a recognisable pattern.
fn packet(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|b| (b * 7 + i * 13) as u8).collect()
}

fn ipv4(tot_len: usize, id: u16) -> [u8; 20] {
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[1] = 0x02; // ECT(0): masked by the ICRC anyway
    ip[2..4].copy_from_slice(&(tot_len as u16).to_be_bytes());
    ip[4..6].copy_from_slice(&id.to_be_bytes());
    ip[6] = 0x40;
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&[192, 168, 77, 2]);
    ip[16..20].copy_from_slice(&[192, 168, 77, 1]);
    ip
}

fn udp(len: usize, check: u16) -> [u8; 8] {
    let mut u = [0u8; 8];
    u[0..2].copy_from_slice(&0xc123u16.to_be_bytes());
    u[2..4].copy_from_slice(&4791u16.to_be_bytes());
    u[4..6].copy_from_slice(&(len as u16).to_be_bytes());
    u[6..8].copy_from_slice(&check.to_be_bytes());
    u
}

/// Writes the ICRC into the last four bytes of `pkt` for the given headers.
fn seal(ip: &[u8; 20], u: &[u8; 8], pkt: &mut [u8]) {
    let n = pkt.len() - 4;
    let crc = icrc_ipv4(ip, u, &pkt[..n]);
    pkt[n..].copy_from_slice(&icrc_to_wire(crc));
}

#[test]
fn segments_equal_the_packets_sent_alone() {
    for (lens, id0) in [
        (vec![1040usize, 1040, 1040, 600], 0u16),
        (vec![4112, 4112], 0xfffe),
        (vec![1040; 16], 0x1234),
    ] {
        // One by one: each packet has its own headers (UDP checksum 0) and IP identification.
        let alone: Vec<Vec<u8>> = lens
            .iter()
            .enumerate()
            .map(|(i, &len)| {
                let mut p = packet(i, len);
                let ip = ipv4(28 + len, id0.wrapping_add(i as u16));
                seal(&ip, &udp(8 + len, 0), &mut p);
                p
            })
            .collect();
        // As a train: one header over all, each packet's ICRC from its segment's headers.
        let total: usize = lens.iter().sum();
        let (tip, tudp) = (ipv4(28 + total, id0), udp(8 + total, 0xbeef));
        let mut train: Vec<u8> = Vec::new();
        for (i, &len) in lens.iter().enumerate() {
            let mut p = packet(i, len);
            let (sip, sudp) = segment_headers(&tip, &tudp, i as u16, len).unwrap();
            seal(&sip, &sudp, &mut p);
            train.extend_from_slice(&p);
        }
        // Cut as the kernel does: headers per segment, a UDP checksum, a fresh IP checksum.
        let mut off = 0;
        for (i, &len) in lens.iter().enumerate() {
            let seg = &train[off..off + len];
            off += len;
            assert_eq!(
                seg,
                &alone[i][..],
                "segment {i} differs from the packet sent alone"
            );
            let (mut sip, mut sudp) = segment_headers(&tip, &tudp, i as u16, len).unwrap();
            sip[10..12].copy_from_slice(&[0x12, 0x34]);
            sudp[6..8].copy_from_slice(&(0x5a5a ^ i as u16).to_be_bytes());
            assert_eq!(
                sip[4..6],
                id0.wrapping_add(i as u16).to_be_bytes(),
                "segment {i} IP identification"
            );
            assert!(verify_ipv4(&sip, &sudp, seg).is_ok(), "segment {i} ICRC");
        }
        assert_eq!(off, train.len());
    }
}

#[test]
fn segment_headers_reject_lengths_past_the_fields() {
    let (ip, u) = (ipv4(28, 0), udp(8, 0));
    assert!(segment_headers(&ip, &u, 0, 65535 - 28).is_some());
    assert!(segment_headers(&ip, &u, 0, 65535 - 27).is_none());
    assert!(segment_headers(&ip, &u, 0, usize::MAX).is_none());
}
