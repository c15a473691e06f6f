// SPDX-License-Identifier: GPL-2.0

//! The responder's receive completions judged (IBA 9.7.4 and 9.8 "responder side").
//!
//! - S1: a successful receive of LEN bytes is a SEND message the peer sent (`tx ok`) to the QP:
//!   FIRST, MIDDLE... LAST or ONLY at consecutive PSNs (9.7.1), every packet but the last a
//!   full MTU (9.7.4.1.1 packet length checks), each packet's payload the victim's chunk of the
//!   same place, immediate data or invalidated rkey as flagged; or, with immediate data, an RDMA
//!   WRITE with immediate of LEN bytes (its data goes elsewhere: only lengths and the immediate
//!   are checked). Messages are matched in order, each used once, each sent after the
//!   generation's QP became ready and before the completion. On RC, the responder executes
//!   every PSN once and in order (9.7.4.1.3, duplicates are not re-executed): each message's
//!   PSNs follow the previous one's and start at or after the generation's RQ PSN. The order
//!   of PSNs is all that binds RC, not the order packets were sent in: a responder that keeps
//!   requests past a gap (selective recovery) executes a packet sent before the one that
//!   fills the gap after it. On UC a new FIRST or ONLY may start anywhere (9.8.3), but a
//!   message missing a packet never completes, and its packets are used in the order sent.
//! - S2: LOC_LEN needs a SEND message (complete or not) longer than the receive buffer; a flush
//!   follows an error as for the requester. Other statuses are not judged.
//!
//! Several packets may fit one message (the fuzzer duplicates and forges), so the judge keeps the
//! set of places the matching could have reached so far (the last packet used and its PSN), not
//! just one, and drops the ones another dominates.

use std::collections::HashMap;

use super::plan::after;
use super::plan::Generation;
use super::report::Verdict;
use super::requester::chunk_len;
use super::requester::desc;
use super::trace::QpKind;
use super::wire::Op;
use super::wire::Packet;
use super::world::World;

/// Most matchings kept per generation.
const MAX_STATES: usize = 16;
/// Most first packets tried per completion.
const MAX_TRIES: usize = 512;

/// Where the matching of a generation's messages may stand: the next packet index a message
/// may use (UC; 0 on RC, where PSNs alone order messages), and (RC) the last PSN used so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct State {
    next: usize,
    psn: crate::proto::psn::Psn,
}

/// A receive completion to match.
pub(crate) struct Recv<'a> {
    /// When it was polled.
    pub(crate) t: u64,
    /// Bytes received.
    pub(crate) len: u32,
    /// Immediate data, if flagged.
    pub(crate) imm: Option<u32>,
    /// Invalidated rkey, if flagged.
    pub(crate) inv: Option<u32>,
    /// Chunk hashes.
    pub(crate) chunks: &'a [u64],
    /// The receive buffer's length, if the victim logged it.
    pub(crate) buf: Option<u64>,
}

/// The responder judge of one QP: packets indexed, matching state per generation.
pub(crate) struct Responder {
    q: QpKind,
    /// SEND packets by (payload length, hash; zero for empty payloads).
    sends: HashMap<(u32, u64), Vec<usize>>,
    /// RDMA WRITE packets by PSN.
    writes: HashMap<u32, Vec<usize>>,
    /// (time, bytes so far) of each SEND packet: how long its message (complete or not) had
    /// grown, by time.
    grown: Vec<(u64, u64)>,
    /// The matching state of each generation.
    states: HashMap<u32, Vec<State>>,
}

/// The key of a payload: an empty one matches whatever hash the trace gives it.
const fn key(len: u32, hash: u64) -> (u32, u64) {
    (len, if len == 0 { 0 } else { hash })
}

impl Responder {
    /// Indexes the requests sent to `q`.
    pub(crate) fn new(w: &World<'_>, q: QpKind) -> Self {
        let mut r = Self {
            q,
            sends: HashMap::new(),
            writes: HashMap::new(),
            grown: Vec::new(),
            states: HashMap::new(),
        };
        let mut partial: HashMap<u32, u64> = HashMap::new();
        for (i, p) in w.req[q.idx()].pkts.iter().enumerate() {
            let Some(op) = p.op else { continue };
            if op.is_write() {
                r.writes.entry(p.psn.value()).or_default().push(i);
                continue;
            }
            if !op.is_send() {
                continue;
            }
            r.sends.entry(key(p.len, p.hash)).or_default().push(i);
            let len = u64::from(p.len);
            let sum = match op {
                Op::SendFirst => len,
                Op::SendMiddle | Op::SendLast | Op::SendLastImm | Op::SendLastInv => {
                    match partial.get(&p.psn.value()) {
                        Some(s) => s.saturating_add(len),
                        None => continue,
                    }
                }
                _ => len,
            };
            r.grown.push((p.t, sum));
            if matches!(op, Op::SendFirst | Op::SendMiddle) {
                partial.insert(p.psn.next().value(), sum);
            }
        }
        r.grown.sort_unstable();
        r
    }

    /// The states of generation `g`, starting at its RQ PSN.
    fn states_of(&mut self, g: &Generation) -> Vec<State> {
        self.states
            .entry(g.conn.gen)
            .or_insert_with(|| {
                vec![State {
                    next: 0,
                    psn: crate::proto::psn::Psn::new(g.conn.rq_psn).wrapping_sub(1),
                }]
            })
            .clone()
    }

    /// Judges a receive completion of generation `g`.
    pub(crate) fn judge(
        &mut self,
        w: &World<'_>,
        g: &Generation,
        c: &Recv<'_>,
        status: u32,
    ) -> Verdict {
        let slack = w.cfg.slack_ns;
        let lo = g.conn.t.saturating_sub(slack);
        let hi = c.t.saturating_add(slack);
        match status {
            0 => self.success(w, g, c, lo, hi),
            1 => {
                // The buffer the victim logged, else the configured one.
                let buf = c.buf.unwrap_or(w.cfg.recv_buf);
                let i = self.grown.partition_point(|&(t, _)| t < lo);
                let over = self.grown[i..]
                    .iter()
                    .take_while(|&&(t, _)| t <= hi)
                    .any(|&(_, sum)| sum > buf);
                if over {
                    Verdict::Pass
                } else {
                    Verdict::Lie(
                        "S2-loc-len",
                        format!(
                            "receive LOC_LEN at {} in generation {} without a SEND message \
                             longer than {} bytes",
                            c.t,
                            g.conn.gen,
                            c.buf.unwrap_or(w.cfg.recv_buf)
                        ),
                    )
                }
            }
            5 => super::errors::flush(w, self.q, g, c.t),
            _ => Verdict::Unjudged("no rule for this status"),
        }
    }

    /// S1.
    fn success(
        &mut self,
        w: &World<'_>,
        g: &Generation,
        c: &Recv<'_>,
        lo: u64,
        hi: u64,
    ) -> Verdict {
        let mtu = g.conn.mtu;
        let n = if c.len == 0 { 1 } else { c.len.div_ceil(mtu) };
        // The victim hashes at most its receive buffer: a WRITE with immediate may be longer.
        let hashed = (c.len == 0 && c.chunks.is_empty()) || c.chunks.len() == n as usize;
        if !hashed && c.imm.is_none() {
            return Verdict::Unjudged("hash count does not fit the length");
        }
        if c.imm.is_some() && c.inv.is_some() {
            return Verdict::Lie(
                "S1",
                format!("receive at {} flagged with immediate and invalidate", c.t),
            );
        }
        let pkts = &w.req[self.q.idx()].pkts;
        let span = w.req[self.q.idx()].range(lo, hi);
        let states = self.states_of(g);
        let rc = self.q == QpKind::Rc;
        let fits_state = |first: usize, psn: crate::proto::psn::Psn| {
            states.iter().any(|s| {
                if rc {
                    after(psn, s.psn)
                } else {
                    first >= s.next
                }
            })
        };
        let mut found: Vec<State> = Vec::new();
        let mut tried = 0usize;
        let mut broke: Option<(u32, crate::proto::psn::Psn)> = None;
        // SEND messages: the first packet, then each next one the earliest that fits.
        let k0 = key(
            chunk_len(0, n, c.len, mtu),
            c.chunks.first().copied().unwrap_or(0),
        );
        // No UC message may start before the earliest place the matching may stand at.
        let min_next = if rc {
            0
        } else {
            states.iter().map(|s| s.next).min().unwrap_or(0)
        };
        let from = span.start.max(min_next);
        let firsts = self.sends.get(&k0).map_or(&[][..], Vec::as_slice);
        let firsts = &firsts[firsts.partition_point(|&x| x < from)..];
        for &f in firsts {
            if !hashed || f >= span.end || tried >= MAX_TRIES {
                break;
            }
            let p = &pkts[f];
            if p.op != Some(send_op(0, n, c)) || !last_ok(p, 0, n, c) || !fits_state(f, p.psn) {
                continue;
            }
            tried += 1;
            let mut prev = f;
            let mut ok = true;
            for i in 1..n {
                let psn = p.psn.wrapping_add(i);
                let k = key(
                    chunk_len(i, n, c.len, mtu),
                    c.chunks.get(i as usize).copied().unwrap_or(0),
                );
                let list = self.sends.get(&k).map_or(&[][..], Vec::as_slice);
                // RC: any packet sent in the span at this PSN (kept ones came earlier).
                let from = if rc {
                    0
                } else {
                    list.partition_point(|&x| x <= prev)
                };
                let next = list[from..].iter().copied().find(|&x| {
                    let q = &pkts[x];
                    span.contains(&x)
                        && q.psn == psn
                        && q.op == Some(send_op(i, n, c))
                        && last_ok(q, i, n, c)
                });
                match next {
                    Some(x) => prev = x,
                    None => {
                        if broke.is_none_or(|(j, _)| j < i) {
                            broke = Some((i, psn));
                        }
                        ok = false;
                        break;
                    }
                }
            }
            if ok {
                found.push(State {
                    next: if rc { 0 } else { prev + 1 },
                    psn: p.psn.wrapping_add(n - 1),
                });
            }
        }
        // RDMA WRITE with immediate: the last packet, then back to the first, each the latest.
        if c.imm.is_some() {
            let span = from..span.end.max(from);
            self.writes_with_imm(pkts, &span, c, (mtu, n, rc), &fits_state, &mut found);
        }
        if found.is_empty() {
            let why = match broke {
                Some((i, psn)) => format!(
                    "{tried} first packets fit, none continues with packet {i} at PSN {}",
                    psn.value()
                ),
                None if tried > 0 => format!("{tried} first packets fit"),
                None => {
                    let near = self
                        .sends
                        .get(&k0)
                        .and_then(|l| l.first())
                        .map(|&x| desc(&pkts[x]));
                    format!(
                        "no tx ok SEND packet of {} bytes hashing {:016x} fits the first place{}",
                        chunk_len(0, n, c.len, mtu),
                        c.chunks.first().copied().unwrap_or(0),
                        near.map_or(String::new(), |d| format!(" (one with that payload: {d})"))
                    )
                }
            };
            return Verdict::Lie(
                "S1",
                format!(
                    "receive of {} bytes at {} (generation {}, imm {:?}, inv {:?}) matches no \
                     message sent: {why}",
                    c.len, c.t, g.conn.gen, c.imm, c.inv
                ),
            );
        }
        self.states.insert(g.conn.gen, prune(found, rc));
        Verdict::Pass
    }

    /// S1 for an RDMA WRITE with immediate of `c.len` bytes in `n` packets of `mtu` and the
    /// flagged immediate data; on RC (`rc`) its packets may have been sent in any order.
    fn writes_with_imm(
        &self,
        pkts: &[Packet],
        span: &core::ops::Range<usize>,
        c: &Recv<'_>,
        (mtu, n, rc): (u32, u32, bool),
        fits_state: &dyn Fn(usize, crate::proto::psn::Psn) -> bool,
        found: &mut Vec<State>,
    ) {
        let last_op = if n == 1 {
            Op::WriteOnlyImm
        } else {
            Op::WriteLastImm
        };
        let last_len = chunk_len(n - 1, n, c.len, mtu);
        for l in span.clone() {
            let p = &pkts[l];
            if p.op != Some(last_op) || p.imm != c.imm || p.len != last_len {
                continue;
            }
            let mut at = l;
            let mut ok = true;
            for back in 1..n {
                let i = n - 1 - back;
                let psn = p.psn.wrapping_sub(back);
                let op = if i == 0 {
                    Op::WriteFirst
                } else {
                    Op::WriteMiddle
                };
                let list = self.writes.get(&psn.value()).map_or(&[][..], Vec::as_slice);
                let to = if rc {
                    list.len()
                } else {
                    list.partition_point(|&x| x < at)
                };
                let prev =
                    list[..to].iter().rev().copied().find(|&x| {
                        span.contains(&x) && pkts[x].op == Some(op) && pkts[x].len == mtu
                    });
                match prev {
                    Some(x) => at = x,
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok && fits_state(at, pkts[at].psn) {
                found.push(State {
                    next: if rc { 0 } else { l + 1 },
                    psn: p.psn,
                });
            }
        }
    }
}

/// The SEND operation of packet `i` of `n` of a receive flagged as `c`.
fn send_op(i: u32, n: u32, c: &Recv<'_>) -> Op {
    let last = i + 1 == n;
    match (n == 1, last, c.imm.is_some(), c.inv.is_some()) {
        (true, _, true, _) => Op::SendOnlyImm,
        (true, _, _, true) => Op::SendOnlyInv,
        (true, _, _, _) => Op::SendOnly,
        (false, true, true, _) => Op::SendLastImm,
        (false, true, _, true) => Op::SendLastInv,
        (false, true, _, _) => Op::SendLast,
        (false, false, _, _) if i == 0 => Op::SendFirst,
        _ => Op::SendMiddle,
    }
}

/// Returns whether packet `p`, number `i` of `n`, carries the immediate data or invalidated
/// rkey the receive reports (only the last packet carries them).
fn last_ok(p: &Packet, i: u32, n: u32, c: &Recv<'_>) -> bool {
    i + 1 < n || (p.imm == c.imm && p.ieth == c.inv)
}

/// Keeps the states no other dominates (one that lets every later message match that this one
/// lets match), at most [`MAX_STATES`]. On RC that is the one with the earliest last PSN.
fn prune(mut v: Vec<State>, rc: bool) -> Vec<State> {
    if rc {
        let first = v
            .iter()
            .copied()
            .reduce(|a, b| if after(a.psn, b.psn) { b } else { a });
        return first.into_iter().collect();
    }
    v.sort_by_key(|s| s.next);
    // Every kept state has a smaller or equal `next`: it dominates the later ones.
    v.truncate(1);
    v
}
