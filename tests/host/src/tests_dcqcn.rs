// SPDX-License-Identifier: GPL-2.0

//! DCQCN (`proto::dcqcn`): the settings, the reaction point's cuts, alpha and increases,
//! checked against the algorithm's formulas computed here in floating point, the CNP gate and
//! the pacer's rate.

use crate::proto::{
    cc_params::LINE_KBPS,
    dcqcn::{
        in_flight_cap,
        reads_congested,
        CcParam,
        CcParams,
        CnpGate,
        Pacer,
        ReactionPoint,
        IN_FLIGHT_FLOOR,
        PACE_BURST_NS,
        PACE_CATCHUP_NS,
        READ_MARK_HOLD_MIN_NS,
        READ_MARK_HOLD_RTTS, //
    },
};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

fn params(set: &[(CcParam, u32)]) -> CcParams {
    let mut p = CcParams::default();
    for &(k, v) in set {
        p.0[k.index()] = v;
    }
    p
}

/// A reaction point that sent at `kbps` for 2 ms before `now`, without CNPs.
fn sending_at(p: &CcParams, kbps: u64, now: u64) -> ReactionPoint {
    let mut rp = ReactionPoint::default();
    let start = now - 2 * MS;
    // 100 sends over the 2 ms, each 20 us worth of bytes at `kbps` (kbps * 1000 * 20e-6 / 8).
    for i in 0..100 {
        rp.on_sent(p, start + i * 20 * US, kbps / 400);
    }
    rp
}

#[test]
fn settings_have_mlx5s_names_and_defaults() {
    let p = CcParams::default();
    for (i, k) in CcParam::ALL.iter().enumerate() {
        assert_eq!(k.index(), i);
        assert_eq!(CcParam::by_name(k.name().to_str().unwrap()), Some(*k));
        assert!(k.default() <= k.max(), "{:?}", k.name());
        assert_eq!(p.get(*k), k.default());
    }
    let names: Vec<_> = CcParam::ALL.iter().map(|k| k.name()).collect();
    for n in &names {
        assert_eq!(names.iter().filter(|m| *m == n).count(), 1, "{n:?}");
    }
    for (name, v) in [
        ("rp_time_reset", 300),
        ("rp_byte_reset", 32767),
        ("rp_threshold", 1),
        ("rp_ai_rate", 5),
        ("rp_hai_rate", 50),
        ("rp_min_dec_fac", 50),
        ("rp_gd", 11),
        ("rp_dce_tcp_g", 1019),
        ("rp_initial_alpha_value", 1023),
        ("np_cnp_dscp", 48),
    ] {
        assert_eq!(
            CcParam::by_name(name).map(|k| k.default()),
            Some(v),
            "{name}"
        );
    }
    assert_eq!(CcParam::by_name("rp_nonsense"), None);
}

#[test]
fn values_out_of_range_are_clamped() {
    let p = CcParams::clamped(|_| u32::MAX);
    for k in CcParam::ALL {
        assert_eq!(p.get(k), k.max(), "{:?}", k.name());
    }
    let p = CcParams::clamped(|i| CcParam::ALL[i].default());
    assert_eq!(p, CcParams::default());
}

#[test]
fn a_qp_is_not_limited_until_a_cnp() {
    let p = CcParams::default();
    let rp = sending_at(&p, 2_000_000, 10 * MS);
    assert_eq!(rp.rate_kbps(), None);
    assert_eq!(rp.alpha(), 0);
}

#[test]
fn the_first_cnp_cuts_the_measured_rate_by_alpha_over_two() {
    let p = CcParams::default();
    let now = 10 * MS;
    let mut rp = sending_at(&p, 2_000_000, now);
    assert!(rp.on_cnp(&p, now));
    // 2 Gb/s cut by 1023/2048.
    let want = 2_000_000.0 * (1.0 - 1023.0 / 2048.0);
    let got = f64::from(rp.rate_kbps().unwrap());
    assert!((got - want).abs() / want < 0.02, "{got} vs {want}");
    let rt = f64::from(rp.target_kbps().unwrap());
    assert!((rt - 2_000_000.0).abs() / 2_000_000.0 < 0.02, "{rt}");
}

#[test]
fn a_first_cnp_on_a_qp_that_sent_nothing_cuts_from_the_ceiling() {
    let p = params(&[(CcParam::RpMaxRate, 10_000)]);
    let mut rp = ReactionPoint::default();
    assert!(rp.on_cnp(&p, MS));
    let r = rp.rate_kbps().unwrap();
    assert!(r > 4_990_000 && r < 5_010_000, "{r}");
}

#[test]
fn rate_to_set_on_first_cnp_replaces_the_cut() {
    let p = params(&[(CcParam::RpRateToSetOnFirstCnp, 300)]);
    let now = 10 * MS;
    let mut rp = sending_at(&p, 2_000_000, now);
    assert!(rp.on_cnp(&p, now));
    assert_eq!(rp.rate_kbps(), Some(300_000));
}

#[test]
fn cnps_within_the_monitor_period_cut_once() {
    let p = params(&[(CcParam::RpRateReduceMonitorPeriod, 50)]);
    let now = 10 * MS;
    let mut rp = sending_at(&p, 1_000_000, now);
    assert!(rp.on_cnp(&p, now));
    let r1 = rp.rate_kbps().unwrap();
    assert!(!rp.on_cnp(&p, now + 10 * US));
    assert!(!rp.on_cnp(&p, now + 49 * US));
    assert_eq!(rp.rate_kbps(), Some(r1));
    assert!(rp.on_cnp(&p, now + 50 * US));
    assert!(rp.rate_kbps().unwrap() < r1);
}

#[test]
fn cuts_stop_at_the_floor_and_at_min_dec_fac() {
    let p = params(&[(CcParam::RpMinRate, 40), (CcParam::RpMaxRate, 1000)]);
    let mut rp = ReactionPoint::default();
    let mut now = MS;
    let mut last = u32::MAX;
    for _ in 0..40 {
        rp.on_cnp(&p, now);
        let r = rp.rate_kbps().unwrap();
        // Never below the floor, never less than half of the rate before.
        assert!(r >= 40_000, "{r}");
        if last != u32::MAX {
            assert!(u64::from(r) * 2 >= u64::from(last), "{r} after {last}");
        }
        last = r;
        now += 5 * US;
    }
    assert_eq!(rp.rate_kbps(), Some(40_000));
    // rp_gd 0 asks for a cut to nothing: rp_min_dec_fac keeps 80 %.
    let p = params(&[
        (CcParam::RpGd, 0),
        (CcParam::RpMinDecFac, 80),
        (CcParam::RpMaxRate, 1000),
    ]);
    let mut rp = ReactionPoint::default();
    rp.on_cnp(&p, MS);
    assert_eq!(rp.rate_kbps(), Some(800_000));
}

#[test]
fn alpha_follows_the_moving_average() {
    // Long timers: no increase events disturb the rate; alpha updates every 10 us.
    let p = params(&[
        (CcParam::RpDceTcpRtt, 10),
        (CcParam::RpTimeReset, 1_000_000),
        (CcParam::RpByteReset, 0),
        (CcParam::RpMaxRate, 1000),
    ]);
    let g: f64 = 5.0 / 1024.0;
    let mut rp = ReactionPoint::default();
    let t0 = MS;
    rp.on_cnp(&p, t0);
    // The first period had the CNP: alpha = (1 - g) alpha + g; then 99 without.
    let mut want = 1023.0 * (1.0 - g) + 1024.0 * g;
    want *= (1.0 - g).powi(99);
    rp.advance(&p, t0 + 1000 * US);
    let got = f64::from(rp.alpha());
    assert!((got - want).abs() <= 2.0, "{got} vs {want}");
    // Long without CNPs: alpha decays towards 0.
    rp.advance(&p, t0 + 100 * MS);
    assert!(rp.alpha() < 2, "{}", rp.alpha());
}

#[test]
fn fast_recovery_halves_the_distance_to_the_target() {
    let p = params(&[
        (CcParam::RpThreshold, 5),
        (CcParam::RpByteReset, 0),
        (CcParam::RpMaxRate, 1000),
    ]);
    let t0 = MS;
    let mut rp = ReactionPoint::default();
    rp.on_cnp(&p, t0);
    let rt = f64::from(rp.target_kbps().unwrap());
    let mut rc = f64::from(rp.rate_kbps().unwrap());
    for k in 1..=4u64 {
        // The k-th timer period passed: one event.
        rp.advance(&p, t0 + k * 300 * US);
        rc = (rc + rt) / 2.0;
        let got = f64::from(rp.rate_kbps().unwrap());
        assert!((got - rc).abs() <= 1.0, "event {k}: {got} vs {rc}");
        assert_eq!(f64::from(rp.target_kbps().unwrap()), rt);
    }
}

#[test]
fn additive_then_hyper_increase_raise_the_target() {
    // Threshold 1: the first timer event is additive (5 Mb/s); once both the timer and the
    // byte counter passed it, each event adds 50 Mb/s times their excess.
    let p = params(&[(CcParam::RpMaxRate, 10_000), (CcParam::RpByteReset, 1000)]);
    let t0 = 10 * MS;
    let mut rp = sending_at(&p, 1_000_000, t0);
    rp.on_cnp(&p, t0);
    let rt0 = rp.target_kbps().unwrap();
    assert!(rt0 < 1_100_000, "{rt0}");
    rp.advance(&p, t0 + 300 * US);
    assert_eq!(rp.target_kbps(), Some(rt0 + 5_000));
    // Two byte events: the first additive (bc 1, t 1), the second too (min is 1, not > 1).
    rp.on_sent(&p, t0 + 301 * US, 2000);
    assert_eq!(rp.target_kbps(), Some(rt0 + 15_000));
    // A second timer event: t 2, bc 2: hyper, excess 1.
    rp.advance(&p, t0 + 600 * US);
    assert_eq!(rp.target_kbps(), Some(rt0 + 65_000));
}

#[test]
fn a_qp_that_recovers_to_the_ceiling_is_not_limited() {
    let p = params(&[(CcParam::RpMaxRate, 1000)]);
    let mut rp = ReactionPoint::default();
    rp.on_cnp(&p, MS);
    assert!(rp.rate_kbps().is_some());
    // Timer events alone, 300 us each: back at 1 Gb/s within a second.
    let mut now = MS;
    while rp.rate_kbps().is_some() && now < 1000 * MS {
        now += MS;
        rp.advance(&p, now);
    }
    assert_eq!(rp.rate_kbps(), None, "still limited after {} ms", now / MS);
    // And a later CNP starts over.
    assert!(rp.on_cnp(&p, now + MS));
    assert!(rp.rate_kbps().is_some());
}

#[test]
fn the_default_ceiling_is_line_rate() {
    let p = CcParams::default();
    let mut rp = ReactionPoint::default();
    rp.on_cnp(&p, MS);
    let r = u64::from(rp.rate_kbps().unwrap());
    assert!(r * 2 >= u64::from(LINE_KBPS) - 1_000_000 && r <= u64::from(LINE_KBPS));
}

#[test]
fn cnp_gate_sends_one_per_interval() {
    let p = params(&[(CcParam::NpMinTimeBetweenCnps, 50)]);
    let mut g = CnpGate::default();
    assert!(g.due(&p, 0));
    assert!(!g.due(&p, 49 * US));
    assert!(g.due(&p, 50 * US));
    assert!(!g.due(&p, 60 * US));
    // 0: every CE mark answers.
    let p = params(&[(CcParam::NpMinTimeBetweenCnps, 0)]);
    let mut g = CnpGate::default();
    assert!(g.due(&p, 5) && g.due(&p, 5));
}

#[test]
fn the_pacer_keeps_the_rate() {
    for kbps in [10_000u32, 200_000, 1_000_000, 5_000_000] {
        let mut pacer = Pacer::default();
        let mut now = 0u64;
        let mut sent = 0u64;
        // A greedy sender of 4 KiB packets for 100 ms that sleeps exactly as told.
        while now < 100 * MS {
            match pacer.wait_ns(now) {
                Some(w) => {
                    assert!(w > PACE_BURST_NS);
                    now += w;
                }
                None => {
                    pacer.sent(now, 4096, kbps);
                    sent += 4096;
                }
            }
        }
        // kb sent in 100 ms against a tenth of the rate in kb/s.
        let got = sent as f64 * 8.0 / 1000.0;
        let want = f64::from(kbps) / 10.0;
        assert!((got - want).abs() / want < 0.02, "{kbps}: {got} vs {want}");
    }
}

#[test]
fn late_wakes_do_not_slow_the_pacer() {
    for (kbps, late) in [(4_000u32, 1_500 * US), (8_000, 150 * US), (200_000, 3 * MS)] {
        let mut pacer = Pacer::default();
        let mut now = 0u64;
        let mut sent = 0u64;
        // 1040-byte packets for a second; every wait ends `late` after it should.
        while now < 1000 * MS {
            match pacer.wait_ns(now) {
                Some(w) => now += w + late,
                None => {
                    pacer.sent(now, 1040, kbps);
                    sent += 1040;
                }
            }
        }
        let got = sent as f64 * 8.0 / 1000.0;
        let want = f64::from(kbps);
        assert!(
            (got - want).abs() / want < 0.02,
            "{kbps} late {late}: {got} vs {want}"
        );
    }
}

#[test]
fn lateness_is_made_up_only_to_a_bound() {
    let mut pacer = Pacer::default();
    pacer.sent(0, 1000, 1000);
    let w = pacer.wait_ns(0).unwrap();
    // The wait ends a second late: only PACE_CATCHUP_NS of it is made up at once.
    let now = w + 1000 * MS;
    let mut n = 0u64;
    while pacer.wait_ns(now).is_none() {
        pacer.sent(now, 1000, 1_000_000);
        n += 1;
    }
    // 8 us per packet at 1 Gb/s: the catch-up and one burst.
    assert_eq!(n, (PACE_CATCHUP_NS + PACE_BURST_NS) / (8 * US) + 1);
}

#[test]
fn an_idle_pacer_gives_no_credit_beyond_one_burst() {
    let mut pacer = Pacer::default();
    pacer.sent(0, 1000, 1000);
    // 8 ms later (a long idle): sends at once, then is held after a burst's worth.
    let now = 1000 * MS;
    assert_eq!(pacer.wait_ns(now), None);
    let mut n = 0;
    while pacer.wait_ns(now).is_none() {
        pacer.sent(now, 1000, 1_000_000);
        n += 1;
    }
    // 1 Gb/s: 8 us per 1000 bytes, a 20 us burst: three packets.
    assert_eq!(n, 3);
}

#[test]
fn a_limited_qp_keeps_what_the_path_holds_and_the_floor_in_flight() {
    assert_eq!(in_flight_cap(Some(25), 128), 25 + IN_FLIGHT_FLOOR);
    assert_eq!(in_flight_cap(Some(40), 128), 40 + IN_FLIGHT_FLOOR);
    // Never under the floor, never over the requester's own window.
    assert_eq!(in_flight_cap(Some(0), 128), IN_FLIGHT_FLOOR);
    assert_eq!(in_flight_cap(Some(100), 128), 128);
    assert_eq!(in_flight_cap(Some(u32::MAX), 128), 128);
    assert_eq!(in_flight_cap(Some(5), 0), IN_FLIGHT_FLOOR);
    // Before the path is measured: the window alone.
    assert_eq!(in_flight_cap(None, 128), 128);
}

#[test]
fn a_marked_read_response_holds_the_cap_for_some_round_trips() {
    // Never marked: nothing holds.
    assert!(!reads_congested(None, 5 * MS, Some(MS)));
    // Eight smoothed round trips from the mark, not one more.
    let (srtt, at) = (Some(2 * MS), 10 * MS);
    let hold = READ_MARK_HOLD_RTTS * 2 * MS;
    assert!(reads_congested(Some(at), at, srtt));
    assert!(reads_congested(Some(at), at + hold - 1, srtt));
    assert!(!reads_congested(Some(at), at + hold, srtt));
    // At least the minimum, with short or unknown round trips.
    let least = MS + READ_MARK_HOLD_MIN_NS;
    assert!(reads_congested(Some(MS), least - 1, Some(US)));
    assert!(!reads_congested(Some(MS), least, None));
    // A clock that went back (another CPU's reading) still holds; a huge round trip saturates.
    assert!(reads_congested(Some(at), at - MS, srtt));
    assert!(reads_congested(Some(0), u64::MAX - 1, Some(u64::MAX)));
}
