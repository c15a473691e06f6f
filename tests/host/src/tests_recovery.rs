// SPDX-License-Identifier: GPL-2.0

//! What a requester learns of its peer's recovery from the answers to its probes
//! (`proto::recovery`).

use crate::proto::{
    psn::Psn,
    recovery::{
        PeerRecovery,
        MISSES_FOR_GO_BACK_N, //
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
