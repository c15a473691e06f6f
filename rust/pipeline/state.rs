// SPDX-License-Identifier: GPL-2.0

//! The per-QP state of the packet pipeline: the sender side (requester and completer share
//! it: they walk the same send queue) and the receiver side (responder), each under its own
//! spinlock, plus the run gate, the inbox of received packets and the retransmission timer.
//! The sender side's types are in [`send`], the receiver side's in [`recv`].

mod extra_asks;
mod home;
pub(crate) mod odp;
mod recv;
mod send;
mod snapshot;

pub(crate) use snapshot::Snapshot;

pub(crate) use recv::{
    ReadOut,
    RecvProgress,
    RecvState,
    Resource,
    Resources,
    TakenRecv,
    WriteProgress, //
    READS_QUEUED,
};
pub(crate) use send::{
    AloneWhy,
    ProbeWay,
    Progress,
    Resume,
    SendState,
    SendWait,
    Track,
    TRACK_WINDOW, //
};

use super::{gate::RunGate, sinks::ReadSinks};
use crate::sync::{
    RefHrTimer,
    RefTimer,
    RefWork, //
};
use crate::{
    device::RrxeDevice,
    ib::{
        AddressVector,
        Device,
        Qp,
        QpAttr, //
    },
    kernel_ext,
    net::{
        SkbQueue,
        TxSocket, //
    },
    proto::{
        dcqcn::{
            CnpGate,
            Pacer,
            ReactionPoint, //
        },
        psn::Psn,
        qp_state::QpState,
        retry::RetryCounter,
        wqe::WrOpcode,
    },
};
use crate::{
    new_spinlock_irq,
    sync::SpinLockIrq, //
};
use kernel::{
    alloc::KVVec,
    prelude::*,
    sync::{
        atomic::{
            Atomic,
            Relaxed, //
        },
        SetOnce, //
    },
};

/// The id of a QP's retransmission timer.
pub(crate) const TIMER_RETRANSMIT: u32 = 0;

/// The id of a QP's pacing timer.
pub(crate) const TIMER_PACE: u32 = 1;

/// A QP's congestion control state ([`super::congestion`]).
#[derive(Default)]
pub(crate) struct CcState {
    /// The DCQCN reaction point: the rate CNPs allow.
    pub(in crate::pipeline) rp: ReactionPoint,
    /// Spaces the packets of a rate-limited QP.
    pub(in crate::pipeline) pacer: Pacer,
    /// The notification point: when the last CNP went to the peer.
    pub(in crate::pipeline) cnp_gate: CnpGate,
    /// When the last READ response with a CE mark arrived, if one did
    /// ([`crate::proto::dcqcn::reads_congested`]).
    pub(in crate::pipeline) read_marked_ns: Option<u64>,
    /// Whether the pacing timer is armed for a packet that waits for its time
    /// ([`super::congestion::pace_wait`]): its expiry must run the QP.
    pub(in crate::pipeline) pace_waiting: bool,
}

/// The pipeline part of a QP, pinned in the QP: the inbox, the timer and the work items are
/// embedded; the sender's and the receiver's state (larger) are boxes of their own. The socket
/// that owns the QP's packets in the network stack is opened only for a QP that may send to
/// the network (a datagram QP, or a connected one whose path leaves the device): a QP
/// connected to a QP of its own device (loopback) never has one.
#[pin_data]
pub(crate) struct QpPipe {
    pub(in crate::pipeline) gate: RunGate,
    #[pin]
    pub(in crate::pipeline) inbox: SkbQueue,
    pub(in crate::pipeline) send: Pin<KBox<SpinLockIrq<SendState>>>,
    pub(in crate::pipeline) recv: Pin<KBox<SpinLockIrq<RecvState>>>,
    #[pin]
    pub(in crate::pipeline) timer: RefTimer<Qp<RrxeDevice>>,
    /// Wakes a rate-limited QP for its next burst ([`super::congestion`]).
    #[pin]
    pub(in crate::pipeline) pace: RefHrTimer<Qp<RrxeDevice>>,
    /// The QP's congestion control state, for all it sends (requests and responses). A leaf
    /// lock: taken under the send or the receive lock, never the other way.
    #[pin]
    pub(in crate::pipeline) cc: SpinLockIrq<CcState>,
    /// Runs the QP's work soon (from the BH workqueue), for callers that may not send
    /// (interrupts disabled) and for runs that used up their budget.
    #[pin]
    pub(in crate::pipeline) kicker: RefWork<Qp<RrxeDevice>>,
    /// The CPU the QP's runs belong on ([`Self::defer`]).
    home: u32,
    /// The last packet queued asks only for an ACK ([`Self::arrived`]).
    ack_only: Atomic<bool>,
    /// Waiting for page faults of on-demand-paging MRs.
    pub(in crate::pipeline) odp: odp::OdpWait,
    /// The packets in the network stack and where they were sent from.
    pub(in crate::pipeline) flow: super::flow::TxFlow,
    /// Uncounts the flow's last released packet once its CPU's receive softirq is over.
    #[pin]
    pub(in crate::pipeline) drain: RefWork<Qp<RrxeDevice>, super::flow::FlowDrain>,
    /// Owns the packets the QP sends to the stack; set once, never taken away.
    pub(in crate::pipeline) socket: SetOnce<TxSocket<Qp<RrxeDevice>>>,
    /// The responder may have replies due (a READ's responses, a coalesced ACK, replies held
    /// by a pass that could not send): set when
    /// the responder makes one due, cleared by the pass that finds none under the receive
    /// lock. Both happen in the QP's passes, one at a time, so a pass that finds it clear
    /// skips the receive lock (which a peer's direct copy may hold) for them.
    replies_due: Atomic<bool>,
    /// A completion of the QP did not fit its CQ: the next pass moves the QP to ERR
    /// ([`super::after_push`]).
    pub(in crate::pipeline) cq_overrun: Atomic<bool>,
    /// The responder keeps packets past a gap, or executes kept ones: its passes look at the
    /// store (`responder/reorder.rs`); set and cleared by the QP's passes.
    pub(in crate::pipeline) reordering: Atomic<bool>,
    /// Bytes of packets the QP handed to the network or to a QP of its device (`rdma res show
    /// qp -dd`, `tx_bytes`: a QP's share of a link, as the bottleneck test judges fairness).
    pub(in crate::pipeline) tx_bytes: Atomic<u64>,
}

/// The turn of the next QP's home CPU: QPs are dealt round the online CPUs in the order they
/// are created, over all devices (so the two ends of a connection between two devices of one
/// host, created one after the other, get different CPUs).
static NEXT_HOME: Atomic<u32> = Atomic::new(0);

fn zeroed(n: usize) -> Result<KVec<u8>> {
    let mut v = KVec::with_capacity(n, GFP_KERNEL_ACCOUNT)?;
    v.resize(n, 0, GFP_KERNEL_ACCOUNT)?;
    Ok(v)
}

/// The requester's state of a QP with `sq_slots` send slots of `sq_elem` bytes holding up to
/// `max_send_sge` SGEs: before its first connection.
fn new_send_state(sq_slots: u32, sq_elem: usize, max_send_sge: u32) -> Result<SendState> {
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
    Ok(SendState {
        psn: Psn::new(0),
        comp_psn: Psn::new(0),
        sent_to: Psn::new(0),
        acked_ahead: None,
        track,
        head: 0,
        count: 0,
        cur: None,
        slot: zeroed(sq_elem)?,
        alone_slot: zeroed(sq_elem)?,
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
        ackreq_ns: 0,
        resume: None,
        asked_again: None,
        read_resumed_at: None,
        placed: Default::default(),
        read_ask: None,
        extra_asks: Default::default(),
        probes_unanswered: 0,
        alone_sent_ns: 0,
        answered: false,
        probe: None,
        probe_way: ProbeWay::Rewound,
        peer: Default::default(),
        rtt: Default::default(),
        tail_probe_at: None,
        open: false,
    })
}

impl QpPipe {
    /// The pipeline state of a QP with `sq_slots` send slots of `sq_elem` bytes holding up to
    /// `max_send_sge` SGEs, whose receive WQEs (from its receive queue or its SRQ) are
    /// `rq_elem` bytes holding up to `max_recv_sge` SGEs. The tracking state is sized by what
    /// the QP can have outstanding, not by its queue; the READ/atomic resources by
    /// `max_dest_rd_atomic`, when `modify_qp` sets it. A `datagram` QP (UD, GSI) gets its
    /// socket now (every work request names its own destination); a connected one when
    /// `modify_qp` gives it a path off the device ([`Self::prepare_path`]). What can fail is
    /// allocated first; the initialiser that remains puts the rest in place.
    pub(crate) fn new(
        sq_slots: u32,
        sq_elem: usize,
        max_send_sge: u32,
        rq_elem: usize,
        max_recv_sge: u32,
        datagram: bool,
    ) -> Result<impl PinInit<Self, Error>> {
        let send = new_send_state(sq_slots, sq_elem, max_send_sge)?;
        let recv = RecvState::new(rq_elem, max_recv_sge)?;
        let send = KBox::pin_init(new_spinlock_irq!(send, "rrxe_send"), GFP_KERNEL_ACCOUNT)?;
        let recv = KBox::pin_init(new_spinlock_irq!(recv, "rrxe_recv"), GFP_KERNEL_ACCOUNT)?;
        let odp = odp::OdpWait::new()?;
        let socket = SetOnce::new();
        if datagram {
            socket.populate(TxSocket::new()?);
        }
        Ok(try_pin_init!(Self {
            gate: RunGate::new(),
            inbox <- SkbQueue::new(),
            send,
            recv,
            timer <- RefTimer::new(TIMER_RETRANSMIT),
            pace <- RefHrTimer::new(TIMER_PACE),
            cc <- new_spinlock_irq!(CcState::default(), "rrxe_cc"),
            kicker <- RefWork::new(),
            home: kernel_ext::nth_online_cpu(NEXT_HOME.fetch_add(1, Relaxed)),
            ack_only: Atomic::new(false),
            odp,
            flow: super::flow::TxFlow::new(),
            drain <- RefWork::new(),
            socket,
            replies_due: Atomic::new(false),
            cq_overrun: Atomic::new(false),
            reordering: Atomic::new(false),
            tx_bytes: Atomic::new(0),
        }? Error))
    }

    /// Prepares for the path `modify_qp` gave the QP: if it leaves `dev`, opens the socket
    /// that owns the QP's packets in the network stack (unless it has one). Process context.
    /// A QP without a socket sends only to its own device; a packet that would leave it (the
    /// netdev's address changed under a loopback connection) is dropped and counted as a send
    /// error, as if the route had failed.
    pub(crate) fn prepare_path(&self, dev: &Device<RrxeDevice>, av: &AddressVector) -> Result {
        if !dev.is_local(av) && self.socket.as_ref().is_none() {
            // A concurrent `modify_qp` may open one first: that one stays, this one is released.
            self.socket.populate(TxSocket::new()?);
        }
        Ok(())
    }

    /// Replaces the responder's READ/atomic resources (`modify_qp` set `max_dest_rd_atomic`):
    /// the old ring, and what it kept for duplicates, goes, as in C rxe.
    pub(crate) fn replace_resources(&self, r: Resources) {
        let _old = core::mem::replace(&mut self.recv.lock().resources, r);
    }

    /// Whether the last move to ERR or RESET has closed both sides ([`Self::transition`]):
    /// from then on no pass starts, answers, completes or takes a WQE, and what the rings hold
    /// may be flushed. A caller that sees the QP in ERR before this leaves the flush to the
    /// move, which flushes after closing. The two locks are taken one after the other, never
    /// nested.
    pub(crate) fn closed(&self) -> bool {
        let send_open = self.send.lock().open;
        let recv_open = self.recv.lock().open;
        !send_open && !recv_open
    }

    /// Takes the receive WQEs the responder took from the ring (or SRQ) and has not completed,
    /// oldest first: the one a message in progress fills, and one the direct path took. The QP
    /// entered ERR: they are flushed before the ring's.
    pub(crate) fn take_recv_wqes(&self) -> [Option<u64>; 2] {
        let mut r = self.recv.lock();
        let filling = r.recv.take().map(|p| p.wr_id);
        let taken = r.direct_recv.take().map(|t| match t {
            TakenRecv::Wqe(wr_id, _) | TakenRecv::Malformed(wr_id) => wr_id,
        });
        [filling, taken]
    }

    /// The responder made a reply due (a READ to answer, an ACK to send, a reply held). Under
    /// the receive lock, in a pass.
    pub(in crate::pipeline) fn reply_due(&self) {
        self.replies_due.store(true, Relaxed);
    }

    /// Whether a reply may be due: `false` only when the last pass that looked under the
    /// receive lock found none and no pass made one due since ([`Self::no_reply_due`]).
    pub(in crate::pipeline) fn reply_may_be_due(&self) -> bool {
        self.replies_due.load(Relaxed)
    }

    /// A pass found no reply due under the receive lock.
    pub(in crate::pipeline) fn no_reply_due(&self) {
        self.replies_due.store(false, Relaxed);
    }

    /// Stops the QP's timer and deferred work for good (the QP is being destroyed): closed, not
    /// just cancelled, so a pass still running elsewhere cannot arm them again.
    pub(crate) fn close(&self) {
        self.timer.close();
        self.pace.close();
        self.kicker.close();
        self.drain.close();
        self.odp.close();
    }

    /// Sets the pipeline up for a state change: the responder starts at `rq_psn` in RTR, the
    /// requester at `sq_psn` in RTS; RESET and ERR forget everything in flight.
    pub(crate) fn transition(&self, cur: QpState, next: QpState, a: &QpAttr) {
        if next == QpState::Rtr && cur != QpState::Rtr {
            self.recv.lock().connect(Psn::new(a.rq_psn));
        }
        if next == QpState::Rts && matches!(cur, QpState::Rtr | QpState::Init) {
            let mut s = self.send.lock();
            s.start_at(Psn::new(a.sq_psn));
            s.open = true;
            drop(s);
            // A new connection starts at full rate.
            *self.cc.lock() = CcState::default();
        }
        {
            let mut s = self.send.lock();
            s.retry_cnt = a.retry_cnt;
            s.rnr_retry_cnt = a.rnr_retry;
            s.retry = RetryCounter::new(a.retry_cnt);
            s.rnr_retry = RetryCounter::new_rnr(a.rnr_retry);
        }
        if matches!(next, QpState::Reset | QpState::Err) {
            // Closed under the locks the passes work under: a pass that took its snapshot in
            // RTS and comes after this starts, answers, completes and takes nothing.
            let mut s = self.send.lock();
            s.open = false;
            s.head = 0;
            s.count = 0;
            s.cur = None;
            s.rd_outstanding = 0;
            s.wait = SendWait::None;
            drop(s);
            let mut r = self.recv.lock();
            r.open = false;
            if next == QpState::Reset {
                r.recv = None;
                r.direct_recv = None;
                // An overrun not acted on yet belongs to the QP's past.
                self.cq_overrun.store(false, Relaxed);
                // And so do replies held for a pass that may send (packets not yet routed or
                // charged: freeing them here holds nothing up).
                r.held.clear();
            }
            // In ERR, a receive WQE the responder took and did not finish is flushed by
            // `flush_queues`, before the ring's.
            r.write = None;
            r.read = None;
            r.read_next.clear();
            // Replies held in ERR still go with the next pass that may send: they answer
            // requests from before the error, the fatal NAK that moved the QP here among them.
            drop(r);
            // And so do the requests kept past a gap.
            super::responder::clear_store(self);
        }
    }
}

#[kernel::prelude::kunit_tests(rrxe_pipeline_state)]
mod tests {
    use super::*;

    #[test]
    fn tracking_state_is_sized_by_what_can_be_outstanding() {
        // A send queue of 2^15 slots of 32 SGEs: the window and the sinks stay small.
        let pipe = KBox::pin_init(
            QpPipe::new(1 << 15, 576, 32, 64, 1, false).unwrap(),
            GFP_KERNEL,
        )
        .unwrap();
        let st = pipe.send.lock();
        assert_eq!(st.track.len(), TRACK_WINDOW);
        assert_eq!(st.sinks.slots, crate::limits::MAX_QP_RD_ATOM as usize);
        assert_eq!(st.sinks.sges.len(), st.sinks.slots * 32);
        drop(st);
        // A small queue: no more entries than slots.
        let pipe =
            KBox::pin_init(QpPipe::new(16, 64, 1, 64, 1, false).unwrap(), GFP_KERNEL).unwrap();
        let st = pipe.send.lock();
        assert_eq!(st.track.len(), 16);
        assert_eq!(st.sinks.slots, 16);
    }

    #[test]
    fn the_move_to_err_closes_both_sides_under_their_locks() {
        let pipe =
            KBox::pin_init(QpPipe::new(16, 64, 1, 64, 1, false).unwrap(), GFP_KERNEL).unwrap();
        let a = QpAttr::default();
        let open = |p: &QpPipe| (p.send.lock().open, p.recv.lock().open);
        // Created in RESET: nothing may start or be taken.
        assert_eq!(open(&pipe), (false, false));
        pipe.transition(QpState::Reset, QpState::Init, &a);
        assert_eq!(open(&pipe), (false, false));
        pipe.transition(QpState::Init, QpState::Rtr, &a);
        assert_eq!(open(&pipe), (false, true));
        pipe.transition(QpState::Rtr, QpState::Rts, &a);
        assert_eq!(open(&pipe), (true, true));
        // A WQE in flight, then ERR: a pass holding an RTS snapshot finds both sides closed,
        // the window empty.
        let t = Track::new(1, WrOpcode::Send, true, Psn::new(0), 8);
        assert!(pipe.send.lock().push(t));
        pipe.transition(QpState::Rts, QpState::Err, &a);
        assert_eq!(open(&pipe), (false, false));
        assert_eq!(pipe.send.lock().count, 0);
        // Reset and connected again: open again.
        pipe.transition(QpState::Err, QpState::Reset, &a);
        pipe.transition(QpState::Reset, QpState::Init, &a);
        pipe.transition(QpState::Init, QpState::Rtr, &a);
        pipe.transition(QpState::Rtr, QpState::Rts, &a);
        assert_eq!(open(&pipe), (true, true));
    }

    #[test]
    fn only_a_datagram_qp_has_a_socket_from_creation() {
        let connected =
            KBox::pin_init(QpPipe::new(16, 64, 1, 64, 1, false).unwrap(), GFP_KERNEL).unwrap();
        assert!(connected.socket.as_ref().is_none());
        let datagram =
            KBox::pin_init(QpPipe::new(16, 64, 1, 64, 1, true).unwrap(), GFP_KERNEL).unwrap();
        assert!(datagram.socket.as_ref().is_some());
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
