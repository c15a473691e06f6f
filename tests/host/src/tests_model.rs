// SPDX-License-Identifier: GPL-2.0

//! Tests of the reference model in `model`: traces built by hand, each rule shown to pass an
//! honest run and to catch a lie.

use crate::model::judge;
use crate::model::Config;
use crate::model::InputError;
use crate::model::Report;

/// The victim's RC and UC QP numbers.
const RC: u32 = 0x11;
const UC: u32 = 0x12;
/// One millisecond in nanoseconds: the tests' time unit.
const MS: u64 = 1_000_000;

/// RC opcodes (UC = RC | 0x20).
const SEND_FIRST: u8 = 0x00;
const SEND_MIDDLE: u8 = 0x01;
const SEND_LAST: u8 = 0x02;
const SEND_ONLY: u8 = 0x04;
const SEND_ONLY_IMM: u8 = 0x05;
const WRITE_FIRST: u8 = 0x06;
const WRITE_ONLY: u8 = 0x0a;
const WRITE_LAST: u8 = 0x08;
const WRITE_LAST_IMM: u8 = 0x09;
const READ_REQ: u8 = 0x0c;
const RR_FIRST: u8 = 0x0d;
const RR_MIDDLE: u8 = 0x0e;
const RR_LAST: u8 = 0x0f;
const RR_ONLY: u8 = 0x10;
const ACK: u8 = 0x11;
const ATOMIC_ACK: u8 = 0x12;
const CMP_SWAP: u8 = 0x13;
const SEND_ONLY_INV: u8 = 0x17;
const FLUSH: u8 = 0x1c;

/// Hex of a BTH to `qpn` with `psn`, followed by `ext`.
fn hdr(opcode: u8, qpn: u32, psn: u32, ext: &[u8]) -> String {
    let mut b = vec![opcode, 0, 0xff, 0xff, 0];
    b.extend_from_slice(&qpn.to_be_bytes()[1..]);
    b.push(0);
    b.extend_from_slice(&psn.to_be_bytes()[1..]);
    b.extend_from_slice(ext);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The extension headers a test packet carries, per opcode (AETH syndrome, immediate, ...).
fn ext(opcode: u8, syn: u8, extra: u64) -> Vec<u8> {
    let aeth = [syn, 0, 0, 1];
    let reth = [0u8; 16];
    match opcode & 0x1f {
        0x03 | 0x05 | 0x09 => u32::try_from(extra).unwrap().to_be_bytes().to_vec(),
        0x06 | 0x0a | 0x0c | 0x1d => reth.to_vec(),
        0x0b => [&reth[..], &u32::try_from(extra).unwrap().to_be_bytes()].concat(),
        0x0d | 0x0f | 0x10 | 0x11 => aeth.to_vec(),
        0x12 => [&aeth[..], &extra.to_be_bytes()].concat(),
        0x13 | 0x14 => vec![0; 28],
        0x16 | 0x17 => u32::try_from(extra).unwrap().to_be_bytes().to_vec(),
        0x1c => vec![0; 20],
        _ => Vec::new(),
    }
}

/// A pair of traces under construction.
#[derive(Default)]
struct Tb {
    v: String,
    f: String,
    cfg: Config,
}

impl Tb {
    /// RC generation 1 at t=0 with SQ PSN `sq` and RQ PSN `rq`; UC generation 1 too.
    fn new(sq: u32, rq: u32) -> Self {
        let mut t = Self::default();
        t.line_v(format!("conn 0 rc 1 {RC} {sq} {rq} 1024"));
        t.line_v(format!("conn 0 uc 1 {UC} {sq} {rq} 1024"));
        t.line_f("gen 0 rc 1".into()).line_f("gen 0 uc 1".into());
        t
    }

    fn line_v(&mut self, s: String) -> &mut Self {
        self.v += &s;
        self.v.push('\n');
        self
    }

    fn line_f(&mut self, s: String) -> &mut Self {
        self.f += &s;
        self.f.push('\n');
        self
    }

    fn post(&mut self, ms: u64, q: &str, seq: u64, op: &str, len: u32) -> &mut Self {
        self.line_v(format!("post {} {q} 1 {seq} {op} {len}", ms * MS))
    }

    fn wc(&mut self, ms: u64, q: &str, seq: u64, status: u32, val: &str) -> &mut Self {
        self.line_v(format!("wc {} {q} 1 {seq} send {status} {val}", ms * MS))
    }

    #[allow(clippy::too_many_arguments)]
    fn recv(
        &mut self,
        ms: u64,
        q: &str,
        status: u32,
        len: u32,
        flags: u32,
        imm: u32,
        inv: u32,
        chunks: &str,
    ) -> &mut Self {
        self.line_v(format!(
            "wc {} {q} 1 0 recv {status} {len} {flags} {imm:08x} {inv:x} {chunks}",
            ms * MS
        ))
    }

    /// The victim's requester sent a packet (`rx`).
    fn rx(&mut self, ms: u64, opcode: u8, psn: u32) -> &mut Self {
        self.line_f(format!(
            "rx {} {} 0 cbf29ce484222325",
            ms * MS,
            hdr(opcode, 0x99, psn, &ext(opcode, 0, 0))
        ))
    }

    /// The fuzzer sent a packet (`tx ok` or `tx bad`).
    #[allow(clippy::too_many_arguments)]
    fn tx(
        &mut self,
        ms: u64,
        ok: bool,
        opcode: u8,
        qpn: u32,
        psn: u32,
        syn: u8,
        extra: u64,
        len: u32,
        hash: u64,
    ) -> &mut Self {
        self.line_f(format!(
            "tx {} {} {} {len} {hash:016x}",
            ms * MS,
            if ok { "ok" } else { "bad" },
            hdr(opcode, qpn, psn, &ext(opcode, syn, extra))
        ))
    }

    /// An RC ACK-opcode packet with syndrome `syn` at `psn`.
    fn ack(&mut self, ms: u64, psn: u32, syn: u8) -> &mut Self {
        self.tx(ms, true, ACK, RC, psn, syn, 0, 0, 0)
    }

    /// A READ response to the RC QP.
    fn rr(&mut self, ms: u64, opcode: u8, psn: u32, len: u32, hash: u64) -> &mut Self {
        self.tx(ms, true, opcode, RC, psn, 0, 0, len, hash)
    }

    /// A request packet to `qpn` with `extra` (immediate data, rkey).
    #[allow(clippy::too_many_arguments)]
    fn req(
        &mut self,
        ms: u64,
        opcode: u8,
        qpn: u32,
        psn: u32,
        extra: u64,
        len: u32,
        hash: u64,
    ) -> &mut Self {
        self.tx(ms, true, opcode, qpn, psn, 0, extra, len, hash)
    }

    fn run(&self) -> Report {
        judge(&self.v, &self.f, &self.cfg).expect("usable traces")
    }
}

/// Asserts the report found exactly the violations `rules` (in order) and judged `judged`.
#[track_caller]
fn verdict(r: &Report, rules: &[&str]) {
    assert_eq!(r.rules(), rules, "{}", r.render());
}

// ---- R1: order -------------------------------------------------------------------------------

/// Two SENDs acknowledged by one coalesced ACK: honest in order, a lie out of order or twice.
fn two_sends() -> Tb {
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

fn read_2500() -> Tb {
    let mut t = Tb::new(100, 0);
    t.post(1, "rc", 1, "read", 2500).rx(2, READ_REQ, 100);
    t
}

#[test]
fn r3_read_needs_every_response_with_its_data() {
    let val = "00000000000000a1,00000000000000a2,00000000000000a3";
    let mut t = read_2500();
    t.rr(3, RR_FIRST, 100, 1024, 0xa1)
        .rr(3, RR_MIDDLE, 101, 1024, 0xa2)
        .rr(3, RR_LAST, 102, 452, 0xa3)
        .wc(4, "rc", 1, 0, val);
    verdict(&t.run(), &[]);
    // The data the victim reports differs from what was sent.
    let mut t = read_2500();
    t.rr(3, RR_FIRST, 100, 1024, 0xa1)
        .rr(3, RR_MIDDLE, 101, 1024, 0xbb)
        .rr(3, RR_LAST, 102, 452, 0xa3)
        .wc(4, "rc", 1, 0, val);
    verdict(&t.run(), &["R3"]);
    // The last response never came (a later ACK is no READ data).
    let mut t = read_2500();
    t.rr(3, RR_FIRST, 100, 1024, 0xa1)
        .rr(3, RR_MIDDLE, 101, 1024, 0xa2)
        .wc(4, "rc", 1, 0, val);
    verdict(&t.run(), &["R3"]);
    // The first response had the wrong opcode for its place.
    let mut t = read_2500();
    t.rr(3, RR_ONLY, 100, 1024, 0xa1)
        .rr(3, RR_MIDDLE, 101, 1024, 0xa2)
        .rr(3, RR_LAST, 102, 452, 0xa3)
        .wc(4, "rc", 1, 0, val);
    verdict(&t.run(), &["R3"]);
    // The last response was too long.
    let mut t = read_2500();
    t.rr(3, RR_FIRST, 100, 1024, 0xa1)
        .rr(3, RR_MIDDLE, 101, 1024, 0xa2)
        .rr(3, RR_LAST, 102, 1024, 0xa3)
        .wc(4, "rc", 1, 0, val);
    verdict(&t.run(), &["R3"]);
}

#[test]
fn r3_a_resumed_read_starts_again_where_it_was_asked_again() {
    let val = "00000000000000a1,00000000000000a2,00000000000000a3";
    // Asked again from its second packet: a FIRST there, then the LAST.
    let resumed = |rerequest: bool| {
        let mut t = read_2500();
        t.rr(3, RR_FIRST, 100, 1024, 0xa1);
        if rerequest {
            t.rx(4, READ_REQ, 101);
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
        .rx(4, READ_REQ, 102)
        .rr(5, RR_ONLY, 102, 452, 0xa3)
        .wc(6, "rc", 1, 0, val);
    verdict(&t.run(), &[]);
    // A MIDDLE never starts a READ, asked again or not.
    let mut t = read_2500();
    t.rx(2, READ_REQ, 100)
        .rr(3, RR_MIDDLE, 100, 1024, 0xa1)
        .rr(3, RR_MIDDLE, 101, 1024, 0xa2)
        .rr(3, RR_LAST, 102, 452, 0xa3)
        .wc(4, "rc", 1, 0, val);
    verdict(&t.run(), &["R3"]);
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

// ---- R5: errors ------------------------------------------------------------------------------

fn send_3000() -> Tb {
    let mut t = Tb::new(100, 0);
    t.post(1, "rc", 1, "send", 3000).rx(2, SEND_LAST, 102);
    t
}

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
