// SPDX-License-Identifier: GPL-2.0

//! The send rate a user asks of a QP (`Documentation/congestion.rst`, "Rate limits"): the
//! static rate of its address vector (`ah_attr.static_rate`, an `enum ib_rate` code) and the
//! kernel's `IB_QP_RATE_LIMIT` (kbit/s). Both go through the pacer that DCQCN drives; the QP
//! keeps to the lowest of the three.
//!
//! A static rate code is the nominal rate of an InfiniBand link (IBA Vol 1 table "Static Rate
//! Control"; `enum ib_rate` in `include/rdma/ib_verbs.h`): 2.5 Gb/s is 2.5 Gb/s of data here,
//! not a signalling rate. Code 0 (the port's current rate) limits nothing, and so do codes
//! that name no rate: C rxe accepts every code, and a QP that was created for it must not start
//! failing its Modify QP here. The code is kept as it came and reported back by Query QP
//! (perftest reads it back to decide whether the device took its limit).

use core::num::NonZeroU32;

/// A send rate in kbit/s, never zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Kbps(NonZeroU32);

impl Kbps {
    /// `kbps`, unless it is 0 (which means "no limit" wherever a user gives it).
    pub(crate) const fn new(kbps: u32) -> Option<Self> {
        match NonZeroU32::new(kbps) {
            Some(k) => Some(Self(k)),
            None => None,
        }
    }

    /// The rate in kbit/s.
    pub(crate) const fn get(self) -> u32 {
        self.0.get()
    }
}

/// The nominal rate of static rate code `code` in Mbit/s, `None` for code 0 (the port's
/// current rate) and for codes that name no rate.
pub(crate) const fn static_rate_mbps(code: u8) -> Option<u32> {
    let mbps = match code {
        2 => 2_500,
        5 => 5_000,
        3 => 10_000,
        6 => 20_000,
        4 => 30_000,
        7 => 40_000,
        8 => 60_000,
        9 => 80_000,
        10 => 120_000,
        11 => 14_000,
        12 => 56_000,
        13 => 112_000,
        14 => 168_000,
        15 => 25_000,
        16 => 100_000,
        17 => 200_000,
        18 => 300_000,
        19 => 28_000,
        20 => 50_000,
        21 => 400_000,
        22 => 600_000,
        23 => 800_000,
        25 => 1_600_000,
        _ => return None,
    };
    Some(mbps)
}

/// The limit a QP keeps to by its user's wish: the lower of its address vector's static rate
/// (`static_rate`, a code) and its `IB_QP_RATE_LIMIT` (`rate_limit_kbps`, 0 for none); `None`
/// when neither limits it.
pub(crate) fn user_limit(static_rate: u8, rate_limit_kbps: u32) -> Option<Kbps> {
    // 1.6 Tb/s is 1_600_000_000 kbit/s: within u32.
    let from_static = static_rate_mbps(static_rate).and_then(|m| Kbps::new(m.saturating_mul(1000)));
    lower(from_static, Kbps::new(rate_limit_kbps))
}

/// The lower of two limits, either of which may be none.
fn lower<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The rate a QP's pacer keeps to: the lower of the rate DCQCN allows (`cc_kbps`, `None` when
/// it does not limit the QP) and the user's limit; `None` when the QP is not limited.
pub(crate) fn pace_kbps(cc_kbps: Option<u32>, user: Option<Kbps>) -> Option<u32> {
    lower(cc_kbps, user.map(Kbps::get))
}
