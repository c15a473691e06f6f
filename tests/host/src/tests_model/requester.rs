// SPDX-License-Identifier: GPL-2.0

//! The requester's rules (R1-R5, UC) of the reference model, each with an honest trace that passes and a lie that is caught.

use super::*;

// ---- R1: order -------------------------------------------------------------------------------

/// Two SENDs acknowledged by one coalesced ACK: honest in order, a lie out of order or twice.
pub(super) fn two_sends() -> Tb {
    let mut t = Tb::new(100, 500);
    t.post(1, "rc", 1, "send", 8).post(1, "rc", 2, "send", 8);
    t.rx(2, SEND_ONLY, 100).rx(2, SEND_ONLY, 101).ack(3, 101, 0);
    t
}

#[test]
fn r1_in_order_passes() {
    let mut t = two_sends();
    t.wc(4, "rc", 1, 0, "-").wc(4, "rc", 2, 0, "-");
    let r = t.run();
    verdict(&r, &[]);
    assert_eq!(r.judged(), 2);
    assert!(r
        .render()
        .ends_with("oracle: judged=2 violations=0 unjudged=0\n"));
}

#[test]
fn r1_out_of_order_twice_and_unposted_are_lies() {
    let mut t = two_sends();
    t.wc(4, "rc", 2, 0, "-").wc(4, "rc", 1, 0, "-");
    verdict(&t.run(), &["R1"]);
    let mut t = two_sends();
    t.wc(4, "rc", 1, 0, "-").wc(4, "rc", 1, 0, "-");
    verdict(&t.run(), &["R1"]);
    let mut t = two_sends();
    t.wc(4, "rc", 7, 0, "-");
    verdict(&t.run(), &["R1"]);
    let mut t = two_sends();
    t.line_v(format!("wc {} rc 9 1 send 0 -", 4 * MS));
    verdict(&t.run(), &["R1"]);
}

// ---- R2: acknowledgement -------------------------------------------------------------------

#[test]
fn r2_send_needs_an_ack_covering_its_last_psn() {
    // 3000 bytes: PSNs 100..=102.
    let base = || {
        let mut t = Tb::new(100, 0);
        t.post(1, "rc", 1, "send", 3000).rx(2, SEND_LAST, 102);
        t
    };
    let mut t = base();
    t.ack(3, 102, 0).wc(4, "rc", 1, 0, "-");
    verdict(&t.run(), &[]);
    // An ACK for the middle of the message acknowledges only part of it.
    let mut t = base();
    t.ack(3, 101, 0).wc(4, "rc", 1, 0, "-");
    verdict(&t.run(), &["R2"]);
    // No ACK at all.
    let mut t = base();
    t.wc(4, "rc", 1, 0, "-");
    verdict(&t.run(), &["R2"]);
    // A mangled ACK must have no effect.
    let mut t = base();
    t.tx(3, false, ACK, RC, 102, 0, 0, 0, 0)
        .wc(4, "rc", 1, 0, "-");
    verdict(&t.run(), &["R2"]);
    // An ACK to another QP.
    let mut t = base();
    t.tx(3, true, ACK, 0x77, 102, 0, 0, 0, 0)
        .wc(4, "rc", 1, 0, "-");
    verdict(&t.run(), &["R2"]);
    // An ACK sent before the work request was posted.
    let mut t = Tb::new(100, 0);
    t.ack(1, 102, 0)
        .post(5, "rc", 1, "send", 3000)
        .rx(6, SEND_LAST, 102);
    t.wc(8, "rc", 1, 0, "-");
    verdict(&t.run(), &["R2"]);
    // An ACK sent after the completion.
    let mut t = base();
    t.wc(4, "rc", 1, 0, "-").ack(9, 102, 0);
    verdict(&t.run(), &["R2"]);
    // An RNR NAK for the last PSN does not acknowledge it.
    let mut t = base();
    t.ack(3, 102, 0x20).wc(4, "rc", 1, 0, "-");
    verdict(&t.run(), &["R2"]);
}

#[test]
fn r2_ack_for_a_psn_never_sent_is_no_ack() {
    let mut t = Tb::new(100, 0);
    t.post(1, "rc", 1, "send", 8).rx(2, SEND_ONLY, 100);
    // PSN 150 was never sent: a conformant requester drops the ACK (9.7.5.1.3).
    t.ack(3, 150, 0).wc(4, "rc", 1, 0, "-");
    verdict(&t.run(), &["R2"]);
    // Once a later work request covers it, the same ACK acknowledges both (coalescing).
    let mut t = Tb::new(100, 0);
    t.post(1, "rc", 1, "send", 8).post(2, "rc", 2, "write", 8);
    t.rx(2, SEND_ONLY, 100)
        .rx(2, WRITE_ONLY, 101)
        .ack(3, 101, 0);
    t.wc(4, "rc", 1, 0, "-").wc(4, "rc", 2, 0, "-");
    verdict(&t.run(), &[]);
}

#[test]
fn r2_implicit_acknowledgements() {
    let base = || {
        let mut t = Tb::new(100, 0);
        t.post(1, "rc", 1, "send", 8).post(1, "rc", 2, "read", 8);
        t.rx(2, SEND_ONLY, 100).rx(2, READ_REQ, 101);
        t
    };
    // A READ response, a sequence NAK or an RNR NAK for the next PSN acknowledge the SEND.
    for (op, syn) in [(RR_ONLY, 0u8), (ACK, 0x60), (ACK, 0x21)] {
        let mut t = base();
        t.tx(3, true, op, RC, 101, syn, 0, 8, 5)
            .wc(4, "rc", 1, 0, "-");
        verdict(&t.run(), &[]);
    }
    // A READ response for the SEND's own PSN does not.
    let mut t = base();
    t.rr(3, RR_ONLY, 100, 8, 5).wc(4, "rc", 1, 0, "-");
    verdict(&t.run(), &["R2"]);
}

#[test]
fn r2_psns_wrap_at_24_bits() {
    // 3000 bytes from 0xffffff: PSNs 0xffffff, 0, 1.
    let base = || {
        let mut t = Tb::new(0xff_ffff, 0);
        t.post(1, "rc", 1, "write", 3000).rx(2, 0x08, 1);
        t
    };
    let mut t = base();
    t.ack(3, 1, 0).wc(4, "rc", 1, 0, "-");
    verdict(&t.run(), &[]);
    let mut t = base();
    t.ack(3, 0, 0).wc(4, "rc", 1, 0, "-");
    verdict(&t.run(), &["R2"]);
}

#[test]
fn r2_request_must_have_been_on_the_wire() {
    let mut t = Tb::new(100, 0);
    t.post(1, "rc", 1, "send", 8)
        .ack(3, 100, 0)
        .wc(4, "rc", 1, 0, "-");
    verdict(&t.run(), &["R2-wire"]);
    // Unless the fuzzer lost packets: then the check is skipped.
    t.line_f("lost 3".into());
    let r = t.run();
    verdict(&r, &[]);
    assert!(r.render().contains("lost 3 packets"));
}

#[test]
fn r2_wire_check_follows_the_fuzzer() {
    // Seen by the fuzzer only after the completion: it may read late, that is fine.
    let mut t = Tb::new(100, 0);
    t.post(1, "rc", 1, "send", 8)
        .ack(3, 100, 0)
        .wc(4, "rc", 1, 0, "-")
        .rx(9, SEND_ONLY, 100);
    verdict(&t.run(), &[]);
    // Posted before the fuzzer followed the generation: not checked, but said so.
    let mut t = Tb::default();
    t.line_v(format!("conn 0 rc 1 {RC} 100 0 1024"));
    t.post(1, "rc", 1, "send", 8)
        .line_f(format!("gen {} rc 1", 3 * MS));
    t.ack(4, 100, 0).wc(4, "rc", 1, 0, "-");
    let r = t.run();
    verdict(&r, &[]);
    assert!(r
        .render()
        .contains("1 successes posted before the fuzzer followed"));
    // Posted after it: checked.
    t.post(5, "rc", 2, "send", 8)
        .ack(6, 101, 0)
        .wc(7, "rc", 2, 0, "-");
    verdict(&t.run(), &["R2-wire"]);
}

#[test]
fn local_operations_take_no_psn() {
    let mut t = Tb::new(100, 0);
    t.post(1, "rc", 1, "bind", 0)
        .post(1, "rc", 2, "send", 8)
        .rx(2, SEND_ONLY, 100);
    t.ack(3, 100, 0)
        .wc(4, "rc", 1, 0, "-")
        .wc(4, "rc", 2, 0, "-");
    let r = t.run();
    verdict(&r, &[]);
    assert_eq!((r.judged(), r.unjudged()), (1, 1));
}

// ---- R3: READ data ---------------------------------------------------------------------------

#[test]
fn r3_read_needs_every_response_with_its_data() {
    // A READ of 2500 bytes answered by `resps` (opcode, PSN, length, hash), the victim
    // reporting the data hashing a1, a2, a3.
    let answered = |resps: &[(u8, u32, u32, u64)]| {
        let mut t = read_2500();
        for &(op, psn, len, hash) in resps {
            t.rr(3, op, psn, len, hash);
        }
        t.wc(
            4,
            "rc",
            1,
            0,
            "00000000000000a1,00000000000000a2,00000000000000a3",
        );
        t.run()
    };
    let first = (RR_FIRST, 100, 1024, 0xa1);
    let middle = (RR_MIDDLE, 101, 1024, 0xa2);
    let last = (RR_LAST, 102, 452, 0xa3);
    verdict(&answered(&[first, middle, last]), &[]);
    // The data the victim reports differs from what was sent.
    verdict(
        &answered(&[first, (RR_MIDDLE, 101, 1024, 0xbb), last]),
        &["R3"],
    );
    // The last response never came (a later ACK is no READ data).
    verdict(&answered(&[first, middle]), &["R3"]);
    // The first response had the wrong opcode for its place.
    verdict(
        &answered(&[(RR_ONLY, 100, 1024, 0xa1), middle, last]),
        &["R3"],
    );
    // The last response was too long.
    verdict(
        &answered(&[first, middle, (RR_LAST, 102, 1024, 0xa3)]),
        &["R3"],
    );
}

#[test]
fn r3_a_resumed_read_starts_again_where_it_was_asked_again() {
    let val = "00000000000000a1,00000000000000a2,00000000000000a3";
    // Asked again from its second packet: a FIRST there, then the LAST.
    let resumed = |rerequest: bool| {
        let mut t = read_2500();
        t.rr(3, RR_FIRST, 100, 1024, 0xa1);
        if rerequest {
            t.read_req(4, 101, 1476);
        }
        t.rr(5, RR_FIRST, 101, 1024, 0xa2)
            .rr(5, RR_LAST, 102, 452, 0xa3)
            .wc(6, "rc", 1, 0, val);
        t
    };
    verdict(&resumed(true).run(), &[]);
    // The same FIRST without the READ asked again there: no responder sends it.
    verdict(&resumed(false).run(), &["R3"]);
    // Asked again for its last packet only: an ONLY there.
    let mut t = read_2500();
    t.rr(3, RR_FIRST, 100, 1024, 0xa1)
        .rr(3, RR_MIDDLE, 101, 1024, 0xa2)
        .read_req(4, 102, 452)
        .rr(5, RR_ONLY, 102, 452, 0xa3)
        .wc(6, "rc", 1, 0, val);
    verdict(&t.run(), &[]);
    // A MIDDLE never starts a READ, asked again or not.
    let mut t = read_2500();
    t.read_req(2, 100, 2500)
        .rr(3, RR_MIDDLE, 100, 1024, 0xa1)
        .rr(3, RR_MIDDLE, 101, 1024, 0xa2)
        .rr(3, RR_LAST, 102, 452, 0xa3)
        .wc(4, "rc", 1, 0, val);
    verdict(&t.run(), &["R3"]);
}

#[test]
fn r3_a_read_asked_for_a_run_is_answered_by_a_message_of_that_run() {
    let val = "00000000000000a1,00000000000000a2,00000000000000a3";
    // The LAST came past a gap and was placed; the requester asked for the first two packets
    // only (2048 bytes at PSN 100): a FIRST and a LAST of 1024 bytes each answer it.
    let asked = |ask: Option<u32>, resps: &[(u8, u32, u32, u64)]| {
        let mut t = read_2500();
        t.rr(3, RR_LAST, 102, 452, 0xa3);
        if let Some(len) = ask {
            t.read_req(4, 100, len);
        }
        for &(op, psn, len, hash) in resps {
            t.rr(5, op, psn, len, hash);
        }
        t.wc(6, "rc", 1, 0, val).run()
    };
    let run_first = (RR_FIRST, 100, 1024, 0xa1);
    let run_last = (RR_LAST, 101, 1024, 0xa2);
    verdict(&asked(Some(2048), &[run_first, run_last]), &[]);
    // Without the ask, a LAST at 101 ends no message of the READ.
    verdict(&asked(None, &[run_first, run_last]), &["R3"]);
    // Asked for the first packet only (the seed 4611 case): an ONLY of 1024 bytes there, and the
    // second packet still as the READ's MIDDLE.
    verdict(
        &asked(
            Some(1024),
            &[(RR_ONLY, 100, 1024, 0xa1), (RR_MIDDLE, 101, 1024, 0xa2)],
        ),
        &[],
    );
    // Asked for the first packet only, a LAST at 101 ends no message: the run is one packet.
    verdict(
        &asked(Some(1024), &[run_first, (RR_LAST, 101, 1024, 0xa2)]),
        &["R3"],
    );
    // An ONLY longer than the MTU answers nothing.
    verdict(
        &asked(
            Some(1024),
            &[(RR_ONLY, 100, 1025, 0xa1), (RR_MIDDLE, 101, 1024, 0xa2)],
        ),
        &["R3"],
    );
}

#[test]
fn r3_zero_length_read() {
    let mut t = Tb::new(100, 0);
    t.post(1, "rc", 1, "read", 0).rx(2, READ_REQ, 100);
    t.rr(3, RR_ONLY, 100, 0, 0xcbf2_9ce4_8422_2325)
        .wc(4, "rc", 1, 0, "-");
    verdict(&t.run(), &[]);
    let mut t = Tb::new(100, 0);
    t.post(1, "rc", 1, "read", 0).rx(2, READ_REQ, 100);
    t.ack(3, 100, 0).wc(4, "rc", 1, 0, "-");
    verdict(&t.run(), &["R3"]);
}

// ---- R4: atomics, ATOMIC WRITE, FLUSH -------------------------------------------------------

#[test]
fn r4_atomic_value_comes_from_its_ack() {
    let base = || {
        let mut t = Tb::new(100, 0);
        t.post(1, "rc", 1, "cas", 8).rx(2, CMP_SWAP, 100);
        t
    };
    let mut t = base();
    t.tx(3, true, ATOMIC_ACK, RC, 100, 0, 0x1122_3344_5566_7788, 0, 0);
    t.wc(4, "rc", 1, 0, "1122334455667788");
    verdict(&t.run(), &[]);
    let mut t = base();
    t.tx(3, true, ATOMIC_ACK, RC, 100, 0, 0x1122_3344_5566_7788, 0, 0);
    t.wc(4, "rc", 1, 0, "0000000000000000");
    verdict(&t.run(), &["R4"]);
    // An ACK is no atomic response, even for a later PSN.
    let mut t = base();
    t.ack(3, 100, 0).wc(4, "rc", 1, 0, "0000000000000000");
    verdict(&t.run(), &["R4"]);
}

#[test]
fn r4_flush_and_atomic_write_need_a_zero_length_read_response() {
    let base = |op: &str, rxop: u8| {
        let mut t = Tb::new(100, 0);
        t.post(1, "rc", 1, op, 0).rx(2, rxop, 100);
        t
    };
    let mut t = base("flush", FLUSH);
    t.rr(3, RR_ONLY, 100, 0, 0).wc(4, "rc", 1, 0, "-");
    verdict(&t.run(), &[]);
    let mut t = base("awrite", 0x1d);
    t.rr(3, RR_ONLY, 100, 8, 0).wc(4, "rc", 1, 0, "-");
    verdict(&t.run(), &["R4"]);
    // An ACK for its own PSN is not the answer A19 defines; one for a later PSN acknowledges it.
    let mut t = base("awrite", 0x1d);
    t.ack(3, 100, 0).wc(4, "rc", 1, 0, "-");
    verdict(&t.run(), &["R4"]);
    let mut t = base("awrite", 0x1d);
    t.post(2, "rc", 2, "send", 8)
        .rx(2, SEND_ONLY, 101)
        .ack(3, 101, 0);
    t.wc(4, "rc", 1, 0, "-").wc(4, "rc", 2, 0, "-");
    verdict(&t.run(), &[]);
}

// ---- UC requester ----------------------------------------------------------------------------

#[test]
fn uc_requester_completes_with_success_only() {
    let mut t = Tb::new(100, 0);
    t.post(1, "uc", 1, "send", 8)
        .post(1, "uc", 2, "write", 2000);
    t.wc(2, "uc", 1, 0, "-").wc(2, "uc", 2, 0, "-");
    // The fuzzer read on for a second after: neither went on the wire, both lied.
    t.rx(1000, SEND_ONLY, 500);
    verdict(&t.run(), &["UC-wire", "UC-wire"]);
    // Its last packet seen: true.
    t.rx(3, 0x20 | SEND_ONLY, 100)
        .rx(3, 0x20 | WRITE_FIRST, 101)
        .rx(3, 0x20 | WRITE_LAST, 102);
    verdict(&t.run(), &[]);
    // Completed as the fuzzer stopped reading: not judged, and said so.
    let mut t = Tb::new(100, 0);
    t.post(1, "uc", 1, "send", 8).wc(2, "uc", 1, 0, "-");
    let r = t.run();
    verdict(&r, &[]);
    assert!(r
        .render()
        .contains("1 successes posted before the fuzzer followed"));
    let mut t = Tb::new(100, 0);
    t.post(1, "uc", 1, "send", 8).wc(2, "uc", 1, 10, "-");
    verdict(&t.run(), &["UC"]);
    let mut t = Tb::new(100, 0);
    t.post(1, "uc", 1, "send", 8).post(1, "uc", 2, "send", 8);
    t.wc(2, "uc", 2, 0, "-").wc(2, "uc", 1, 0, "-");
    verdict(&t.run(), &["R1"]);
}
