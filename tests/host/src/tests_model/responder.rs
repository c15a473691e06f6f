// SPDX-License-Identifier: GPL-2.0

//! The responder's rules (S1-S2) of the reference model, the report and hostile input.

use super::*;

// ---- S1: receives ----------------------------------------------------------------------------

#[test]
fn s1_receive_matches_a_message_sent() {
    let chunks = "00000000000000c1,00000000000000c2,00000000000000c3";
    let base = |q: u32, off: u8| {
        let mut t = Tb::new(0, 500);
        t.req(1, SEND_FIRST | off, q, 500, 0, 1024, 0xc1);
        t.req(1, SEND_MIDDLE | off, q, 501, 0, 1024, 0xc2);
        t
    };
    for (q, off, name) in [(RC, 0, "rc"), (UC, 0x20, "uc")] {
        let mut t = base(q, off);
        t.req(1, SEND_LAST | off, q, 502, 0, 100, 0xc3);
        t.recv(2, name, 0, 2148, 0, 0, 0, chunks);
        verdict(&t.run(), &[]);
        // Wrong data.
        let mut t = base(q, off);
        t.req(1, SEND_LAST | off, q, 502, 0, 100, 0xc4);
        t.recv(2, name, 0, 2148, 0, 0, 0, chunks);
        verdict(&t.run(), &["S1"]);
        // Wrong length.
        let mut t = base(q, off);
        t.req(1, SEND_LAST | off, q, 502, 0, 100, 0xc3);
        t.recv(2, name, 0, 2149, 0, 0, 0, chunks);
        verdict(&t.run(), &["S1"]);
        // The last packet skips a PSN: the middle one is missing.
        let mut t = base(q, off);
        t.req(1, SEND_LAST | off, q, 503, 0, 100, 0xc3);
        t.recv(2, name, 0, 2148, 0, 0, 0, chunks);
        verdict(&t.run(), &["S1"]);
        // Sent after the completion.
        let mut t = base(q, off);
        t.recv(2, name, 0, 2148, 0, 0, 0, chunks);
        t.req(5, SEND_LAST | off, q, 502, 0, 100, 0xc3);
        verdict(&t.run(), &["S1"]);
    }
    // A mangled last packet does not complete the message.
    let mut t = base(RC, 0);
    t.tx(1, false, SEND_LAST, RC, 502, 0, 0, 100, 0xc3);
    t.recv(2, "rc", 0, 2148, 0, 0, 0, chunks);
    verdict(&t.run(), &["S1"]);
}

#[test]
fn s1_uc_message_with_a_missing_middle_never_completes() {
    let chunks = "00000000000000c1,00000000000000c2,00000000000000c3";
    let mut t = Tb::new(0, 500);
    t.req(1, SEND_FIRST | 0x20, UC, 500, 0, 1024, 0xc1);
    t.req(1, SEND_LAST | 0x20, UC, 502, 0, 100, 0xc3);
    t.recv(2, "uc", 0, 2148, 0, 0, 0, chunks);
    verdict(&t.run(), &["S1"]);
}

#[test]
fn s1_rc_executes_each_psn_once() {
    // The same SEND sent twice at one PSN: RC completes it once; a second completion lies.
    let mut t = Tb::new(0, 500);
    t.req(1, SEND_ONLY, RC, 500, 0, 8, 0xaa)
        .req(2, SEND_ONLY, RC, 500, 0, 8, 0xaa);
    t.recv(3, "rc", 0, 8, 0, 0, 0, "00000000000000aa");
    verdict(&t.run(), &[]);
    t.recv(3, "rc", 0, 8, 0, 0, 0, "00000000000000aa");
    verdict(&t.run(), &["S1"]);
    // UC has no duplicate detection: a repeated message at a new FIRST/ONLY completes again.
    let mut t = Tb::new(0, 500);
    t.req(1, SEND_ONLY | 0x20, UC, 500, 0, 8, 0xaa);
    t.req(2, SEND_ONLY | 0x20, UC, 500, 0, 8, 0xaa);
    t.recv(3, "uc", 0, 8, 0, 0, 0, "00000000000000aa");
    t.recv(3, "uc", 0, 8, 0, 0, 0, "00000000000000aa");
    verdict(&t.run(), &[]);
    // A PSN before the generation's RQ PSN is never executed on RC.
    let mut t = Tb::new(0, 500);
    t.req(1, SEND_ONLY, RC, 499, 0, 8, 0xaa);
    t.recv(3, "rc", 0, 8, 0, 0, 0, "00000000000000aa");
    verdict(&t.run(), &["S1"]);
}

#[test]
fn s1_forged_copy_at_a_wrong_psn_does_not_mislead() {
    // A copy of the first message at a PSN the responder does not expect comes first; matching
    // it greedily would make the honest second completion look like a lie.
    let mut t = Tb::new(0, 100);
    t.req(1, SEND_ONLY, RC, 105, 0, 8, 0xaa);
    t.req(2, SEND_ONLY, RC, 100, 0, 8, 0xaa);
    t.req(3, SEND_ONLY, RC, 101, 0, 8, 0xbb);
    t.recv(4, "rc", 0, 8, 0, 0, 0, "00000000000000aa");
    t.recv(4, "rc", 0, 8, 0, 0, 0, "00000000000000bb");
    verdict(&t.run(), &[]);
}

#[test]
fn s1_rc_orders_by_psn_not_by_sending() {
    // Selective recovery: the responder keeps what arrives past a gap (501, 502, sent first)
    // and executes it once the gap (500) is filled, each PSN once and in PSN order.
    let two = "00000000000000b1,00000000000000b2";
    let sent = |q: u32, off: u8| {
        let mut t = Tb::new(0, 500);
        t.req(1, SEND_FIRST | off, q, 501, 0, 1024, 0xb1)
            .req(1, SEND_LAST | off, q, 502, 0, 8, 0xb2)
            .req(2, SEND_ONLY | off, q, 500, 0, 8, 0xaa);
        t
    };
    let mut t = sent(RC, 0);
    t.recv(3, "rc", 0, 8, 0, 0, 0, "00000000000000aa");
    t.recv(3, "rc", 0, 1032, 0, 0, 0, two);
    verdict(&t.run(), &[]);
    // Still once: a second completion of the kept message lies.
    t.recv(3, "rc", 0, 1032, 0, 0, 0, two);
    verdict(&t.run(), &["S1"]);
    // Still in PSN order: the kept message cannot complete before the gap's.
    let mut t = sent(RC, 0);
    t.recv(3, "rc", 0, 1032, 0, 0, 0, two);
    t.recv(3, "rc", 0, 8, 0, 0, 0, "00000000000000aa");
    verdict(&t.run(), &["S1"]);
    // A message's own packets too: its FIRST sent again after its LAST was kept.
    let mut t = Tb::new(0, 500);
    t.req(1, SEND_LAST, RC, 501, 0, 8, 0xb2)
        .req(2, SEND_FIRST, RC, 500, 0, 1024, 0xb1);
    t.recv(3, "rc", 0, 1032, 0, 0, 0, two);
    verdict(&t.run(), &[]);
    let mut t = Tb::new(0, 100);
    t.req(1, WRITE_LAST_IMM, RC, 101, 0x42, 10, 2)
        .req(2, WRITE_FIRST, RC, 100, 0, 1024, 1);
    t.recv(3, "rc", 0, 1034, 1, 0x42, 0, two);
    verdict(&t.run(), &[]);
    // UC keeps nothing: the messages complete in the order they were sent.
    let mut t = sent(UC, 0x20);
    t.recv(3, "uc", 0, 8, 0, 0, 0, "00000000000000aa");
    t.recv(3, "uc", 0, 1032, 0, 0, 0, two);
    verdict(&t.run(), &["S1"]);
}

#[test]
fn s1_immediate_and_invalidate() {
    let mut t = Tb::new(0, 100);
    t.req(1, SEND_ONLY_IMM, RC, 100, 0x1234_5678, 8, 0xaa);
    t.recv(2, "rc", 0, 8, 1, 0x1234_5678, 0, "00000000000000aa");
    verdict(&t.run(), &[]);
    let mut t = Tb::new(0, 100);
    t.req(1, SEND_ONLY_IMM, RC, 100, 0x1234_5678, 8, 0xaa);
    t.recv(2, "rc", 0, 8, 1, 0x1234_5679, 0, "00000000000000aa");
    verdict(&t.run(), &["S1"]);
    // A plain SEND reported with immediate data.
    let mut t = Tb::new(0, 100);
    t.req(1, SEND_ONLY, RC, 100, 0, 8, 0xaa);
    t.recv(2, "rc", 0, 8, 1, 0, 0, "00000000000000aa");
    verdict(&t.run(), &["S1"]);
    let mut t = Tb::new(0, 100);
    t.req(1, SEND_ONLY_INV, RC, 100, 0xabcd, 8, 0xaa);
    t.recv(2, "rc", 0, 8, 2, 0, 0xabcd, "00000000000000aa");
    verdict(&t.run(), &[]);
    let mut t = Tb::new(0, 100);
    t.req(1, SEND_ONLY_INV, RC, 100, 0xabcd, 8, 0xaa);
    t.recv(2, "rc", 0, 8, 0, 0, 0, "00000000000000aa");
    verdict(&t.run(), &["S1"]);
}

#[test]
fn s1_write_with_immediate() {
    let mut t = Tb::new(0, 100);
    t.req(1, WRITE_FIRST, RC, 100, 0, 1024, 1)
        .req(1, WRITE_LAST_IMM, RC, 101, 0x42, 10, 2);
    t.recv(
        2,
        "rc",
        0,
        1034,
        1,
        0x42,
        0,
        "0000000000000009,0000000000000009",
    );
    verdict(&t.run(), &[]);
    // Longer than the receive buffer: the victim hashes only what the buffer holds.
    let mut t = Tb::new(0, 100);
    for i in 0..5u32 {
        let op = if i == 0 { WRITE_FIRST } else { 0x07 };
        t.req(1, op, RC, 100 + i, 0, 1024, 1);
    }
    t.req(1, WRITE_LAST_IMM, RC, 105, 0x42, 10, 2);
    t.recv(2, "rc", 0, 5130, 1, 0x42, 0, "0000000000000009");
    verdict(&t.run(), &[]);
    // Without its first packet it does not complete.
    let mut t = Tb::new(0, 100);
    t.req(1, WRITE_LAST_IMM, RC, 101, 0x42, 10, 2);
    t.recv(
        2,
        "rc",
        0,
        1034,
        1,
        0x42,
        0,
        "0000000000000009,0000000000000009",
    );
    verdict(&t.run(), &["S1"]);
    // A WRITE without immediate data completes no receive.
    let mut t = Tb::new(0, 100);
    t.req(1, WRITE_ONLY, RC, 100, 0, 8, 1);
    t.recv(2, "rc", 0, 8, 1, 0, 0, "0000000000000001");
    verdict(&t.run(), &["S1"]);
}

// ---- S2: receive errors ----------------------------------------------------------------------

#[test]
fn s2_local_length_error_needs_a_long_message() {
    let long = |t: &mut Tb| {
        for i in 0..5u32 {
            let op = if i == 0 { SEND_FIRST } else { SEND_MIDDLE };
            t.req(1, op, RC, 100 + i, 0, 1024, u64::from(i));
        }
    };
    let mut t = Tb::new(0, 100);
    long(&mut t);
    t.recv(2, "rc", 1, 0, 0, 0, 0, "-");
    verdict(&t.run(), &[]);
    let mut t = Tb::new(0, 100);
    t.req(1, SEND_ONLY, RC, 100, 0, 1000, 1);
    t.recv(2, "rc", 1, 0, 0, 0, 0, "-");
    verdict(&t.run(), &["S2-loc-len"]);
    // With smaller receive buffers, a smaller message explains it.
    t.cfg.recv_buf = 64;
    verdict(&t.run(), &[]);
    // And the receive error explains the flushes after it.
    t.recv(2, "rc", 5, 0, 0, 0, 0, "-");
    verdict(&t.run(), &[]);
}

#[test]
fn s2_the_logged_receive_buffer_decides() {
    // A 100-byte SEND into a logged 64-byte buffer is too long; into a 4096-byte one it is not.
    let mut t = Tb::new(0, 100);
    t.req(1, SEND_ONLY, RC, 100, 0, 100, 1);
    t.line_v(format!("wc {} rc 1 7 recv 1 0 0 00000000 0 - 64", 2 * MS));
    verdict(&t.run(), &[]);
    let mut t = Tb::new(0, 100);
    t.req(1, SEND_ONLY, RC, 100, 0, 100, 1);
    t.line_v(format!("wc {} rc 1 7 recv 1 0 0 00000000 0 - 4096", 2 * MS));
    verdict(&t.run(), &["S2-loc-len"]);
    // No buffer at all: any byte is too many.
    let mut t = Tb::new(0, 100);
    t.req(1, SEND_ONLY, RC, 100, 0, 1, 1);
    t.line_v(format!("wc {} rc 1 15 recv 1 0 0 00000000 0 - 0", 2 * MS));
    verdict(&t.run(), &[]);
}

// ---- the report and hostile input ------------------------------------------------------------

#[test]
fn report_counts_the_forged_responses_by_kind_and_place() {
    let mut t = send_3000();
    t.ack(3, 101, 0x62).ack(3, 99, 0).ack(3, 700, 0x20);
    t.tx(3, true, ATOMIC_ACK, RC, 100, 0, 0, 0, 0);
    t.wc(4, "rc", 1, 10, "-").ack(5, 101, 0);
    let s = t.run().render();
    for want in [
        "NAK 2 in window 1",
        "ACK before the generation 1",
        "ACK duplicate 1",
        "RNR NAK unsent 1",
        "atomic ACK in window 1",
        "judged send send REM_ACCESS_ERR: 1",
        "oracle: judged=1 violations=0 unjudged=0",
    ] {
        assert!(s.contains(want), "{want:?} not in\n{s}");
    }
}

#[test]
fn input_without_connections_is_unusable() {
    assert_eq!(
        judge("post 1 rc 1 1 send 8\n", "", &Config::default()).unwrap_err(),
        InputError::NoConnection
    );
}

#[test]
fn malformed_lines_are_counted_not_fatal() {
    let mut t = send_3000();
    t.line_v("wc x".into())
        .line_v("conn 1 rc".into())
        .line_v("post 1 rc 1 9 teleport 8".into());
    t.line_f("tx 5 ok 0011zz 0 0".into())
        .line_f("tx 5 ok 001 0 0".into())
        .line_f("tx 5 ok 11 0 0".into())
        .line_f(format!("tx 5 ok {} 0 0", &hdr(ACK, RC, 1, &[])))
        .line_f("rx".into())
        .line_f("lost many".into());
    t.ack(3, 102, 0).wc(4, "rc", 1, 0, "-");
    let r = t.run();
    verdict(&r, &[]);
    let s = r.render();
    assert!(s.contains("3 unusable lines"), "{s}");
    assert!(s.contains("6 unusable lines"), "{s}");
}

#[test]
fn hostile_bytes_never_panic() {
    // Lines of random words, hex and numbers, with the right keywords often enough to reach
    // every parser.
    let words = [
        "conn",
        "post",
        "wc",
        "rx",
        "tx",
        "ok",
        "bad",
        "gen",
        "lost",
        "rc",
        "uc",
        "send",
        "recv",
        "read",
        "cas",
        "-",
        "0",
        "1",
        "5",
        "12",
        "4294967296",
        "18446744073709551616",
        "ffffff",
        "1024",
        ",",
        "11000000000000000000000000",
    ];
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..200 {
        let (mut v, mut f) = (String::from("conn 0 rc 1 17 100 100 1024\n"), String::new());
        for _ in 0..60 {
            let n = next() % 12;
            let line: Vec<String> = (0..n)
                .map(|_| match next() % 3 {
                    0 => words[(next() % words.len() as u64) as usize].to_owned(),
                    1 => format!("{}", next() % 3000),
                    _ => format!("{:x}", next()),
                })
                .collect();
            if next() % 2 == 0 {
                v += &line.join(" ");
                v.push('\n');
            } else {
                f += &line.join(" ");
                f.push('\n');
            }
        }
        let r = judge(&v, &f, &Config::default()).expect("a connection");
        assert!(r.render().contains("oracle: judged="));
    }
}
