// SPDX-License-Identifier: GPL-2.0

//! What a requester learns of its peer's recovery from the answers to its probes
//! (`proto::recovery`).

use crate::proto::{
    psn::Psn,
    recovery::{
        sends_past_probe,
        tail_probe_delay_ns,
        PeerRecovery,
        Rtt,
        MISSES_FOR_GO_BACK_N,
        PAST_PROBE_PSNS,
        TAIL_PROBE_MIN_NS, //
    },
};

#[test]
fn an_answer_past_the_probe_shows_a_keeping_peer_for_good() {
    let mut r = PeerRecovery::default();
    assert!(r.probes());
    r.answered(Psn::new(100), Psn::new(99), true);
    assert_eq!(
        r,
        PeerRecovery::Unknown { misses: 0 },
        "acknowledges nothing of the probe"
    );
    r.answered(Psn::new(100), Psn::new(100), true);
    assert_eq!(r, PeerRecovery::Unknown { misses: 1 });
    r.answered(Psn::new(200), Psn::new(230), true);
    assert_eq!(r, PeerRecovery::Keeps);
    // Later gaps where everything after the probe was lost too do not change that.
    for _ in 0..10 {
        r.answered(Psn::new(300), Psn::new(300), true);
    }
    assert_eq!(r, PeerRecovery::Keeps);
    assert!(r.probes());
}

#[test]
fn a_peer_that_drops_what_follows_gets_go_back_n() {
    let mut r = PeerRecovery::default();
    // Nothing had been sent after the probe: the answer tells nothing.
    r.answered(Psn::new(5), Psn::new(5), false);
    assert_eq!(r, PeerRecovery::Unknown { misses: 0 });
    for i in 0..MISSES_FOR_GO_BACK_N {
        assert!(r.probes());
        r.answered(
            Psn::new(10 + u32::from(i)),
            Psn::new(10 + u32::from(i)),
            true,
        );
    }
    assert_eq!(r, PeerRecovery::GoBackN);
    assert!(!r.probes());
    // It is not probed any more; an answer that shows it keeping would turn it back.
    r.answered(Psn::new(50), Psn::new(60), true);
    assert_eq!(r, PeerRecovery::Keeps);
}

#[test]
fn answers_across_the_wrap() {
    let mut r = PeerRecovery::default();
    r.answered(Psn::new(0xff_fffe), Psn::new(3), true);
    assert_eq!(r, PeerRecovery::Keeps);
}

#[test]
fn the_rtt_is_sampled_once_at_a_time_and_smoothed() {
    let mut r = Rtt::default();
    assert_eq!(r.srtt_ns(), None);
    r.sending(Psn::new(10), 1_000, Psn::new(10));
    // A second AckReq packet while one is timed is not.
    r.sending(Psn::new(20), 2_000, Psn::new(10));
    assert!(r.sampling());
    // An ACK before the timed packet ends nothing.
    r.acked(Psn::new(9), 5_000, None);
    assert!(r.sampling());
    r.acked(Psn::new(12), 801_000, None);
    assert_eq!(r.srtt_ns(), Some(800_000));
    assert!(!r.sampling());
    r.sending(Psn::new(30), 1_000_000, Psn::new(13));
    r.acked(Psn::new(30), 2_600_000, None);
    // 7/8 of 800 us and 1/8 of 1600 us.
    assert_eq!(r.srtt_ns(), Some(900_000));
    // A rewind drops the running sample (Karn).
    r.sending(Psn::new(40), 3_000_000, Psn::new(31));
    r.cancel();
    r.acked(Psn::new(40), 9_000_000, None);
    assert_eq!(r.srtt_ns(), Some(900_000));
}

#[test]
fn a_sample_whose_answer_a_later_one_overtook_is_dropped() {
    let mut r = Rtt::default();
    // A READ's request at PSN 10 (responses 10..=17) is timed by its first response.
    r.sending(Psn::new(10), 1_000, Psn::new(10));
    // Answers at or before the timed PSN leave it running.
    r.answered_past(Psn::new(9));
    r.answered_past(Psn::new(10));
    assert!(r.sampling());
    // Response 12 placed past a gap: the first was lost; the sample would time its recovery.
    r.answered_past(Psn::new(12));
    assert!(!r.sampling());
    r.acked(Psn::new(17), 90_000_000, None);
    assert_eq!(r.srtt_ns(), None);
    // Across the PSN wrap too.
    r.sending(Psn::new(0xff_fffe), 1_000, Psn::new(0xff_fffe));
    r.answered_past(Psn::new(1));
    assert!(!r.sampling());
}

#[test]
fn the_path_holds_the_delivery_rate_over_the_shortest_round_trip() {
    let mut r = Rtt::default();
    assert_eq!(r.path_psns(), None);
    // 20 PSNs (100..=119) acknowledged in 1 ms, the shortest round trip yet: 20.
    r.sending(Psn::new(119), 0, Psn::new(100));
    r.acked(Psn::new(119), 1_000_000, None);
    assert_eq!(r.path_psns(), Some(20));
    // 40 PSNs in 4 ms: a queue built; at that rate the shortest round trip carries 10.
    r.sending(Psn::new(159), 10_000_000, Psn::new(120));
    r.acked(Psn::new(159), 14_000_000, None);
    assert_eq!(r.path_psns(), Some(10));
    // Across the wrap.
    let mut r = Rtt::default();
    r.sending(Psn::new(3), 0, Psn::new(0xff_fffc));
    r.acked(Psn::new(3), 500_000, None);
    assert_eq!(r.path_psns(), Some(8));
}

#[test]
fn an_answer_is_late_after_twice_the_rtt_or_more_when_it_varies() {
    let mut r = Rtt::default();
    assert_eq!(r.answer_wait_ns(), None);
    // The first sample: 1 ms, varying by half of it: 1 + 4 * 0.5 ms.
    r.sending(Psn::new(1), 0, Psn::new(1));
    r.acked(Psn::new(1), 1_000_000, None);
    assert_eq!(r.answer_wait_ns(), Some(3_000_000));
    // Steady samples: the variation decays to nothing and twice the RTT is left.
    for i in 0..40u32 {
        let t = u64::from(i + 1) * 10_000_000;
        r.sending(Psn::new(2 + i), t, Psn::new(2 + i));
        r.acked(Psn::new(2 + i), t + 1_000_000, None);
    }
    assert_eq!(r.answer_wait_ns(), Some(2_000_000));
    // A sample of 9 ms (a queue built): 2 ms of variation, the wait 2 + 8 ms.
    r.sending(Psn::new(100), 1_000_000_000, Psn::new(100));
    r.acked(Psn::new(100), 1_009_000_000, None);
    assert_eq!(r.srtt_ns(), Some(2_000_000));
    // (What is left of the variation rounds to a few ns.)
    let w = r.answer_wait_ns().unwrap_or(0);
    assert!((10_000_000..10_000_100).contains(&w), "{w}");
}

#[test]
fn tail_probes_wait_for_a_late_answer_within_bounds() {
    assert_eq!(tail_probe_delay_ns(None, Some(67_108)), None);
    assert_eq!(
        tail_probe_delay_ns(Some(2_000_000), Some(67_108)),
        Some(2_000_000)
    );
    assert_eq!(
        tail_probe_delay_ns(Some(10_000), Some(67_108)),
        Some(TAIL_PROBE_MIN_NS)
    );
    // At most half the timeout (code 8: 1 ms).
    assert_eq!(
        tail_probe_delay_ns(Some(5_000_000), Some(1_048)),
        Some(524_000)
    );
    assert_eq!(
        tail_probe_delay_ns(Some(10_000_000), None),
        Some(10_000_000)
    );
}

#[test]
fn only_a_keeping_peer_gets_new_packets_while_a_probe_waits() {
    let unacked = Psn::new(0xff_fff0);
    let near = Psn::new(0x10); // across the wrap: 32 PSNs on
    let edge = unacked.wrapping_add(PAST_PROBE_PSNS);
    for peer in [
        PeerRecovery::Unknown { misses: 0 },
        PeerRecovery::Unknown { misses: 1 },
        PeerRecovery::GoBackN,
    ] {
        assert!(!sends_past_probe(peer, near, unacked), "{peer:?}");
    }
    assert!(sends_past_probe(PeerRecovery::Keeps, near, unacked));
    assert!(sends_past_probe(PeerRecovery::Keeps, unacked, unacked));
    assert!(sends_past_probe(
        PeerRecovery::Keeps,
        edge.wrapping_sub(1),
        unacked
    ));
    assert!(
        !sends_past_probe(PeerRecovery::Keeps, edge, unacked),
        "no more than the peer's store keeps"
    );
}
