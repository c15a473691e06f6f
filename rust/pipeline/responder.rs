// SPDX-License-Identifier: GPL-2.0

//! The responder: executes the requests that arrive for a QP (SEND into receive WQEs, RDMA
//! WRITE, RDMA READ, atomics, ATOMIC WRITE, FLUSH) after checking PSN order, opcode sequence, keys, rights and
//! bounds; answers RC requests with coalesced ACKs, NAKs, READ responses and atomic ACKs, and
//! replays READs and atomics for duplicates.

use super::{
    mem, rkey,
    state::{
        ReadOut,
        RecvProgress,
        RecvState,
        Resource,
        Snapshot,
        WriteProgress, //
    },
    xmit, DropReason, Outbox, TxItem,
};
use crate::{
    counters::Counter,
    cq::RrxeCq,
    device::RrxeDevice,
    ib::Qp,
    mr::{
        ACCESS_FLUSH_GLOBAL,
        ACCESS_FLUSH_PERSISTENT,
        ACCESS_REMOTE_ATOMIC,
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
        hdr::{
            Aeth,
            AtomicAckEth,
            Bth,
            DEFAULT_PKEY, //
        },
        opcode::{
            OpKind,
            Opcode,
            Service, //
        },
        packet::{
            pad_for,
            ParsedHeaders,
            TransportHeaders, //
        },
        psn::Psn,
        qp_state::{
            QpState,
            QpType, //
        },
        seq::{
            self,
            DuplicateAction,
            RespPsn, //
        },
        wqe,
    },
};
use core::sync::atomic::Ordering::SeqCst;
use kernel::prelude::*;

/// The GRH area at the start of a UD receive buffer.
pub(crate) const GRH_LEN: usize = 40;

/// Whether the QP's state lets it receive.
fn can_receive(s: QpState) -> bool {
    matches!(s, QpState::Rtr | QpState::Rts | QpState::Sqd)
}

/// Builds a response packet (ACK, NAK, READ response, atomic ACK) to the QP's peer.
fn response(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    opcode: Opcode,
    psn: Psn,
    (aeth, atomic): (Option<Aeth>, Option<AtomicAckEth>),
    payload: usize,
    fill: impl FnOnce(&mut [u8]) -> Result,
) -> Result<TxItem> {
    let mut h = TransportHeaders::new(Bth {
        opcode,
        solicited: false,
        mig_req: false,
        pad: pad_for(payload),
        pkey: DEFAULT_PKEY,
        fecn: false,
        becn: false,
        dest_qpn: snap.dest_qpn,
        ack_req: false,
        psn,
    });
    h.aeth = aeth;
    h.atomic_ack_eth = atomic;
    let skb = xmit::build(qp.device(), &h, payload, fill)?;
    Ok(TxItem {
        skb,
        av: snap.av,
        src_port: snap.src_port,
    })
}

/// Queues an ACK or NAK with `syndrome` for `psn`.
fn ack(qp: &Qp<RrxeDevice>, snap: &Snapshot, msn: u32, psn: Psn, syndrome: u8, out: &mut Outbox) {
    let aeth = Aeth {
        syndrome,
        msn: msn & 0xff_ffff,
    };
    if let Ok(item) = response(qp, snap, Opcode::RC_ACK, psn, (Some(aeth), None), 0, |_| {
        Ok(())
    }) {
        out.push(item);
    }
}

/// Sends the coalesced ACK of this pass, if one is due.
pub(crate) fn flush_ack(qp: &Qp<RrxeDevice>, snap: &Snapshot, out: &mut Outbox) {
    let mut st = qp.pipe().recv.lock();
    if let Some(psn) = st.ack_due.take() {
        let msn = st.msn;
        drop(st);
        ack(qp, snap, msn, psn, Aeth::ACK_UNLIMITED, out);
    }
}

/// Sends more responses of the READ in progress; `true` while some remain.
pub(crate) fn continue_read(qp: &Qp<RrxeDevice>, snap: &Snapshot, out: &mut Outbox) -> bool {
    let mut st = qp.pipe().recv.lock();
    while !out.is_full() {
        let msn = st.msn;
        let Some(r) = st.read.as_mut() else {
            return false;
        };
        if r.sent >= r.npkts {
            st.read = None;
            return false;
        }
        let mtu = snap.mtu;
        let off = r.sent.saturating_mul(mtu);
        let n = r.len.saturating_sub(off).min(mtu) as usize;
        let Some(opcode) = seq::read_response_opcode(r.sent, r.npkts) else {
            st.read = None;
            return false;
        };
        let info_has_aeth = opcode != Opcode::RC_READ_RESPONSE_MIDDLE;
        let aeth = info_has_aeth.then_some(Aeth {
            syndrome: Aeth::ACK_UNLIMITED,
            msn: msn & 0xff_ffff,
        });
        let psn = r.psn.wrapping_add(r.sent);
        let va = r.va + u64::from(off);
        let rkey = r.rkey;
        r.sent += 1;
        let item = rkey::resolve(qp, snap, rkey, ACCESS_REMOTE_READ, va, n as u64)
            .map_err(|_| EFAULT)
            .and_then(|t| {
                response(qp, snap, opcode, psn, (aeth, None), n, |buf| {
                    t.mr.read(t.va, buf)
                })
            });
        match item {
            Ok(item) => out.push(item),
            Err(_) => {
                // The memory vanished under the READ: answer with a remote access NAK.
                st.read = None;
                let msn = st.msn;
                drop(st);
                ack(qp, snap, msn, psn, Aeth::NAK_REMOTE_ACCESS_ERROR, out);
                return false;
            }
        }
    }
    st.read.is_some()
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

/// Takes the next receive WQE into `st` (its SGEs into `st.sges`). `None` when there is none.
fn take_recv(qp: &Qp<RrxeDevice>, st: &mut RecvState) -> Option<(u64, u32)> {
    // A WQE the direct loopback path took and then left to packets.
    if let Some(taken) = st.direct_recv.take() {
        return Some(taken);
    }
    let RecvState { slot, sges, .. } = st;
    let max_sge = qp.rq_take(slot)?;
    let r = wqe::parse_recv_wqe(slot, max_sge).ok()?;
    sges.clear();
    for i in 0..r.num_sge {
        let s = r.sge(slot, i)?;
        sges.push_within_capacity(s).ok()?;
    }
    Some((r.wr_id, r.length))
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
    let (wr_id, length) = take_recv(qp, &mut st).ok_or(DropReason::NoReceiveWqe)?;
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
        let r = mem::scatter(qp.device(), snap, &st.sges, 0, grh)
            .and_then(|()| mem::scatter(qp.device(), snap, &st.sges, GRH_LEN as u32, payload));
        c.status = match r {
            Ok(()) => WcStatus::Success.to_raw(),
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
            return duplicate(qp, snap, st, h, out);
        }
        RespPsn::OutOfSequence if rc => {
            qp.device().count_out_of_seq();
            if !st.nak_sent {
                st.nak_sent = true;
                let (msn, epsn) = (st.msn, st.epsn);
                drop(st);
                ack(qp, snap, msn, epsn, Aeth::NAK_PSN_SEQ_ERROR, out);
            }
            return Err(DropReason::PsnOutOfWindow);
        }
        _ => {
            // UC: a gap loses the message in progress; resynchronise on a new first packet.
            if !h.info.position.starts_message() {
                st.epsn = psn.next();
                st.recv = None;
                st.write = None;
                st.last_op = None;
                return Err(DropReason::PsnOutOfWindow);
            }
            st.recv = None;
            st.write = None;
            st.last_op = None;
        }
    }
    if seq::check_request_sequence(st.last_op, bth.opcode).is_err() {
        if rc {
            let (msn, epsn) = (st.msn, st.epsn);
            drop(st);
            ack(qp, snap, msn, epsn, Aeth::NAK_INVALID_REQUEST, out);
        }
        return Err(DropReason::OpcodeSequence);
    }
    let ends = h.info.position.ends_message();
    let starts = h.info.position.starts_message();
    let nak = |st: kernel::sync::lock::Guard<'_, RecvState, crate::sync::SpinLockIrqBackend>,
               out: &mut Outbox,
               syndrome: u8| {
        if rc {
            let (msn, epsn) = (st.msn, st.epsn);
            drop(st);
            ack(qp, snap, msn, epsn, syndrome, out);
        }
    };
    let mut psns = 1;
    match h.info.kind {
        OpKind::Send => {
            if starts {
                match take_recv(qp, &mut st) {
                    Some((wr_id, length)) => {
                        st.recv = Some(RecvProgress {
                            wr_id,
                            offset: 0,
                            length,
                        })
                    }
                    None => return Err(rnr(qp, snap, st, rc, out)),
                }
            }
            let (wr_id, offset, length) = match &st.recv {
                Some(r) => (r.wr_id, r.offset, r.length),
                None => return Err(DropReason::OpcodeSequence),
            };
            let fits = (offset as usize).saturating_add(payload.len()) <= length as usize;
            let r = if fits {
                mem::scatter(qp.device(), snap, &st.sges, offset, payload).map_err(|_| ())
            } else {
                Err(())
            };
            if r.is_err() {
                let status = if fits {
                    WcStatus::LocProtErr
                } else {
                    WcStatus::LocLenErr
                };
                st.recv = None;
                st.last_op = None;
                let c = Cqe {
                    wr_id,
                    status: status.to_raw(),
                    opcode: WcOpcode::Recv.to_raw(),
                    qp_num: snap.qpn,
                    port_num: 1,
                    ..Cqe::default()
                };
                complete_recv(qp, &c, false);
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
                st.write = (reth.dma_len != 0).then_some(WriteProgress {
                    rkey: reth.rkey,
                    va: reth.va,
                    remaining: reth.dma_len,
                });
            }
            if !payload.is_empty() {
                let ok = match st.write.as_mut() {
                    Some(w) if payload.len() <= w.remaining as usize => {
                        let len = payload.len() as u64;
                        let r = rkey::resolve(qp, snap, w.rkey, ACCESS_REMOTE_WRITE, w.va, len)
                            .map_err(|_| EFAULT)
                            .and_then(|t| t.mr.write(t.va, payload));
                        w.va += payload.len() as u64;
                        w.remaining -= payload.len() as u32;
                        r.is_ok()
                    }
                    _ => false,
                };
                if !ok {
                    st.write = None;
                    st.last_op = None;
                    nak(st, out, Aeth::NAK_REMOTE_ACCESS_ERROR);
                    return Err(DropReason::LengthError);
                }
            }
            if ends {
                let total = h.headers.reth.map_or(0, |r| r.dma_len);
                st.write = None;
                if let Some(i) = h.headers.immdt {
                    let Some((wr_id, _)) = take_recv(qp, &mut st) else {
                        return Err(rnr(qp, snap, st, rc, out));
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
            save_resource(
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
            let Some(a) = h.headers.atomic_eth else {
                return Err(DropReason::Malformed);
            };
            if a.va % 8 != 0 {
                nak(st, out, Aeth::NAK_INVALID_REQUEST);
                return Err(DropReason::Malformed);
            }
            let t = match rkey::resolve(qp, snap, a.rkey, ACCESS_REMOTE_ATOMIC, a.va, 8) {
                Ok(t) => t,
                Err(s) => {
                    nak(st, out, s);
                    return Err(DropReason::BadRkey);
                }
            };
            let cas = h.info.kind == OpKind::CompareSwap;
            let r = t.mr.atomic_u64(t.va, |w| {
                if cas {
                    match w.compare_exchange(a.compare, a.swap_add, SeqCst, SeqCst) {
                        Ok(v) | Err(v) => v,
                    }
                } else {
                    w.fetch_add(a.swap_add, SeqCst)
                }
            });
            let Ok(orig) = r else {
                nak(st, out, Aeth::NAK_REMOTE_ACCESS_ERROR);
                return Err(DropReason::BadRkey);
            };
            save_resource(&mut st, Resource::Atomic { psn, orig });
            st.msn = st.msn.wrapping_add(1);
            st.epsn = psn.next();
            st.last_op = None;
            let msn = st.msn;
            drop(st);
            atomic_ack(qp, snap, msn, psn, orig, out);
            qp.device().count_recv(0);
            return Ok(());
        }
        OpKind::AtomicWrite if rc => {
            // IBA oA19-28: exactly 8 bytes to an aligned address, written as one store.
            let Some(reth) = h.headers.reth else {
                return Err(DropReason::Malformed);
            };
            let Ok(value) = <[u8; 8]>::try_from(payload) else {
                nak(st, out, Aeth::NAK_INVALID_REQUEST);
                return Err(DropReason::LengthError);
            };
            if reth.dma_len != 8 || bth.pad != 0 || reth.va % 8 != 0 {
                nak(st, out, Aeth::NAK_INVALID_REQUEST);
                return Err(DropReason::LengthError);
            }
            let stored = rkey::resolve(qp, snap, reth.rkey, ACCESS_REMOTE_WRITE, reth.va, 8)
                .and_then(|t| {
                    t.mr.atomic_u64(t.va, |w| w.store(u64::from_ne_bytes(value), SeqCst))
                        .map_err(|_| Aeth::NAK_REMOTE_ACCESS_ERROR)
                });
            if let Err(s) = stored {
                nak(st, out, s);
                return Err(DropReason::BadRkey);
            }
            answer_with_empty_read(qp, snap, st, psn, payload.len(), out);
            return Ok(());
        }
        OpKind::Flush if rc => {
            let (Some(feth), Some(reth)) = (h.headers.feth, h.headers.reth) else {
                return Err(DropReason::Malformed);
            };
            let kind = feth.placement_type;
            let known = wqe::FLUSH_GLOBAL | wqe::FLUSH_PERSISTENT;
            let whole = match feth.selectivity {
                wqe::FLUSH_RANGE => false,
                wqe::FLUSH_MR => true,
                _ => {
                    nak(st, out, Aeth::NAK_INVALID_REQUEST);
                    return Err(DropReason::Malformed);
                }
            };
            if kind == 0 || kind & !known != 0 || !payload.is_empty() {
                nak(st, out, Aeth::NAK_INVALID_REQUEST);
                return Err(DropReason::Malformed);
            }
            let mut access = 0;
            if kind & wqe::FLUSH_GLOBAL != 0 {
                access |= ACCESS_FLUSH_GLOBAL;
            }
            if kind & wqe::FLUSH_PERSISTENT != 0 {
                access |= ACCESS_FLUSH_PERSISTENT;
            }
            let len = if whole { 0 } else { u64::from(reth.dma_len) };
            let flushed = rkey::resolve(qp, snap, reth.rkey, access, reth.va, len).and_then(|t| {
                t.mr.flush(t.va, len, whole)
                    .map_err(|_| Aeth::NAK_REMOTE_ACCESS_ERROR)
            });
            if let Err(s) = flushed {
                nak(st, out, s);
                return Err(DropReason::BadRkey);
            }
            answer_with_empty_read(qp, snap, st, psn, 0, out);
            return Ok(());
        }
        _ => {
            nak(st, out, Aeth::NAK_INVALID_REQUEST);
            return Err(DropReason::OpcodeForQpType);
        }
    }
    st.epsn = psn.wrapping_add(psns);
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
    st: kernel::sync::lock::Guard<'_, RecvState, crate::sync::SpinLockIrqBackend>,
    rc: bool,
    out: &mut Outbox,
) -> DropReason {
    qp.device().count_rnr_sent();
    if rc {
        let (msn, epsn) = (st.msn, st.epsn);
        drop(st);
        ack(qp, snap, msn, epsn, 0x20 | (snap.min_rnr_timer & 0x1f), out);
    }
    DropReason::NoReceiveWqe
}

fn atomic_ack(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    msn: u32,
    psn: Psn,
    orig: u64,
    out: &mut Outbox,
) {
    let aeth = Aeth {
        syndrome: Aeth::ACK_UNLIMITED,
        msn: msn & 0xff_ffff,
    };
    let item = response(
        qp,
        snap,
        Opcode::RC_ATOMIC_ACK,
        psn,
        (Some(aeth), Some(AtomicAckEth { orig })),
        0,
        |_| Ok(()),
    );
    if let Ok(item) = item {
        out.push(item);
    }
}

/// Finishes a FLUSH or ATOMIC WRITE at `psn`: keeps it for duplicates and answers with a
/// zero-length READ RESPONSE ONLY carrying the ACK (IBA oA19-14; what C rxe sends and expects).
fn answer_with_empty_read(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    mut st: kernel::sync::lock::Guard<'_, RecvState, crate::sync::SpinLockIrqBackend>,
    psn: Psn,
    received: usize,
    out: &mut Outbox,
) {
    save_resource(&mut st, Resource::Answered { psn });
    st.msn = st.msn.wrapping_add(1);
    st.epsn = psn.next();
    st.last_op = None;
    let msn = st.msn;
    drop(st);
    empty_read_response(qp, snap, msn, psn, out);
    qp.device().count_recv(received);
}

/// Queues a zero-length RDMA READ RESPONSE ONLY acknowledging `psn`.
fn empty_read_response(qp: &Qp<RrxeDevice>, snap: &Snapshot, msn: u32, psn: Psn, out: &mut Outbox) {
    let aeth = Aeth {
        syndrome: Aeth::ACK_UNLIMITED,
        msn: msn & 0xff_ffff,
    };
    let opcode = Opcode::RC_READ_RESPONSE_ONLY;
    if let Ok(item) = response(qp, snap, opcode, psn, (Some(aeth), None), 0, |_| Ok(())) {
        out.push(item);
    }
}

fn save_resource(st: &mut RecvState, r: Resource) {
    let n = st.resources.len();
    if n == 0 {
        return;
    }
    let at = st.res_next % n;
    st.resources[at] = Some(r);
    st.res_next = (at + 1) % n;
}

/// A duplicate RC request: SEND/WRITE are acknowledged again, READs re-executed from the
/// duplicate's PSN, atomics answered with the saved result.
fn duplicate(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    mut st: kernel::sync::lock::Guard<'_, RecvState, crate::sync::SpinLockIrqBackend>,
    h: &ParsedHeaders,
    out: &mut Outbox,
) -> Result<(), DropReason> {
    let psn = h.headers.bth.psn;
    match seq::duplicate_action(h.headers.bth.opcode) {
        Some(DuplicateAction::Reack) => {
            if h.headers.bth.ack_req {
                let (msn, last) = (st.msn, st.epsn.wrapping_sub(1));
                drop(st);
                ack(qp, snap, msn, last, Aeth::ACK_UNLIMITED, out);
            }
            Ok(())
        }
        Some(DuplicateAction::Replay) => {
            let found = st.resources.iter().flatten().copied().find(|r| match *r {
                Resource::Read { psn: p, npkts, .. } => crate::proto::psn::in_window(psn, p, npkts),
                Resource::Atomic { psn: p, .. } | Resource::Answered { psn: p } => p == psn,
            });
            match found {
                Some(Resource::Read {
                    psn: p,
                    npkts,
                    va,
                    rkey,
                    len,
                }) => {
                    if st.read.is_some() {
                        return Err(DropReason::Duplicate);
                    }
                    let whole = u64::from(len);
                    if rkey::resolve(qp, snap, rkey, ACCESS_REMOTE_READ, va, whole).is_err() {
                        return Err(DropReason::BadRkey);
                    }
                    st.read = Some(ReadOut {
                        rkey,
                        va,
                        len,
                        psn: p,
                        npkts,
                        sent: psn.distance_from(p),
                    });
                    Ok(())
                }
                Some(Resource::Atomic { orig, .. }) => {
                    let msn = st.msn;
                    drop(st);
                    atomic_ack(qp, snap, msn, psn, orig, out);
                    Ok(())
                }
                // Executed once already: only the answer is sent again (oA19-14, oA19-15).
                Some(Resource::Answered { .. }) => {
                    let msn = st.msn;
                    drop(st);
                    empty_read_response(qp, snap, msn, psn, out);
                    Ok(())
                }
                None => Err(DropReason::Duplicate),
            }
        }
        None => Err(DropReason::Duplicate),
    }
}
