// SPDX-License-Identifier: GPL-2.0

//! READ responses placed past a gap and the asks for the missing runs (`proto::read_gaps`).

use crate::proto::{
    psn::Psn,
    read_gaps::{
        missing_run,
        next_missing_run,
        Mark,
        Placed,
        ReadAsk,
        READ_GAP_REACH, //
    },
};

/// A `Placed` based at `base`.
fn at(base: u32) -> Placed {
    let mut p = Placed::default();
    p.rebase(Psn::new(base));
    p
}

#[test]
fn marks_once_within_reach() {
    let mut p = at(1000);
    assert_eq!(p.mark(Psn::new(1003)), Mark::Fresh);
    assert_eq!(p.mark(Psn::new(1003)), Mark::Already);
    assert_eq!(p.mark(Psn::new(999)), Mark::OutOfReach, "before the base");
    assert_eq!(
        p.mark(Psn::new(1000 + READ_GAP_REACH)),
        Mark::OutOfReach,
        "past the reach"
    );
    assert_eq!(
        p.mark(Psn::new(1000 + READ_GAP_REACH - 1)),
        Mark::Fresh,
        "the last in reach"
    );
    assert!(p.has(Psn::new(1003)) && !p.has(Psn::new(1002)));
    p.unmark(Psn::new(1003));
    assert!(!p.has(Psn::new(1003)));
}

#[test]
fn rebase_keeps_what_lies_ahead() {
    for shift in [1u32, 5, 63, 64, 65, 127, 128, 200, 511] {
        let mut p = at(10);
        let marks = [11u32, 70, 140, 300, 520];
        for m in marks {
            assert_eq!(p.mark(Psn::new(m)), Mark::Fresh);
        }
        p.rebase(Psn::new(10 + shift));
        for m in marks {
            assert_eq!(
                p.has(Psn::new(m)),
                m >= 10 + shift,
                "shift {shift}, PSN {m}"
            );
        }
        // Nothing else appeared.
        let mut n = 0;
        let mut from = Psn::new(10 + shift);
        while let Some(x) = p.next_placed(from) {
            n += 1;
            from = x.next();
        }
        assert_eq!(n, marks.iter().filter(|&&m| m >= 10 + shift).count());
    }
    // Past the reach or backwards: everything is forgotten.
    let mut p = at(10);
    p.mark(Psn::new(20));
    p.rebase(Psn::new(10 + READ_GAP_REACH));
    assert!(p.is_empty());
    let mut p = at(10);
    p.mark(Psn::new(20));
    p.rebase(Psn::new(5));
    assert!(p.is_empty());
}

#[test]
fn rebase_across_the_psn_wrap() {
    let mut p = at(Psn::MAX.value() - 2);
    assert_eq!(p.mark(Psn::new(3)), Mark::Fresh);
    p.rebase(Psn::new(1));
    assert!(p.has(Psn::new(3)));
    assert_eq!(p.next_placed(Psn::new(1)), Some(Psn::new(3)));
}

#[test]
fn the_missing_run_ends_before_the_next_placed_response() {
    // A READ of PSNs 100..=163; 100 expected.
    let read = (Psn::new(100), Psn::new(163));
    let first = read.0;
    let mut p = at(100);
    assert_eq!(missing_run(&p, read, first, false), None, "no loss known");
    assert_eq!(
        missing_run(&p, read, first, true),
        Some(read.1),
        "a later request answered: all of it is lost"
    );
    p.mark(Psn::new(104));
    p.mark(Psn::new(105));
    assert_eq!(missing_run(&p, read, first, false), Some(Psn::new(103)));
    assert_eq!(missing_run(&p, read, first, true), Some(Psn::new(103)));
    // Only placed past the READ (a later READ's responses): the rest of it is missing.
    let mut p = at(100);
    p.mark(Psn::new(170));
    assert_eq!(missing_run(&p, read, first, false), Some(read.1));
    // Not the READ's expected PSN: nothing to ask for it.
    assert_eq!(missing_run(&p, read, Psn::new(99), true), None);
    assert_eq!(missing_run(&p, read, Psn::new(164), true), None);
    // The expected one placed: nothing is missing there.
    let mut p = at(100);
    p.mark(Psn::new(100));
    p.mark(Psn::new(102));
    assert_eq!(missing_run(&p, read, first, true), None);
}

#[test]
fn an_ask_is_over_when_answered_or_superseded() {
    let mut a = ReadAsk::new(Psn::new(103), Psn::new(105));
    assert!(
        !a.over(Psn::new(500), Psn::new(103)),
        "not sent: never over"
    );
    a.after = Some(Psn::new(300));
    assert!(!a.over(Psn::new(104), Psn::new(103)), "its own responses");
    assert!(a.over(Psn::new(105), Psn::new(103)), "its last response");
    assert!(a.over(Psn::new(104), Psn::new(106)), "its run all came");
    assert!(
        !a.over(Psn::new(299), Psn::new(103)),
        "a request sent before it"
    );
    assert!(
        a.over(Psn::new(300), Psn::new(103)),
        "a request sent after it"
    );
}

#[test]
fn counts_the_placed_psns_of_a_range() {
    let mut p = at(1000);
    for psn in [1001, 1002, 1063, 1064, 1130, 1000 + READ_GAP_REACH - 1] {
        assert_eq!(p.mark(Psn::new(psn)), Mark::Fresh);
    }
    let n = |a: u32, b: u32| p.count_in(Psn::new(a), Psn::new(b));
    assert_eq!(n(1000, 1000 + READ_GAP_REACH), 6, "all of them");
    assert_eq!(n(990, 2000), 6, "a range wider than the reach");
    assert_eq!(
        n(1002, 1064),
        2,
        "1002 and 1063: the end is not in the range"
    );
    assert_eq!(n(1063, 1065), 2, "across a word's edge");
    assert_eq!(n(1003, 1063), 0);
    assert_eq!(n(1131, 1131), 0, "an empty range");
    assert_eq!(n(900, 1000), 0, "before the base");
    // Across the PSN space's wrap.
    let mut w = at(0xff_fff0);
    assert_eq!(w.mark(Psn::new(0xff_fffe)), Mark::Fresh);
    assert_eq!(w.mark(Psn::new(3)), Mark::Fresh);
    assert_eq!(w.count_in(Psn::new(0xff_fff0), Psn::new(4)), 2);
    assert_eq!(w.count_in(Psn::new(0), Psn::new(3)), 0);
}

#[test]
fn finds_each_run_known_missing() {
    // A READ over 1000..=1019 with 1000 the oldest unacknowledged PSN; placed: 1003-1004,
    // 1008, 1015 (and a later READ's 1030).
    let mut p = at(1000);
    for psn in [1003, 1004, 1008, 1015, 1030] {
        assert_eq!(p.mark(Psn::new(psn)), Mark::Fresh);
    }
    let read = (Psn::new(1000), Psn::new(1019));
    let run =
        |from| next_missing_run(&p, Psn::new(from), read).map(|(s, e)| (s.value(), e.value()));
    assert_eq!(run(1000), Some((1000, 1002)));
    assert_eq!(run(1003), Some((1005, 1007)), "placed ones are skipped");
    assert_eq!(run(1009), Some((1009, 1014)));
    assert_eq!(
        run(1016),
        Some((1016, 1019)),
        "the later READ's response shows the rest lost"
    );
    assert_eq!(
        run(990),
        Some((1000, 1002)),
        "from the READ's first at the earliest"
    );
    let mut q = at(1000);
    assert_eq!(q.mark(Psn::new(1003)), Mark::Fresh);
    assert_eq!(
        next_missing_run(&q, Psn::new(1004), read),
        None,
        "nothing placed after: not known lost"
    );
    for psn in 1004..=1019 {
        assert_eq!(q.mark(Psn::new(psn)), Mark::Fresh);
    }
    assert_eq!(
        next_missing_run(&q, Psn::new(1003), read),
        None,
        "all placed"
    );
}
