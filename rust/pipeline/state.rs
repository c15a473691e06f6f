// SPDX-License-Identifier: GPL-2.0

//! The per-QP state of the packet pipeline: the sender side (requester and completer share
//! it: they walk the same send queue) and the receiver side (responder), each under its own
//! spinlock, plus the run gate, the inbox of received packets and the retransmission timer.
//! The receiver side's types are in [`recv`].

pub(crate) mod odp;
mod recv;

pub(crate) use recv::{
    ReadOut,
    RecvProgress,
    RecvState,
    Resource,
    Resources,
    TakenRecv,
    WriteProgress, //
};

use super::{
    gate::RunGate,
    sinks::{
        ReadSinks,
        SinkRef, //
    },
};
use crate::sync::{
    RefTimer,
    RefWork, //
};
use crate::{
    device::RrxeDevice,
    ib::{
        AccessFlags,
        AddressVector,
        Qp,
        QpAttr, //
    },
    net::{
        SkbQueue,
        TxSocket, //
    },
    proto::{
        cqe::WcStatus,
        psn::{
            cmp_psn,
            Psn, //
        },
        qp_state::QpState,
        retry::RetryCounter,
        seq::ReackPsn,
        wqe::{
            SendWqe,
            WrOpcode, //
        },
    },
};
use crate::{
    new_spinlock_irq,
    sync::SpinLockIrq, //
};
use core::cmp::Ordering;
use kernel::{
    alloc::KVVec,
    prelude::*, //
};

/// The QP attributes the data path reads, copied once per pass under the QP lock.
#[derive(Clone, Copy)]
pub(crate) struct Snapshot {
    pub(crate) state: crate::proto::qp_state::QpState,
    pub(crate) qp_type: crate::proto::qp_state::QpType,
    pub(crate) qpn: u32,
    /// Path MTU in bytes (connected QPs).
    pub(crate) mtu: u32,
    pub(crate) dest_qpn: u32,
    pub(crate) av: AddressVector,
    pub(crate) qkey: u32,
    /// `IB_ACCESS_REMOTE_*` rights of the QP.
    pub(crate) access: AccessFlags,
    pub(crate) timeout: u8,
    pub(crate) min_rnr_timer: u8,
    pub(crate) max_rd_atomic: u8,
    /// Protection domain identity.
    pub(crate) pd: usize,
    pub(crate) sq_sig_all: bool,
    /// A kernel consumer's QP (its ring may hold fast registrations).
    pub(crate) kernel: bool,
    /// The UDP source port of this QP's packets (RoCEv2 entropy).
    pub(crate) src_port: u16,
}

/// A send WQE that has been started (some or all of its packets handed out) and is not yet
/// completed. Entries are in send queue order; entry `i` is ring slot `consumer + i`.
#[derive(Clone, Copy)]
pub(crate) struct Track {
    pub(crate) wr_id: u64,
    pub(crate) opcode: WrOpcode,
    pub(crate) signaled: bool,
    /// The PSN of the first request packet.
    pub(crate) first_psn: Psn,
    /// The last PSN the operation uses (for reads, that of the last response).
    pub(crate) last_psn: Psn,
    /// The message length.
    pub(crate) length: u32,
    /// Set once the WQE is finished: its completion status (`IB_WC_*`).
    pub(crate) done: Option<u32>,
    /// The private copy of the local buffers of a READ or atomic (every WQE answered by a
    /// response has one while it is outstanding).
    pub(crate) sink: Option<SinkRef>,
}

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
        self.done = Some(status.to_raw());
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
    pub(crate) wqe: SendWqe,
    /// Bytes already sent.
    pub(crate) offset: u32,
    /// Packets already sent.
    pub(crate) sent: u32,
    /// Packets the message takes.
    pub(crate) npkts: u32,
}

/// Where a retransmission resumes the oldest unfinished WQE: the responder acknowledged (or
/// answered, for a READ) its first `packets` PSNs, so only the rest is sent again (IBA 9.7.5.1.1:
/// a request may be resent from any packet; C rxe resumes the same way). Checked against the WQE
/// when it is started again, which is read from the ring again.
#[derive(Clone, Copy)]
pub(crate) struct Resume {
    pub(crate) first_psn: Psn,
    pub(crate) packets: u32,
    pub(crate) opcode: WrOpcode,
    pub(crate) length: u32,
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
    pub(crate) psn: Psn,
    /// The oldest PSN not yet acknowledged.
    pub(crate) comp_psn: Psn,
    /// One past the newest PSN ever sent: ahead of `psn` while a retransmission goes over
    /// PSNs sent before, whose acknowledgements (late, not lost) are still good.
    pub(crate) sent_to: Psn,
    /// The newest PSN a late acknowledgement covered past `psn`: after a rewind, WQEs started
    /// again whose PSNs it covers are done without being sent again ([`Self::take_acked`]).
    pub(crate) acked_ahead: Option<Psn>,
    /// Started, uncompleted WQEs: a ring of `track.len()` (at most [`TRACK_WINDOW`]) entries
    /// from `head`.
    pub(crate) track: KVVec<Track>,
    pub(crate) head: usize,
    pub(crate) count: usize,
    /// The WQE being sent (entry `count - 1` of `track`), if it has packets left.
    pub(crate) cur: Option<Progress>,
    /// A private copy of the slot of the WQE being sent.
    pub(crate) slot: KVec<u8>,
    /// The local buffers of outstanding reads and atomics (the completer's single fetch).
    pub(crate) sinks: ReadSinks,
    /// Outstanding RDMA READ and atomic requests (each holds a sink).
    pub(crate) rd_outstanding: u32,
    pub(crate) retry: RetryCounter,
    pub(crate) rnr_retry: RetryCounter,
    pub(crate) retry_cnt: u8,
    pub(crate) rnr_retry_cnt: u8,
    pub(crate) wait: SendWait,
    /// Progress was made since the timer was last armed.
    pub(crate) progressed: bool,
    /// The timer fired and the sender has not looked at it yet.
    pub(crate) timer_fired: bool,
    /// Packets since the last AckReq.
    pub(crate) since_ackreq: u32,
    /// Set by a retransmission that resumes the oldest WQE mid-message.
    pub(crate) resume: Option<Resume>,
    /// The `comp_psn` at which a gap in READ responses last made the completer ask again: one
    /// retry per gap, not one per response behind it (the timer covers a lost retry).
    pub(crate) asked_again: Option<Psn>,
}

impl SendState {
    /// Starts the PSN sequence at `psn` (the move to RTS).
    pub(crate) fn start_at(&mut self, psn: Psn) {
        self.psn = psn;
        self.comp_psn = psn;
        self.sent_to = psn;
        self.acked_ahead = None;
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

/// The id of a QP's retransmission timer.
pub(crate) const TIMER_RETRANSMIT: u32 = 0;

/// The pipeline part of a QP.
pub(crate) struct QpPipe {
    pub(crate) gate: RunGate,
    pub(crate) inbox: Pin<KBox<SkbQueue>>,
    pub(crate) send: Pin<KBox<SpinLockIrq<SendState>>>,
    pub(crate) recv: Pin<KBox<SpinLockIrq<RecvState>>>,
    pub(crate) timer: Pin<KBox<RefTimer<Qp<RrxeDevice>>>>,
    /// Runs the QP's work soon (from the BH workqueue), for callers that may not send
    /// (interrupts disabled) and for runs that used up their budget.
    pub(crate) kicker: Pin<KBox<RefWork<Qp<RrxeDevice>>>>,
    /// Waiting for page faults of on-demand-paging MRs.
    pub(crate) odp: odp::OdpWait,
    /// The packets in the network stack and where they were sent from.
    pub(crate) flow: super::flow::TxFlow,
    /// Uncounts the flow's last released packet once its CPU's receive softirq is over.
    pub(crate) drain: Pin<KBox<RefWork<Qp<RrxeDevice>, super::flow::FlowDrain>>>,
    /// Owns the packets the QP sends to the stack.
    pub(crate) socket: TxSocket<Qp<RrxeDevice>>,
}

fn zeroed(n: usize) -> Result<KVec<u8>> {
    let mut v = KVec::with_capacity(n, GFP_KERNEL_ACCOUNT)?;
    v.resize(n, 0, GFP_KERNEL_ACCOUNT)?;
    Ok(v)
}

impl QpPipe {
    /// The pipeline state of a QP with `sq_slots` send slots of `sq_elem` bytes holding up to
    /// `max_send_sge` SGEs, whose receive WQEs (from its receive queue or its SRQ) are
    /// `rq_elem` bytes holding up to `max_recv_sge` SGEs. The tracking state is sized by what
    /// the QP can have outstanding, not by its queue; the READ/atomic resources by
    /// `max_dest_rd_atomic`, when `modify_qp` sets it.
    pub(crate) fn new(
        sq_slots: u32,
        sq_elem: usize,
        max_send_sge: u32,
        rq_elem: usize,
        max_recv_sge: u32,
    ) -> Result<Self> {
        let n = (sq_slots as usize).clamp(1, TRACK_WINDOW);
        let mut track = KVVec::with_capacity(n, GFP_KERNEL_ACCOUNT)?;
        let blank = Track::new(0, WrOpcode::Send, false, Psn::new(0), 0);
        for _ in 0..n {
            track.push(blank, GFP_KERNEL_ACCOUNT)?;
        }
        let sinks = ReadSinks::new(
            n.min(crate::limits::MAX_QP_RD_ATOM as usize),
            max_send_sge as usize,
        )?;
        let send = SendState {
            psn: Psn::new(0),
            comp_psn: Psn::new(0),
            sent_to: Psn::new(0),
            acked_ahead: None,
            track,
            head: 0,
            count: 0,
            cur: None,
            slot: zeroed(sq_elem)?,
            sinks,
            rd_outstanding: 0,
            retry: RetryCounter::new(7),
            rnr_retry: RetryCounter::new_rnr(7),
            retry_cnt: 7,
            rnr_retry_cnt: 7,
            wait: SendWait::None,
            progressed: false,
            timer_fired: false,
            since_ackreq: 0,
            resume: None,
            asked_again: None,
        };
        let recv = RecvState {
            epsn: Psn::new(0),
            reack: ReackPsn::before(Psn::new(0)),
            msn: 0,
            last_op: None,
            recv: None,
            sges: KVec::with_capacity(max_recv_sge as usize, GFP_KERNEL_ACCOUNT)?,
            write: None,
            read: None,
            resources: Resources::none(),
            nak_sent: false,
            ack_due: None,
            slot: zeroed(rq_elem)?,
            direct_recv: None,
        };
        Ok(Self {
            gate: RunGate::new(),
            inbox: KBox::pin_init(SkbQueue::new(), GFP_KERNEL_ACCOUNT)?,
            send: KBox::pin_init(new_spinlock_irq!(send, "rrxe_send"), GFP_KERNEL_ACCOUNT)?,
            recv: KBox::pin_init(new_spinlock_irq!(recv, "rrxe_recv"), GFP_KERNEL_ACCOUNT)?,
            timer: KBox::pin_init(RefTimer::new(TIMER_RETRANSMIT), GFP_KERNEL_ACCOUNT)?,
            kicker: KBox::pin_init(RefWork::new(), GFP_KERNEL_ACCOUNT)?,
            odp: odp::OdpWait::new()?,
            flow: super::flow::TxFlow::new(),
            drain: KBox::pin_init(RefWork::new(), GFP_KERNEL_ACCOUNT)?,
            socket: TxSocket::new()?,
        })
    }

    /// Stops the QP's timer and deferred work for good (the QP is being destroyed): closed, not
    /// just cancelled, so a pass still running elsewhere cannot arm them again.
    pub(crate) fn close(&self) {
        self.timer.close();
        self.kicker.close();
        self.drain.close();
        self.odp.close();
    }

    /// Sets the pipeline up for a state change: the responder starts at `rq_psn` in RTR, the
    /// requester at `sq_psn` in RTS; RESET and ERR forget everything in flight.
    pub(crate) fn transition(&self, cur: QpState, next: QpState, a: &QpAttr) {
        if next == QpState::Rtr && cur != QpState::Rtr {
            let mut r = self.recv.lock();
            r.epsn = Psn::new(a.rq_psn);
            r.reack = ReackPsn::before(r.epsn);
            r.msn = 0;
            r.recv = None;
            r.write = None;
            r.read = None;
            r.last_op = None;
            r.nak_sent = false;
            r.ack_due = None;
        }
        if next == QpState::Rts && matches!(cur, QpState::Rtr | QpState::Init) {
            let mut s = self.send.lock();
            s.start_at(Psn::new(a.sq_psn));
        }
        {
            let mut s = self.send.lock();
            s.retry_cnt = a.retry_cnt;
            s.rnr_retry_cnt = a.rnr_retry;
            s.retry = RetryCounter::new(a.retry_cnt);
            s.rnr_retry = RetryCounter::new_rnr(a.rnr_retry);
        }
        if matches!(next, QpState::Reset | QpState::Err) {
            let mut s = self.send.lock();
            s.head = 0;
            s.count = 0;
            s.cur = None;
            s.rd_outstanding = 0;
            s.wait = SendWait::None;
            drop(s);
            let mut r = self.recv.lock();
            if next == QpState::Reset {
                r.recv = None;
                r.direct_recv = None;
            }
            // In ERR, a receive WQE the responder took and did not finish is flushed by
            // `flush_queues`, before the ring's.
            r.write = None;
            r.read = None;
        }
    }
}

#[kernel::prelude::kunit_tests(rrxe_pipeline_state)]
mod tests {
    use super::*;

    #[test]
    fn tracking_state_is_sized_by_what_can_be_outstanding() {
        // A send queue of 2^15 slots of 32 SGEs: the window and the sinks stay small.
        let pipe = QpPipe::new(1 << 15, 576, 32, 64, 1).unwrap();
        let st = pipe.send.lock();
        assert_eq!(st.track.len(), TRACK_WINDOW);
        assert_eq!(st.sinks.slots, crate::limits::MAX_QP_RD_ATOM as usize);
        assert_eq!(st.sinks.sges.len(), st.sinks.slots * 32);
        drop(st);
        // A small queue: no more entries than slots.
        let pipe = QpPipe::new(16, 64, 1, 64, 1).unwrap();
        let st = pipe.send.lock();
        assert_eq!(st.track.len(), 16);
        assert_eq!(st.sinks.slots, 16);
    }

    #[test]
    fn responder_resources_are_a_ring_of_max_dest_rd_atomic() {
        let kept = |r: &Resources, p: u32| {
            r.find(|x| matches!(*x, Resource::Answered { psn } if psn == Psn::new(p)))
                .is_some()
        };
        // None: nothing is kept (READ and atomic requests are refused before this).
        let mut r = Resources::none();
        r.save(Resource::Answered { psn: Psn::new(1) });
        assert!(r.is_empty() && !kept(&r, 1));
        // Two: the third overwrites the oldest.
        let mut r = Resources::with_depth(2).unwrap();
        for p in 1..=3 {
            r.save(Resource::Answered { psn: Psn::new(p) });
        }
        assert!(!kept(&r, 1) && kept(&r, 2) && kept(&r, 3));
    }
}
