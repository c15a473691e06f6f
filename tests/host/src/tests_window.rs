// SPDX-License-Identifier: GPL-2.0

//! Tests of `proto::window`: which answers the completer may act on, and where a READ
//! response may fall in its READ. The expectations come from IBA 9.7.5.1 (implicit
//! acknowledgement by a response, the responses' PSNs) and 9.7.6.1.3 (a first or middle packet
//! carries one path MTU), not from the code under test.

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
    // 10000 bytes at MTU 1024: ten responses, nine full, the last 784 bytes.
    for i in 0..9 {
        assert!(read_response_fits(10_000, 1024, i, false, 1024), "{i}");
        assert!(!read_response_fits(10_000, 1024, i, false, 1023), "{i}");
        assert!(!read_response_fits(10_000, 1024, i, false, 1025), "{i}");
        // A LAST before the last place would complete the READ with bytes missing.
        assert!(!read_response_fits(10_000, 1024, i, true, 1024), "{i}");
    }
    assert!(read_response_fits(10_000, 1024, 9, true, 784));
    assert!(!read_response_fits(10_000, 1024, 9, true, 1024));
    assert!(!read_response_fits(10_000, 1024, 9, true, 783));
    assert!(!read_response_fits(10_000, 1024, 9, false, 784));
    // No place past the READ's responses.
    assert!(!read_response_fits(10_000, 1024, 10, true, 0));
    assert!(!read_response_fits(10_000, 1024, u32::MAX, true, 0));
}

#[test]
fn single_and_empty_read_responses() {
    assert!(read_response_fits(0, 1024, 0, true, 0));
    assert!(!read_response_fits(0, 1024, 0, true, 1));
    assert!(read_response_fits(1024, 1024, 0, true, 1024));
    assert!(!read_response_fits(1024, 1024, 0, true, 1025));
    assert!(read_response_fits(2048, 1024, 1, true, 1024));
    assert!(read_response_fits(1, 4096, 0, true, 1));
    // A zero MTU has no geometry.
    assert!(!read_response_fits(100, 0, 0, true, 100));
    // The largest message: 2^31 bytes at MTU 256.
    let len = 1u32 << 31;
    let count = len / 256;
    assert!(read_response_fits(len, 256, count - 1, true, 256));
    assert!(read_response_fits(len, 256, count - 2, false, 256));
}
