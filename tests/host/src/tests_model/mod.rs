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

    /// The victim's requester sent an RC READ request at `psn` for `len` bytes.
    fn read_req(&mut self, ms: u64, psn: u32, len: u32) -> &mut Self {
        let mut reth = [0u8; 16];
        reth[12..].copy_from_slice(&len.to_be_bytes());
        self.line_f(format!(
            "rx {} {} 0 cbf29ce484222325",
            ms * MS,
            hdr(READ_REQ, 0x99, psn, &reth)
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

/// A SEND of 3000 bytes (PSNs 100-102) posted and on the wire, not yet answered.
fn send_3000() -> Tb {
    let mut t = Tb::new(100, 0);
    t.post(1, "rc", 1, "send", 3000).rx(2, SEND_LAST, 102);
    t
}

/// A READ of 2500 bytes (PSNs 100-102) posted and on the wire, not yet answered.
fn read_2500() -> Tb {
    let mut t = Tb::new(100, 0);
    t.post(1, "rc", 1, "read", 2500).read_req(2, 100, 2500);
    t
}

mod errors;
mod requester;
mod responder;
