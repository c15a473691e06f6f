// SPDX-License-Identifier: GPL-2.0

//! Tests of the 24-bit PSN arithmetic in `proto::psn`.

use core::cmp::Ordering;

use crate::proto::psn::cmp_psn;
use crate::proto::psn::in_window;
use crate::proto::psn::Psn;

/// The C driver's comparison, transcribed: the 32-bit difference shifted left by eight bits and
/// read as a signed number.
fn c_psn_compare(a: u32, b: u32) -> Ordering {
    let diff = (a.wrapping_sub(b) << 8) as i32;
    diff.cmp(&0)
}

#[test]
fn new_masks_to_24_bits() {
    assert_eq!(Psn::new(0x0123_4567).value(), 0x0023_4567);
    assert_eq!(Psn::new(0xff00_0000), Psn::ZERO);
    assert_eq!(Psn::MAX.value(), 0x00ff_ffff);
    assert_eq!(Psn::MODULUS, 1 << 24);
}

#[test]
fn add_wraps_at_2_pow_24() {
    assert_eq!(Psn::MAX + 1, Psn::ZERO);
    assert_eq!(Psn::MAX.next(), Psn::ZERO);
    assert_eq!(Psn::new(0x00ff_fff0) + 0x20, Psn::new(0x10));
    assert_eq!(Psn::new(5).wrapping_add(Psn::MODULUS), Psn::new(5));
    assert_eq!(Psn::new(5).wrapping_add(u32::MAX), Psn::new(4));
    let mut psn = Psn::new(0x00ff_fffe);
    psn += 3;
    assert_eq!(psn, Psn::new(1));
}

#[test]
fn sub_wraps_below_zero() {
    assert_eq!(Psn::ZERO - 1, Psn::MAX);
    assert_eq!(Psn::new(3) - 5, Psn::new(0x00ff_fffe));
    assert_eq!(Psn::new(3).wrapping_sub(Psn::MODULUS), Psn::new(3));
}

#[test]
fn distance_counts_forwards_across_the_wrap() {
    assert_eq!(Psn::new(2).distance_from(Psn::MAX), 3);
    assert_eq!(Psn::MAX.distance_from(Psn::new(2)), 0x00ff_fffd);
    assert_eq!(Psn::new(7).distance_from(Psn::new(7)), 0);
}

#[test]
fn serial_diff_is_signed_24_bit() {
    assert_eq!(Psn::new(1).serial_diff(Psn::MAX), 2);
    assert_eq!(Psn::MAX.serial_diff(Psn::new(1)), -2);
    assert_eq!(Psn::new(0x7f_ffff).serial_diff(Psn::ZERO), 0x7f_ffff);
    assert_eq!(Psn::new(0x80_0000).serial_diff(Psn::ZERO), -0x80_0000);
    assert_eq!(Psn::ZERO.serial_diff(Psn::new(0x80_0000)), -0x80_0000);
}

#[test]
fn cmp_simple_cases() {
    assert_eq!(cmp_psn(Psn::new(10), Psn::new(10)), Ordering::Equal);
    assert_eq!(cmp_psn(Psn::new(11), Psn::new(10)), Ordering::Greater);
    assert_eq!(cmp_psn(Psn::new(10), Psn::new(11)), Ordering::Less);
}

#[test]
fn cmp_across_the_wrap() {
    assert_eq!(cmp_psn(Psn::ZERO, Psn::MAX), Ordering::Greater);
    assert_eq!(cmp_psn(Psn::MAX, Psn::ZERO), Ordering::Less);
    assert_eq!(
        cmp_psn(Psn::new(0x10), Psn::new(0x00ff_fff0)),
        Ordering::Greater
    );
    assert_eq!(
        cmp_psn(Psn::new(0x00ff_fff0), Psn::new(0x10)),
        Ordering::Less
    );
}

#[test]
fn cmp_at_half_range() {
    // 2^23 - 1 ahead is still ahead; exactly 2^23 apart reads as behind in both directions.
    assert_eq!(cmp_psn(Psn::new(0x7f_ffff), Psn::ZERO), Ordering::Greater);
    assert_eq!(cmp_psn(Psn::new(0x80_0000), Psn::ZERO), Ordering::Less);
    assert_eq!(cmp_psn(Psn::ZERO, Psn::new(0x80_0000)), Ordering::Less);
    assert_eq!(cmp_psn(Psn::new(0x80_0001), Psn::ZERO), Ordering::Less);
}

#[test]
fn cmp_matches_the_c_rule_on_a_grid() {
    let points = [
        0, 1, 2, 0x7f_fffe, 0x7f_ffff, 0x80_0000, 0x80_0001, 0xff_fffe, 0xff_ffff, 0x12_3456,
    ];
    for &a in &points {
        for &b in &points {
            assert_eq!(
                cmp_psn(Psn::new(a), Psn::new(b)),
                c_psn_compare(a, b),
                "a {a:#x} b {b:#x}"
            );
        }
    }
}

#[test]
fn window_without_wrap() {
    let start = Psn::new(100);
    assert!(!in_window(Psn::new(99), start, 10));
    assert!(in_window(Psn::new(100), start, 10));
    assert!(in_window(Psn::new(109), start, 10));
    assert!(!in_window(Psn::new(110), start, 10));
}

#[test]
fn window_at_the_wrap() {
    let start = Psn::new(0x00ff_fffe);
    assert!(!in_window(Psn::new(0x00ff_fffd), start, 4));
    assert!(in_window(Psn::new(0x00ff_fffe), start, 4));
    assert!(in_window(Psn::MAX, start, 4));
    assert!(in_window(Psn::ZERO, start, 4));
    assert!(in_window(Psn::new(1), start, 4));
    assert!(!in_window(Psn::new(2), start, 4));
}

#[test]
fn window_edge_lengths() {
    assert!(!in_window(Psn::new(5), Psn::new(5), 0));
    assert!(in_window(Psn::new(5), Psn::new(5), 1));
    assert!(!in_window(Psn::new(6), Psn::new(5), 1));
    assert!(in_window(Psn::new(4), Psn::new(5), Psn::MODULUS));
    assert!(!in_window(Psn::new(4), Psn::new(5), Psn::MODULUS - 1));
}
