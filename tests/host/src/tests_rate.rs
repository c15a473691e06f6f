// SPDX-License-Identifier: GPL-2.0

//! The rates users ask of QPs (`proto::rate`): static rate codes against `enum ib_rate` of
//! `include/rdma/ib_verbs.h` written out by hand, and how they combine with `IB_QP_RATE_LIMIT`
//! and DCQCN.

use crate::proto::rate::{
    pace_kbps,
    static_rate_mbps,
    user_limit,
    Kbps, //
};

/// `enum ib_rate`: every code and its nominal rate in Gbit/s (times 10).
const IB_RATE: [(u8, u32); 23] = [
    (2, 25),
    (5, 50),
    (3, 100),
    (6, 200),
    (4, 300),
    (7, 400),
    (8, 600),
    (9, 800),
    (10, 1200),
    (11, 140),
    (12, 560),
    (13, 1120),
    (14, 1680),
    (15, 250),
    (16, 1000),
    (17, 2000),
    (18, 3000),
    (19, 280),
    (20, 500),
    (21, 4000),
    (22, 6000),
    (23, 8000),
    (25, 16000),
];

#[test]
fn every_code_has_its_nominal_rate() {
    for (code, tenths) in IB_RATE {
        assert_eq!(static_rate_mbps(code), Some(tenths * 100), "code {code}");
    }
}

#[test]
fn port_current_and_unnamed_codes_limit_nothing() {
    assert_eq!(static_rate_mbps(0), None);
    for code in 0..=u8::MAX {
        if !IB_RATE.iter().any(|&(c, _)| c == code) {
            assert_eq!(static_rate_mbps(code), None, "code {code}");
            assert_eq!(user_limit(code, 0), None, "code {code}");
        }
    }
}

#[test]
fn user_limit_is_the_lower_of_both() {
    let k = |v| Kbps::new(v);
    assert_eq!(user_limit(0, 0), None);
    // 2.5 Gb/s alone, 100 Mb/s alone, and both (the lower wins, either way round).
    assert_eq!(user_limit(2, 0), k(2_500_000));
    assert_eq!(user_limit(0, 100_000), k(100_000));
    assert_eq!(user_limit(2, 100_000), k(100_000));
    assert_eq!(user_limit(2, 9_000_000), k(2_500_000));
    // The largest code stays within u32 kbit/s.
    assert_eq!(user_limit(25, 0), k(1_600_000_000));
    assert_eq!(user_limit(0, u32::MAX), k(u32::MAX));
    assert_eq!(Kbps::new(0), None);
}

#[test]
fn the_pacer_keeps_to_the_lowest_limit() {
    let k = Kbps::new;
    assert_eq!(pace_kbps(None, None), None);
    assert_eq!(pace_kbps(Some(5_000), None), Some(5_000));
    assert_eq!(pace_kbps(None, k(7_000)), Some(7_000));
    assert_eq!(pace_kbps(Some(5_000), k(7_000)), Some(5_000));
    assert_eq!(pace_kbps(Some(9_000), k(7_000)), Some(7_000));
}
