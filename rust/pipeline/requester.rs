// SPDX-License-Identifier: GPL-2.0

//! The requester: turns the WQEs of the send queue into request packets. Every WQE is copied
//! out of the (user-writable) ring and validated before use; a bad one completes in error and
//! moves the QP to ERR. RC requests stay tracked until the completer retires them.

use super::{
    mem,
    odp::Side,
    state::{
        Progress,
        Resume,
        SendState,
        SendWait,
        Snapshot,
        Track, //
    },
    xmit, Outbox,
};
use crate::{
    device::RrxeDevice,
    ib::Qp,
    mm::Fill,
    mr::RrxeMr,
    mw::BindRequest,
    proto::{
        cqe::WcStatus,
        hdr::{
            AtomicEth,
            Bth,
            Deth,
            Feth,
            Ieth,
            Immdt,
            Reth,
            DEFAULT_PKEY, //
        },
        opcode::Position,
        packet::{
            pad_for,
            TransportHeaders, //
        },
        psn::cmp_psn,
        qp_state::{
            QpState,
            QpType, //
        },
        seq,
        wqe::{
            self,
            SendFlags,
            SendWqe,
            WrDetail,
            WrOpcode, //
        },
        wqe_encode,
    },
};
use core::cmp::Ordering;
use kernel::prelude::*;

/// The unacknowledged PSNs past which an RC requester starts no new WQE. A WQE may start at
/// the window's edge, so a READ whose responses take the whole window (128 KiB at path MTU
/// 1024, NVMe-oF's I/O size) can have a second one behind it while its data streams back, as
/// with C rxe; with one at a time the responder idles a round trip per READ.
const MAX_UNACKED_PSNS: u32 = 128;

/// The outcome of a requester pass.
pub(crate) struct ReqOutcome {
    /// Packets were produced or WQEs finished.
    pub(crate) progressed: bool,
    /// A WQE failed: the QP must move to ERR.
    pub(crate) fatal: bool,
    /// A WQE waits for room that retiring finished WQEs makes (the tracking window, read
    /// credits, the PSN window, a fence).
    pub(crate) blocked: bool,
}

/// Sends what the send queue holds, up to the room in `out`.
pub(crate) fn run(qp: &Qp<RrxeDevice>, snap: &Snapshot, out: &mut Outbox) -> ReqOutcome {
    let mut res = ReqOutcome {
        progressed: false,
        fatal: false,
        blocked: false,
    };
    if !matches!(snap.state, QpState::Rts | QpState::Sqd) {
        return res;
    }
    let pipe = qp.pipe();
    let mut st = pipe.send.lock();
    while !out.is_full() && st.wait == SendWait::None {
        if st.cur.is_none() {
            if snap.state == QpState::Sqd {
                break;
            }
            match start_next(qp, snap, &mut st) {
                Start::Started => {
                    if let Some(ok) = super::direct::try_message(qp, snap, &mut st) {
                        res.progressed = true;
                        if !ok {
                            res.fatal = true;
                            break;
                        }
                        continue;
                    }
                }
                Start::Finished => {
                    res.progressed = true;
                    continue;
                }
                Start::Idle => break,
                Start::Blocked => {
                    res.blocked = true;
                    break;
                }
                Start::Failed => {
                    res.progressed = true;
                    res.fatal = true;
                    break;
                }
            }
        }
        match next_packet(qp, snap, &mut st) {
            Ok(Some(item)) => {
                out.push(item);
                res.progressed = true;
            }
            Ok(None) => {
                if pipe.odp.stalled(Side::Send) {
                    break;
                }
            }
            Err(status) => {
                fail_current(&mut st, status);
                res.progressed = true;
                res.fatal = true;
                break;
            }
        }
    }
    if snap.qp_type == QpType::Rc && st.count > 0 && res.progressed && !pipe.timer.is_armed() {
        if let Some(us) = super::timeout_us(snap.timeout, 0) {
            st.progressed = false;
            drop(st);
            pipe.timer.arm(&crate::ib::ObjRef::new(qp), us);
        }
    }
    res
}

enum Start {
    Started,
    /// A local operation completed without packets.
    Finished,
    /// No WQE to start: the send queue holds none past those started.
    Idle,
    /// The next WQE waits for room (window or credits full, a fence).
    Blocked,
    /// The WQE was bad and completed in error.
    Failed,
}

/// Marks the WQE being sent as failed.
fn fail_current(st: &mut SendState, status: WcStatus) {
    st.cur = None;
    let last = st.count.wrapping_sub(1);
    if let Some(t) = st.entry(last) {
        t.done = Some(status.to_raw());
    }
}

/// The path MTU for a QP type (UD uses the port MTU, which we bound by 4096).
fn mtu_of(snap: &Snapshot) -> u32 {
    match snap.qp_type {
        QpType::Ud | QpType::Gsi => 4096,
        _ => snap.mtu,
    }
}

/// Copies the next unstarted WQE and sets it up.
fn start_next(qp: &Qp<RrxeDevice>, snap: &Snapshot, st: &mut SendState) -> Start {
    // The tracking window is full: wait for completions.
    if st.count >= st.track.len() {
        return Start::Blocked;
    }
    let n = st.count as u32;
    let SendState { slot, .. } = st;
    match qp.sq_read_nth(n, slot) {
        Ok(true) => {}
        _ => return Start::Idle,
    }
    if snap.kernel {
        if let Some(r) = wqe_encode::parse_reg_wqe(slot) {
            let ok = qp
                .device()
                .lookup_mr((r.mr_index << 8) | (r.key & 0xff), snap.pd)
                .is_some_and(|mr| RrxeMr::fast_register(&mr, r.access).is_ok());
            let status = if ok {
                WcStatus::Success
            } else {
                WcStatus::MwBindErr
            };
            let signaled = snap.sq_sig_all || r.flags & SendFlags::SIGNALED != 0;
            let t = Track::new(r.wr_id, WrOpcode::LocalInv, signaled, st.psn, 0);
            st.push(t.finished(status));
            return if ok { Start::Finished } else { Start::Failed };
        }
    }
    let parsed = wqe::parse_send_wqe(slot, snap.qp_type, qp.max_send_sge(), qp.max_inline());
    let w = match parsed {
        Ok(w) => w,
        Err(e) => {
            let wr_id = wqe::peek_wr_id(slot).unwrap_or(0);
            let t = Track::new(wr_id, WrOpcode::Send, true, st.psn, 0);
            st.push(t.finished(e.wc_status()));
            return Start::Failed;
        }
    };
    let signaled = snap.sq_sig_all || w.flags.contains(SendFlags::SIGNALED);
    let mut track = Track::new(w.wr_id, w.opcode, signaled, st.psn, w.length);
    // Fences wait for every earlier READ and atomic.
    if w.flags.contains(SendFlags::FENCE) && st.rd_outstanding > 0 {
        return Start::Blocked;
    }
    match w.opcode {
        WrOpcode::LocalInv => {
            let ok = super::rkey::invalidate(qp.device(), w.ex, snap.pd, None).is_ok();
            let status = if ok {
                WcStatus::Success
            } else {
                WcStatus::LocProtErr
            };
            st.push(track.finished(status));
            return if ok { Start::Finished } else { Start::Failed };
        }
        WrOpcode::BindMw => {
            let ok = bind_mw(qp, snap, &w).is_ok();
            let status = if ok {
                WcStatus::Success
            } else {
                WcStatus::MwBindErr
            };
            st.push(track.finished(status));
            return if ok { Start::Finished } else { Start::Failed };
        }
        _ => {}
    }
    let mtu = mtu_of(snap);
    // A FLUSH names a remote range of any length but is one packet without payload.
    let npkts = if w.opcode == WrOpcode::Flush {
        Some(1)
    } else {
        seq::packets_for(w.length, mtu)
    };
    let Some(npkts) = npkts else {
        return Start::Blocked;
    };
    let is_ud = matches!(snap.qp_type, QpType::Ud | QpType::Gsi);
    if is_ud && w.length > mtu {
        st.push(track.finished(WcStatus::LocLenErr));
        return Start::Failed;
    }
    // Operations answered with data or a value hold a responder resource (a read credit)
    // and take one request packet.
    let reads = w.opcode.wants_response();
    if snap.qp_type == QpType::Rc {
        if reads && st.rd_outstanding >= u32::from(snap.max_rd_atomic.max(1)) {
            return Start::Blocked;
        }
        let inflight = st.psn.distance_from(st.comp_psn);
        if st.count > 0 && inflight > MAX_UNACKED_PSNS {
            return Start::Blocked;
        }
    }
    // A READ's request takes one PSN, its responses `npkts`.
    let psns = if w.opcode == WrOpcode::RdmaRead {
        npkts
    } else if reads {
        1
    } else {
        npkts
    };
    // A retransmission resuming this WQE: the packets already acknowledged are not sent
    // again (a READ asks for the rest of its data). The slot was read again: it must still
    // hold the same operation.
    let skip = match st.resume.take() {
        Some(r) if r.opcode == w.opcode && r.length == w.length && r.packets < psns => {
            track.first_psn = r.first_psn;
            r.packets
        }
        _ => 0,
    };
    track.last_psn = track.first_psn.wrapping_add(psns - 1);
    // Acknowledged late, after the rewind that started it again: what the peer has is not sent
    // again. A READ or atomic still needs its responses.
    let acked = if reads {
        0
    } else {
        st.take_acked(track.first_psn, psns)
    };
    if acked > 0 && acked == psns {
        if !st.push(track.finished(WcStatus::Success)) {
            return Start::Blocked;
        }
        st.skip_acked(track.last_psn.next());
        return Start::Finished;
    }
    let skip = if acked > skip {
        st.skip_acked(track.first_psn.wrapping_add(acked));
        acked
    } else {
        skip
    };
    let Some(skip_bytes) = skip.checked_mul(mtu).filter(|&b| skip == 0 || b < w.length) else {
        return Start::Blocked;
    };
    if reads {
        // The local buffers the response fills, copied now: the completer never reads the
        // ring again.
        let SendState {
            slot,
            sinks,
            rd_outstanding,
            ..
        } = &mut *st;
        let slot = &*slot;
        let Some(sink) = sinks.take(*rd_outstanding, |k| w.sge(slot, k), w.num_sge) else {
            return Start::Blocked;
        };
        track.sink = Some(sink);
    }
    if !st.push(track) {
        return Start::Blocked;
    }
    if reads {
        st.rd_outstanding += 1;
    }
    st.cur = Some(Progress {
        wqe: w,
        offset: skip_bytes,
        sent: if reads { 0 } else { skip },
        npkts: if reads { 1 } else { npkts },
    });
    Start::Started
}

/// Executes an `IB_WR_BIND_MW` (from `ibv_bind_mw` for type 1 windows, posted directly for
/// type 2): the window named by its current rkey moves onto a range of a region of the QP's PD.
fn bind_mw(qp: &Qp<RrxeDevice>, snap: &Snapshot, w: &SendWqe) -> Result {
    let WrDetail::Mw {
        addr,
        length,
        mr_lkey,
        mw_rkey,
        rkey,
        access,
    } = w.detail
    else {
        return Err(EINVAL);
    };
    let dev = qp.device();
    let mw = dev.lookup_mw(mw_rkey).ok_or(EINVAL)?;
    let mr = dev.lookup_mr(mr_lkey, snap.pd);
    let req = BindRequest {
        addr,
        length,
        mw_rkey,
        new_rkey: rkey,
        access,
    };
    mw.bind(&req, mr.as_deref(), snap.pd, qp.mw_token())
}

/// Builds the next packet of the current WQE.
fn next_packet(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: &mut SendState,
) -> Result<Option<super::TxItem>, WcStatus> {
    let Some(cur) = st.cur.as_ref() else {
        return Ok(None);
    };
    let (w, offset, sent, npkts) = (cur.wqe, cur.offset, cur.sent, cur.npkts);
    let position = seq::position(sent, npkts).ok_or(WcStatus::LocQpOpErr)?;
    let opcode =
        seq::request_opcode(snap.qp_type, w.opcode, position).ok_or(WcStatus::LocQpOpErr)?;
    let mtu = mtu_of(snap);
    let payload = if w.opcode.request_has_no_payload() {
        0
    } else {
        (w.length - offset).min(mtu)
    };
    let last = position.ends_message();
    let is_rc = snap.qp_type == QpType::Rc;
    // Applied once the packet is built (a payload waiting for a page fault is built again).
    let since_ackreq = st.since_ackreq.saturating_add(1);
    let ack_req = is_rc && seq::ack_due(since_ackreq, last, seq::MAX_PKT_PER_ACK);
    let (dest_qpn, av) = match w.detail {
        WrDetail::Ud {
            remote_qpn,
            remote_qkey,
            ah_num,
            ..
        } => {
            let av = qp
                .device()
                .ah_av(ah_num, snap.pd)
                .ok_or(WcStatus::LocQpOpErr)?;
            let _ = remote_qkey;
            (remote_qpn, av)
        }
        _ => (snap.dest_qpn, snap.av),
    };
    let mut h = TransportHeaders::new(Bth {
        opcode,
        solicited: last && w.flags.contains(SendFlags::SOLICITED),
        mig_req: false,
        pad: pad_for(payload as usize),
        pkey: DEFAULT_PKEY,
        fecn: false,
        becn: false,
        dest_qpn,
        ack_req,
        psn: st.psn,
    });
    let info = opcode.info().ok_or(WcStatus::LocQpOpErr)?;
    let starts = position.starts_message() || position == Position::Only;
    for ext in info.ext_headers {
        use crate::proto::opcode::ExtHeader as E;
        match ext {
            E::Reth if starts => {
                let rkey = match w.detail {
                    WrDetail::Rdma { rkey } | WrDetail::Flush { rkey, .. } => rkey,
                    _ => 0,
                };
                // A resumed READ asks for the rest (`offset` is zero otherwise).
                let va = w.iova.checked_add(u64::from(offset));
                h.reth = Some(Reth {
                    va: va.ok_or(WcStatus::LocQpOpErr)?,
                    rkey,
                    dma_len: w.length - offset,
                });
            }
            // `ex` holds the big-endian immediate as stored in memory.
            E::Immdt => {
                h.immdt = Some(Immdt {
                    imm: u32::from_be_bytes(w.ex.to_le_bytes()),
                })
            }
            E::Ieth => h.ieth = Some(Ieth { rkey: w.ex }),
            E::Feth => {
                if let WrDetail::Flush { kind, level, .. } = w.detail {
                    h.feth = Some(Feth {
                        selectivity: level,
                        placement_type: kind,
                    });
                }
            }
            E::Deth => {
                let qkey = match w.detail {
                    // The top bit asks for the QP's own Q_Key (IBA 10.2.5).
                    WrDetail::Ud { remote_qkey, .. } if remote_qkey & 0x8000_0000 == 0 => {
                        remote_qkey
                    }
                    _ => snap.qkey,
                };
                h.deth = Some(Deth {
                    qkey,
                    src_qpn: snap.qpn,
                });
            }
            E::AtomicEth => {
                if let WrDetail::Atomic {
                    compare_add,
                    swap,
                    rkey,
                } = w.detail
                {
                    let (swap_add, compare) = if w.opcode == WrOpcode::AtomicCmpAndSwp {
                        (swap, compare_add)
                    } else {
                        (compare_add, 0)
                    };
                    h.atomic_eth = Some(AtomicEth {
                        va: w.iova,
                        rkey,
                        swap_add,
                        compare,
                    });
                }
            }
            _ => {}
        }
    }
    let slot = &st.slot;
    let skb = match xmit::build(qp.device(), &h, payload as usize, |dst| {
        fill_payload(qp, snap, &w, slot, offset, dst)
    }) {
        Ok(skb) => skb,
        // A page of the payload is being faulted in: the sender waits ([`super::odp`]).
        Err(e) if e == EAGAIN => return Ok(None),
        Err(_) => return Err(WcStatus::LocQpOpErr),
    };
    st.since_ackreq = if ack_req { 0 } else { since_ackreq };
    // Advance.
    let psns = if w.opcode == WrOpcode::RdmaRead {
        seq::packets_for(w.length - offset, mtu).unwrap_or(1)
    } else {
        1
    };
    st.advance(psns);
    let done_sending = {
        let cur = st.cur.as_mut().ok_or(WcStatus::LocQpOpErr)?;
        cur.offset += payload;
        cur.sent += 1;
        cur.sent >= cur.npkts
    };
    if done_sending {
        st.cur = None;
        if !is_rc {
            // UC and UD complete once sent.
            let last = st.count.wrapping_sub(1);
            if let Some(t) = st.entry(last) {
                t.done = Some(WcStatus::Success.to_raw());
            }
        }
    }
    qp.device().count_sent(payload);
    Ok(Some(super::TxItem {
        skb,
        av,
        src_port: snap.src_port,
    }))
}

/// Appends `dst.remaining()` bytes of the message from byte `offset` to `dst`.
fn fill_payload(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    w: &SendWqe,
    slot: &[u8],
    offset: u32,
    dst: &mut Fill<'_>,
) -> Result {
    if dst.remaining() == 0 {
        return Ok(());
    }
    if let Some(data) = w.inline_data(slot) {
        let start = offset as usize;
        let src = data.get(start..start + dst.remaining()).ok_or(EINVAL)?;
        return dst.put(src);
    }
    mem::gather(
        qp,
        Side::Send,
        snap,
        |i| w.sge(slot, i),
        w.num_sge,
        offset,
        dst,
    )
}

/// Rewinds the sender to resend from the oldest unfinished WQE (go-back-N): from its first
/// unacknowledged packet (a READ: a request for the responses not yet received), and
/// everything after it. The responder treats the repeats as duplicates.
pub(crate) fn rewind(st: &mut SendState) {
    let mut i = 0;
    while let Some(t) = st.entry(i) {
        if t.done.is_none() {
            break;
        }
        i += 1;
    }
    let Some(t) = st.entry(i).copied() else {
        return;
    };
    // Drop entry `i` and everything after: they will be started again, entry `i` from the
    // first PSN not yet acknowledged when that is inside it.
    let acked = st.comp_psn.distance_from(t.first_psn);
    let partial = cmp_psn(st.comp_psn, t.first_psn) == Ordering::Greater
        && cmp_psn(st.comp_psn, t.last_psn) != Ordering::Greater;
    st.resume = partial.then_some(Resume {
        first_psn: t.first_psn,
        packets: acked,
        opcode: t.opcode,
        length: t.length,
    });
    st.count = i;
    st.cur = None;
    st.psn = if partial { st.comp_psn } else { t.first_psn };
    st.comp_psn = st.psn;
    st.since_ackreq = 0;
    // Every entry before `i` is finished: nothing is outstanding.
    st.rd_outstanding = 0;
}
