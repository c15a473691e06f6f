// SPDX-License-Identifier: GPL-2.0

//! The sender's state, which the requester and the completer share (they walk the same send
//! queue): the PSNs, the window of started and unfinished WQEs, the copy of the WQE being sent,
//! the READ sinks, the retry budgets and what the sender waits for.

use super::super::sinks::{
    ReadSinks,
    SinkRef, //
};
use crate::proto::{
    cqe::WcStatus,
    psn::{
        cmp_psn,
        Psn, //
    },
    read_gaps::{
        missing_run,
        Placed,
        ReadAsk,
        EXTRA_ASKS, //
    },
    recovery::{
        sends_past_probe,
        PeerRecovery,
        Rtt, //
    },
    retry::RetryCounter,
    wqe::{
        SendWqe,
        WrOpcode, //
    },
};
use core::cmp::Ordering;
use kernel::{
    alloc::KVVec,
    prelude::*, //
};

/// A send WQE that has been started (some or all of its packets handed out) and is not yet
/// completed. Entries are in send queue order; entry `i` is ring slot `consumer + i`.
#[derive(Clone, Copy)]
pub(crate) struct Track {
    pub(in crate::pipeline) wr_id: u64,
    pub(in crate::pipeline) opcode: WrOpcode,
    pub(in crate::pipeline) signaled: bool,
    /// The PSN of the first request packet.
    pub(in crate::pipeline) first_psn: Psn,
    /// The last PSN the operation uses (for reads, that of the last response).
    pub(in crate::pipeline) last_psn: Psn,
    /// The message length.
    pub(in crate::pipeline) length: u32,
    /// Set once the WQE is finished: its completion status.
    pub(in crate::pipeline) done: Option<WcStatus>,
    /// The private copy of the local buffers of a READ or atomic (every WQE answered by a
    /// response has one while it is outstanding).
    pub(in crate::pipeline) sink: Option<SinkRef>,
}

// 32 bytes an entry: the window of a 31-slot send queue (16 WRs asked for, rounded up as C rxe
// rounds) fits one 1 KiB allocation.
const _: () = assert!(core::mem::size_of::<Track>() <= 32);

impl Track {
    /// An entry for a WQE starting at `psn`, not yet finished, without a sink.
    pub(crate) fn new(wr_id: u64, opcode: WrOpcode, signaled: bool, psn: Psn, length: u32) -> Self {
        Self {
            wr_id,
            opcode,
            signaled,
            first_psn: psn,
            last_psn: psn,
            length,
            done: None,
            sink: None,
        }
    }

    /// Whether the responder answers with a READ response or an atomic ACK rather than a
    /// plain ACK ([`WrOpcode::wants_response`]).
    pub(crate) fn wants_response(&self) -> bool {
        self.opcode.wants_response()
    }

    /// The same entry, finished with `status`.
    pub(crate) fn finished(mut self, status: WcStatus) -> Self {
        self.done = Some(status);
        self
    }
}

/// The most started, uncompleted send WQEs a QP tracks. A larger send queue does not make the
/// tracking state larger: the requester waits for completions before it starts more (an RC
/// requester keeps at most 128 PSNs unacknowledged anyway).
pub(crate) const TRACK_WINDOW: usize = 256;

/// The WQE the requester is sending.
pub(crate) struct Progress {
    /// The WQE, parsed once from `SendState::slot` (its SGE and inline offsets point there).
    pub(in crate::pipeline) wqe: SendWqe,
    /// Bytes already sent.
    pub(in crate::pipeline) offset: u32,
    /// Packets already sent.
    pub(in crate::pipeline) sent: u32,
    /// Packets the message takes.
    pub(in crate::pipeline) npkts: u32,
    /// The payload of each packet but the last.
    pub(in crate::pipeline) mtu: u32,
}

/// Where a retransmission resumes the oldest unfinished WQE: the responder acknowledged (or
/// answered, for a READ) its first `packets` PSNs, so only the rest is sent again (IBA 9.7.5.1.1:
/// a request may be resent from any packet; C rxe resumes the same way). Checked against the WQE
/// when it is started again, which is read from the ring again.
#[derive(Clone, Copy)]
pub(crate) struct Resume {
    pub(in crate::pipeline) first_psn: Psn,
    pub(in crate::pipeline) packets: u32,
    pub(in crate::pipeline) opcode: WrOpcode,
    pub(in crate::pipeline) length: u32,
}

/// How a probe (selective recovery, [`crate::proto::recovery`]) goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProbeWay {
    /// The sender went back to it ([`crate::pipeline::requester::rewind`]): what followed it
    /// goes again after its answer, unless the answer acknowledges it.
    Rewound,
    /// A tail probe (the sender went back to it): its answer says nothing of how the peer
    /// recovers (it had everything, or nothing after the probe was sent).
    Tail,
    /// Built again from its tracked WQE and sent alone (`sent` once it went): what followed it
    /// stays sent and tracked, so the answers to the requests the peer kept past the gap (READ
    /// responses among them) find them waiting.
    Alone { sent: bool, why: AloneWhy },
}

/// Why a packet goes alone ([`ProbeWay::Alone`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AloneWhy {
    /// A sequence NAK named it.
    Nak,
    /// A tail probe: its answer says nothing of how the peer recovers.
    Tail,
    /// The answer to the probe before it acknowledged up to it and no further: lost as well,
    /// or everything from it on was (the peer's store was full).
    Next,
}

/// What the sender waits for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum SendWait {
    /// Nothing.
    None,
    /// The RNR delay after an RNR NAK.
    Rnr,
}

/// Requester and completer state.
pub(crate) struct SendState {
    /// The next PSN to send.
    pub(in crate::pipeline) psn: Psn,
    /// The oldest PSN not yet acknowledged.
    pub(in crate::pipeline) comp_psn: Psn,
    /// One past the newest PSN ever sent: ahead of `psn` while a retransmission goes over
    /// PSNs sent before, whose acknowledgements (late, not lost) are still good.
    pub(in crate::pipeline) sent_to: Psn,
    /// The newest PSN a late acknowledgement covered past `psn`: after a rewind, WQEs started
    /// again whose PSNs it covers are done without being sent again ([`Self::take_acked`]).
    pub(in crate::pipeline) acked_ahead: Option<Psn>,
    /// Started, uncompleted WQEs: a ring of `track.len()` (at most [`TRACK_WINDOW`]) entries
    /// from `head`.
    pub(in crate::pipeline) track: KVVec<Track>,
    pub(in crate::pipeline) head: usize,
    pub(in crate::pipeline) count: usize,
    /// The WQE being sent (entry `count - 1` of `track`), if it has packets left.
    pub(in crate::pipeline) cur: Option<Progress>,
    /// A private copy of the slot of the WQE being sent.
    pub(in crate::pipeline) slot: KVec<u8>,
    /// A private copy of the slot of the WQE a probe sent alone is built from.
    pub(in crate::pipeline) alone_slot: KVec<u8>,
    /// The local buffers of outstanding reads and atomics (the completer's single fetch).
    pub(in crate::pipeline) sinks: ReadSinks,
    /// Outstanding RDMA READ and atomic requests (each holds a sink).
    pub(in crate::pipeline) rd_outstanding: u32,
    pub(in crate::pipeline) retry: RetryCounter,
    pub(in crate::pipeline) rnr_retry: RetryCounter,
    pub(in crate::pipeline) retry_cnt: u8,
    pub(in crate::pipeline) rnr_retry_cnt: u8,
    pub(in crate::pipeline) wait: SendWait,
    /// Progress was made since the timer was last armed.
    pub(in crate::pipeline) progressed: bool,
    /// The timer fired and the sender has not looked at it yet.
    pub(in crate::pipeline) timer_fired: bool,
    /// Packets since the last AckReq.
    pub(in crate::pipeline) since_ackreq: u32,
    /// When a paced QP last set AckReq ([`crate::proto::seq::paced_ack_due`]).
    pub(in crate::pipeline) ackreq_ns: u64,
    /// Set by a retransmission that resumes the oldest WQE mid-message.
    pub(in crate::pipeline) resume: Option<Resume>,
    /// The `comp_psn` at which a gap in READ responses last made the completer ask again: one
    /// retry per gap, not one per response behind it (the timer covers a lost retry).
    pub(in crate::pipeline) asked_again: Option<Psn>,
    /// The PSN of the latest READ request that asked for the rest of a READ (sent mid-message
    /// after a gap or a retransmission, or an ask of selective recovery, always for the oldest
    /// WQE): a responder that never saw the READ (or took an earlier ask for a new one) answers
    /// it as a new READ, from a FIRST or ONLY there
    /// ([`crate::proto::window::read_response_fits`]).
    pub(in crate::pipeline) read_resumed_at: Option<Psn>,
    /// Selective recovery: READ responses placed past a gap ([`crate::proto::read_gaps`]).
    pub(in crate::pipeline) placed: Placed,
    /// Selective recovery: the request asking again for a missing run of the oldest
    /// unanswered READ's responses, to be sent or waiting for its answer.
    pub(in crate::pipeline) read_ask: Option<ReadAsk>,
    /// Selective recovery: asks for later missing runs, beside `read_ask` (`extra_asks.rs`).
    pub(in crate::pipeline) extra_asks: [Option<ReadAsk>; EXTRA_ASKS],
    /// Tail probes sent since the peer last answered something: each waits twice as long as
    /// the one before (`requester/tail.rs`).
    pub(in crate::pipeline) probes_unanswered: u8,
    /// When the last probe sent alone left (monotonic ns): an answer sooner than the path's
    /// shortest round trip after it was on its way before ([`Self::too_soon_for_alone`]).
    pub(in crate::pipeline) alone_sent_ns: u64,
    /// The peer answered something (an ACK, a NAK, a response) since the move to RTS: a QP
    /// that runs out of retries without it reports a silent peer (`completer.rs`).
    pub(in crate::pipeline) answered: bool,
    /// Selective recovery: after a sequence NAK the packet at this PSN is sent alone, and the
    /// requester waits for its answer ([`crate::proto::recovery`]).
    pub(in crate::pipeline) probe: Option<Psn>,
    /// How the probe goes.
    pub(in crate::pipeline) probe_way: ProbeWay,
    /// What the answers to probes showed of the peer.
    pub(in crate::pipeline) peer: PeerRecovery,
    /// The connection's round-trip time.
    pub(in crate::pipeline) rtt: Rtt,
    /// When a tail probe goes if nothing is acknowledged before (`requester/tail.rs`).
    pub(in crate::pipeline) tail_probe_at: Option<u64>,
    /// The QP is in RTS or SQD by the last transition: WQEs may start and answers complete
    /// them. Cleared under this lock by the move to ERR or RESET, before the send queue is
    /// flushed, so a pass that took its snapshot earlier starts, answers and completes
    /// nothing after the flush ([`super::QpPipe::transition`]).
    pub(in crate::pipeline) open: bool,
}

impl SendState {
    /// Starts the PSN sequence at `psn` (the move to RTS).
    pub(crate) fn start_at(&mut self, psn: Psn) {
        self.psn = psn;
        self.comp_psn = psn;
        self.sent_to = psn;
        self.acked_ahead = None;
        self.placed.clear();
        self.read_ask = None;
        self.extra_asks = Default::default();
        self.probes_unanswered = 0;
        self.answered = false;
        self.probe = None;
        self.probe_way = ProbeWay::Rewound;
        self.peer = PeerRecovery::default();
        self.rtt = Rtt::default();
        self.tail_probe_at = None;
    }

    /// Whether the requester waits for a probe: for its answer (it sent the probe's packet),
    /// or to send it alone.
    pub(crate) fn probe_waits(&self) -> bool {
        self.probe.is_some_and(|p| {
            matches!(self.probe_way, ProbeWay::Alone { .. })
                || cmp_psn(self.psn, p) == Ordering::Greater
        })
    }

    /// Whether the probe holds new packets back ([`Self::probe_waits`]): unless it went alone
    /// and the peer keeps what follows a gap, up to what it keeps ([`sends_past_probe`]).
    pub(crate) fn probe_holds_back(&self) -> bool {
        self.probe_waits()
            && !(self.alone_out().is_some() && sends_past_probe(self.peer, self.psn, self.comp_psn))
    }

    /// The probe, once its packet went: its answer is awaited.
    pub(crate) fn probe_out(&self) -> Option<Psn> {
        self.probe.filter(|&p| match self.probe_way {
            ProbeWay::Alone { sent, .. } => sent,
            _ => cmp_psn(self.psn, p) == Ordering::Greater,
        })
    }

    /// The probe's packet to send alone, rebuilt from its WQE, if it has not gone yet.
    pub(crate) fn alone_due(&self) -> Option<Psn> {
        self.probe
            .filter(|_| matches!(self.probe_way, ProbeWay::Alone { sent: false, .. }))
    }

    /// A probe sent alone whose answer is awaited, and why it went.
    pub(crate) fn alone_out(&self) -> Option<(Psn, AloneWhy)> {
        match (self.probe, self.probe_way) {
            (Some(p), ProbeWay::Alone { sent: true, why }) => Some((p, why)),
            _ => None,
        }
    }

    /// Whether an answer at `now` came sooner after the probe sent alone than the QP's
    /// shortest round trip: it answers an earlier transmission of the packets (it was on its
    /// way when the probe left, as when a tail probe's timer fires while the late ACK waits in
    /// the receive queue), and shows nothing of what the peer holds.
    pub(crate) fn too_soon_for_alone(&self, now: u64) -> bool {
        self.rtt
            .min_ns()
            .is_some_and(|min| now.saturating_sub(self.alone_sent_ns) < min)
    }

    /// Marks the probe sent alone as sent, or as to be sent again.
    pub(crate) fn alone_sent(&mut self, now: bool) {
        if let ProbeWay::Alone { sent, .. } = &mut self.probe_way {
            *sent = now;
        }
    }

    /// Whether the probe is a tail probe: its answer says nothing of how the peer recovers.
    pub(crate) fn probe_is_tail(&self) -> bool {
        matches!(
            self.probe_way,
            ProbeWay::Tail
                | ProbeWay::Alone {
                    why: AloneWhy::Tail,
                    ..
                }
        )
    }

    /// The entry of the unfinished WQE whose packet of PSN `p` can go again alone
    /// ([`ProbeWay::Alone`]): the packet went before the next PSN to send, and is one of a
    /// SEND's or WRITE's, or the request of a READ or atomic (never one of a READ's responses).
    pub(crate) fn alone_at(&mut self, p: Psn) -> Option<Track> {
        if cmp_psn(p, self.psn) != Ordering::Less {
            return None;
        }
        let t = self.holding(p).and_then(|i| self.entry(i).copied())?;
        (!t.wants_response() || t.first_psn == p).then_some(t)
    }

    /// Whether the packet of PSN `p` can go again alone ([`Self::alone_at`]).
    pub(crate) fn can_send_alone(&mut self, p: Psn) -> bool {
        self.alone_at(p).is_some()
    }

    /// Whether the packet of PSN `p` can go again alone and is one of a SEND's or WRITE's (a
    /// READ's or atomic's request is answered by its responses, or asked for by its own probe).
    pub(crate) fn can_send_data_alone(&mut self, p: Psn) -> bool {
        self.alone_at(p).is_some_and(|t| !t.wants_response())
    }

    /// The packet at `p` goes alone next, for `why`, without going back.
    pub(crate) fn probe_alone(&mut self, p: Psn, why: AloneWhy) {
        self.probe = Some(p);
        self.probe_way = ProbeWay::Alone { sent: false, why };
    }

    /// The index of the unfinished WQE whose PSNs hold `psn`, if any.
    pub(crate) fn holding(&mut self, psn: Psn) -> Option<usize> {
        let first = self.oldest_unfinished()?;
        (first..self.count).find(|&i| {
            self.entry(i).is_some_and(|t| {
                t.done.is_none()
                    && cmp_psn(t.first_psn, psn) != Ordering::Greater
                    && cmp_psn(psn, t.last_psn) != Ordering::Greater
            })
        })
    }

    /// Moves past `n` PSNs just sent.
    pub(crate) fn advance(&mut self, n: u32) {
        self.psn = self.psn.wrapping_add(n);
        if cmp_psn(self.psn, self.sent_to) == Ordering::Greater {
            self.sent_to = self.psn;
        }
    }

    /// How many of the `psns` PSNs from `first` (a WQE started again after a rewind) the peer
    /// has acknowledged already ([`Self::acked_ahead`]); the acknowledgement is forgotten once
    /// the WQEs started again reach past it.
    pub(crate) fn take_acked(&mut self, first: Psn, psns: u32) -> u32 {
        let Some(a) = self.acked_ahead else {
            return 0;
        };
        if cmp_psn(a, first) == Ordering::Less {
            self.acked_ahead = None;
            return 0;
        }
        let n = a.next().distance_from(first);
        if n <= psns {
            self.acked_ahead = None;
        }
        n.min(psns)
    }

    /// Moves the next PSN to send forward to `to`, over PSNs the peer has acknowledged.
    pub(crate) fn skip_acked(&mut self, to: Psn) {
        if self.comp_psn == self.psn {
            self.comp_psn = to;
        }
        self.psn = to;
        if cmp_psn(to, self.sent_to) == Ordering::Greater {
            self.sent_to = to;
        }
    }

    /// The oldest unfinished WQE when it is an RDMA READ whose responses include the oldest PSN
    /// not yet acknowledged: the READ selective recovery asks for again.
    pub(crate) fn oldest_read(&mut self) -> Option<Track> {
        let t = self
            .oldest_unfinished()
            .and_then(|i| self.entry(i).copied())?;
        let inside = cmp_psn(self.comp_psn, t.first_psn) != Ordering::Less
            && cmp_psn(self.comp_psn, t.last_psn) != Ordering::Greater;
        (t.opcode == WrOpcode::RdmaRead && inside).then_some(t)
    }

    /// The first unfinished WQE that waits for a response (a READ or an atomic): its answer
    /// acknowledges every WQE before it.
    pub(crate) fn first_unanswered(&mut self) -> Option<Track> {
        let first = self.oldest_unfinished()?;
        (first..self.count).find_map(|i| {
            self.entry(i)
                .copied()
                .filter(|t| t.done.is_none() && t.wants_response())
        })
    }

    /// Selective recovery: asks for the first missing run of the oldest unanswered READ's
    /// responses once its loss is known (a response after it placed, or `lost`), unless an
    /// ask waits already. Returns whether an ask is due or waits.
    pub(crate) fn ask_missing_read_run(&mut self, lost: bool) -> bool {
        if self.read_ask.is_some() {
            return true;
        }
        self.placed.rebase(self.comp_psn);
        // Nothing placed and no loss known: no READ to look up (every ACK and response
        // comes here).
        if !lost && self.placed.is_empty() {
            return false;
        }
        let Some(t) = self.oldest_read() else {
            return false;
        };
        let run = (t.first_psn, t.last_psn);
        let Some(end) = missing_run(&self.placed, run, self.comp_psn, lost) else {
            return false;
        };
        let ask = self.take_extra_ask(self.comp_psn);
        self.read_ask = Some(ask.unwrap_or(ReadAsk::new(self.comp_psn, end)));
        true
    }

    /// The index of the oldest started WQE not yet finished, if any.
    pub(crate) fn oldest_unfinished(&mut self) -> Option<usize> {
        (0..self.count).find(|&i| self.entry(i).is_some_and(|t| t.done.is_none()))
    }

    /// The entry `i` places after the oldest.
    pub(crate) fn entry(&mut self, i: usize) -> Option<&mut Track> {
        if i >= self.count {
            return None;
        }
        let cap = self.track.len();
        self.track.get_mut((self.head + i) % cap.max(1))
    }

    /// Appends an entry; `false` when full.
    pub(crate) fn push(&mut self, t: Track) -> bool {
        let cap = self.track.len();
        if self.count >= cap {
            return false;
        }
        let at = (self.head + self.count) % cap;
        self.track[at] = t;
        self.count += 1;
        true
    }

    /// Removes the oldest entry.
    pub(crate) fn pop(&mut self) -> Option<Track> {
        if self.count == 0 {
            return None;
        }
        let t = self.track[self.head];
        self.head = (self.head + 1) % self.track.len();
        self.count -= 1;
        Some(t)
    }
}
