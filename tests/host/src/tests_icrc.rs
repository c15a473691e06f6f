// SPDX-License-Identifier: GPL-2.0

//! Tests of the CRC-32 and the RoCEv2 ICRC in `proto::icrc`.
//!
//! The expected values come from `icrc_vectors`, which `gen_icrc_vectors.py` computes with
//! `zlib.crc32` and its own masking after reproducing a hardware capture and Scapy.

use crate::icrc_vectors::IPV4_VECTORS;
use crate::icrc_vectors::IPV6_VECTORS;
use crate::proto::icrc::crc32;
use crate::proto::icrc::icrc_from_wire;
use crate::proto::icrc::icrc_ipv4;
use crate::proto::icrc::icrc_ipv6;
use crate::proto::icrc::icrc_to_wire;
use crate::proto::icrc::is_rc_flush;
use crate::proto::icrc::rxe_flush_icrc_ipv4;
use crate::proto::icrc::rxe_flush_icrc_ipv6;
use crate::proto::icrc::split_icrc;
use crate::proto::icrc::verify_ipv4;
use crate::proto::icrc::verify_ipv6;
use crate::proto::icrc::Crc32;
use crate::proto::icrc::Icrc;
use crate::proto::packet::parse_headers;
use crate::proto::Error;

#[test]
fn crc32_check_value() {
    assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    assert_eq!(crc32(b""), 0);
    assert_eq!(
        crc32(b"The quick brown fox jumps over the lazy dog"),
        0x414f_a339
    );
}

#[test]
fn crc32_incremental_equals_one_shot() {
    let data: Vec<u8> = (0..=255_u8).cycle().take(1000).collect();
    let whole = crc32(&data);
    for split in [0, 1, 3, 4, 5, 255, 256, 999, 1000] {
        let mut crc = Crc32::new();
        crc.update(&data[..split]);
        crc.update(&data[split..]);
        assert_eq!(crc.finish(), whole, "split at {split}");
    }
    assert_eq!(Crc32::default(), Crc32::new());
}

#[test]
fn lrh_seed_matches_the_c_driver_constant() {
    // The C driver starts every ICRC from this register value, documented as the CRC of eight
    // all-ones bytes standing for the masked LRH.
    let mut crc = Crc32::new();
    crc.update(&[0xff; 8]);
    assert_eq!(crc.register(), 0xdebb_20e3);
}

#[test]
fn ipv4_vectors_match() {
    assert!(IPV4_VECTORS.len() >= 4);
    for v in IPV4_VECTORS {
        let (covered, carried) = split_icrc(v.packet).unwrap();
        assert_eq!(carried, v.icrc, "{}: carried", v.name);
        assert_eq!(
            icrc_ipv4(&v.ip_hdr, &v.udp_hdr, covered),
            v.icrc,
            "{}",
            v.name
        );
        assert_eq!(
            verify_ipv4(&v.ip_hdr, &v.udp_hdr, v.packet),
            Ok(()),
            "{}",
            v.name
        );
    }
}

#[test]
fn ipv6_vectors_match() {
    assert!(IPV6_VECTORS.len() >= 3);
    for v in IPV6_VECTORS {
        let (covered, carried) = split_icrc(v.packet).unwrap();
        assert_eq!(carried, v.icrc, "{}: carried", v.name);
        assert_eq!(
            icrc_ipv6(&v.ip_hdr, &v.udp_hdr, covered),
            v.icrc,
            "{}",
            v.name
        );
        assert_eq!(
            verify_ipv6(&v.ip_hdr, &v.udp_hdr, v.packet),
            Ok(()),
            "{}",
            v.name
        );
    }
}

#[test]
fn hardware_capture_fixes_the_wire_byte_order() {
    // A CNP captured from a ConnectX-4 Lx ends with the bytes 82 fd 00 2a.
    let cnp = &IPV4_VECTORS[0];
    assert_eq!(cnp.name, "cnp_connectx4_capture");
    assert_eq!(
        &cnp.packet[cnp.packet.len() - 4..],
        &[0x82, 0xfd, 0x00, 0x2a]
    );
    let covered = &cnp.packet[..cnp.packet.len() - 4];
    let mut icrc = Icrc::ipv4(&cnp.ip_hdr, &cnp.udp_hdr);
    icrc.update(covered);
    assert_eq!(icrc.finish_wire(), [0x82, 0xfd, 0x00, 0x2a]);
    assert_eq!(icrc.finish(), 0x2a00_fd82);
}

#[test]
fn wire_order_is_little_endian() {
    assert_eq!(icrc_to_wire(0x1122_3344), [0x44, 0x33, 0x22, 0x11]);
    assert_eq!(icrc_from_wire([0x44, 0x33, 0x22, 0x11]), 0x1122_3344);
}

#[test]
fn scattered_transport_gives_the_same_icrc() {
    for v in IPV6_VECTORS {
        let covered = &v.packet[..v.packet.len() - 4];
        for first in 0..=covered.len().min(20) {
            for second in first..=covered.len().min(24) {
                let mut icrc = Icrc::ipv6(&v.ip_hdr, &v.udp_hdr);
                icrc.update(&covered[..first]);
                icrc.update(&[]);
                icrc.update(&covered[first..second]);
                icrc.update(&covered[second..]);
                assert_eq!(icrc.finish(), v.icrc, "{} split {first}/{second}", v.name);
            }
        }
        let mut bytewise = Icrc::ipv6(&v.ip_hdr, &v.udp_hdr);
        for byte in covered.chunks(1) {
            bytewise.update(byte);
        }
        assert_eq!(bytewise.finish(), v.icrc, "{} byte by byte", v.name);
    }
}

#[test]
fn masked_fields_do_not_change_the_icrc() {
    let v = &IPV4_VECTORS[2];
    let covered = &v.packet[..v.packet.len() - 4];
    let mut ip = v.ip_hdr;
    ip[1] ^= 0xa5; // TOS
    ip[8] ^= 0x3c; // TTL
    ip[10] ^= 0x12; // checksum
    ip[11] ^= 0x34;
    let mut udp = v.udp_hdr;
    udp[6] ^= 0xff; // checksum
    udp[7] ^= 0x01;
    let mut transport = covered.to_vec();
    transport[4] ^= 0xc3; // FECN, BECN and resv6a
    assert_eq!(icrc_ipv4(&ip, &udp, &transport), v.icrc);

    let w = &IPV6_VECTORS[0];
    let covered = &w.packet[..w.packet.len() - 4];
    let mut ip6 = w.ip_hdr;
    ip6[0] ^= 0x0f; // traffic class, high nibble
    ip6[1] ^= 0xff; // traffic class low nibble and flow label
    ip6[2] ^= 0x5a;
    ip6[3] ^= 0xa5;
    ip6[7] ^= 0x80; // hop limit
    assert_eq!(icrc_ipv6(&ip6, &w.udp_hdr, covered), w.icrc);
}

#[test]
fn covered_fields_change_the_icrc() {
    let v = &IPV4_VECTORS[2];
    let covered = &v.packet[..v.packet.len() - 4];
    // Everything but TOS (1), TTL (8) and the checksum (10, 11) is covered.
    for at in [0, 2, 3, 4, 5, 6, 7, 9, 12, 13, 16, 19] {
        let mut ip = v.ip_hdr;
        ip[at] ^= 0x01;
        assert_ne!(
            icrc_ipv4(&ip, &v.udp_hdr, covered),
            v.icrc,
            "IPv4 byte {at}"
        );
    }
    for at in 0..6 {
        let mut udp = v.udp_hdr;
        udp[at] ^= 0x01;
        assert_ne!(icrc_ipv4(&v.ip_hdr, &udp, covered), v.icrc, "UDP byte {at}");
    }
    for at in (0..covered.len()).filter(|&at| at != 4) {
        let mut transport = covered.to_vec();
        transport[at] ^= 0x01;
        assert_ne!(
            icrc_ipv4(&v.ip_hdr, &v.udp_hdr, &transport),
            v.icrc,
            "transport byte {at}"
        );
    }
    let mut ip6 = IPV6_VECTORS[0].ip_hdr;
    ip6[0] ^= 0x10; // the version nibble is covered
    let w = &IPV6_VECTORS[0];
    assert_ne!(
        icrc_ipv6(&ip6, &w.udp_hdr, &w.packet[..w.packet.len() - 4]),
        w.icrc
    );
}

#[test]
fn corrupted_or_short_packets_fail_verification() {
    let v = &IPV4_VECTORS[3];
    let mut pkt = v.packet.to_vec();
    let last = pkt.len() - 1;
    pkt[last] ^= 0x80;
    assert_eq!(
        verify_ipv4(&v.ip_hdr, &v.udp_hdr, &pkt),
        Err(Error::BadIcrc)
    );
    pkt[last] ^= 0x80;
    pkt[20] ^= 0x01;
    assert_eq!(
        verify_ipv4(&v.ip_hdr, &v.udp_hdr, &pkt),
        Err(Error::BadIcrc)
    );
    for len in 0..4 {
        assert_eq!(split_icrc(&pkt[..len]), Err(Error::Truncated));
    }
    let w = &IPV6_VECTORS[1];
    let mut pkt6 = w.packet.to_vec();
    pkt6[0] ^= 0x01;
    assert_eq!(
        verify_ipv6(&w.ip_hdr, &w.udp_hdr, &pkt6),
        Err(Error::BadIcrc)
    );
}

#[test]
fn vector_packets_parse_with_their_payload_lengths() {
    let v4 = IPV4_VECTORS
        .iter()
        .map(|v| (v.name, v.packet, v.payload_len));
    let v6 = IPV6_VECTORS
        .iter()
        .map(|v| (v.name, v.packet, v.payload_len));
    for (name, packet, payload_len) in v4.chain(v6) {
        match payload_len {
            Some(len) => assert_eq!(parse_headers(packet).unwrap().payload_len, len, "{name}"),
            None => assert_eq!(parse_headers(packet), Err(Error::BadOpcode), "{name}"),
        }
    }
}

/// An RC FLUSH (range, global visibility) that C rdma_rxe sent across the interop wire
/// (`RRXE_INTEROP_PCAP`, guest b to guest a): IPv4 header, UDP header, BTH through ICRC.
const RXE_FLUSH_IP: [u8; 20] = [
    0x45, 0x00, 0x00, 0x40, 0x87, 0xbc, 0x40, 0x00, 0x40, 0x11, 0x7d, 0x9c, 0xc0, 0xa8, 0x5a, 0x02,
    0xc0, 0xa8, 0x5a, 0x01,
];
const RXE_FLUSH_UDP: [u8; 8] = [0xc2, 0x58, 0x12, 0xb7, 0x00, 0x2c, 0x00, 0x00];
const RXE_FLUSH: [u8; 36] = [
    0x1c, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x18, 0x80, 0x00, 0x00, 0x0f, 0x00, 0x00, 0x00, 0x01,
    0x00, 0x00, 0x55, 0x61, 0xcc, 0x5c, 0x90, 0x00, 0x00, 0x00, 0x0a, 0xec, 0x00, 0x00, 0x13, 0x88,
    0x61, 0xdc, 0x9e, 0xed,
];

#[test]
fn c_rxe_flush_icrc_covers_the_headers_twice() {
    let (covered, carried) = split_icrc(&RXE_FLUSH).unwrap();
    assert!(is_rc_flush(covered));
    // Not the IBA ICRC ...
    assert_ne!(icrc_ipv4(&RXE_FLUSH_IP, &RXE_FLUSH_UDP, covered), carried);
    // ... but the one over the masked headers followed by the raw headers again.
    assert_eq!(
        rxe_flush_icrc_ipv4(&RXE_FLUSH_IP, &RXE_FLUSH_UDP, covered),
        carried
    );
    let mut icrc = Icrc::ipv4(&RXE_FLUSH_IP, &RXE_FLUSH_UDP);
    icrc.update(covered);
    let mut twice = covered.to_vec();
    twice.extend_from_slice(covered);
    let mut whole = Icrc::ipv4(&RXE_FLUSH_IP, &RXE_FLUSH_UDP);
    whole.update(&twice);
    assert_eq!(whole.finish(), carried);
    assert_ne!(icrc.finish(), carried);
    // Received FLUSHes pass with either ICRC; a corrupted one with neither.
    assert_eq!(
        verify_ipv4(&RXE_FLUSH_IP, &RXE_FLUSH_UDP, &RXE_FLUSH),
        Ok(())
    );
    let mut iba = covered.to_vec();
    iba.extend_from_slice(&icrc_to_wire(icrc_ipv4(
        &RXE_FLUSH_IP,
        &RXE_FLUSH_UDP,
        covered,
    )));
    assert_eq!(verify_ipv4(&RXE_FLUSH_IP, &RXE_FLUSH_UDP, &iba), Ok(()));
    for pkt in [RXE_FLUSH.to_vec(), iba] {
        for at in [0x13, 0x1f] {
            let mut bad = pkt.clone();
            bad[at] ^= 0x40;
            assert_eq!(
                verify_ipv4(&RXE_FLUSH_IP, &RXE_FLUSH_UDP, &bad),
                Err(Error::BadIcrc),
                "byte {at:#x}"
            );
        }
    }
}

#[test]
fn only_rc_flush_gets_the_rxe_icrc() {
    // Any other packet with rxe's FLUSH-style ICRC is refused: the quirk is FLUSH's alone.
    for v in IPV4_VECTORS {
        let (covered, _) = split_icrc(v.packet).unwrap();
        let mut pkt = covered.to_vec();
        pkt.extend_from_slice(&icrc_to_wire(rxe_flush_icrc_ipv4(
            &v.ip_hdr, &v.udp_hdr, covered,
        )));
        let want = if is_rc_flush(covered) {
            Ok(())
        } else {
            Err(Error::BadIcrc)
        };
        assert_eq!(verify_ipv4(&v.ip_hdr, &v.udp_hdr, &pkt), want, "{}", v.name);
    }
    for v in IPV6_VECTORS {
        let (covered, _) = split_icrc(v.packet).unwrap();
        let mut pkt = covered.to_vec();
        pkt.extend_from_slice(&icrc_to_wire(rxe_flush_icrc_ipv6(
            &v.ip_hdr, &v.udp_hdr, covered,
        )));
        let want = if is_rc_flush(covered) {
            Ok(())
        } else {
            Err(Error::BadIcrc)
        };
        assert_eq!(verify_ipv6(&v.ip_hdr, &v.udp_hdr, &pkt), want, "{}", v.name);
    }
}
