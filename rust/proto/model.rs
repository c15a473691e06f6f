// SPDX-License-Identifier: GPL-2.0

//! A reference model of the IBA RC and UC requester and responder, which judges the completions
//! a QP reported against the packets that went each way (issue #33).
//!
//! The packet fuzzer (`tests/selftests/packet_fuzz.py`) plays the only peer of a victim program
//! (`tests/verbs/fuzz_victim.c`) and forges answers and requests; both write a trace. This model
//! reads the two traces and decides, for every completion the victim saw, whether a QP that
//! follows the InfiniBand Architecture Specification (Vol 1, chapter 9 "Transport layer" and
//! Annex A19) may produce it given those packets. A completion no conformant QP produces is a
//! violation: the driver lied. The rules are written from the spec, not from the driver: nothing
//! here uses `proto::window`, `proto::seq` or `proto::retry`, which are the logic under test; only
//! the 24-bit PSN arithmetic of `proto::psn` is shared.
//!
//! This file is not listed in `rust/proto.rs`, so it is not compiled into the kernel module: only
//! the host crate (`tests/host`, binary `rrxe-oracle`) loads it, and it uses `std` for parsing
//! and collections. The decisions themselves (PSN ranges, header decoding, what fits what) are
//! plain `core` code.
//!
//! The rules (see the submodules): R1-R5 for the requester's send completions
//! ([`requester`]), S1-S2 for the responder's receive completions ([`responder`]).

#[path = "model/errors.rs"]
mod errors;
#[path = "model/plan.rs"]
pub(crate) mod plan;
#[path = "model/report.rs"]
mod report;
#[path = "model/requester.rs"]
pub(crate) mod requester;
#[path = "model/responder.rs"]
pub(crate) mod responder;
#[path = "model/trace.rs"]
pub(crate) mod trace;
#[path = "model/wire.rs"]
pub(crate) mod wire;
#[path = "model/world.rs"]
pub(crate) mod world;

use std::collections::HashMap;
use std::collections::HashSet;

pub use report::Report;
use report::Verdict;
use trace::FuzzerTrace;
use trace::QpKind;
use trace::VictimLog;
use trace::WcBody;
use wire::Op;
use wire::Syndrome;
use world::World;

/// The judge's parameters: what the victim configured, and how lenient to be about clocks.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// How far apart two events of the two traces may be taken in the wrong order, nanoseconds
    /// (the victim logs a post after the call that may already have sent it).
    pub slack_ns: u64,
    /// The smallest receive buffer the victim posts, bytes (S2: LOC_LEN).
    pub recv_buf: u64,
    /// The RC QP's `retry_cnt`.
    pub retry_cnt: u32,
    /// The RC QP's local ACK timeout, nanoseconds (4.096 us * 2^timeout).
    pub timeout_ns: u64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            slack_ns: 1_000_000,
            recv_buf: 4096,
            retry_cnt: 7,
            timeout_ns: 4096 << 14,
        }
    }
}

/// Why the traces cannot be judged at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputError {
    /// The victim log connects no RC or UC QP.
    NoConnection,
}

impl core::fmt::Display for InputError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NoConnection => write!(f, "the victim log has no conn line for an RC or UC QP"),
        }
    }
}

/// Judges every completion of the victim log `victim` against the fuzzer trace `fuzzer`.
pub fn judge(victim: &str, fuzzer: &str, cfg: &Config) -> Result<Report, InputError> {
    let log = VictimLog::parse(victim);
    let tr = FuzzerTrace::parse(fuzzer);
    if log.conns.is_empty() {
        return Err(InputError::NoConnection);
    }
    let w = World::new(&log, &tr, cfg);
    let mut rep = Report::default();
    let mut resp = [
        responder::Responder::new(&w, QpKind::Rc),
        responder::Responder::new(&w, QpKind::Uc),
    ];
    // R1: per generation, the last work request completed and those completed.
    let mut order: HashMap<(QpKind, u32), (Option<usize>, HashSet<usize>)> = HashMap::new();
    for wc in &log.wcs {
        let g = w.gen(wc.q, wc.gen);
        match &wc.body {
            WcBody::Send { seq, val } => {
                let Some(g) = g else {
                    rep.record(
                        wc.q,
                        "send ?",
                        wc.status,
                        r1(wc.line, "its generation never connected"),
                    );
                    continue;
                };
                let Some(&i) = g.by_seq.get(seq) else {
                    rep.record(
                        wc.q,
                        "send ?",
                        wc.status,
                        r1(wc.line, "its SEQ was never posted"),
                    );
                    continue;
                };
                let wr = &g.wrs[i];
                let kind = format!("send {}", wr.op.name());
                let (last, done) = order.entry((wc.q, wc.gen)).or_default();
                let v = if !done.insert(i) {
                    r1(wc.line, "its work request completed twice")
                } else if last.is_some_and(|l| i < l) {
                    r1(wc.line, "it overtook a work request posted after it")
                } else if wc.t.saturating_add(cfg.slack_ns) < wr.t {
                    r1(wc.line, "it came before its post")
                } else {
                    requester::judge_send(&w, wc.q, g, wr, wc.t, wc.status, val)
                };
                *last = Some(last.map_or(i, |l| l.max(i)));
                rep.record(wc.q, &kind, wc.status, v);
            }
            WcBody::Recv {
                len,
                imm,
                inv,
                chunks,
                buf,
            } => {
                let v = match g {
                    Some(g) => {
                        let c = responder::Recv {
                            t: wc.t,
                            len: *len,
                            imm: *imm,
                            inv: *inv,
                            chunks,
                            buf: *buf,
                        };
                        resp[wc.q.idx()].judge(&w, g, &c, wc.status)
                    }
                    None => Verdict::Unjudged("its generation never connected"),
                };
                rep.record(wc.q, "recv", wc.status, v);
            }
        }
    }
    reach(&w, &mut rep);
    notes(&w, &log, &tr, &mut rep);
    Ok(rep)
}

/// An R1 violation at victim log line `line`.
fn r1(line: usize, why: &str) -> Verdict {
    Verdict::Lie(
        "R1",
        format!("send completion at victim log line {line}: {why}"),
    )
}

/// Counts the fuzzer's `tx ok` packets to each QP by kind, responses also by where their PSN
/// fell in the requester's window when they were sent.
fn reach(w: &World<'_>, rep: &mut Report) {
    for q in QpKind::ALL {
        let r = &mut rep.qs[q.idx()];
        for p in &w.resp[q.idx()].pkts {
            let kind = match (p.op, p.aeth()) {
                (Some(Op::Ack), Some(Syndrome::Ack)) => "ACK".to_owned(),
                (Some(Op::Ack), Some(Syndrome::Rnr)) => "RNR NAK".to_owned(),
                (Some(Op::Ack), Some(Syndrome::Nak(c @ 0..=4))) => format!("NAK {c}"),
                (Some(Op::Ack), Some(Syndrome::Nak(_))) => "NAK reserved".to_owned(),
                (Some(Op::Ack), _) => "ACK reserved".to_owned(),
                (Some(Op::AtomicAck), _) => "atomic ACK".to_owned(),
                _ => "READ response".to_owned(),
            };
            let place = match w.gen_at(q, p.t) {
                None => "before any connection",
                Some(g) => match (g.window_at(p.t), g.sent_by(p.t)) {
                    (_, None) => "unsent",
                    (_, Some((_, last))) if plan::after(p.psn, last) => "unsent",
                    (Some((s, e)), _) if plan::within(p.psn, s, e) => "in window",
                    (_, Some((first, last))) if plan::within(p.psn, first, last) => "duplicate",
                    _ => "before the generation",
                },
            };
            *r.reach.entry(format!("{kind} {place}")).or_default() += 1;
        }
        for p in &w.req[q.idx()].pkts {
            let kind = match p.op {
                Some(op) if op.is_send() => "SEND",
                Some(op) if op.is_write() => "WRITE",
                Some(Op::ReadRequest) => "READ",
                Some(Op::CmpSwap | Op::FetchAdd) => "atomic",
                Some(Op::AtomicWrite) => "ATOMIC WRITE",
                Some(Op::Flush) => "FLUSH",
                _ => "other",
            };
            *r.requests.entry(kind.to_owned()).or_default() += 1;
        }
    }
}

/// The report's notes: what was skipped and why.
fn notes(w: &World<'_>, log: &VictimLog, tr: &FuzzerTrace, rep: &mut Report) {
    let (rx, ok, bad) = w.counts;
    rep.notes.push(format!(
        "victim log: {} connections, {} posts, {} completions, {} unusable lines",
        log.conns.len(),
        log.posts.len(),
        log.wcs.len(),
        w.victim_malformed
    ));
    rep.notes.push(format!(
        "fuzzer trace: {} generations, {rx} rx, {ok} tx ok ({} to other QPs), {bad} tx bad \
         (never evidence), {} unusable lines",
        tr.gens.len(),
        w.tx_other,
        w.fuzzer_malformed
    ));
    if w.wire_skipped.get() > 0 {
        rep.notes.push(format!(
            "{} successes posted before the fuzzer followed their generation, or (UC) completed \
             as it stopped reading: not checked on the wire",
            w.wire_skipped.get()
        ));
    }
    if w.lost > 0 {
        rep.notes.push(format!(
            "the fuzzer lost {} packets from the victim: \"was it on the wire\" checks skipped, \
             unexplained flushes not judged",
            w.lost
        ));
    }
}
