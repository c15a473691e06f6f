// SPDX-License-Identifier: GPL-2.0

//! The causes of the requester's error completions (R5) in the reference model, each with an
//! honest trace that passes and a lie that is caught.

use super::requester::two_sends;
use super::*;

// ---- R5: errors ------------------------------------------------------------------------------

#[test]
fn r5_remote_errors_need_their_nak() {
    for (status, syn, ok) in [
        (10, 0x62, true),
        (10, 0x61, false),
        (9, 0x61, true),
        (9, 0x64, false),
        (11, 0x63, true),
        // Invalid RD request and reserved codes: a remote operational error, as C rxe says.
        (11, 0x64, true),
        (11, 0x7f, true),
        (11, 0x60, false),
        (11, 0x62, false),
    ] {
        let mut t = send_3000();
        t.ack(3, 101, syn).wc(4, "rc", 1, status, "-");
        let want: &[&str] = if ok { &[] } else { &["R5-nak"] };
        verdict(&t.run(), want);
    }
    // The NAK must be for one of its PSNs.
    let mut t = send_3000();
    t.ack(3, 99, 0x62).wc(4, "rc", 1, 10, "-");
    verdict(&t.run(), &["R5-nak"]);
}

#[test]
fn r5_retry_exceeded_needs_retries() {
    let mut t = send_3000();
    for i in 0..7 {
        t.ack(3 + i, 100, 0x60);
    }
    t.wc(20, "rc", 1, 12, "-");
    verdict(&t.run(), &[]);
    let mut t = send_3000();
    t.ack(3, 100, 0x60)
        .ack(4, 100, 0x60)
        .wc(10, "rc", 1, 12, "-");
    verdict(&t.run(), &["R5-retry"]);
    // Timeouts count: seven halves of 67 ms.
    let mut t = send_3000();
    t.wc(300, "rc", 1, 12, "-");
    verdict(&t.run(), &[]);
}

#[test]
fn r5_rnr_retry_exceeded_never() {
    let mut t = send_3000();
    for i in 0..50 {
        t.ack(3 + i, 100, 0x21);
    }
    t.wc(100, "rc", 1, 13, "-");
    verdict(&t.run(), &["R5-rnr"]);
}

#[test]
fn r5_bad_response_needs_one_that_cannot_answer() {
    let mut t = send_3000();
    t.tx(3, true, ATOMIC_ACK, RC, 101, 0, 7, 0, 0)
        .wc(4, "rc", 1, 7, "-");
    verdict(&t.run(), &[]);
    let mut t = send_3000();
    t.rr(3, RR_MIDDLE, 100, 1024, 1).wc(4, "rc", 1, 7, "-");
    verdict(&t.run(), &[]);
    let mut t = send_3000();
    t.ack(3, 101, 0).wc(4, "rc", 1, 7, "-");
    verdict(&t.run(), &["R5-bad-resp"]);
    // A fitting READ response to a READ is no excuse either.
    let mut t = read_2500();
    t.rr(3, RR_FIRST, 100, 1024, 1).wc(4, "rc", 1, 7, "-");
    verdict(&t.run(), &["R5-bad-resp"]);
}

#[test]
fn r5_local_length_error_needs_a_wrong_read_length() {
    let mut t = read_2500();
    t.rr(3, RR_FIRST, 100, 1000, 1).wc(4, "rc", 1, 1, "-");
    verdict(&t.run(), &[]);
    let mut t = read_2500();
    t.rr(3, RR_FIRST, 100, 1024, 1).wc(4, "rc", 1, 1, "-");
    verdict(&t.run(), &["R5-loc-len"]);
}

#[test]
fn r5_flush_follows_an_error() {
    let mut t = two_sends();
    t.ack(3, 100, 0x62)
        .wc(4, "rc", 1, 10, "-")
        .wc(4, "rc", 2, 5, "-");
    verdict(&t.run(), &[]);
    let mut t = two_sends();
    t.wc(4, "rc", 1, 5, "-").wc(4, "rc", 2, 5, "-");
    verdict(&t.run(), &["R5-flush", "R5-flush"]);
    // The victim's own responder NAKing a request fatally moves the QP to Error.
    let mut t = two_sends();
    t.line_f(format!(
        "rx {} {} 0 0",
        3 * MS,
        hdr(ACK, 0x99, 7, &[0x62, 0, 0, 0])
    ));
    t.wc(4, "rc", 1, 5, "-");
    verdict(&t.run(), &[]);
    // Lost packets leave an unexplained flush unjudged.
    let mut t = two_sends();
    t.wc(4, "rc", 1, 5, "-").line_f("lost 1".into());
    let r = t.run();
    verdict(&r, &[]);
    assert_eq!(r.unjudged(), 1);
}

#[test]
fn r5_flush_after_the_victims_own_move_to_error() {
    let mut t = two_sends();
    t.line_v(format!("err {} rc 1", 3 * MS));
    t.wc(4, "rc", 1, 5, "-").wc(4, "rc", 2, 5, "-");
    verdict(&t.run(), &[]);
    // Not before it, nor for another generation.
    let mut t = two_sends();
    t.wc(4, "rc", 1, 5, "-")
        .line_v(format!("err {} rc 1", 9 * MS));
    t.line_v(format!("err {} rc 2", 3 * MS));
    verdict(&t.run(), &["R5-flush"]);
}

#[test]
fn r5_other_statuses_are_unjudged() {
    let mut t = send_3000();
    t.wc(4, "rc", 1, 19, "-");
    let r = t.run();
    verdict(&r, &[]);
    assert_eq!((r.judged(), r.unjudged()), (0, 1));
}
