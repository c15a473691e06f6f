// SPDX-License-Identifier: GPL-2.0

//! The shortest round trip per destination that a device's QPs share (`proto::path_rtt`).

use crate::proto::{
    path_rtt::{
        merged,
        pack,
        slot_and_tag,
        unpack,
        SLOTS, //
    },
    psn::Psn,
    recovery::Rtt,
};

fn gid(last: u8) -> [u8; 16] {
    let mut g = [0u8; 16];
    g[10] = 0xff;
    g[11] = 0xff;
    g[12..].copy_from_slice(&[10, 91, 2, last]);
    g
}

#[test]
fn a_destination_has_a_slot_and_a_tag_that_is_never_an_empty_word() {
    for last in 0..=255u8 {
        let (slot, tag) = slot_and_tag(&gid(last));
        assert!(slot < SLOTS);
        assert_ne!(tag, 0);
        assert_eq!(slot_and_tag(&gid(last)), (slot, tag), "the same each time");
        assert_eq!(unpack(0, tag), None, "an empty slot knows nothing");
    }
    assert_ne!(slot_and_tag(&gid(1)).1, slot_and_tag(&gid(2)).1);
}

#[test]
fn the_shorter_round_trip_of_one_destination_is_kept() {
    let (_, tag) = slot_and_tag(&gid(1));
    let w = merged(0, tag, 900_000).expect("an empty slot takes it");
    assert_eq!(unpack(w, tag), Some(900_000));
    assert_eq!(merged(w, tag, 950_000), None, "longer: no change");
    assert_eq!(merged(w, tag, 900_000), None, "the same: no change");
    let w = merged(w, tag, 400_000).expect("shorter");
    assert_eq!(unpack(w, tag), Some(400_000));
}

#[test]
fn another_destination_takes_the_slot_and_the_first_then_knows_nothing() {
    let (_, a) = slot_and_tag(&gid(1));
    let (_, b) = slot_and_tag(&gid(2));
    let w = pack(a, 300_000);
    let w = merged(w, b, 5_000_000).expect("another destination replaces it");
    assert_eq!(unpack(w, b), Some(5_000_000));
    assert_eq!(unpack(w, a), None, "never b's round trip for a");
}

#[test]
fn a_round_trip_too_long_for_the_word_is_kept_as_its_largest() {
    let (_, tag) = slot_and_tag(&gid(3));
    assert_eq!(unpack(pack(tag, u64::MAX), tag), Some(u64::from(u32::MAX)));
}

/// Two QPs on one bottleneck: the one that started behind the queue sampled 20 ms at best,
/// the other 1 ms. With the path's shortest, the late one's estimate of the path is what the
/// early one's is at the same delivery, not twenty times it.
#[test]
fn a_qp_that_started_behind_a_queue_estimates_the_path_with_the_shortest_round_trip() {
    let sample = |r: &mut Rtt, path: Option<u64>| {
        r.sending(Psn::new(40), 0, Psn::new(0));
        r.acked(Psn::new(40), 25_000_000, path)
    };
    let mut alone = Rtt::default();
    alone.sending(Psn::new(40), 0, Psn::new(0));
    alone.acked(Psn::new(40), 20_000_000, None);
    let mut late = alone;
    assert_eq!(sample(&mut late, None), Some(20_000_000));
    assert_eq!(
        late.path_psns(),
        Some(32),
        "41 PSNs in 25 ms, 20 ms the shortest"
    );
    let mut shared = alone;
    assert_eq!(sample(&mut shared, Some(1_000_000)), Some(1_000_000));
    assert_eq!(
        shared.path_psns(),
        Some(1),
        "41 PSNs in 25 ms, 1 ms the path's shortest"
    );
    assert_eq!(shared.min_ns(), Some(1_000_000));
}
