// SPDX-License-Identifier: GPL-2.0

//! The requester: turns the WQEs of the send queue into request packets. Every WQE is copied
//! out of the (user-writable) ring and validated before use; a bad one completes in error and
//! moves the QP to ERR. RC requests stay tracked until the completer retires them. Local
//! operations are in [`local`], the packets in [`packet`].

mod alone;
mod kunit;
mod local;
mod packet;
pub(crate) mod tail;

use super::{
    odp::Side,
    sinks::{
        Remote,
        SinkRef, //
    },
    state::{
        ProbeWay,
        Progress,
        Resume,
        SendState,
        SendWait,
        Snapshot,
        Track, //
    },
    Outbox,
};
use crate::{
    device::RrxeDevice,
    ib::Qp,
    kernel_ext::now_ns,
    proto::{
        cqe::WcStatus,
        psn::cmp_psn,
        qp_state::{
            QpState,
            QpType, //
        },
        seq,
        window,
        wqe::{
            SendFlags,
            SendWqe,
            WrDetail,
            WrOpcode, //
        },
        wqe_encode,
        wqe_parse, //
    },
};
use core::cmp::Ordering;

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
    // The snapshot may be older than a move to ERR: the state under this lock decides.
    if !st.open {
        return res;
    }
    tail::probe_if_due(qp, snap, &mut st);
    if !send_recovery(qp, snap, &mut st, out, &mut res) {
        return res;
    }
    // Nothing more to send (no WQE posted), or a WQE waits for room that only answers make: a
    // tail probe may be due later (the answers, or the NAK of a gap, may have been lost).
    let idle = send_new(qp, snap, &mut st, out, &mut res);
    if idle || res.blocked {
        tail::plan(qp, snap, &mut st);
    } else if st.probe.is_none() {
        // Still sending: a probe planned while it was idle would only go over the new packets.
        // (A probe that waits for its answer keeps its deadline.)
        st.tail_probe_at = None;
    }
    if snap.qp_type == QpType::Rc && st.count > 0 && res.progressed && !pipe.timer.is_armed() {
        if let Some(us) = super::timeout_us(snap.timeout, 0) {
            st.progressed = false;
            drop(st);
            pipe.timer.arm(&crate::sync::ObjRef::new(qp), us);
        }
    }
    res
}

/// What recovery sends first, up to the room in `out`: a probe sent alone, then a request
/// asking again for a missing run of READ responses, then the asks for later runs. `false`
/// when the probe's WQE failed (the QP must move to ERR: `res.fatal`).
fn send_recovery(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: &mut SendState,
    out: &mut Outbox,
    res: &mut ReqOutcome,
) -> bool {
    if !out.is_full() {
        match alone::send(qp, snap, st) {
            Ok(Some(item)) => {
                out.push(item);
                res.progressed = true;
            }
            Ok(None) => {}
            Err(()) => {
                res.progressed = true;
                res.fatal = true;
                return false;
            }
        }
    }
    if !out.is_full() {
        if let Some(item) = packet::read_ask(qp, snap, st) {
            out.push(item);
            res.progressed = true;
        }
    }
    while !out.is_full() {
        let Some(item) = packet::extra_ask(qp, snap, st) else {
            break;
        };
        out.push(item);
        res.progressed = true;
    }
    true
}

/// The packets of the WQEs posted, up to the room in `out`, pacing and DCQCN's window allowing,
/// and while no probe holds them back (a probe waits to go, then for its answer; new packets
/// go meanwhile only to a peer that keeps them). Returns whether the requester is idle: no WQE
/// to start, or the window full until answers come.
fn send_new(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: &mut SendState,
    out: &mut Outbox,
    res: &mut ReqOutcome,
) -> bool {
    while !out.is_full() && st.wait == SendWait::None && !st.probe_holds_back() {
        // A rate-limited QP that sent its burst waits for its pacing timer.
        let now = snap.paced().then(now_ns);
        if now.is_some_and(|now| super::congestion::pace_wait(qp, snap, now)) {
            break;
        }
        // One that DCQCN limits, or whose READs met congestion, keeps about a round trip of
        // its rate in the network; answers open the window again (and a tail probe covers
        // their loss).
        if now.is_some_and(|now| super::congestion::window_full(qp, snap, st, now)) {
            return true;
        }
        if st.cur.is_none() {
            if snap.state == QpState::Sqd {
                break;
            }
            match start_next(qp, snap, st) {
                Start::Started => {
                    if let Some(ok) = super::direct::try_message(qp, snap, st) {
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
                Start::Idle => return true,
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
        match packet::next_packet(qp, snap, st, now) {
            Ok(Some(item)) => {
                if let Some(now) = now {
                    super::congestion::sent(qp, snap, now, item.skb.len());
                }
                out.push(item);
                res.progressed = true;
            }
            Ok(None) => {
                if qp.pipe().odp.stalled(Side::Send) {
                    break;
                }
            }
            Err(status) => {
                fail_current(st, status);
                res.progressed = true;
                res.fatal = true;
                break;
            }
        }
    }
    false
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
        t.done = Some(status);
    }
}

/// The path MTU for a QP type (UD uses the port MTU, which we bound by 4096).
fn mtu_of(snap: &Snapshot) -> u32 {
    match snap.qp_type {
        QpType::Ud | QpType::Gsi => 4096,
        _ => snap.mtu,
    }
}

/// The sink of READ or atomic `w`: the local buffers its response fills, copied now (the
/// completer never reads the ring again); `None` while every sink is in use.
fn take_sink(st: &mut SendState, w: &SendWqe) -> Option<SinkRef> {
    let SendState {
        slot,
        sinks,
        rd_outstanding,
        ..
    } = st;
    let slot = &*slot;
    let remote = Remote {
        va: w.iova,
        rkey: match w.detail {
            WrDetail::Rdma { rkey } => rkey,
            _ => 0,
        },
    };
    let sge = |k| w.sge(slot, k);
    sinks.take(*rd_outstanding, sge, w.num_sge, remote)
}

/// Copies the next unstarted WQE out of the ring, validates it and sets it up: a local
/// operation executes at once; a packet-sending one is admitted when the send window, the read
/// credits and the fences allow ([`has_room`]), from where a retransmission resumes it
/// ([`resume_point`]).
fn start_next(qp: &Qp<RrxeDevice>, snap: &Snapshot, st: &mut SendState) -> Start {
    let w = match copy_next(qp, snap, st) {
        Ok(w) => w,
        Err(done) => return done,
    };
    let signaled = snap.sq_sig_all || w.flags.contains(SendFlags::SIGNALED);
    let mut track = Track::new(w.wr_id, w.opcode, signaled, st.psn, w.length);
    // Fences wait for every earlier READ and atomic.
    if w.flags.contains(SendFlags::FENCE) && st.rd_outstanding > 0 {
        return Start::Blocked;
    }
    if let Some(started) = local::execute(qp, snap, st, &w, track) {
        return started;
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
    if matches!(snap.qp_type, QpType::Ud | QpType::Gsi) && w.length > mtu {
        st.push(track.finished(WcStatus::LocLenErr));
        return Start::Failed;
    }
    // Operations answered with data or a value hold a responder resource (a read credit)
    // and take one request packet.
    let reads = w.opcode.wants_response();
    if !has_room(snap, st, reads) {
        return Start::Blocked;
    }
    // A READ's request takes one PSN, its responses `npkts`.
    let psns = if reads && w.opcode != WrOpcode::RdmaRead {
        1
    } else {
        npkts
    };
    let Some(skip) = resume_point(st, &mut track, &w, psns) else {
        // The peer has all of it.
        if !st.push(track.finished(WcStatus::Success)) {
            return Start::Blocked;
        }
        st.skip_acked(track.last_psn.next());
        return Start::Finished;
    };
    let Some(skip_bytes) = skip.checked_mul(mtu).filter(|&b| skip == 0 || b < w.length) else {
        return Start::Blocked;
    };
    if reads {
        let Some(sink) = take_sink(st, &w) else {
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
        mtu,
    });
    Start::Started
}

/// Copies the next unstarted WQE out of the ring (into `st.slot`) and parses it. A kernel
/// QP's fast registration executes here; a WQE that does not parse completes in error.
/// `Err` says why no WQE starts.
fn copy_next(qp: &Qp<RrxeDevice>, snap: &Snapshot, st: &mut SendState) -> Result<SendWqe, Start> {
    // The tracking window is full: wait for completions.
    if st.count >= st.track.len() {
        return Err(Start::Blocked);
    }
    let n = st.count as u32;
    let SendState { slot, .. } = st;
    let len = match qp.sq_read_nth(n, slot) {
        Ok(Some(len)) => len,
        _ => return Err(Start::Idle),
    };
    // Only the bytes copied are looked at (the rest of `slot` is another WQE's).
    let copied = st.slot.get(..len).unwrap_or(&[]);
    if snap.kernel {
        if let Some(r) = wqe_encode::parse_reg_wqe(copied) {
            return Err(local::fast_register(qp, snap, st, &r));
        }
    }
    let parsed =
        wqe_parse::parse_send_wqe(copied, snap.qp_type, qp.max_send_sge(), qp.max_inline());
    match parsed {
        Ok(w) => Ok(w),
        Err(e) => {
            let wr_id = wqe_parse::peek_wr_id(copied).unwrap_or(0);
            let t = Track::new(wr_id, WrOpcode::Send, true, st.psn, 0);
            st.push(t.finished(e.wc_status()));
            Err(Start::Failed)
        }
    }
}

/// Whether an RC WQE may start: a READ or atomic needs a free read credit (the peer's
/// `max_rd_atomic`), and no WQE starts past [`window::MAX_UNACKED_PSNS`] unacknowledged PSNs unless
/// it is the only one.
fn has_room(snap: &Snapshot, st: &SendState, reads: bool) -> bool {
    if snap.qp_type != QpType::Rc {
        return true;
    }
    if reads && st.rd_outstanding >= u32::from(snap.max_rd_atomic.max(1)) {
        return false;
    }
    st.count == 0 || st.psn.distance_from(st.comp_psn) <= window::MAX_UNACKED_PSNS
}

/// The packets of `w` (taking `psns` PSNs from `track.first_psn`) not to send again, and the
/// PSNs `track` spans; `None` when the peer acknowledged all of them. A retransmission
/// resuming this WQE skips the packets already acknowledged (a READ asks for the rest of its
/// data; the slot was read again and must still hold the same operation). An acknowledgement
/// that came late, after the rewind that started the WQE again, skips what the peer has too;
/// a READ or atomic still needs its responses.
fn resume_point(st: &mut SendState, track: &mut Track, w: &SendWqe, psns: u32) -> Option<u32> {
    let skip = match st.resume.take() {
        Some(r) if r.opcode == w.opcode && r.length == w.length && r.packets < psns => {
            track.first_psn = r.first_psn;
            r.packets
        }
        _ => 0,
    };
    track.last_psn = track.first_psn.wrapping_add(psns - 1);
    let acked = if w.opcode.wants_response() {
        0
    } else {
        st.take_acked(track.first_psn, psns)
    };
    if acked > 0 && acked == psns {
        return None;
    }
    if acked > skip {
        st.skip_acked(track.first_psn.wrapping_add(acked));
        return Some(acked);
    }
    Some(skip)
}

/// Rewinds the sender to resend from the oldest unfinished WQE (go-back-N): from its first
/// unacknowledged packet (a READ: a request for the responses not yet received), and
/// everything after it. The responder treats the repeats as duplicates.
pub(crate) fn rewind(st: &mut SendState) {
    let Some(i) = st.oldest_unfinished() else {
        return;
    };
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
    st.probe = None;
    st.probe_way = ProbeWay::Rewound;
    st.tail_probe_at = None;
    // The READs after it are asked for again whole.
    st.placed.clear();
    st.read_ask = None;
    st.extra_asks = Default::default();
    st.probes_unanswered = 0;
    // An answer to a packet sent again could be either copy's (Karn).
    st.rtt.cancel();
}
