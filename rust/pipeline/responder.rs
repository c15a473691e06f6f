// SPDX-License-Identifier: GPL-2.0

//! The responder: executes the requests that arrive for a QP (SEND into receive WQEs, RDMA
//! WRITE, RDMA READ here; atomics, ATOMIC WRITE and FLUSH in [`atomic`]) after checking PSN
//! order, opcode sequence, keys, rights and bounds. What it sends back is in [`reply`].

mod atomic;
mod reply;

pub(crate) use reply::{
    continue_read,
    flush_ack, //
};

use super::{
    mem,
    odp::{
        self,
        Access,
        Side, //
    },
    rkey,
    state::{
        ReadOut,
        RecvProgress,
        RecvState,
        Resource,
        Snapshot,
        TakenRecv,
        WriteProgress, //
    },
    DropReason, Outbox,
};
use crate::{
    counters::Counter,
    cq::RrxeCq,
    device::RrxeDevice,
    ib::Qp,
    mr::{
        ACCESS_REMOTE_READ,
        ACCESS_REMOTE_WRITE, //
    },
    proto::{
        cqe::{
            Cqe,
            WcFlags,
            WcOpcode,
            WcStatus, //
        },
        hdr::Aeth,
        opcode::{
            OpKind,
            Service, //
        },
        packet::ParsedHeaders,
        qp_state::{
            QpState,
            QpType, //
        },
        seq::{
            self,
            RespPsn, //
        },
        wqe,
    },
};
use kernel::prelude::*;

/// The responder state, locked.
type RecvGuard<'a> = kernel::sync::lock::Guard<'a, RecvState, crate::sync::SpinLockIrqBackend>;

/// The GRH area at the start of a UD receive buffer.
pub(crate) const GRH_LEN: usize = 40;

/// Whether the QP's state lets it receive.
fn can_receive(s: QpState) -> bool {
    matches!(s, QpState::Rtr | QpState::Rts | QpState::Sqd)
}

/// Writes a receive completion.
fn complete_recv(qp: &Qp<RrxeDevice>, c: &Cqe, solicited: bool) {
    if c.status == WcStatus::Success.to_raw() {
        qp.device().count(Counter::RdmaRecvs);
    }
    if let Some(cq) = qp.recv_cq() {
        let _ = RrxeCq::push(cq, c, qp.handle(), solicited);
    }
}

/// Completes receive WQE `wr_id` with the error `status`.
fn fail_recv(qp: &Qp<RrxeDevice>, snap: &Snapshot, wr_id: u64, status: WcStatus) {
    let c = Cqe {
        wr_id,
        status: status.to_raw(),
        opcode: WcOpcode::Recv.to_raw(),
        qp_num: snap.qpn,
        port_num: 1,
        ..Cqe::default()
    };
    complete_recv(qp, &c, false);
}

/// Takes the next receive WQE into `st` (its SGEs into `st.sges`); `None` when none is
/// posted. A malformed one is consumed and reported, never skipped silently.
pub(super) fn take_recv(qp: &Qp<RrxeDevice>, st: &mut RecvState) -> Option<TakenRecv> {
    // A WQE the direct loopback path took and then left to packets.
    if let Some(taken) = st.direct_recv.take() {
        return Some(taken);
    }
    let RecvState { slot, sges, .. } = st;
    let max_sge = qp.rq_take(slot)?;
    let wr_id = wqe::wr_id(slot);
    let Ok(r) = wqe::parse_recv_wqe(slot, max_sge) else {
        return Some(TakenRecv::Malformed(wr_id));
    };
    sges.clear();
    for i in 0..r.num_sge {
        let pushed = r.sge(slot, i).map(|s| sges.push_within_capacity(s));
        if !matches!(pushed, Some(Ok(()))) {
            return Some(TakenRecv::Malformed(wr_id));
        }
    }
    Some(TakenRecv::Wqe(r.wr_id, r.length))
}

/// Ends the message in progress without finishing it. The receive WQE a SEND was filling
/// completes with `fail` when given (RC: the requester is NAKed, the message will not be
/// retried), else is kept for the next message (UC loses the message, not the WQE), as C rxe
/// does.
fn abandon(qp: &Qp<RrxeDevice>, snap: &Snapshot, st: &mut RecvState, fail: Option<WcStatus>) {
    st.write = None;
    st.last_op = None;
    let Some(r) = st.recv.take() else {
        return;
    };
    if let Some(status) = fail {
        fail_recv(qp, snap, r.wr_id, status);
    } else {
        // Its SGEs are still in `st.sges`: `take_recv` hands it out next.
        st.direct_recv = Some(TakenRecv::Wqe(r.wr_id, r.length));
    }
}

/// A malformed receive WQE: completes it with `IB_WC_LOC_QP_OP_ERR`, answers an RC request
/// with a remote operational error NAK, and reports the drop that moves the QP to ERR (as a
/// malformed send WQE does), instead of consuming it silently.
fn bad_recv(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: RecvGuard<'_>,
    wr_id: u64,
    out: &mut Outbox,
) -> DropReason {
    if snap.qp_type == QpType::Rc {
        reply::nak(qp, snap, st, Aeth::NAK_REMOTE_OP_ERROR, out);
    } else {
        drop(st);
    }
    fail_recv(qp, snap, wr_id, WcStatus::LocQpOpErr);
    DropReason::BadRecvWqe
}

/// The immediate data as the completion carries it (wire byte order in memory).
fn imm_ex(imm: u32) -> u32 {
    u32::from_le_bytes(imm.to_be_bytes())
}

/// Handles a request packet for `qp`. `grh` is the GRH area for UD receives.
pub(crate) fn on_request(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    h: &ParsedHeaders,
    payload: &[u8],
    grh: &[u8; GRH_LEN],
    out: &mut Outbox,
) -> Result<(), DropReason> {
    if !can_receive(snap.state) {
        return Err(DropReason::QpState);
    }
    match (snap.qp_type, h.info.service) {
        (QpType::Rc, Service::Rc) | (QpType::Uc, Service::Uc) => {
            connected(qp, snap, h, payload, out)
        }
        (QpType::Ud | QpType::Gsi, Service::Ud) => datagram(qp, snap, h, payload, grh),
        _ => Err(DropReason::OpcodeForQpType),
    }
}

/// A UD SEND.
fn datagram(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    h: &ParsedHeaders,
    payload: &[u8],
    grh: &[u8; GRH_LEN],
) -> Result<(), DropReason> {
    let deth = h.headers.deth.ok_or(DropReason::Malformed)?;
    let qkey_ok = if snap.qp_type == QpType::Gsi {
        deth.qkey == crate::proto::hdr::GSI_QKEY
    } else {
        deth.qkey == snap.qkey
    };
    if !qkey_ok {
        return Err(DropReason::BadQkey);
    }
    let mut st = qp.pipe().recv.lock();
    let (wr_id, length) = match take_recv(qp, &mut st) {
        Some(TakenRecv::Wqe(wr_id, length)) => (wr_id, length),
        None => return Err(DropReason::NoReceiveWqe),
        Some(TakenRecv::Malformed(wr_id)) => {
            drop(st);
            fail_recv(qp, snap, wr_id, WcStatus::LocQpOpErr);
            return Err(DropReason::BadRecvWqe);
        }
    };
    let total = GRH_LEN + payload.len();
    let mut c = Cqe {
        wr_id,
        opcode: WcOpcode::Recv.to_raw(),
        qp_num: snap.qpn,
        src_qp: deth.src_qpn,
        port_num: 1,
        pkey_index: 0,
        ..Cqe::default()
    };
    c.wc_flags.0 |= WcFlags::GRH;
    if (length as usize) < total {
        c.status = WcStatus::LocLenErr.to_raw();
    } else {
        let r = mem::scatter(qp, Side::Recv, snap, &st.sges, 0, grh)
            .and_then(|()| mem::scatter(qp, Side::Recv, snap, &st.sges, GRH_LEN as u32, payload));
        c.status = match r {
            Ok(()) => WcStatus::Success.to_raw(),
            Err(e) if e == EAGAIN => {
                // A page is being faulted in: the WQE goes back, the packet waits for it.
                st.direct_recv = Some(TakenRecv::Wqe(wr_id, length));
                return Ok(());
            }
            Err(_) => WcStatus::LocProtErr.to_raw(),
        };
        c.byte_len = total as u32;
    }
    if let Some(i) = h.headers.immdt {
        c.ex = imm_ex(i.imm);
        c.wc_flags.0 |= WcFlags::WITH_IMM;
    }
    drop(st);
    qp.device().count_recv(payload.len());
    let network = if grh[20] >> 4 == 4 { 4 } else { 6 };
    if c.status == WcStatus::Success.to_raw() {
        qp.device().count(Counter::RdmaRecvs);
    }
    if let Some(cq) = qp.recv_cq() {
        let _ = RrxeCq::push_net(cq, &c, qp.handle(), h.headers.bth.solicited, network);
    }
    Ok(())
}

/// An RC or UC request.
fn connected(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    h: &ParsedHeaders,
    payload: &[u8],
    out: &mut Outbox,
) -> Result<(), DropReason> {
    let rc = snap.qp_type == QpType::Rc;
    let bth = h.headers.bth;
    let psn = bth.psn;
    let mut st = qp.pipe().recv.lock();
    match seq::classify_request_psn(psn, st.epsn) {
        RespPsn::Expected => st.nak_sent = false,
        RespPsn::Duplicate if rc => {
            qp.device().count_duplicate();
            return reply::duplicate(qp, snap, st, h, out);
        }
        RespPsn::OutOfSequence if rc => {
            qp.device().count_out_of_seq();
            if !st.nak_sent {
                st.nak_sent = true;
                let (msn, epsn) = (st.msn, st.epsn);
                drop(st);
                reply::ack(qp, snap, msn, epsn, Aeth::NAK_PSN_SEQ_ERROR, out);
            }
            return Err(DropReason::PsnOutOfWindow);
        }
        // UC: a packet from behind the expected PSN is stale (or forged): only PSNs ahead of it
        // can resynchronise the responder.
        RespPsn::Duplicate => return Err(DropReason::Duplicate),
        _ => {
            // UC: a gap loses the message in progress (not its receive WQE); resynchronise on
            // a new first packet.
            abandon(qp, snap, &mut st, None);
            if !h.info.position.starts_message() {
                st.epsn = psn.next();
                return Err(DropReason::PsnOutOfWindow);
            }
        }
    }
    if seq::check_request_sequence(st.last_op, bth.opcode).is_err() {
        if rc {
            let (msn, epsn) = (st.msn, st.epsn);
            drop(st);
            reply::ack(qp, snap, msn, epsn, Aeth::NAK_INVALID_REQUEST, out);
            return Err(DropReason::OpcodeSequence);
        }
        // UC: a new message while one is in progress drops the old one (its WQE is used for
        // the new one); any other packet out of sequence is dropped.
        if !h.info.position.starts_message() {
            return Err(DropReason::OpcodeSequence);
        }
        abandon(qp, snap, &mut st, None);
    }
    let ends = h.info.position.ends_message();
    let starts = h.info.position.starts_message();
    let nak = |st: RecvGuard<'_>, out: &mut Outbox, syndrome: u8| {
        if rc {
            reply::nak(qp, snap, st, syndrome, out);
        }
    };
    // C9-93: the payload length matches the packet's place in the message.
    if matches!(h.info.kind, OpKind::Send | OpKind::Write)
        && !seq::payload_fits_position(h.info.position, payload.len(), snap.mtu)
    {
        abandon(qp, snap, &mut st, rc.then_some(WcStatus::RemInvReqErr));
        nak(st, out, Aeth::NAK_INVALID_REQUEST);
        return Err(DropReason::LengthError);
    }
    // C9-94: no RDMA message is longer than 2^31 bytes (a longer READ would also take more
    // PSNs than the window has).
    if matches!(h.info.kind, OpKind::Write | OpKind::ReadRequest)
        && h.headers
            .reth
            .is_some_and(|r| r.dma_len > wqe::MAX_MSG_SIZE)
    {
        abandon(qp, snap, &mut st, rc.then_some(WcStatus::RemInvReqErr));
        nak(st, out, Aeth::NAK_INVALID_REQUEST);
        return Err(DropReason::LengthError);
    }
    let mut psns = 1;
    match h.info.kind {
        OpKind::Send => {
            if starts {
                match take_recv(qp, &mut st) {
                    Some(TakenRecv::Wqe(wr_id, length)) => {
                        st.recv = Some(RecvProgress {
                            wr_id,
                            offset: 0,
                            length,
                        })
                    }
                    None => return Err(rnr(qp, snap, st, rc, out)),
                    Some(TakenRecv::Malformed(wr_id)) => {
                        return Err(bad_recv(qp, snap, st, wr_id, out))
                    }
                }
            }
            let (wr_id, offset, length) = match &st.recv {
                Some(r) => (r.wr_id, r.offset, r.length),
                None => return Err(DropReason::OpcodeSequence),
            };
            let fits = (offset as usize).saturating_add(payload.len()) <= length as usize;
            let r = if fits {
                match mem::scatter(qp, Side::Recv, snap, &st.sges, offset, payload) {
                    Err(e) if e == EAGAIN => {
                        // A page is being faulted in: the packet waits and is handled again,
                        // with the receive WQE it started handed back (nothing moved).
                        if starts {
                            st.direct_recv =
                                st.recv.take().map(|r| TakenRecv::Wqe(r.wr_id, r.length));
                        }
                        return Ok(());
                    }
                    r => r.map_err(|_| ()),
                }
            } else {
                Err(())
            };
            if r.is_err() {
                let status = if fits {
                    WcStatus::LocProtErr
                } else {
                    WcStatus::LocLenErr
                };
                abandon(qp, snap, &mut st, Some(status));
                nak(st, out, Aeth::NAK_INVALID_REQUEST);
                return Err(DropReason::LengthError);
            }
            let total = offset + payload.len() as u32;
            if let Some(r) = st.recv.as_mut() {
                r.offset = total;
            }
            if ends {
                st.recv = None;
                let mut c = Cqe {
                    wr_id,
                    opcode: WcOpcode::Recv.to_raw(),
                    byte_len: total,
                    qp_num: snap.qpn,
                    src_qp: snap.dest_qpn,
                    port_num: 1,
                    ..Cqe::default()
                };
                if let Some(i) = h.headers.immdt {
                    c.ex = imm_ex(i.imm);
                    c.wc_flags.0 |= WcFlags::WITH_IMM;
                }
                if let Some(i) = h.headers.ieth {
                    let on = Some(qp.mw_token());
                    let _ = rkey::invalidate(qp.device(), i.rkey, snap.pd, on);
                    c.ex = i.rkey;
                    c.wc_flags.0 |= WcFlags::WITH_INV;
                }
                complete_recv(qp, &c, bth.solicited);
            }
        }
        OpKind::Write => {
            if starts {
                let Some(reth) = h.headers.reth else {
                    return Err(DropReason::Malformed);
                };
                if reth.dma_len != 0 {
                    let len = u64::from(reth.dma_len);
                    let target =
                        rkey::resolve(qp, snap, reth.rkey, ACCESS_REMOTE_WRITE, reth.va, len);
                    if let Err(s) = target {
                        nak(st, out, s);
                        return Err(DropReason::BadRkey);
                    }
                }
                st.write = Some(WriteProgress {
                    rkey: reth.rkey,
                    va: reth.va,
                    remaining: reth.dma_len,
                    length: reth.dma_len,
                });
            }
            let Some(w) = st.write.as_mut() else {
                return Err(DropReason::OpcodeSequence);
            };
            // More payload than the RETH announced, or a last packet that leaves some of it
            // unwritten: a length error (C9-94), answered as rxe does.
            let len = payload.len();
            if len > w.remaining as usize || (ends && len != w.remaining as usize) {
                abandon(qp, snap, &mut st, rc.then_some(WcStatus::RemInvReqErr));
                nak(st, out, Aeth::NAK_INVALID_REQUEST);
                return Err(DropReason::LengthError);
            }
            if len != 0 {
                // The range was resolved whole at the first packet (so `va + len` cannot wrap
                // there); it is resolved again per packet as the key may have been invalidated.
                let rest = u64::from(w.remaining);
                let r = rkey::resolve(qp, snap, w.rkey, ACCESS_REMOTE_WRITE, w.va, len as u64)
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
                let next = w.va.checked_add(len as u64);
                match (r, next) {
                    // A page is being faulted in: the packet is handled again (its first
                    // packet sets the progress up again; nothing advanced).
                    (Err(e), _) if e == EAGAIN => return Ok(()),
                    (Ok(()), Some(next)) => {
                        w.va = next;
                        w.remaining -= len as u32;
                    }
                    _ => {
                        abandon(qp, snap, &mut st, rc.then_some(WcStatus::RemAccessErr));
                        nak(st, out, Aeth::NAK_REMOTE_ACCESS_ERROR);
                        return Err(DropReason::BadRkey);
                    }
                }
            }
            if ends {
                let total = st.write.take().map_or(0, |w| w.length);
                if let Some(i) = h.headers.immdt {
                    let wr_id = match take_recv(qp, &mut st) {
                        Some(TakenRecv::Wqe(wr_id, _)) => wr_id,
                        None => return Err(rnr(qp, snap, st, rc, out)),
                        Some(TakenRecv::Malformed(wr_id)) => {
                            return Err(bad_recv(qp, snap, st, wr_id, out))
                        }
                    };
                    let c = Cqe {
                        wr_id,
                        opcode: WcOpcode::RecvRdmaWithImm.to_raw(),
                        byte_len: total,
                        ex: imm_ex(i.imm),
                        wc_flags: WcFlags(WcFlags::WITH_IMM),
                        qp_num: snap.qpn,
                        src_qp: snap.dest_qpn,
                        port_num: 1,
                        ..Cqe::default()
                    };
                    complete_recv(qp, &c, bth.solicited);
                }
            }
        }
        OpKind::ReadRequest if rc => {
            let Some(reth) = h.headers.reth else {
                return Err(DropReason::Malformed);
            };
            let len = u64::from(reth.dma_len);
            if let Err(s) = rkey::resolve(qp, snap, reth.rkey, ACCESS_REMOTE_READ, reth.va, len) {
                nak(st, out, s);
                return Err(DropReason::BadRkey);
            }
            let npkts = seq::packets_for(reth.dma_len, snap.mtu).unwrap_or(1);
            reply::save_resource(
                &mut st,
                Resource::Read {
                    psn,
                    npkts,
                    va: reth.va,
                    rkey: reth.rkey,
                    len: reth.dma_len,
                },
            );
            st.read = Some(ReadOut {
                rkey: reth.rkey,
                va: reth.va,
                len: reth.dma_len,
                psn,
                npkts,
                sent: 0,
            });
            psns = npkts;
        }
        OpKind::CompareSwap | OpKind::FetchAdd if rc => {
            return atomic::compare_swap_or_fetch_add(qp, snap, st, h, out)
        }
        OpKind::AtomicWrite if rc => return atomic::atomic_write(qp, snap, st, h, payload, out),
        OpKind::Flush if rc => return atomic::flush(qp, snap, st, h, payload, out),
        _ => {
            nak(st, out, Aeth::NAK_INVALID_REQUEST);
            return Err(DropReason::OpcodeForQpType);
        }
    }
    st.epsn = psn.wrapping_add(psns);
    st.reack.executed(h.info.kind, psn);
    st.last_op = if ends { None } else { Some(bth.opcode) };
    if ends {
        st.msn = st.msn.wrapping_add(1);
    }
    if rc && bth.ack_req && h.info.kind != OpKind::ReadRequest {
        st.ack_due = Some(psn);
    }
    drop(st);
    qp.device().count_recv(payload.len());
    Ok(())
}

/// No receive WQE for a request that needs one: an RNR NAK (RC) with the QP's
/// `min_rnr_timer`, or a drop (UC).
fn rnr(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: RecvGuard<'_>,
    rc: bool,
    out: &mut Outbox,
) -> DropReason {
    qp.device().count_rnr_sent();
    if rc {
        let (msn, epsn) = (st.msn, st.epsn);
        drop(st);
        reply::ack(qp, snap, msn, epsn, 0x20 | (snap.min_rnr_timer & 0x1f), out);
    }
    DropReason::NoReceiveWqe
}
