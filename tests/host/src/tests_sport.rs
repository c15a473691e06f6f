// SPDX-License-Identifier: GPL-2.0

//! UDP source ports: the values ib_core's `rdma_get_udp_sport` gives (computed independently,
//! from its definition, by hand and with a script), symmetry, and the range.

use crate::proto::sport::{
    flow_label_of,
    of_connection,
    of_flow_label,
    of_qpn,
    SPORT_MIN, //
};

#[test]
fn connection_without_a_flow_label_uses_both_qpns() {
    // 17 * 18 = 0x132: no bits above 14 to fold.
    assert_eq!(flow_label_of(17, 18), 0x132);
    assert_eq!(of_connection(0, 17, 18), 0xc132);
    assert_eq!(of_connection(0, 1, 0x10), 0xc010);
    // 0x123456 * 0x654321, folded twice, then into 14 bits.
    assert_eq!(flow_label_of(0x12_3456, 0x65_4321), 0xa_77ae);
    assert_eq!(of_connection(0, 0x12_3456, 0x65_4321), 0xf787);
    assert_eq!(flow_label_of(0xff_ffff, 0xff_ffff), 0xf_ff1e);
    assert_eq!(of_connection(0, 0xff_ffff, 0xff_ffff), 0xff21);
}

#[test]
fn both_ends_of_a_connection_pick_the_same_port() {
    for (a, b) in [
        (17, 18),
        (0x12_3456, 0x65_4321),
        (1, 0xff_ffff),
        (0x40, 0x41),
    ] {
        assert_eq!(flow_label_of(a, b), flow_label_of(b, a));
        assert_eq!(of_connection(0, a, b), of_connection(0, b, a));
    }
}

#[test]
fn a_flow_label_sets_the_port_whatever_the_qpns() {
    assert_eq!(of_connection(0x1_2345, 17, 18), 0xe341);
    assert_eq!(of_connection(0x1_2345, 5, 0x99), 0xe341);
    // The high six bits fold into the low six.
    assert_eq!(of_flow_label(0xf_ffff), 0xffc0);
    assert_eq!(of_flow_label(0x3fff), 0xffff);
    assert_eq!(of_flow_label(0xc000), 0xc003);
    // A value with only bits above the label's 20 is not "no label" (as in ib_core): port 0xc000.
    assert_eq!(of_connection(0x10_0000, 17, 18), 0xc000);
}

#[test]
fn every_port_is_in_the_roce_range() {
    let mut x = 0x9e37_79b9u32;
    for _ in 0..10_000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let (a, b) = (x & 0xff_ffff, x.rotate_left(11) & 0xff_ffff);
        for p in [
            of_qpn(a),
            of_flow_label(x),
            of_connection(x & 0xf_ffff, a, b),
            of_connection(0, a, b),
        ] {
            assert!(p >= SPORT_MIN);
        }
    }
}

#[test]
fn datagram_qps_fold_their_qpn() {
    assert_eq!(of_qpn(1), 0xc001);
    assert_eq!(of_qpn(0x4000), 0xc001);
    assert_eq!(of_qpn(0x3fff), 0xffff);
}
