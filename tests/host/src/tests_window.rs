// SPDX-License-Identifier: GPL-2.0

//! Tests of `proto::window`: which answers the completer may act on, and where a READ
//! response may fall in its READ. The expectations come from IBA 9.7.5.1 (implicit
//! acknowledgement by a response, the responses' PSNs) and 9.7.6.1.3 (a first or middle packet
//! carries one path MTU), not from the code under test.

use crate::proto::opcode::Position;
use crate::proto::psn::Psn;
use crate::proto::window::read_response_fits;
use crate::proto::window::AnswerPsn;
use crate::proto::window::SendWindow;

fn w(oldest: u32, sent_to: u32) -> SendWindow {
    SendWindow::new(Psn::new(oldest), Psn::new(sent_to))
}

#[test]
fn only_sent_unacknowledged_psns_are_outstanding() {
    let win = w(100, 110);
    assert_eq!(win.len(), 10);
    for p in 100..110 {
        let o = win.outstanding(Psn::new(p)).expect("in the window");
        assert_eq!(o.psn(), Psn::new(p));
    }
    assert_eq!(win.classify(Psn::new(99)), AnswerPsn::Stale);
    assert_eq!(
        win.classify(Psn::new(100).wrapping_sub(0x80_0000)),
        AnswerPsn::Stale
    );
    assert_eq!(win.classify(Psn::new(110)), AnswerPsn::Unsent);
    assert_eq!(win.classify(Psn::new(100 + 0x7f_ffff)), AnswerPsn::Unsent);
    // Nothing outstanding: nothing is acknowledged, whatever the PSN.
    let empty = w(100, 100);
    assert_eq!(empty.classify(Psn::new(100)), AnswerPsn::Unsent);
    assert_eq!(empty.classify(Psn::new(1000)), AnswerPsn::Unsent);
    assert_eq!(empty.classify(Psn::new(99)), AnswerPsn::Stale);
}

#[test]
fn a_window_across_the_wrap() {
    let win = w(0xff_fffe, 3);
    assert_eq!(win.len(), 5);
    for p in [0xff_fffe, 0xff_ffff, 0, 1, 2] {
        assert!(win.outstanding(Psn::new(p)).is_some(), "{p:#x}");
    }
    assert_eq!(win.classify(Psn::new(3)), AnswerPsn::Unsent);
    assert_eq!(win.classify(Psn::new(0xff_fffd)), AnswerPsn::Stale);
}

#[test]
fn acknowledgements_end_inside_or_just_before_the_window() {
    let win = w(0xff_ffff, 5);
    let first = win.outstanding(Psn::new(0xff_ffff)).unwrap();
    // A NAK or a response at the window's start acknowledges nothing new.
    assert_eq!(first.acks_before().last(), Psn::new(0xff_fffe));
    assert_eq!(first.acks_through().last(), Psn::new(0xff_ffff));
    let last = win.outstanding(Psn::new(4)).unwrap();
    assert_eq!(last.acks_through().last(), Psn::new(4));
    assert_eq!(last.acks_before().last(), Psn::new(3));
}

#[test]
fn read_responses_carry_one_mtu_until_the_last() {
    use Position::{
        First,
        Last,
        Middle, //
    };
    let fits = |i, pos, n| read_response_fits(10_000, 1024, i, (None, None), pos, n);
    // 10000 bytes at MTU 1024: ten responses, nine full, the last 784 bytes.
    for i in 0..9 {
        let pos = if i == 0 { First } else { Middle };
        assert!(fits(i, pos, 1024), "{i}");
        assert!(!fits(i, pos, 1023), "{i}");
        assert!(!fits(i, pos, 1025), "{i}");
        // A LAST before the last place would complete the READ with bytes missing.
        assert!(!fits(i, Last, 1024), "{i}");
    }
    assert!(fits(9, Last, 784));
    assert!(!fits(9, Last, 1024));
    assert!(!fits(9, Last, 783));
    assert!(!fits(9, Middle, 784));
    // No place past the READ's responses.
    assert!(!fits(10, Last, 0));
    assert!(!fits(u32::MAX, Last, 0));
}

#[test]
fn read_responses_start_where_the_read_was_asked_for() {
    use Position::{
        First,
        Last,
        Middle,
        Only, //
    };
    let fits = |i, resumed, pos, n| read_response_fits(3000, 1024, i, (resumed, None), pos, n);
    // The first place starts the message: never a MIDDLE or LAST there.
    assert!(fits(0, None, First, 1024));
    assert!(!fits(0, None, Middle, 1024));
    assert!(!fits(0, Some(0), Middle, 1024));
    assert!(read_response_fits(100, 1024, 0, (None, None), Only, 100));
    assert!(!read_response_fits(100, 1024, 0, (None, None), Last, 100));
    // A FIRST in the middle only where the READ was asked for again.
    assert!(!fits(1, None, First, 1024));
    assert!(!fits(1, Some(2), First, 1024));
    assert!(fits(1, Some(1), First, 1024));
    // The earlier request's MIDDLE may still come there.
    assert!(fits(1, Some(1), Middle, 1024));
    // Asked again for the last packet only: an ONLY there, or the earlier LAST.
    assert!(fits(2, Some(2), Only, 952));
    assert!(fits(2, Some(2), Last, 952));
    assert!(!fits(2, None, Only, 952));
    assert!(!fits(2, Some(1), Only, 952));
}

#[test]
fn an_early_last_only_at_the_end_of_a_run_asked_for() {
    use Position::{
        Last,
        Middle, //
    };
    // 10000 bytes at MTU 1024; the run 3..=5 asked for again.
    let fits = |i, ask_end, pos, n| read_response_fits(10_000, 1024, i, (None, ask_end), pos, n);
    assert!(fits(5, Some(5), Last, 1024));
    assert!(fits(4, Some(5), Middle, 1024));
    assert!(!fits(4, Some(5), Last, 1024));
    assert!(!fits(5, None, Last, 1024));
    // Full MTU still: a short LAST at the run's end is no response.
    assert!(!fits(5, Some(5), Last, 100));
    // The READ's own last place is unchanged.
    assert!(fits(9, Some(5), Last, 784));
    assert!(!fits(9, Some(9), Middle, 784));
}

#[test]
fn single_and_empty_read_responses() {
    use Position::{
        Last,
        Middle,
        Only, //
    };
    assert!(read_response_fits(0, 1024, 0, (None, None), Only, 0));
    assert!(!read_response_fits(0, 1024, 0, (None, None), Only, 1));
    assert!(read_response_fits(1024, 1024, 0, (None, None), Only, 1024));
    assert!(!read_response_fits(1024, 1024, 0, (None, None), Only, 1025));
    assert!(read_response_fits(2048, 1024, 1, (None, None), Last, 1024));
    assert!(read_response_fits(1, 4096, 0, (None, None), Only, 1));
    // A zero MTU has no geometry.
    assert!(!read_response_fits(100, 0, 0, (None, None), Only, 100));
    // The largest message: 2^31 bytes at MTU 256.
    let len = 1u32 << 31;
    let count = len / 256;
    assert!(read_response_fits(
        len,
        256,
        count - 1,
        (None, None),
        Last,
        256
    ));
    assert!(read_response_fits(
        len,
        256,
        count - 2,
        (None, None),
        Middle,
        256
    ));
}
