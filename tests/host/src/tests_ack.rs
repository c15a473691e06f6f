// SPDX-License-Identifier: GPL-2.0

//! Tests of the completer's decisions in `proto::seq` and `proto::retry`: ACKs and NAKs against
//! the send window, NAK codes and RNR timers, the transport and RNR retry budgets, and ACK
//! coalescing. The expected decisions are transcribed from the C driver's `check_ack`
//! (`rxe_comp.c`), not derived from the code under test.

use crate::proto::cqe::WcStatus;
use crate::proto::hdr::Aeth;
use crate::proto::psn::Psn;
use crate::proto::retry::RetryCause;
use crate::proto::retry::RetryCounter;
use crate::proto::retry::RetryDecision;
use crate::proto::seq::classify_ack;
use crate::proto::seq::AckDecision;
use crate::proto::seq::MAX_PKT_PER_ACK;
use crate::proto::seq::{
    ack_due,
    paced_ack_due, //
};
use crate::proto::window::Outstanding;
use crate::proto::window::SendWindow;

/// Builds an AETH with `syndrome` and an arbitrary MSN.
fn aeth(syndrome: u8) -> Aeth {
    Aeth {
        syndrome,
        msn: 0x12_3456,
    }
}

/// `psn` as an outstanding PSN of a window that holds it.
fn outstanding(psn: u32) -> Outstanding {
    let p = Psn::new(psn);
    SendWindow::new(p, p.next()).outstanding(p).unwrap()
}

/// What the completer decides on an acknowledgement with `psn` against the window
/// `[old, next)`: one outside it changes nothing (as a reserved syndrome).
fn ack_in(aeth: Aeth, psn: Psn, old: Psn, next: Psn) -> AckDecision {
    SendWindow::new(old, next)
        .outstanding(psn)
        .map_or(AckDecision::Ignore, |p| classify_ack(aeth, p))
}

#[test]
fn acks_inside_and_outside_the_window() {
    let c = |syn: u8, psn: u32, old: u32, next: u32| {
        ack_in(aeth(syn), Psn::new(psn), Psn::new(old), Psn::new(next))
    };
    let ack = |psn: u32| AckDecision::Ack {
        last_acked: outstanding(psn),
    };
    assert_eq!(c(0x1f, 100, 100, 110), ack(100));
    assert_eq!(c(0x00, 109, 100, 110), ack(109));
    assert_eq!(c(0x1f, 110, 100, 110), AckDecision::Ignore);
    assert_eq!(c(0x1f, 99, 100, 110), AckDecision::Ignore);
    assert_eq!(c(0x1f, 100, 100, 100), AckDecision::Ignore);
    assert_eq!(c(0x60, 100, 100, 100), AckDecision::Ignore);
    // A window that wraps past 2^24 - 1.
    assert_eq!(c(0x1f, 0xff_ffff, 0xff_fffe, 3), ack(0xff_ffff));
    assert_eq!(c(0x1f, 0, 0xff_fffe, 3), ack(0));
    assert_eq!(c(0x1f, 2, 0xff_fffe, 3), ack(2));
    assert_eq!(c(0x1f, 3, 0xff_fffe, 3), AckDecision::Ignore);
    assert_eq!(c(0x1f, 0xff_fffd, 0xff_fffe, 3), AckDecision::Ignore);
    assert_eq!(c(0x61, 0xff_fffd, 0xff_fffe, 3), AckDecision::Ignore);
}

#[test]
fn nak_codes_and_rnr_timers() {
    let c = |syn: u8| ack_in(aeth(syn), Psn::new(105), Psn::new(100), Psn::new(110));
    assert_eq!(c(0x20), AckDecision::RnrNak { timer_us: 655_360 });
    assert_eq!(c(0x21), AckDecision::RnrNak { timer_us: 10 });
    assert_eq!(c(0x2e), AckDecision::RnrNak { timer_us: 1_280 });
    assert_eq!(c(0x2f), AckDecision::RnrNak { timer_us: 1_920 });
    assert_eq!(c(0x39), AckDecision::RnrNak { timer_us: 61_440 });
    assert_eq!(c(0x3f), AckDecision::RnrNak { timer_us: 491_520 });
    assert_eq!(
        c(0x60),
        AckDecision::NakSeqErr {
            expected: outstanding(105)
        }
    );
    assert_eq!(c(0x61), AckDecision::NakInvalidRequest);
    assert_eq!(c(0x62), AckDecision::NakRemoteAccess);
    assert_eq!(c(0x63), AckDecision::NakRemoteOperation);
    assert_eq!(c(0x64), AckDecision::NakRemoteOperation);
    assert_eq!(c(0x7f), AckDecision::NakRemoteOperation);
    for reserved in [0x40, 0x5f, 0x80, 0xa0, 0xc0, 0xff] {
        assert_eq!(c(reserved), AckDecision::Ignore, "{reserved:#x}");
    }
    let status = |d: AckDecision| d.wc_status().map(WcStatus::to_raw);
    assert_eq!(status(AckDecision::NakInvalidRequest), Some(9));
    assert_eq!(status(AckDecision::NakRemoteAccess), Some(10));
    assert_eq!(status(AckDecision::NakRemoteOperation), Some(11));
    assert_eq!(status(c(0x1f)), None);
    assert_eq!(status(c(0x20)), None);
    assert_eq!(status(c(0x60)), None);
    assert_eq!(status(AckDecision::Ignore), None);
}

/// Returns how many times `counter` allows a retry, stopping at `limit`.
fn retries(mut counter: RetryCounter, limit: u32) -> u32 {
    let mut n = 0;
    while n < limit && counter.consume() {
        n += 1;
    }
    n
}

#[test]
fn transport_retry_counter() {
    assert_eq!(retries(RetryCounter::new(0), 100), 0);
    assert_eq!(retries(RetryCounter::new(1), 100), 1);
    assert_eq!(retries(RetryCounter::new(3), 100), 3);
    assert_eq!(retries(RetryCounter::new(7), 100), 7);
    assert_eq!(retries(RetryCounter::new(200), 100), 7);
    assert!(!RetryCounter::new(7).is_infinite());
    assert_eq!(RetryCounter::new(5).exhausted_status().to_raw(), 12);
    let mut counter = RetryCounter::new(2);
    assert!(counter.consume());
    assert_eq!(counter.left(), 1);
    assert!(counter.consume());
    assert!(!counter.consume());
    assert!(!counter.consume());
    assert_eq!(counter.left(), 0);
}

#[test]
fn stale_responses_after_a_retry_use_no_retries() {
    use RetryCause::{Response, Timeout};
    use RetryDecision::{Exhausted, Ignore, Retry};
    // A loss found by a response goes back once; the responses to what was sent before that
    // (any number of them) are ignored until progress resets the budget.
    let mut c = RetryCounter::new(7);
    assert_eq!(c.decide(Response), Retry);
    for _ in 0..100 {
        assert_eq!(c.decide(Response), Ignore);
    }
    assert_eq!(c.left(), 6);
    // Only the timer goes back again without progress, and it runs the budget out.
    for left in (0..6).rev() {
        assert_eq!(c.decide(Timeout), Retry);
        assert_eq!(c.left(), left);
        assert_eq!(c.decide(Response), Ignore);
    }
    assert_eq!(c.decide(Timeout), Exhausted);
    assert_eq!(c.decide(Response), Ignore);
    // Progress makes a fresh budget: the next response-found loss goes back at once.
    let mut c = RetryCounter::new(7);
    assert_eq!(c.decide(Timeout), Retry);
    assert_eq!(c.decide(Response), Ignore);
    let mut c = RetryCounter::new(7);
    assert_eq!(c.decide(Response), Retry);
    // No retries at all: the first loss fails the WQE, whatever found it.
    assert_eq!(RetryCounter::new(0).decide(Response), Exhausted);
    assert_eq!(RetryCounter::new(0).decide(Timeout), Exhausted);
}

#[test]
fn rnr_retry_counter() {
    assert_eq!(retries(RetryCounter::new_rnr(0), 100), 0);
    assert_eq!(retries(RetryCounter::new_rnr(6), 100), 6);
    assert_eq!(retries(RetryCounter::new_rnr(7), 1000), 1000);
    assert_eq!(retries(RetryCounter::new_rnr(255), 1000), 1000);
    assert!(RetryCounter::new_rnr(7).is_infinite());
    assert!(!RetryCounter::new_rnr(6).is_infinite());
    assert_eq!(RetryCounter::new_rnr(7).exhausted_status().to_raw(), 13);
    assert_eq!(RetryCounter::new_rnr(1).exhausted_status().to_raw(), 13);
}

#[test]
fn ack_coalescing() {
    assert_eq!(MAX_PKT_PER_ACK, 64);
    assert!(!ack_due(1, false, 64));
    assert!(!ack_due(63, false, 64));
    assert!(ack_due(64, false, 64));
    assert!(ack_due(65, false, 64));
    assert!(ack_due(1, true, 64));
    assert!(ack_due(0, true, 64));
    assert!(ack_due(0, false, 0));
}

#[test]
fn paced_requesters_ask_for_acks_by_time() {
    // Timeout 67 ms (code 14, 4.096 us << 14): AckReq once 16.7 ms passed since the last.
    let t = Some(67_108);
    assert!(!paced_ack_due(16_000_000, 0, t));
    assert!(paced_ack_due(16_777_000, 0, t));
    assert!(paced_ack_due(50_000_000, 30_000_000, t));
    assert!(!paced_ack_due(40_000_000, 30_000_000, t));
    // No timeout (code 0): never by time.
    assert!(!paced_ack_due(u64::MAX, 0, None));
    // A clock behind the last AckReq (a snapshot's time taken before another pass's): not due.
    assert!(!paced_ack_due(5, 10, t));
}
