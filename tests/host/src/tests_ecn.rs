// SPDX-License-Identifier: GPL-2.0

//! ECN codepoints in traffic classes and GRH areas, and the CNP's bytes (`proto::ecn`,
//! `proto::cnp`), against the layouts of RFC 3168, RFC 8200 and IBA Annex A17 written out by
//! hand.

use crate::proto::{
    cnp::{
        is_cnp,
        write_cnp,
        CNP_LEN,
        CNP_OPCODE, //
    },
    ecn::{
        is_ce,
        outgoing_tclass,
        priority_of_tclass,
        tclass_of_grh,
        Ecn, //
    },
    hdr::Bth,
};

#[test]
fn codepoints_are_the_low_two_bits() {
    assert_eq!(Ecn::of_tclass(0x00), Ecn::NotEct);
    assert_eq!(Ecn::of_tclass(0x01), Ecn::Ect1);
    assert_eq!(Ecn::of_tclass(0x02), Ecn::Ect0);
    assert_eq!(Ecn::of_tclass(0x03), Ecn::Ce);
    // DSCP 26 with ECT(0): the traffic class RoCE deployments use (106).
    assert_eq!(Ecn::of_tclass(106), Ecn::Ect0);
    for e in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce] {
        assert_eq!(Ecn::of_tclass(e.bits()), e);
    }
}

#[test]
fn priority_is_the_dscp_class_selector() {
    // DSCP 26 (AF31) with ECT(0): priority 3; CNPs' DSCP 48 (CS6): 6; best effort 0.
    assert_eq!(priority_of_tclass(106), 3);
    assert_eq!(priority_of_tclass(48 << 2), 6);
    assert_eq!(priority_of_tclass(0x03), 0);
    assert_eq!(priority_of_tclass(0xff), 7);
}

#[test]
fn marking_keeps_the_dscp_and_a_codepoint_the_user_chose() {
    assert_eq!(outgoing_tclass(0, true), 0x02);
    assert_eq!(outgoing_tclass(0, false), 0);
    // DSCP 26 (0x68) gets ECT(0) and keeps its DSCP.
    assert_eq!(outgoing_tclass(0x68, true), 0x6a);
    // A codepoint in the address vector is the user's: kept, marking on or off.
    assert_eq!(outgoing_tclass(0x69, true), 0x69);
    assert_eq!(outgoing_tclass(0x6b, false), 0x6b);
}

/// A GRH area holding an IPv4 header with TOS `tos` (bytes 20..40), as the receive path keeps it.
fn v4_area(tos: u8) -> [u8; 40] {
    let mut a = [0u8; 40];
    a[20] = 0x45;
    a[21] = tos;
    a
}

/// A GRH area holding an IPv6 header with traffic class `tc`.
fn v6_area(tc: u8) -> [u8; 40] {
    let mut a = [0u8; 40];
    let word = (6u32 << 28) | (u32::from(tc) << 20) | 0x1_2345;
    a[..4].copy_from_slice(&word.to_be_bytes());
    a
}

#[test]
fn the_traffic_class_of_either_ip_version() {
    assert_eq!(tclass_of_grh(&v4_area(0xb9)), Some(0xb9));
    assert_eq!(tclass_of_grh(&v6_area(0xb9)), Some(0xb9));
    assert_eq!(tclass_of_grh(&[0u8; 40]), None);
    assert!(is_ce(&v4_area(0x03)) && is_ce(&v6_area(0x6b)));
    assert!(!is_ce(&v4_area(0x02)) && !is_ce(&v6_area(0x6a)) && !is_ce(&[0xffu8; 40]));
    // The flow label next to the traffic class does not leak into it.
    assert_eq!(tclass_of_grh(&v6_area(0x00)), Some(0));
}

#[test]
fn a_cnp_is_a_bth_with_becn_and_sixteen_zero_bytes() {
    let mut buf = [0xaau8; CNP_LEN + 4];
    write_cnp(&mut buf, 0x12_3456).unwrap();
    let want: [u8; CNP_LEN] = [
        0x81, 0x00, 0xff, 0xff, // opcode, flags, P_Key
        0x40, 0x12, 0x34, 0x56, // BECN, destination QP
        0x00, 0x00, 0x00, 0x00, // AckReq, PSN
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ];
    assert_eq!(buf[..CNP_LEN], want);
    // The ICRC's room is left to the sender.
    assert_eq!(buf[CNP_LEN..], [0xaa; 4]);
    let bth = Bth::parse(&buf).unwrap();
    assert_eq!(bth.opcode, CNP_OPCODE);
    assert!(bth.becn && !bth.fecn);
    assert_eq!(bth.dest_qpn, 0x12_3456);
    assert!(is_cnp(&buf, &bth));
    // Too short to be one; not the opcode.
    assert!(!is_cnp(&buf[..CNP_LEN - 1], &bth));
    let mut other = bth;
    other.opcode.0 = 0x80;
    assert!(!is_cnp(&buf, &other));
    assert!(write_cnp(&mut [0u8; CNP_LEN - 1], 1).is_err());
    assert!(write_cnp(&mut [0u8; CNP_LEN], 1 << 24).is_err());
}
