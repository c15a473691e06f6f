// SPDX-License-Identifier: GPL-2.0

//! An RC or UC request, checked and executed by named stages in the order of the IBA's
//! responder rules, as C rxe's responder states are: the QP still open (under the lock, not by
//! the pass's snapshot), the PSN ([`Request::check_psn`]), the opcode sequence, the resources,
//! the length ([`Request::check_length`]), then the operation (SEND and READ here, WRITE in
//! [`write`]; atomics, ATOMIC WRITE and FLUSH in [`super::atomic`]; keys, rights and bounds as
//! each resolves its target) and last the responder's state moved past the packet
//! ([`Request::commit`]).
//!
//! Every stage takes the locked responder state and either hands it on or ends the request: a
//! stage that answers the packet (a NAK, a duplicate's reply) releases the lock before it sends.

use super::{
    abandon, atomic, bad_recv, complete_recv, imm_ex, reorder, reply, rnr, take_recv, Received,
    RecvGuard, Stage, Stop,
};
use crate::{
    counters::Counter,
    device::RrxeDevice,
    ib::{
        self,
        Qp, //
    },
    pipeline::{
        mem,
        odp::Side,
        rkey,
        state::{
            ReadOut,
            RecvProgress,
            Resource,
            Snapshot,
            TakenRecv, //
        },
        DropReason, Outbox,
    },
    proto::{
        abi,
        cqe::{
            Cqe,
            WcOpcode,
            WcStatus, //
        },
        hdr::Aeth,
        opcode::OpKind,
        packet::ParsedHeaders,
        qp_state::QpType,
        seq::{
            self,
            RespPsn, //
        },
    },
};
use kernel::prelude::*;

mod write;

/// An RC or UC request packet and what every stage reads.
pub(super) struct Request<'a> {
    qp: &'a Qp<RrxeDevice>,
    snap: &'a Snapshot,
    h: &'a ParsedHeaders,
    payload: &'a [u8],
    /// RC (NAKs, READ, atomics) rather than UC (silent drops and resynchronisation).
    rc: bool,
}

impl<'a> Request<'a> {
    pub(super) fn new(
        qp: &'a Qp<RrxeDevice>,
        snap: &'a Snapshot,
        h: &'a ParsedHeaders,
        payload: &'a [u8],
    ) -> Self {
        let rc = snap.qp_type == QpType::Rc;
        Request {
            qp,
            snap,
            h,
            payload,
            rc,
        }
    }

    /// Checks and executes the request, stage by stage.
    pub(super) fn handle(&self, out: &mut Outbox) -> Result<Received, DropReason> {
        match self.stages(out) {
            Ok(()) | Err(Stop::Handled) => Ok(Received::Done),
            Err(Stop::Keep(conn)) => Ok(Received::Keep(reorder::KeepAt {
                psn: self.h.headers.bth.psn,
                conn,
            })),
            Err(Stop::Dropped(r)) => Err(r),
        }
    }

    fn stages(&self, out: &mut Outbox) -> Stage<'a, ()> {
        let st = self.qp.pipe().recv.lock();
        if !st.open {
            return Err(Stop::Dropped(DropReason::QpState));
        }
        let st = self.check_psn(st, out)?;
        let st = self.check_op_seq(st, out)?;
        let st = self.check_resource(st, out)?;
        let st = self.check_length(st, out)?;
        let (qp, snap, h) = (self.qp, self.snap, self.h);
        let (st, psns) = match h.info.kind {
            OpKind::Send => (self.send(st, out)?, 1),
            OpKind::Write => (self.write(st, out)?, 1),
            OpKind::ReadRequest if self.rc => self.read(st, out)?,
            OpKind::CompareSwap | OpKind::FetchAdd if self.rc => {
                return Err(atomic::compare_swap_or_fetch_add(qp, snap, st, h, out).into());
            }
            OpKind::AtomicWrite if self.rc => {
                return Err(atomic::atomic_write(qp, snap, st, h, self.payload, out).into());
            }
            OpKind::Flush if self.rc => {
                return Err(atomic::flush(qp, snap, st, h, self.payload, out).into());
            }
            _ => {
                self.nak(st, out, Aeth::NAK_INVALID_REQUEST);
                return Err(DropReason::OpcodeForQpType.into());
            }
        };
        self.commit(st, psns);
        Ok(())
    }

    /// NAKs an RC request with `syndrome`, releasing the lock; a UC request is dropped silently.
    fn nak(&self, st: RecvGuard<'_>, out: &mut Outbox, syndrome: u8) {
        if self.rc {
            reply::nak(self.qp, self.snap, st, syndrome, out);
        }
    }

    /// Ends the message in progress with a NAK: its receive WQE completes with `status` (RC;
    /// UC keeps it for the next message), and the packet is dropped for `why`.
    fn fail_message(
        &self,
        mut st: RecvGuard<'_>,
        out: &mut Outbox,
        status: WcStatus,
        syndrome: u8,
        why: DropReason,
    ) -> Stop {
        abandon(self.qp, self.snap, &mut st, self.rc.then_some(status));
        self.nak(st, out, syndrome);
        why.into()
    }

    /// The PSN against the expected one. The expected PSN goes on. RC: a duplicate is answered
    /// again (an ACK, a READ's responses or an atomic's saved result); a PSN ahead is NAKed with
    /// a sequence error once, until the expected one arrives. UC: a PSN behind is stale (or
    /// forged) and dropped, as only PSNs ahead can resynchronise the responder; a PSN ahead loses
    /// the message in progress (not its receive WQE) and is taken only if it starts a message.
    fn check_psn(&self, mut st: RecvGuard<'a>, out: &mut Outbox) -> Stage<'a> {
        let (qp, snap, psn) = (self.qp, self.snap, self.h.headers.bth.psn);
        match seq::classify_request_psn(psn, st.epsn) {
            RespPsn::Expected => st.nak_sent = false,
            RespPsn::Duplicate if self.rc => {
                qp.counts().inc(Counter::DuplicateRequest);
                return Err(reply::duplicate(qp, snap, st, self.h, out).into());
            }
            RespPsn::OutOfSequence if self.rc => {
                qp.counts().inc(Counter::OutOfSeqRequest);
                // Kept for its turn when the store has room for it (selective recovery).
                let keep = crate::params::selective_recovery() && reorder::would_keep(&st, psn);
                let conn = st.conn;
                if !st.nak_sent {
                    st.nak_sent = true;
                    let (msn, epsn) = (st.msn, st.epsn);
                    drop(st);
                    reply::ack(qp, snap, msn, epsn, Aeth::NAK_PSN_SEQ_ERROR, out);
                }
                return Err(if keep {
                    Stop::Keep(conn)
                } else {
                    DropReason::PsnOutOfWindow.into()
                });
            }
            RespPsn::Duplicate => return Err(DropReason::Duplicate.into()),
            _ => {
                abandon(qp, snap, &mut st, None);
                if !self.h.info.position.starts_message() {
                    st.epsn = psn.next();
                    return Err(DropReason::PsnOutOfWindow.into());
                }
            }
        }
        Ok(st)
    }

    /// The opcode against the one before it in the message (a middle or last packet follows a
    /// first or middle one of the same operation; a first or only one follows the end of a
    /// message). RC: an invalid request NAK. UC: a new message while one is in progress drops
    /// the old one (its receive WQE goes to the new one); any other packet is dropped.
    fn check_op_seq(&self, mut st: RecvGuard<'a>, out: &mut Outbox) -> Stage<'a> {
        if seq::check_request_sequence(st.last_op, self.h.headers.bth.opcode).is_ok() {
            return Ok(st);
        }
        if self.rc {
            let (msn, epsn) = (st.msn, st.epsn);
            drop(st);
            reply::ack(
                self.qp,
                self.snap,
                msn,
                epsn,
                Aeth::NAK_INVALID_REQUEST,
                out,
            );
            return Err(DropReason::OpcodeSequence.into());
        }
        if !self.h.info.position.starts_message() {
            return Err(DropReason::OpcodeSequence.into());
        }
        abandon(self.qp, self.snap, &mut st, None);
        Ok(st)
    }

    /// A READ or atomic request needs a responder resource: a QP whose
    /// `max_dest_rd_atomic` is 0 keeps none, and NAKs it as an invalid request, as C rxe.
    fn check_resource(&self, st: RecvGuard<'a>, out: &mut Outbox) -> Stage<'a> {
        let needs = matches!(
            self.h.info.kind,
            OpKind::ReadRequest | OpKind::CompareSwap | OpKind::FetchAdd | OpKind::AtomicWrite
        );
        if self.rc && needs && st.resources.is_empty() {
            self.nak(st, out, Aeth::NAK_INVALID_REQUEST);
            return Err(DropReason::NoResponderResources.into());
        }
        Ok(st)
    }

    /// The next receive WQE (its `wr_id` and length) for a request that consumes one: none
    /// posted is an RNR NAK (RC) or a drop (UC); a malformed one completes in error.
    fn take_wqe(
        &self,
        mut st: RecvGuard<'a>,
        out: &mut Outbox,
    ) -> Stage<'a, (RecvGuard<'a>, u64, u32)> {
        let (qp, snap) = (self.qp, self.snap);
        match take_recv(qp, &mut st) {
            Some(TakenRecv::Wqe(wr_id, length)) => Ok((st, wr_id, length)),
            None => Err(rnr(qp, snap, st, self.rc, out).into()),
            Some(TakenRecv::Malformed(wr_id)) => Err(bad_recv(qp, snap, st, wr_id, out).into()),
        }
    }

    /// The lengths. C9-93: a SEND or WRITE packet's payload matches its place in the message
    /// (a full path MTU unless it is the last or only one, and not empty in the middle). C9-94:
    /// no RDMA message is longer than 2^31 bytes (a longer READ would also take more PSNs than
    /// the window has). Either is an invalid request.
    fn check_length(&self, st: RecvGuard<'a>, out: &mut Outbox) -> Stage<'a> {
        let h = self.h;
        let fits = !matches!(h.info.kind, OpKind::Send | OpKind::Write)
            || seq::payload_fits_position(h.info.position, self.payload.len(), self.snap.mtu);
        let too_long = matches!(h.info.kind, OpKind::Write | OpKind::ReadRequest)
            && h.headers
                .reth
                .is_some_and(|r| r.dma_len > abi::MAX_MSG_SIZE);
        if !fits || too_long {
            let (status, nak) = (WcStatus::RemInvReqErr, Aeth::NAK_INVALID_REQUEST);
            return Err(self.fail_message(st, out, status, nak, DropReason::LengthError));
        }
        Ok(st)
    }

    /// SEND: the first packet takes a receive WQE (none: RNR; a malformed one completes in
    /// error), each packet is scattered into it at the message's offset (past its length: a
    /// local length error; a local key that does not allow it: a local protection error), and
    /// the last one completes it, with the immediate data or the invalidation it carries.
    fn send(&self, mut st: RecvGuard<'a>, out: &mut Outbox) -> Stage<'a> {
        let (qp, snap, h, payload) = (self.qp, self.snap, self.h, self.payload);
        let starts = h.info.position.starts_message();
        if starts {
            let (wr_id, length);
            (st, wr_id, length) = self.take_wqe(st, out)?;
            st.recv = Some(RecvProgress {
                wr_id,
                offset: 0,
                length,
            });
        }
        let Some((wr_id, offset, length)) = st.recv.as_ref().map(|r| (r.wr_id, r.offset, r.length))
        else {
            return Err(DropReason::OpcodeSequence.into());
        };
        if (offset as usize).saturating_add(payload.len()) > length as usize {
            let nak = Aeth::NAK_INVALID_REQUEST;
            return Err(self.fail_message(
                st,
                out,
                WcStatus::LocLenErr,
                nak,
                DropReason::LengthError,
            ));
        }
        match mem::scatter(qp, Side::Recv, snap, &st.sges, offset, payload) {
            Ok(()) => {}
            Err(e) if e == EAGAIN => {
                // A page is being faulted in: handled again later, its receive WQE handed back.
                if starts {
                    st.direct_recv = st.recv.take().map(|r| TakenRecv::Wqe(r.wr_id, r.length));
                }
                return Err(Stop::Handled);
            }
            Err(_) => {
                let nak = Aeth::NAK_INVALID_REQUEST;
                let why = DropReason::LengthError;
                return Err(self.fail_message(st, out, WcStatus::LocProtErr, nak, why));
            }
        }
        let total = offset + payload.len() as u32;
        if let Some(r) = st.recv.as_mut() {
            r.offset = total;
        }
        if h.info.position.ends_message() {
            st.recv = None;
            let mut c = Cqe::received(wr_id, WcOpcode::Recv, total, snap.qpn, snap.dest_qpn);
            if let Some(i) = h.headers.immdt {
                c = c.with_imm(imm_ex(i.imm));
            }
            if let Some(i) = h.headers.ieth {
                let _ = rkey::invalidate(qp.device(), i.rkey, snap.pd, Some(qp.mw_token()));
                c = c.with_inv(i.rkey);
            }
            complete_recv(qp, &c, h.headers.bth.solicited);
        }
        Ok(st)
    }

    /// RDMA READ request: the rkey must give remote read access to the whole range (else the
    /// NAK the key check chose). The request is saved as a resource (a duplicate is answered
    /// from it) and its responses are queued; it takes one PSN per response packet, which is
    /// returned.
    fn read(&self, mut st: RecvGuard<'a>, out: &mut Outbox) -> Stage<'a, (RecvGuard<'a>, u32)> {
        let (snap, psn) = (self.snap, self.h.headers.bth.psn);
        let Some(reth) = self.h.headers.reth else {
            return Err(DropReason::Malformed.into());
        };
        let len = u64::from(reth.dma_len);
        if let Err(s) = rkey::resolve(
            self.qp,
            snap,
            reth.rkey,
            ib::Access::RemoteRead.into(),
            reth.va,
            len,
        ) {
            self.nak(st, out, s);
            return Err(DropReason::BadRkey.into());
        }
        let npkts = seq::packets_for(reth.dma_len, snap.mtu).unwrap_or(1);
        let (va, rkey, len) = (reth.va, reth.rkey, reth.dma_len);
        st.resources.save(Resource::Read {
            psn,
            npkts,
            va,
            rkey,
            len,
        });
        st.read = Some(ReadOut {
            rkey,
            va,
            len,
            psn,
            npkts,
            sent: 0,
        });
        self.qp.pipe().reply_due();
        Ok((st, npkts))
    }

    /// Moves the responder past an executed packet: the expected PSN (past `psns`), the opcode
    /// the next packet must follow, the message sequence number at the end of a message, and an
    /// ACK due when the requester asked for one (a READ's responses are its acknowledgement).
    fn commit(&self, mut st: RecvGuard<'a>, psns: u32) {
        let bth = self.h.headers.bth;
        let ends = self.h.info.position.ends_message();
        st.epsn = bth.psn.wrapping_add(psns);
        st.reack.executed(self.h.info.kind, bth.psn);
        st.last_op = if ends { None } else { Some(bth.opcode) };
        if ends {
            st.msn = st.msn.wrapping_add(1);
        }
        // A request kept past a gap is acknowledged whatever its AckReq: the requester learns
        // at once that it need not send it again.
        let kept = st.replayed == Some(bth.psn);
        if self.rc && (bth.ack_req || kept) && self.h.info.kind != OpKind::ReadRequest {
            st.ack_due = Some(bth.psn);
            self.qp.pipe().reply_due();
        }
        drop(st);
    }
}
