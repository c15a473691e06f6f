// SPDX-License-Identifier: GPL-2.0

//! The responder's store of requests past a gap (`proto::reorder`): what it keeps, what it
//! refuses, and that it hands back each kept packet exactly once, in its turn, across the 24-bit
//! PSN wrap; against a plain map of PSNs.

use crate::proto::{
    psn::Psn,
    reorder::{
        within_reach,
        Insert,
        Reorder,
        REORDER_REACH,
        REORDER_SLOTS, //
    },
};

fn kept(i: Insert<u32>) -> Option<u32> {
    match i {
        Insert::Kept(stale) => stale,
        Insert::Refused(x) => panic!("{x} refused"),
    }
}

fn refused(i: Insert<u32>) -> u32 {
    match i {
        Insert::Kept(_) => panic!("kept"),
        Insert::Refused(x) => x,
    }
}

#[test]
fn reach_is_ahead_and_short() {
    let e = Psn::new(100);
    assert!(!within_reach(Psn::new(100), e));
    assert!(!within_reach(Psn::new(99), e));
    assert!(within_reach(Psn::new(101), e));
    assert!(within_reach(Psn::new(100 + REORDER_REACH - 1), e));
    assert!(!within_reach(Psn::new(100 + REORDER_REACH), e));
    // Across the wrap.
    let e = Psn::new(0xff_fffe);
    assert!(within_reach(Psn::new(0xff_ffff), e));
    assert!(within_reach(Psn::new(3), e));
    assert!(!within_reach(Psn::new(0xff_fff0), e));
}

#[test]
fn kept_packets_come_back_in_their_turn() {
    let mut r = Reorder::default();
    let e = Psn::new(0xff_fffd);
    // The expected PSN was lost; the three after it (across the wrap) arrive.
    for (i, p) in [0xff_fffe, 0xff_ffff, 0].into_iter().enumerate() {
        assert_eq!(kept(r.insert(Psn::new(p), e, i as u32)), None);
    }
    assert_eq!(r.len(), 3);
    assert!(r.get(Psn::new(0)).is_some());
    // Its own PSN is never kept; a second copy of a kept one is refused.
    assert_eq!(refused(r.insert(e, e, 9)), 9);
    assert_eq!(refused(r.insert(Psn::new(0xff_ffff), e, 8)), 8);
    // Nothing is due until the lost one is taken in order.
    assert_eq!(r.take_due(e), None);
    let mut e = e.next();
    let mut got = vec![];
    while let Some(x) = r.take_due(e) {
        got.push(x);
        e = e.next();
    }
    assert_eq!(got, [0, 1, 2]);
    assert_eq!(e, Psn::new(1));
    assert!(r.is_empty());
}

#[test]
fn entries_left_behind_are_stale() {
    let mut r = Reorder::default();
    let e = Psn::new(10);
    kept(r.insert(Psn::new(12), e, 12));
    kept(r.insert(Psn::new(15), e, 15));
    // The responder moved to 14 without taking 12 (UC-like resynchronisation, or a duplicate
    // path): 12 is stale, 15 is not.
    let e = Psn::new(14);
    assert_eq!(r.take_stale(e), Some(12));
    assert_eq!(r.take_stale(e), None);
    assert_eq!(r.len(), 1);
    // The one whose turn it is is due, not stale.
    let e = Psn::new(15);
    assert_eq!(r.take_stale(e), None);
    assert_eq!(r.take_due(e), Some(15));
    // A full store: a new PSN pushes out an entry left behind, and only such an entry.
    let mut r = Reorder::default();
    let e = Psn::new(10);
    for i in 0..REORDER_SLOTS as u32 {
        assert_eq!(kept(r.insert(Psn::new(12 + 2 * i), e, i)), None);
    }
    assert_eq!(refused(r.insert(Psn::new(11), e, 99)), 99, "full");
    let e = Psn::new(13);
    assert_eq!(kept(r.insert(Psn::new(15), e, 76)), Some(0));
    assert_eq!(r.len(), REORDER_SLOTS);
    let mut n = 0;
    while r.take_any().is_some() {
        n += 1;
    }
    assert_eq!(n, REORDER_SLOTS);
}

#[test]
fn requests_far_apart_in_psn_are_kept_together() {
    // READ requests take a PSN per response: 128 apart at NVMe-oF's 128 KiB.
    let mut r = Reorder::default();
    let e = Psn::new(1000);
    for k in 1..8u32 {
        assert_eq!(kept(r.insert(Psn::new(1000 + 128 * k), e, k)), None);
    }
    assert_eq!(r.len(), 7);
    assert_eq!(r.take_due(Psn::new(1128)), Some(1));
    assert_eq!(r.get(Psn::new(1000 + 128 * 7)), Some(&7));
}

#[test]
fn random_arrivals_match_a_model() {
    // A deterministic generator: each round loses some PSNs and delivers the rest shuffled.
    let mut seed = 0x1234_5678u64;
    let mut rnd = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut r = Reorder::default();
    let mut e = Psn::new(0xff_ff00);
    for _ in 0..2000 {
        let ahead = 1 + rnd(u64::from(REORDER_REACH) + 8) as u32;
        let p = e.wrapping_add(ahead);
        let before = r.len();
        let held = r.get(p).is_some();
        match r.insert(p, e, p.value()) {
            Insert::Kept(stale) => {
                assert!(ahead < REORDER_REACH && !held);
                assert!(stale.is_none() || before == REORDER_SLOTS);
                assert_eq!(r.len(), before + 1 - usize::from(stale.is_some()));
            }
            Insert::Refused(_) => {
                assert!(ahead >= REORDER_REACH || held || before == REORDER_SLOTS)
            }
        }
        if rnd(4) == 0 {
            // The lost packet arrives: everything held in sequence after it comes back, as
            // the driver takes it (stale ones first, then the due ones).
            e = e.next();
            loop {
                while let Some(x) = r.take_stale(e) {
                    assert!(Psn::new(x).distance_from(e) >= 1 << 23);
                }
                let Some(x) = r.take_due(e) else {
                    break;
                };
                assert_eq!(x, e.value());
                e = e.next();
            }
            assert!(r.get(e).is_none());
        }
        assert!(r.len() <= REORDER_SLOTS);
    }
}

#[test]
fn a_kept_packet_can_be_looked_at_and_removed() {
    let mut r = Reorder::default();
    let e = Psn::new(7);
    kept(r.insert(Psn::new(9), e, 90));
    assert_eq!(r.get(Psn::new(9)), Some(&90));
    assert_eq!(r.get(Psn::new(9 + 64)), None, "another PSN");
    assert_eq!(r.remove(Psn::new(8)), None);
    assert_eq!(r.remove(Psn::new(9)), Some(90));
    assert!(r.is_empty());
}
