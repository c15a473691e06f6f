// SPDX-License-Identifier: GPL-2.0

//! The responder's state: the expected PSN and message sequence, the message in progress (a
//! SEND filling a receive WQE, a WRITE, a READ being answered) and the resources kept to answer
//! duplicate READs and atomics again.

use crate::proto::{
    opcode::Opcode,
    psn::Psn,
    seq::ReackPsn,
    wqe::Sge, //
};
use kernel::prelude::*;

/// A request the responder answered with more than an ACK, kept for duplicates (replay).
#[derive(Clone, Copy)]
pub(crate) enum Resource {
    /// An RDMA READ: its responses use `npkts` PSNs from `psn`.
    Read {
        psn: Psn,
        npkts: u32,
        va: u64,
        rkey: u32,
        len: u32,
    },
    /// An atomic: the original value it returned.
    Atomic { psn: Psn, orig: u64 },
    /// A FLUSH or ATOMIC WRITE: answered by a zero-length READ response, never executed twice.
    Answered { psn: Psn },
}

/// The responder's READ/atomic resources (the IBA's "responder resources"): a ring of as many as
/// the QP's `max_dest_rd_atomic` (rounded up to a power of two, as C rxe), the oldest
/// overwritten. Allocated when `modify_qp` sets that attribute; a QP with none refuses READ and
/// atomic requests (an invalid request NAK, as C rxe).
pub(crate) struct Resources {
    ring: KVec<Option<Resource>>,
    next: usize,
}

impl Resources {
    /// No resources: READ and atomic requests are refused.
    pub(crate) fn none() -> Self {
        Self {
            ring: KVec::new(),
            next: 0,
        }
    }

    /// A ring of `depth` empty resources. Process context.
    pub(crate) fn with_depth(depth: u32) -> Result<Self> {
        let n = depth as usize;
        let mut ring = KVec::with_capacity(n, GFP_KERNEL_ACCOUNT)?;
        ring.resize(n, None, GFP_KERNEL_ACCOUNT)?;
        Ok(Self { ring, next: 0 })
    }

    /// Whether the QP has none (READ and atomic requests are refused).
    pub(crate) fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    /// Keeps `r`, overwriting the oldest when the ring is full.
    pub(crate) fn save(&mut self, r: Resource) {
        let n = self.ring.len();
        if let Some(at) = self.ring.get_mut(self.next) {
            *at = Some(r);
            self.next = (self.next + 1) % n;
        }
    }

    /// The resource kept for which `f` holds.
    pub(crate) fn find(&self, f: impl Fn(&Resource) -> bool) -> Option<Resource> {
        self.ring.iter().flatten().copied().find(|r| f(r))
    }
}

/// A READ whose responses the responder is still sending.
///
/// Memory is named by rkey and looked up for each packet, never held: a stalled or hostile peer
/// must not keep an MR from being deregistered.
#[derive(Clone, Copy)]
pub(crate) struct ReadOut {
    pub(in crate::pipeline) rkey: u32,
    pub(in crate::pipeline) va: u64,
    pub(in crate::pipeline) len: u32,
    pub(in crate::pipeline) psn: Psn,
    pub(in crate::pipeline) npkts: u32,
    pub(in crate::pipeline) sent: u32,
}

/// The most READs (duplicates, each a run of a READ's responses) the responder queues behind
/// the one it is sending.
pub(crate) const READS_QUEUED: usize = 8;

/// The duplicate READ requests waiting for the READ being sent, in the order they are to go: a
/// requester that placed responses past several gaps asks for each missing run at once, and a
/// go-back-N requester sends its READs again one after the other.
pub(crate) struct ReadQueue([Option<ReadOut>; READS_QUEUED]);

impl Default for ReadQueue {
    fn default() -> Self {
        Self([None; READS_QUEUED])
    }
}

impl ReadQueue {
    /// Queues `r` last; `false` when full.
    pub(crate) fn push(&mut self, r: ReadOut) -> bool {
        match self.0.iter_mut().find(|s| s.is_none()) {
            Some(s) => {
                *s = Some(r);
                true
            }
            None => false,
        }
    }

    /// Queues `r` first; `false` when full.
    pub(crate) fn push_front(&mut self, r: ReadOut) -> bool {
        if self.0.last().is_some_and(Option::is_some) {
            return false;
        }
        self.0.rotate_right(1);
        self.0[0] = Some(r);
        true
    }

    /// The first queued, taken.
    pub(crate) fn pop(&mut self) -> Option<ReadOut> {
        let first = self.0[0].take()?;
        self.0.rotate_left(1);
        Some(first)
    }

    /// Forgets them all.
    pub(crate) fn clear(&mut self) {
        *self = Self::default();
    }
}

/// The receive WQE a multi-packet SEND is filling.
pub(crate) struct RecvProgress {
    pub(in crate::pipeline) wr_id: u64,
    /// Bytes received so far.
    pub(in crate::pipeline) offset: u32,
    /// Total buffer length.
    pub(in crate::pipeline) length: u32,
}

/// An RDMA WRITE in progress.
///
/// By rkey, as [`ReadOut`].
pub(crate) struct WriteProgress {
    pub(in crate::pipeline) rkey: u32,
    pub(in crate::pipeline) va: u64,
    pub(in crate::pipeline) remaining: u32,
    /// The DMA length of the RETH (reported by a WRITE with immediate's completion).
    pub(in crate::pipeline) length: u32,
}

/// Responder state.
pub(crate) struct RecvState {
    /// The PSN expected next.
    pub(in crate::pipeline) epsn: Psn,
    /// Whether, and naming which PSN, a duplicate SEND or WRITE is acknowledged again.
    pub(in crate::pipeline) reack: ReackPsn,
    /// Completed request messages (the MSN of ACKs).
    pub(in crate::pipeline) msn: u32,
    /// The opcode of the previous packet of the current message.
    pub(in crate::pipeline) last_op: Option<Opcode>,
    pub(in crate::pipeline) recv: Option<RecvProgress>,
    /// The SGEs of `recv`.
    pub(in crate::pipeline) sges: KVec<Sge>,
    pub(in crate::pipeline) write: Option<WriteProgress>,
    pub(in crate::pipeline) read: Option<ReadOut>,
    /// What goes after `read` (empty without it).
    pub(in crate::pipeline) read_next: ReadQueue,
    /// READ/atomic resources, as many as `max_dest_rd_atomic`.
    pub(in crate::pipeline) resources: Resources,
    /// A PSN sequence error NAK was sent and no in-order packet arrived since.
    pub(in crate::pipeline) nak_sent: bool,
    /// The PSN to acknowledge at the end of this pass.
    pub(in crate::pipeline) ack_due: Option<Psn>,
    /// The slot of a receive WQE being read.
    pub(in crate::pipeline) slot: KVec<u8>,
    /// A receive WQE a direct loopback message took and did not use (SGEs in `sges`), for the
    /// packet path to use next.
    pub(in crate::pipeline) direct_recv: Option<TakenRecv>,
    /// Replies (NAKs, atomic results, answers to duplicates) made by a pass that could not
    /// send them ([`crate::pipeline::pass::receive_pass`]): the next pass that may send sends them
    /// first. Room for one batch, allocated by the first hold (most QPs never hold one: with
    /// the QP it would add a fifth to a QP's slab).
    pub(in crate::pipeline) held: KVec<crate::pipeline::TxItem>,
    /// The requests kept past a gap (RC), allocated by the first
    /// (`crate::pipeline::responder::reorder`).
    pub(in crate::pipeline) reorder: crate::pipeline::responder::Store,
    /// The PSN of the last kept packet handed out for execution, until the next look at the
    /// store: the packet being handled at that PSN was kept past a gap (it is acknowledged
    /// whatever its AckReq, so the requester learns at once how far the responder got), and
    /// whether the expected PSN moved past it tells that it was executed.
    pub(in crate::pipeline) replayed: Option<crate::proto::psn::Psn>,
    /// The QP is in RTR, RTS or SQD by the last transition: requests may be executed and
    /// receive WQEs taken. Cleared under this lock by the move to ERR or RESET, before the
    /// receive queue (or the QP's share of an SRQ) is flushed, so no WQE is taken after
    /// the flush or after `IB_EVENT_QP_LAST_WQE_REACHED` ([`super::QpPipe::transition`]).
    pub(in crate::pipeline) open: bool,
    /// The connection: the moves to RTR, counted. A packet found past a gap under one is kept
    /// only under the same ([`crate::pipeline::responder::keep`]).
    pub(in crate::pipeline) conn: u32,
}

impl RecvState {
    /// The responder's state of a QP whose receive WQEs (from its receive queue or its SRQ)
    /// are `rq_elem` bytes with up to `max_recv_sge` SGEs: before its first connection.
    pub(in crate::pipeline) fn new(rq_elem: usize, max_recv_sge: u32) -> Result<Self> {
        Ok(Self {
            epsn: Psn::new(0),
            reack: ReackPsn::before(Psn::new(0)),
            msn: 0,
            last_op: None,
            recv: None,
            sges: KVec::with_capacity(max_recv_sge as usize, GFP_KERNEL_ACCOUNT)?,
            write: None,
            read: None,
            read_next: ReadQueue::default(),
            resources: Resources::none(),
            nak_sent: false,
            ack_due: None,
            slot: super::zeroed(rq_elem)?,
            direct_recv: None,
            held: KVec::new(),
            reorder: None,
            replayed: None,
            open: false,
            conn: 0,
        })
    }

    /// The move to RTR: a new connection, whose first request is expected at `rq_psn`. Nothing
    /// of an earlier one is left, not even replies a pass of it held after the QP was reset
    /// (it took its snapshot before: [`crate::pipeline::responder::hold`]).
    pub(in crate::pipeline) fn connect(&mut self, rq_psn: Psn) {
        self.epsn = rq_psn;
        self.reack = ReackPsn::before(rq_psn);
        self.msn = 0;
        self.recv = None;
        self.write = None;
        self.read = None;
        self.read_next.clear();
        self.last_op = None;
        self.nak_sent = false;
        self.ack_due = None;
        self.held.clear();
        self.open = true;
        self.conn = self.conn.wrapping_add(1);
    }
}

/// A receive WQE taken from the receive queue (or SRQ).
#[derive(Clone, Copy)]
pub(crate) enum TakenRecv {
    /// A valid WQE: its `wr_id` and total length; its SGEs are in [`RecvState::sges`].
    Wqe(u64, u32),
    /// A malformed WQE, consumed: its `wr_id` as far as it can be read. It completes in error.
    Malformed(u64),
}
