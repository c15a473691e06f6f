// SPDX-License-Identifier: GPL-2.0

//! Both traces joined: the generations of each QP with their send queues, and the packets that
//! went each way sorted out by QP and kind, indexed for the judges.

use core::cell::Cell;
use std::collections::HashMap;
use std::collections::HashSet;

use super::plan::Generation;
use super::trace::FuzzerTrace;
use super::trace::QpKind;
use super::trace::VictimLog;
use super::trace::WcBody;
use super::wire::Op;
use super::wire::Packet;
use super::wire::Service;
use super::wire::Syndrome;
use super::Config;

/// Packets in send order with a monotone time key for searching.
#[derive(Debug, Default)]
pub(crate) struct Timeline {
    /// The packets.
    pub(crate) pkts: Vec<Packet>,
    /// `t[i]` is the latest time among `pkts[..=i]`.
    t: Vec<u64>,
}

impl Timeline {
    fn push(&mut self, p: Packet) {
        let t = self.t.last().map_or(p.t, |&l| l.max(p.t));
        self.t.push(t);
        self.pkts.push(p);
    }

    /// The index range of the packets sent in `[lo, hi]` (by the monotone key).
    pub(crate) fn range(&self, lo: u64, hi: u64) -> core::ops::Range<usize> {
        let a = self.t.partition_point(|&x| x < lo);
        let b = self.t.partition_point(|&x| x <= hi).max(a);
        a..b
    }

    /// The packets sent in `[lo, hi]`.
    pub(crate) fn between(&self, lo: u64, hi: u64) -> &[Packet] {
        &self.pkts[self.range(lo, hi)]
    }
}

/// Everything the judges know.
#[derive(Debug)]
pub(crate) struct World<'c> {
    /// The judge's parameters.
    pub(crate) cfg: &'c Config,
    /// Generations by QP and number.
    pub(crate) gens: HashMap<(QpKind, u32), Generation>,
    /// The victim's QPNs.
    pub(crate) qpns: HashMap<u32, QpKind>,
    /// `tx ok` responses (READ responses, ACKs, atomic ACKs) to each QP.
    pub(crate) resp: [Timeline; 2],
    /// `tx ok` requests to each QP.
    pub(crate) req: [Timeline; 2],
    /// `tx ok` packets to other QPNs.
    pub(crate) tx_other: usize,
    /// Request PSNs the victim's requesters sent (`rx`), with the times they were seen.
    pub(crate) rx_req: [HashMap<u32, Vec<u64>>; 2],
    /// The RC READ requests the victim sent by PSN: when, and the length their RETH asked for.
    rx_reads: HashMap<u32, Vec<(u64, u32)>>,
    /// Times the victim's RC responder sent a NAK with an error code (fatal for it).
    pub(crate) rx_fatal: Vec<u64>,
    /// Packets from the victim the fuzzer missed.
    pub(crate) lost: u64,
    /// Generations with an error completion other than a flush.
    pub(crate) error_gens: HashSet<(QpKind, u32)>,
    /// When the victim moved a generation's QP to the Error state itself (`err` lines).
    pub(crate) moved_to_err: HashMap<(QpKind, u32), u64>,
    /// Malformed or unusable lines of the victim log.
    pub(crate) victim_malformed: usize,
    /// Malformed lines of the fuzzer trace.
    pub(crate) fuzzer_malformed: usize,
    /// `rx` packets, `tx ok` and `tx bad` packets.
    pub(crate) counts: (usize, usize, usize),
    /// When the fuzzer started to follow each generation (its `gen` lines).
    followed: HashMap<(QpKind, u32), u64>,
    /// Whether the fuzzer's trace has `gen` lines for each QP at all.
    any_followed: [bool; 2],
    /// Success completions whose wire check was skipped: posted before the fuzzer followed
    /// their generation (it may not have been reading yet).
    pub(crate) wire_skipped: Cell<usize>,
    /// The time of the fuzzer trace's last event: after it, nothing the victim sends is seen.
    pub(crate) trace_end: u64,
}

impl<'c> World<'c> {
    /// Joins the two traces.
    pub(crate) fn new(log: &VictimLog, tr: &FuzzerTrace, cfg: &'c Config) -> Self {
        let mut w = Self {
            cfg,
            gens: HashMap::new(),
            qpns: HashMap::new(),
            resp: Default::default(),
            req: Default::default(),
            tx_other: 0,
            rx_req: Default::default(),
            rx_reads: HashMap::new(),
            rx_fatal: Vec::new(),
            lost: tr.lost,
            error_gens: HashSet::new(),
            moved_to_err: HashMap::new(),
            victim_malformed: log.malformed,
            fuzzer_malformed: tr.malformed,
            counts: (tr.rx.len(), tr.tx_ok.len(), tr.tx_bad),
            followed: HashMap::new(),
            any_followed: [false; 2],
            wire_skipped: Cell::new(0),
            trace_end: tr
                .rx
                .iter()
                .chain(&tr.tx_ok)
                .map(|p| p.t)
                .chain(tr.gens.iter().map(|g| g.0))
                .max()
                .unwrap_or(0),
        };
        for &(t, q, gen) in &log.errs {
            w.moved_to_err.entry((q, gen)).or_insert(t);
        }
        for &(t, q, gen) in &tr.gens {
            w.followed.entry((q, gen)).or_insert(t);
            w.any_followed[q.idx()] = true;
        }
        for c in &log.conns {
            if w.gens.contains_key(&(c.q, c.gen)) {
                w.victim_malformed += 1;
                continue;
            }
            w.gens.insert((c.q, c.gen), Generation::new(*c));
            w.qpns.entry(c.qpn).or_insert(c.q);
        }
        for p in &log.posts {
            let ok = w.gens.get_mut(&(p.q, p.gen)).is_some_and(|g| g.post(p));
            if !ok {
                w.victim_malformed += 1;
            }
        }
        let mut done: HashMap<(QpKind, u32), Vec<(usize, u64)>> = HashMap::new();
        for wc in &log.wcs {
            if wc.status != 0 && wc.status != 5 {
                w.error_gens.insert((wc.q, wc.gen));
            }
            if let WcBody::Send { seq, .. } = wc.body {
                if let Some(&i) = w.gens.get(&(wc.q, wc.gen)).and_then(|g| g.by_seq.get(&seq)) {
                    done.entry((wc.q, wc.gen)).or_default().push((i, wc.t));
                }
            }
        }
        for (k, g) in &mut w.gens {
            g.set_done(done.get(k).map_or(&[], Vec::as_slice));
        }
        for p in &tr.tx_ok {
            let Some(&q) = w.qpns.get(&p.qpn) else {
                w.tx_other += 1;
                continue;
            };
            if p.is_rc_response() {
                w.resp[q.idx()].push(*p);
            } else {
                w.req[q.idx()].push(*p);
            }
        }
        for p in &tr.rx {
            let Some(op) = p.op else { continue };
            let q = match p.service {
                Service::Rc => QpKind::Rc,
                Service::Uc => QpKind::Uc,
                Service::Other => continue,
            };
            if !op.is_response() {
                w.rx_req[q.idx()]
                    .entry(p.psn.value())
                    .or_default()
                    .push(p.t);
                if let (QpKind::Rc, Op::ReadRequest, Some(len)) = (q, op, p.reth_len) {
                    w.rx_reads
                        .entry(p.psn.value())
                        .or_default()
                        .push((p.t, len));
                }
            } else if q == QpKind::Rc
                && op == Op::Ack
                && matches!(p.aeth(), Some(Syndrome::Nak(1..=4)))
            {
                w.rx_fatal.push(p.t);
            }
        }
        w.rx_fatal.sort_unstable();
        w
    }

    /// The generation `gen` of `q`.
    pub(crate) fn gen(&self, q: QpKind, gen: u32) -> Option<&Generation> {
        self.gens.get(&(q, gen))
    }

    /// The generation of `q` current at time `t`: the newest connected by then.
    pub(crate) fn gen_at(&self, q: QpKind, t: u64) -> Option<&Generation> {
        self.gens
            .iter()
            .filter(|((k, _), g)| *k == q && g.conn.t <= t)
            .max_by_key(|(_, g)| g.conn.t)
            .map(|(_, g)| g)
    }

    /// Returns whether the victim's requester on `q` sent a request packet with PSN `psn` in
    /// `[lo, hi]`.
    pub(crate) fn sent_request(&self, q: QpKind, psn: u32, lo: u64, hi: u64) -> bool {
        self.rx_req[q.idx()]
            .get(&psn)
            .is_some_and(|ts| ts.iter().any(|&t| lo <= t && t <= hi))
    }

    /// The lengths asked for by the RC READ requests the victim sent at `psn` in `[lo, hi]`.
    pub(crate) fn reads_sent(&self, psn: u32, lo: u64, hi: u64) -> impl Iterator<Item = u32> + '_ {
        self.rx_reads
            .get(&psn)
            .into_iter()
            .flatten()
            .filter(move |&&(t, _)| lo <= t && t <= hi)
            .map(|&(_, len)| len)
    }

    /// Returns whether the fuzzer was reading what generation `gen` of `q` sent at time `t`:
    /// it had started to follow it (or its trace does not say when it starts).
    /// Returns whether the fuzzer still read what the victim sent `tail` after time `t`.
    pub(crate) fn still_read(&self, t: u64, tail: u64) -> bool {
        t.saturating_add(tail) <= self.trace_end
    }

    pub(crate) fn watched(&self, q: QpKind, gen: u32, t: u64) -> bool {
        !self.any_followed[q.idx()]
            || self
                .followed
                .get(&(q, gen))
                .is_some_and(|&f| f <= t.saturating_add(self.cfg.slack_ns))
    }

    /// Returns whether the victim's RC responder sent a fatal NAK in `[lo, hi]`.
    pub(crate) fn fatal_nak(&self, lo: u64, hi: u64) -> bool {
        let i = self.rx_fatal.partition_point(|&t| t < lo);
        self.rx_fatal.get(i).is_some_and(|&t| t <= hi)
    }
}
