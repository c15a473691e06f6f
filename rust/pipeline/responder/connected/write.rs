// SPDX-License-Identifier: GPL-2.0

//! The RDMA WRITE stages of a connected request ([`Request::write`]): the first packet's key
//! check, each packet's payload written at its place, the last packet's receive WQE when it
//! carries immediate data.

use super::{
    super::{
        complete_recv,
        imm_ex,
        RecvGuard,
        Stage,
        Stop, //
    },
    Request,
};
use crate::{
    ib,
    pipeline::{
        odp::{
            self,
            Access,
            Side, //
        },
        rkey,
        state::WriteProgress,
        DropReason,
        Outbox, //
    },
    proto::{
        cqe::{
            Cqe,
            WcOpcode,
            WcStatus, //
        },
        hdr::Aeth,
    },
};
use kernel::prelude::*;

impl<'a> Request<'a> {
    /// RDMA WRITE: the first packet's RETH names the target, checked whole for remote write
    /// access ([`Self::write_start`]); each packet's payload is written at the message's place
    /// ([`Self::write_payload`]); the last one with immediate data consumes a receive WQE
    /// ([`Self::write_end`]).
    pub(super) fn write(&self, mut st: RecvGuard<'a>, out: &mut Outbox) -> Stage<'a> {
        if self.h.info.position.starts_message() {
            st = self.write_start(st, out)?;
        }
        st = self.write_payload(st, out)?;
        if self.h.info.position.ends_message() {
            st = self.write_end(st, out)?;
        }
        Ok(st)
    }

    /// The first packet of a WRITE: the RETH's rkey must give remote write access to the whole
    /// range (else the NAK the key check chose); a zero-length WRITE needs no key.
    fn write_start(&self, mut st: RecvGuard<'a>, out: &mut Outbox) -> Stage<'a> {
        let Some(reth) = self.h.headers.reth else {
            return Err(DropReason::Malformed.into());
        };
        if reth.dma_len != 0 {
            let len = u64::from(reth.dma_len);
            let target = rkey::resolve(
                self.qp,
                self.snap,
                reth.rkey,
                ib::Access::RemoteWrite.into(),
                reth.va,
                len,
            );
            if let Err(s) = target {
                self.nak(st, out, s);
                return Err(DropReason::BadRkey.into());
            }
        }
        st.write = Some(WriteProgress {
            rkey: reth.rkey,
            va: reth.va,
            remaining: reth.dma_len,
            length: reth.dma_len,
        });
        Ok(st)
    }

    /// A WRITE packet's payload, written at the message's place. More payload than the RETH
    /// announced, or a last packet that leaves some of it unwritten, is a length error (C9-94,
    /// answered as rxe does); a key invalidated since the first packet, a remote access error.
    fn write_payload(&self, mut st: RecvGuard<'a>, out: &mut Outbox) -> Stage<'a> {
        let (qp, snap, payload) = (self.qp, self.snap, self.payload);
        let ends = self.h.info.position.ends_message();
        let Some(w) = st.write.as_mut() else {
            return Err(DropReason::OpcodeSequence.into());
        };
        let len = payload.len();
        if len > w.remaining as usize || (ends && len != w.remaining as usize) {
            let (status, nak) = (WcStatus::RemInvReqErr, Aeth::NAK_INVALID_REQUEST);
            return Err(self.fail_message(st, out, status, nak, DropReason::LengthError));
        }
        if len == 0 {
            return Ok(st);
        }
        // The range was resolved whole at the first packet (so `va + len` cannot wrap there);
        // it is resolved again per packet as the key may have been invalidated.
        let rest = u64::from(w.remaining);
        let r = rkey::resolve(
            qp,
            snap,
            w.rkey,
            ib::Access::RemoteWrite.into(),
            w.va,
            len as u64,
        )
        .map_err(|_| EFAULT)
        .and_then(|t| {
            let r = t.mr.write(t.va, payload);
            let a = Access {
                va: t.va,
                need: len as u64,
                ahead: rest,
                write: true,
            };
            odp::check(qp, Side::Recv, &t.mr, a, r)
        });
        match (r, w.va.checked_add(len as u64)) {
            // A page is being faulted in: the packet is handled again (its first packet sets
            // the progress up again; nothing advanced).
            (Err(e), _) if e == EAGAIN => Err(Stop::Handled),
            (Ok(()), Some(next)) => {
                w.va = next;
                w.remaining -= len as u32;
                Ok(st)
            }
            _ => {
                let (status, nak) = (WcStatus::RemAccessErr, Aeth::NAK_REMOTE_ACCESS_ERROR);
                Err(self.fail_message(st, out, status, nak, DropReason::BadRkey))
            }
        }
    }

    /// The last packet of a WRITE: with immediate data it consumes a receive WQE (none: RNR)
    /// and completes it with the message's length.
    fn write_end(&self, mut st: RecvGuard<'a>, out: &mut Outbox) -> Stage<'a> {
        let (qp, snap) = (self.qp, self.snap);
        let total = st.write.take().map_or(0, |w| w.length);
        let Some(i) = self.h.headers.immdt else {
            return Ok(st);
        };
        let wr_id;
        (st, wr_id, _) = self.take_wqe(st, out)?;
        let opcode = WcOpcode::RecvRdmaWithImm;
        let c =
            Cqe::received(wr_id, opcode, total, snap.qpn, snap.dest_qpn).with_imm(imm_ex(i.imm));
        complete_recv(qp, &c, self.h.headers.bth.solicited);
        Ok(st)
    }
}
