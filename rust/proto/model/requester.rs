// SPDX-License-Identifier: GPL-2.0

//! The requester's send completions judged (IBA 9.7.5 "requester side", 10.8.3 completion
//! status, Annex A19).
//!
//! - R1: a generation's completions come in post order, none twice, none for a WR never posted
//!   (9.7.5.1: RC completes in order; UC too, 9.8).
//! - R2: a successful SEND or WRITE was acknowledged: an ACK for a PSN at or after its last, or an
//!   implicit one (9.7.5.1.3: a NAK, RNR NAK, READ response or atomic ACK for a later PSN),
//!   for a PSN the requester may have sent by then, sent after the post and before the
//!   completion; and its last request packet went on the wire.
//! - R3: a successful READ got every response packet, of the right opcode for its place,
//!   length and payload (9.7.4.1.2, 9.7.5.1.4); its place in the READ or in a run of it the
//!   requester asked for again.
//! - R4: a successful CmpSwap/FetchAdd got its ATOMIC Acknowledge with the original value it
//!   reports (9.7.5.1.5); ATOMIC WRITE and FLUSH their zero-length READ response (A19) or a
//!   later acknowledgement.
//! - R5: an error completion has its cause ([`super::errors`]); RNR_RETRY_EXC never happens
//!   with `rnr_retry` 7 (infinite, 9.7.5.2.8).

use super::errors::flush;
use super::errors::REM_OP_CODES;
use super::plan::at_or_after;
use super::plan::within;
use super::plan::Generation;
use super::plan::Wr;
use super::report::Verdict;
use super::trace::chunks;
use super::trace::hex64;
use super::trace::QpKind;
use super::trace::WrOp;
use super::wire::Op;
use super::wire::Packet;
use super::wire::Syndrome;
use super::world::World;

/// The READ response operation for packet `i` of `n` (9.7.4.1.2).
pub(crate) const fn read_resp_op(i: u32, n: u32) -> Op {
    if n <= 1 {
        Op::ReadRespOnly
    } else if i == 0 {
        Op::ReadRespFirst
    } else if i + 1 == n {
        Op::ReadRespLast
    } else {
        Op::ReadRespMiddle
    }
}

/// The payload length of packet `i` of a message of `len` bytes in `n` packets: MTU except the
/// last, which carries the remainder.
pub(crate) const fn chunk_len(i: u32, n: u32, len: u32, mtu: u32) -> u32 {
    if i + 1 < n {
        mtu
    } else {
        len.saturating_sub(mtu.saturating_mul(n.saturating_sub(1)))
    }
}

/// A packet described for the report.
pub(crate) fn desc(p: &Packet) -> String {
    let mut s = match p.op {
        Some(op) => format!("{op:?}"),
        None => format!("opcode {:#04x}", p.opcode),
    };
    s += &format!(" psn {} len {} t {}", p.psn.value(), p.len, p.t);
    if let Some(syn) = p.syndrome {
        s += &format!(" aeth {syn:#04x}");
    }
    s
}

/// A work request described for the report.
pub(super) fn wr_desc(wr: &Wr) -> String {
    format!(
        "seq {} {} len {} psn [{}, {}] posted {}",
        wr.seq,
        wr.op.name(),
        wr.len,
        wr.first.value(),
        wr.last().value(),
        wr.t
    )
}

/// What a judge of one send completion looks at.
pub(super) struct Ctx<'a> {
    pub(super) w: &'a World<'a>,
    pub(super) g: &'a Generation,
    pub(super) wr: &'a Wr,
    /// The completion's time.
    pub(super) t_wc: u64,
    /// Responses sent after the post and before the completion (with slack).
    pub(super) resps: &'a [Packet],
}

impl Ctx<'_> {
    /// The response nearest to PSN `p` (by PSN distance), described.
    pub(super) fn nearest(&self, p: crate::proto::psn::Psn) -> String {
        let n = self
            .resps
            .iter()
            .min_by_key(|r| r.psn.serial_diff(p).unsigned_abs());
        match n {
            Some(r) => format!(
                "nearest of {} responses in time: {}",
                self.resps.len(),
                desc(r)
            ),
            None => "no tx ok response between the post and the completion".into(),
        }
    }

    /// R2: a response acknowledging the whole work request, explicitly (an ACK at or after its
    /// last PSN, or after it only when `inclusive` is false) or implicitly (any other response
    /// after it), for a PSN the requester may have sent when the response was sent.
    fn acknowledged(&self, inclusive: bool) -> Option<&Packet> {
        let e = self.wr.last();
        let slack = self.w.cfg.slack_ns;
        self.resps.iter().find(|r| {
            let Some(le) = self.g.last_psn_by(r.t.saturating_add(slack)) else {
                return false;
            };
            if !at_or_after(le, r.psn) {
                return false;
            }
            let d = r.psn.serial_diff(e);
            match (r.op, r.aeth()) {
                (Some(Op::Ack), Some(Syndrome::Ack)) => d > 0 || (inclusive && d == 0),
                (Some(Op::Ack), Some(Syndrome::Rnr | Syndrome::Nak(_))) => d > 0,
                (Some(op), _) if op.is_read_response() || op == Op::AtomicAck => d > 0,
                _ => false,
            }
        })
    }

    /// Returns whether response `r` is one that may answer this work request at its PSN.
    pub(super) fn fits(&self, r: &Packet) -> bool {
        let wr = self.wr;
        let i = r.psn.distance_from(wr.first);
        match (r.op, r.aeth()) {
            (Some(Op::Ack), Some(Syndrome::Ack)) => wr.op.is_acked(),
            (Some(Op::Ack), Some(s)) => s.is_defined(),
            (Some(Op::AtomicAck), _) => wr.op.is_atomic(),
            (Some(op), _) if op.is_read_response() => {
                (wr.op == WrOp::Read
                    && op == read_resp_op(i, wr.npsn)
                    && r.len == chunk_len(i, wr.npsn, wr.len, self.g.conn.mtu))
                    || (wr.op.is_a19() && op == Op::ReadRespOnly && r.len == 0)
            }
            _ => false,
        }
    }

    /// Responses in the work request's PSNs.
    pub(super) fn own(&self) -> impl Iterator<Item = &Packet> {
        let (s, e) = (self.wr.first, self.wr.last());
        self.resps.iter().filter(move |r| within(r.psn, s, e))
    }

    fn success(&self, val: &str) -> Verdict {
        let wr = self.wr;
        let v = match wr.op {
            op if op.is_acked() => match self.acknowledged(true) {
                Some(_) => Verdict::Pass,
                None => Verdict::Lie(
                    "R2",
                    format!(
                        "success of {} never acknowledged; {}",
                        wr_desc(wr),
                        self.nearest(wr.last())
                    ),
                ),
            },
            WrOp::Read => self.read(val),
            WrOp::Cas | WrOp::Faa => self.atomic(val),
            _ => {
                let zero = self
                    .resps
                    .iter()
                    .any(|r| r.op == Some(Op::ReadRespOnly) && r.psn == wr.first && r.len == 0);
                if zero || self.acknowledged(false).is_some() {
                    Verdict::Pass
                } else {
                    Verdict::Lie(
                        "R4",
                        format!(
                            "success of {} without its zero-length READ response or a later \
                             acknowledgement; {}",
                            wr_desc(wr),
                            self.nearest(wr.first)
                        ),
                    )
                }
            }
        };
        if v != Verdict::Pass || self.w.lost > 0 {
            return v;
        }
        if !self.w.watched(QpKind::Rc, self.g.conn.gen, wr.t) {
            self.w.wire_skipped.set(self.w.wire_skipped.get() + 1);
            return v;
        }
        // The request itself must have been on the wire: its last packet (a READ: the request).
        let p = if wr.op == WrOp::Read {
            wr.first
        } else {
            wr.last()
        };
        // The fuzzer may read it late: any time after the post will do.
        let lo = wr.t.saturating_sub(self.w.cfg.slack_ns);
        if self.w.sent_request(QpKind::Rc, p.value(), lo, u64::MAX) {
            Verdict::Pass
        } else {
            Verdict::Lie(
                "R2-wire",
                format!(
                    "success of {}: no request with PSN {} went on the wire",
                    wr_desc(wr),
                    p.value()
                ),
            )
        }
    }

    /// R3.
    fn read(&self, val: &str) -> Verdict {
        let wr = self.wr;
        let Some(h) = chunks(val) else {
            return Verdict::Unjudged("unreadable hashes");
        };
        let n = wr.npsn;
        if (wr.len == 0 && !h.is_empty()) || (wr.len > 0 && h.len() != n as usize) {
            return Verdict::Unjudged("hash count does not fit the READ");
        }
        let slack = self.w.cfg.slack_ns;
        let (lo, hi) = (wr.t.saturating_sub(slack), self.t_wc.saturating_add(slack));
        let mtu = self.g.conn.mtu.max(1);
        // The requester may ask again for a run of the READ's responses (9.7.5.1.4): a READ
        // request at the PSN of response j whose RETH names the run's bytes, all the rest
        // (going back) or fewer (asking for what is missing past a gap). The responder answers
        // it as a new READ of those bytes: the run's k-th response is the READ's response j + k.
        // As (j, the run's packets), the READ itself first.
        let mut runs = vec![(0, n)];
        for j in 0..n {
            let p = wr.first.wrapping_add(j).value();
            runs.extend(
                self.w
                    .reads_sent(p, lo, hi)
                    .map(|len| (j, len.div_ceil(mtu))),
            );
        }
        for i in 0..n {
            let p = wr.first.wrapping_add(i);
            let op = read_resp_op(i, n);
            let fits = |o: Op| {
                runs.iter()
                    .any(|&(j, m)| j <= i && i - j < m && read_resp_op(i - j, m) == o)
            };
            let len = chunk_len(i, n, wr.len, self.g.conn.mtu);
            let hash = h.get(i as usize).copied();
            let found = self.resps.iter().any(|r| {
                r.psn == p
                    && r.op.is_some_and(fits)
                    && r.len == len
                    && hash.is_none_or(|x| x == r.hash)
            });
            if !found {
                let at: Vec<String> = self
                    .resps
                    .iter()
                    .filter(|r| r.psn == p)
                    .take(3)
                    .map(|r| format!("{} hash {:016x}", desc(r), r.hash))
                    .collect();
                return Verdict::Lie(
                    "R3",
                    format!(
                        "success of {}: no {op:?} at PSN {} of {len} bytes hashing {}; at that \
                         PSN: {}",
                        wr_desc(wr),
                        p.value(),
                        hash.map_or("-".into(), |x| format!("{x:016x}")),
                        if at.is_empty() {
                            "none".into()
                        } else {
                            at.join("; ")
                        }
                    ),
                );
            }
        }
        Verdict::Pass
    }

    /// R4 for CmpSwap and FetchAdd.
    fn atomic(&self, val: &str) -> Verdict {
        let wr = self.wr;
        let Some(v) = hex64(val) else {
            return Verdict::Unjudged("unreadable atomic value");
        };
        let found = self
            .resps
            .iter()
            .any(|r| r.op == Some(Op::AtomicAck) && r.psn == wr.first && r.orig == Some(v));
        if found {
            Verdict::Pass
        } else {
            Verdict::Lie(
                "R4",
                format!(
                    "success of {} with original value {v:016x}: no ATOMIC Acknowledge at PSN {} \
                     carries it; {}",
                    wr_desc(wr),
                    wr.first.value(),
                    self.nearest(wr.first)
                ),
            )
        }
    }
}

/// How long before the fuzzer trace's end a UC send must have completed for its packets to be
/// judged as seen or not: the fuzzer reads what the victim sends for a while after its last
/// packet, not forever.
const UC_TAIL: u64 = 200_000_000;

/// Judges a send completion of status `status` for work request `wr` of generation `g` of `q`
/// (R2-R5; R1 is the caller's).
pub(crate) fn judge_send(
    w: &World<'_>,
    q: QpKind,
    g: &Generation,
    wr: &Wr,
    t_wc: u64,
    status: u32,
    val: &str,
) -> Verdict {
    let slack = w.cfg.slack_ns;
    if wr.op == WrOp::Local {
        return Verdict::Unjudged("local operation");
    }
    if q == QpKind::Uc {
        // UC has no responses: a work request completes with success once sent (9.8). Its
        // last packet must be on the wire, unless the fuzzer was not reading then (before it
        // followed the generation, or within UC_TAIL of its trace's end) or lost packets.
        let judged = w.lost == 0 && w.watched(q, g.conn.gen, wr.t) && w.still_read(t_wc, UC_TAIL);
        let sent = || w.sent_request(q, wr.last().value(), wr.t.saturating_sub(slack), u64::MAX);
        if status == 0 && !judged {
            w.wire_skipped.set(w.wire_skipped.get() + 1);
        }
        return match status {
            0 if judged && !sent() => Verdict::Lie(
                "UC-wire",
                format!(
                    "success of {}: its last packet (PSN {}) never went on the wire",
                    wr_desc(wr),
                    wr.last().value()
                ),
            ),
            0 => Verdict::Pass,
            5 => flush(w, q, g, t_wc),
            _ => Verdict::Lie(
                "UC",
                format!(
                    "{} failed with status {status}: UC has no responses",
                    wr_desc(wr)
                ),
            ),
        };
    }
    let resps = w.resp[q.idx()].between(wr.t.saturating_sub(slack), t_wc.saturating_add(slack));
    let c = Ctx {
        w,
        g,
        wr,
        t_wc,
        resps,
    };
    match status {
        0 => c.success(val),
        1 => c.loc_len(),
        5 => flush(w, q, g, t_wc),
        7 => c.bad_resp(),
        9 => c.nak(&[1]),
        10 => c.nak(&[2]),
        11 => c.nak(&REM_OP_CODES),
        12 => c.retry_exc(),
        13 => Verdict::Lie(
            "R5-rnr",
            format!(
                "{}: RNR_RETRY_EXC with rnr_retry 7 (retries forever)",
                wr_desc(wr)
            ),
        ),
        _ => Verdict::Unjudged("no rule for this status"),
    }
}
