// SPDX-License-Identifier: GPL-2.0

//! Fuzzing of the ICRC: verification of random input, every single-bit flip of valid packets
//! detected (or masked where the ICRC masks the field), and the ICRC in pieces.

use super::packet::{
    implemented_opcodes,
    valid_packet, //
};
use super::*;

/// Random IPv4, IPv6 and UDP headers, filled in that order.
fn random_headers(rng: &mut Rng) -> ([u8; IPV4_HDR_LEN], [u8; IPV6_HDR_LEN], [u8; UDP_HDR_LEN]) {
    let mut ip4 = [0; IPV4_HDR_LEN];
    rng.fill(&mut ip4);
    let mut ip6 = [0; IPV6_HDR_LEN];
    rng.fill(&mut ip6);
    let mut udp = [0; UDP_HDR_LEN];
    rng.fill(&mut udp);
    (ip4, ip6, udp)
}

#[test]
fn icrc_verification_survives_random_input() {
    let mut verified = 0u32;
    fuzz(0x1c2c_0000, 2_500, |rng, _| {
        let (ip4, ip6, udp) = random_headers(rng);
        let len = rng.len_upto(4200);
        let mut pkt = rng.bytes(len);
        // At times carry the right ICRC, so that both outcomes are exercised.
        let make_valid = pkt.len() >= ICRC_LEN && rng.chance(1, 4);
        if make_valid {
            let at = pkt.len() - ICRC_LEN;
            let icrc = icrc_ipv4(&ip4, &udp, &pkt[..at]);
            pkt[at..].copy_from_slice(&icrc_to_wire(icrc));
        }

        let split = split_icrc(&pkt);
        let v4 = verify_ipv4(&ip4, &udp, &pkt);
        let v6 = verify_ipv6(&ip6, &udp, &pkt);
        let Some(at) = pkt.len().checked_sub(ICRC_LEN) else {
            assert_eq!(split, Err(Error::Truncated));
            assert_eq!(v4, Err(Error::Truncated));
            assert_eq!(v6, Err(Error::Truncated));
            return;
        };
        let carried = u32::from_le_bytes(pkt[at..].try_into().unwrap());
        assert_eq!(split, Ok((&pkt[..at], carried)));
        let want4 = icrc_ipv4(&ip4, &udp, &pkt[..at]) == carried;
        let want6 = icrc_ipv6(&ip6, &udp, &pkt[..at]) == carried;
        assert_eq!(v4, if want4 { Ok(()) } else { Err(Error::BadIcrc) });
        assert_eq!(v6, if want6 { Ok(()) } else { Err(Error::BadIcrc) });
        assert!(!make_valid || want4);
        verified += u32::from(want4);
    });
    assert!(verified > 100);
}

/// Returns whether flipping a bit of transport byte `at` leaves the ICRC unchanged: BTH byte 4
/// (FECN, BECN and six reserved bits) is replaced by all ones before the CRC is computed.
fn transport_byte_masked(at: usize) -> bool {
    at == 4
}

#[test]
fn icrc_detects_every_single_bit_flip() {
    let implemented = implemented_opcodes();
    fuzz(0xf11b_0000, 300, |rng, case| {
        let op = implemented[(case % implemented.len() as u64) as usize];
        let p = valid_packet(rng, op);
        assert_eq!(verify_ipv4(&p.ip, &p.udp, &p.bytes), Ok(()));
        let bits = p.bytes.len() * 8;
        // Every bit of short packets, a sample of the bits of long ones.
        let flips: Vec<usize> = if bits <= 512 {
            (0..bits).collect()
        } else {
            (0..64).map(|_| rng.upto(bits - 1)).collect()
        };
        let mut pkt = p.bytes.clone();
        for bit in flips {
            let at = bit / 8;
            pkt[at] ^= 1 << (bit % 8);
            let expected = if transport_byte_masked(at) {
                Ok(())
            } else {
                Err(Error::BadIcrc)
            };
            assert_eq!(
                verify_ipv4(&p.ip, &p.udp, &pkt),
                expected,
                "bit {bit} of {op:?}"
            );
            pkt[at] ^= 1 << (bit % 8);
        }
        // The IPv4 type of service, time to live and checksum and the UDP checksum are masked;
        // every other bit of the network headers is covered.
        for _ in 0..16 {
            let mut ip = p.ip;
            let at = rng.upto(IPV4_HDR_LEN - 1);
            ip[at] ^= 1 << rng.below(8);
            let masked = matches!(at, 1 | 8 | 10 | 11);
            let expected = if masked { Ok(()) } else { Err(Error::BadIcrc) };
            assert_eq!(verify_ipv4(&ip, &p.udp, &p.bytes), expected, "IP byte {at}");
            let mut udp = p.udp;
            let at = rng.upto(UDP_HDR_LEN - 1);
            udp[at] ^= 1 << rng.below(8);
            let masked = matches!(at, 6 | 7);
            let expected = if masked { Ok(()) } else { Err(Error::BadIcrc) };
            assert_eq!(
                verify_ipv4(&p.ip, &udp, &p.bytes),
                expected,
                "UDP byte {at}"
            );
        }
    });
}

#[test]
fn icrc_in_pieces_matches_one_shot() {
    fuzz(0x91ec_e500, 5_000, |rng, _| {
        let (ip4, ip6, udp) = random_headers(rng);
        let len = rng.len_upto(600);
        let transport = rng.bytes(len);
        // Random cut points, duplicates (empty pieces) included, often around BTH byte 4.
        let mut cuts: Vec<usize> = (0..rng.upto(6))
            .map(|_| {
                if rng.bool() {
                    rng.upto(transport.len().min(8))
                } else {
                    rng.upto(transport.len())
                }
            })
            .collect();
        cuts.push(0);
        cuts.push(transport.len());
        cuts.sort_unstable();
        let mut v4 = Icrc::ipv4(&ip4, &udp);
        let mut v6 = Icrc::ipv6(&ip6, &udp);
        for pair in cuts.windows(2) {
            v4.update(&transport[pair[0]..pair[1]]);
            v6.update(&transport[pair[0]..pair[1]]);
        }
        assert_eq!(
            v4.finish(),
            icrc_ipv4(&ip4, &udp, &transport),
            "cuts {cuts:?}"
        );
        assert_eq!(
            v6.finish(),
            icrc_ipv6(&ip6, &udp, &transport),
            "cuts {cuts:?}"
        );
        assert_eq!(v4.finish_wire(), icrc_to_wire(v4.finish()));
    });
}
