// SPDX-License-Identifier: GPL-2.0

//! The responder: executes the requests that arrive for a QP (SEND into receive WQEs, RDMA
//! WRITE, RDMA READ here; atomics, ATOMIC WRITE and FLUSH in [`atomic`]) after checking PSN
//! order, opcode sequence, keys, rights and bounds. What it sends back is in [`reply`].

mod atomic;
mod connected;
mod kunit;
mod reorder;
mod reply;

pub(crate) use reorder::{
    clear as clear_store,
    held as kept_packets,
    keep,
    take_due,
    KeepAt,
    Store, //
};

pub(crate) use reply::{
    connection,
    continue_read,
    flush_ack,
    hold,
    read_in_progress,
    take_held, //
};

use super::{
    mem,
    odp::Side,
    state::{
        RecvState,
        Snapshot,
        TakenRecv, //
    },
    DropReason, Outbox,
};
use crate::{
    counters::Counter,
    device::RrxeDevice,
    ib::Qp,
    proto::{
        cqe::{
            Cqe,
            WcFlags,
            WcOpcode,
            WcStatus, //
        },
        hdr::Aeth,
        opcode::Service,
        packet::ParsedHeaders,
        qp_state::{
            QpState,
            QpType, //
        },
        wqe_parse,
    },
    verbs::cq::RrxeCq,
};
use kernel::prelude::*;

/// The responder state, locked.
type RecvGuard<'a> = kernel::sync::lock::Guard<'a, RecvState, crate::sync::SpinLockIrqBackend>;

/// Why a request ends before its last stage ([`connected`]).
enum Stop {
    /// A stage handled the packet in full: a duplicate answered again, an atomic, ATOMIC WRITE
    /// or FLUSH executed, or a page being faulted in (the packet is handled again once it is).
    Handled,
    /// The packet is dropped, after any NAK the stage sent.
    Dropped(DropReason),
    /// An RC request past a gap, to be kept for its turn ([`reorder`]), after any NAK; the
    /// connection it was found under.
    Keep(u32),
}

/// What became of a request the responder did not drop.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Received {
    /// Handled: executed, answered, or waiting for a page fault.
    Done,
    /// Past a gap: the caller keeps the packet for its turn ([`keep`]); it is dropped if it
    /// cannot.
    Keep(KeepAt),
}

impl From<DropReason> for Stop {
    fn from(r: DropReason) -> Self {
        Stop::Dropped(r)
    }
}

impl From<Result<(), DropReason>> for Stop {
    fn from(r: Result<(), DropReason>) -> Self {
        r.map_or_else(Stop::Dropped, |()| Stop::Handled)
    }
}

/// A stage's result: the responder state, still locked, for the next stage, or the end.
type Stage<'a, T = RecvGuard<'a>> = Result<T, Stop>;

/// The GRH area at the start of a UD receive buffer.
pub(crate) const GRH_LEN: usize = 40;

/// Whether the QP's state lets it receive.
fn can_receive(s: QpState) -> bool {
    matches!(s, QpState::Rtr | QpState::Rts | QpState::Sqd)
}

/// Writes a receive completion.
fn complete_recv(qp: &Qp<RrxeDevice>, c: &Cqe, solicited: bool) {
    if c.status == WcStatus::Success {
        qp.counts().inc(Counter::RdmaRecvs);
    }
    if let Some(cq) = qp.recv_cq() {
        super::after_push(qp, RrxeCq::push(cq, c, qp.handle(), solicited));
    }
}

/// Completes receive WQE `wr_id` with the error `status`.
fn fail_recv(qp: &Qp<RrxeDevice>, snap: &Snapshot, wr_id: u64, status: WcStatus) {
    let c = Cqe {
        status,
        ..Cqe::received(wr_id, WcOpcode::Recv, 0, snap.qpn, 0)
    };
    complete_recv(qp, &c, false);
}

/// Takes the next receive WQE into `st` (its SGEs into `st.sges`); `None` when none is
/// posted. A malformed one is consumed and reported, never skipped silently.
pub(super) fn take_recv(qp: &Qp<RrxeDevice>, st: &mut RecvState) -> Option<TakenRecv> {
    // After the move to ERR nothing is taken: the flush has returned what was posted.
    if !st.open {
        return None;
    }
    // A WQE the direct loopback path took and then left to packets.
    if let Some(taken) = st.direct_recv.take() {
        return Some(taken);
    }
    let RecvState { slot, sges, .. } = st;
    let max_sge = qp.rq_take(slot)?;
    let wr_id = wqe_parse::wr_id(slot);
    let Ok(r) = wqe_parse::parse_recv_wqe(slot, max_sge) else {
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
) -> Result<Received, DropReason> {
    if !can_receive(snap.state) {
        return Err(DropReason::QpState);
    }
    match (snap.qp_type, h.info.service) {
        (QpType::Rc, Service::Rc) | (QpType::Uc, Service::Uc) => {
            connected::Request::new(qp, snap, h, payload).handle(out)
        }
        (QpType::Ud | QpType::Gsi, Service::Ud) => {
            datagram(qp, snap, h, payload, grh).map(|()| Received::Done)
        }
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
    if !st.open {
        return Err(DropReason::QpState);
    }
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
    let mut c = Cqe::received(wr_id, WcOpcode::Recv, 0, snap.qpn, deth.src_qpn);
    c.wc_flags.0 |= WcFlags::GRH;
    if (length as usize) < total {
        c.status = WcStatus::LocLenErr;
    } else {
        let r = mem::scatter(qp, Side::Recv, snap, &st.sges, 0, grh)
            .and_then(|()| mem::scatter(qp, Side::Recv, snap, &st.sges, GRH_LEN as u32, payload));
        c.status = match r {
            Ok(()) => WcStatus::Success,
            Err(e) if e == EAGAIN => {
                // A page is being faulted in: the WQE goes back, the packet waits for it.
                st.direct_recv = Some(TakenRecv::Wqe(wr_id, length));
                return Ok(());
            }
            Err(_) => WcStatus::LocProtErr,
        };
        c.byte_len = total as u32;
    }
    if let Some(i) = h.headers.immdt {
        c = c.with_imm(imm_ex(i.imm));
    }
    let network = if grh[20] >> 4 == 4 { 4 } else { 6 };
    if c.status == WcStatus::Success {
        qp.counts().inc(Counter::RdmaRecvs);
    }
    // Written under the receive lock, as the connected responder's: a move to ERR flushes the
    // later receive WQEs only after it.
    let pushed = qp.recv_cq().map(|cq| {
        let solicited = h.headers.bth.solicited;
        RrxeCq::push_net(cq, &c, qp.handle(), solicited, network)
    });
    drop(st);
    if let Some(p) = pushed {
        super::after_push(qp, p);
    }
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
    qp.counts().inc(Counter::SendRnrErr);
    if rc {
        let (msn, epsn) = (st.msn, st.epsn);
        drop(st);
        reply::ack(qp, snap, msn, epsn, 0x20 | (snap.min_rnr_timer & 0x1f), out);
    }
    DropReason::NoReceiveWqe
}
