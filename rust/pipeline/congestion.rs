// SPDX-License-Identifier: GPL-2.0

//! Congestion control in the pipeline (`Documentation/congestion.rst`): DCQCN as RoCE NICs run
//! it, with the logic in [`crate::proto::dcqcn`].
//!
//! - The notification point: a connected QP that receives a packet with a CE mark answers the
//!   peer QP with a CNP, at most one per `np_min_time_between_cnps` ([`ce_arrived`]). Only ECT
//!   packets can carry CE, so a peer that never sent ECN-capable traffic (C rxe) never gets a
//!   CNP unless a switch marks what it may not.
//! - The reaction point: a CNP from the peer cuts the QP's rate ([`cnp_arrived`]); the
//!   requester and the responder's READ responses then keep to the rate ([`pace_wait`],
//!   [`sent`]) and wait for the rest on the QP's high-resolution timer.

use super::{
    state::{
        SendState,
        Snapshot, //
    },
    xmit,
    Outbox,
    TxItem, //
};
use crate::{
    counters::Counter,
    device::RrxeDevice,
    ib::Qp,
    kernel_ext::now_ns,
    proto::{
        dcqcn::{
            self,
            CcParam, //
        },
        qp_state::{
            QpState,
            QpType, //
        },
        rate,
        window, //
    },
    sync::ObjRef,
};

/// Whether `snap`'s QP takes part in congestion control as a notification or reaction point:
/// a connected QP with a peer (RTR or later, not in ERR).
fn connected(snap: &Snapshot) -> bool {
    matches!(snap.qp_type, QpType::Rc | QpType::Uc)
        && matches!(snap.state, QpState::Rtr | QpState::Rts | QpState::Sqd)
}

/// A packet of the QP's connection (addresses checked) arrived with a CE mark: counted, and
/// answered with a CNP to the peer QP when the device's notification point is on and none
/// went within `np_min_time_between_cnps`. A full batch leaves it for the next mark. A READ
/// response (`read_response`) also puts the QP's own requester under its in-flight cap for a
/// while ([`dcqcn::reads_congested`]).
pub(super) fn ce_arrived(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    read_response: bool,
    out: &mut Outbox,
) {
    let dev = qp.device();
    qp.counts().inc(Counter::NpEcnMarkedRocePackets);
    if !connected(snap) {
        return;
    }
    let now = now_ns();
    // The settings only when a CNP may go; the QP's lock once, for the mark and the gate.
    let p = (!out.is_full() && dev.cc_param(CcParam::NpEnable) != 0).then(|| dev.cc_params());
    if p.is_none() && !read_response {
        return;
    }
    let p = {
        let mut cc = qp.pipe().cc.lock();
        if read_response {
            cc.read_marked_ns = Some(now);
        }
        p.filter(|p| cc.cnp_gate.due(p, now))
    };
    let Some(p) = p else {
        return;
    };
    let Ok(skb) = xmit::build_cnp(dev, snap.dest_qpn) else {
        return;
    };
    let mut av = snap.av;
    // CNPs travel at their own DSCP, not ECN-capable (RoCE NICs' default: DSCP 48).
    av.traffic_class = (p.get(CcParam::NpCnpDscp) as u8) << 2;
    out.push(TxItem {
        skb,
        av,
        src_port: snap.src_port,
    });
    qp.counts().inc(Counter::NpCnpSent);
}

/// A CNP from the connection's peer (the receive pass checked the addresses) arrived for the
/// QP: it drives the QP's reaction point when the device's are on; else it is ignored (and
/// counted).
pub(super) fn cnp_arrived(qp: &Qp<RrxeDevice>, snap: &Snapshot) {
    let dev = qp.device();
    if !snap.congestion || !connected(snap) {
        qp.counts().inc(Counter::RpCnpIgnored);
        return;
    }
    let p = dev.cc_params();
    qp.pipe().cc.lock().rp.on_cnp(&p, now_ns());
    qp.counts().inc(Counter::RpCnpHandled);
}

/// Whether the QP must wait before its next packet (it is rate-limited, by DCQCN or by its
/// user, and sent its burst): then the pacing timer is armed for when it may go on, and the
/// wait counted. Under the send or the receive lock (the QP's requester or responder). The
/// device's settings are read only while DCQCN limits the QP: an unlimited one pays the lock
/// and nothing else.
pub(super) fn pace_wait(qp: &Qp<RrxeDevice>, snap: &Snapshot, now: u64) -> bool {
    let wait = {
        let mut cc = qp.pipe().cc.lock();
        if cc.rp.rate_kbps().is_some() {
            cc.rp.advance(&qp.device().cc_params(), now);
        }
        if rate::pace_kbps(cc.rp.rate_kbps(), snap.limit).is_none() {
            return false;
        }
        let wait = cc.pacer.wait_ns(now);
        cc.pace_waiting |= wait.is_some();
        wait
    };
    let Some(wait) = wait else {
        return false;
    };
    qp.counts().inc(Counter::RpPaceWaits);
    qp.pipe().pace.arm_ns(&ObjRef::new(qp), wait);
    true
}

/// How many PSNs an RC QP that DCQCN limits may have in the network: its path's estimate and
/// a floor ([`dcqcn::in_flight_cap`]), at most the requester's own window.
pub(super) fn in_flight_cap(st: &SendState) -> u32 {
    dcqcn::in_flight_cap(st.rtt.path_psns(), window::MAX_UNACKED_PSNS)
}

/// Whether an RC QP that DCQCN limits, or whose READs met congestion lately
/// ([`dcqcn::reads_congested`]), has as many PSNs in the network ([`in_flight`]) as the path
/// allows ([`in_flight_cap`]): it then sends nothing new until ACKs or responses come. Under
/// the send lock; the reaction point's lock only when the cap is reached.
pub(super) fn window_full(qp: &Qp<RrxeDevice>, snap: &Snapshot, st: &SendState, now: u64) -> bool {
    snap.qp_type == QpType::Rc && in_flight(st) >= in_flight_cap(st) && {
        let cc = qp.pipe().cc.lock();
        cc.rp.rate_kbps().is_some()
            || dcqcn::reads_congested(cc.read_marked_ns, now, st.rtt.srtt_ns())
    }
}

/// Whether the next packet of a paced RC QP is the last its in-flight cap lets go before ACKs
/// come (whether DCQCN limits it or not: the cap is known without the reaction point's lock).
/// It asks for an ACK: without one, a responder acknowledges only up to the last packet that
/// asked, and the sender stopped at the cap waited for a tail probe or its timeout.
pub(super) fn fills_window(st: &SendState) -> bool {
    in_flight(st).saturating_add(1) == in_flight_cap(st)
}

/// The PSNs an RC QP has in the network: from the oldest not yet acknowledged to the next new
/// one, less the READ responses placed past a gap (selective recovery: they arrived, and only
/// the gap before them waits for its answer). A response lost at the bottleneck then holds
/// back no more than itself: counting the READ whole kept the link idle for the round trip of
/// its ask, in which nothing new could start.
pub(super) fn in_flight(st: &SendState) -> u32 {
    let sent = st.psn.distance_from(st.comp_psn);
    sent.saturating_sub(st.placed.count_in(st.comp_psn, st.psn))
}

/// The QP sent a packet of `bytes` at `now`: the rate measurement (or the reaction point's
/// byte counter while DCQCN limits the QP), and for a limited QP the pacer's next departure.
pub(super) fn sent(qp: &Qp<RrxeDevice>, snap: &Snapshot, now: u64, bytes: usize) {
    let bytes = bytes as u64;
    let mut cc = qp.pipe().cc.lock();
    if cc.rp.rate_kbps().is_none() {
        cc.rp.measure(now, bytes);
    } else {
        cc.rp.on_sent(&qp.device().cc_params(), now, bytes);
    }
    if let Some(kbps) = rate::pace_kbps(cc.rp.rate_kbps(), snap.limit) {
        cc.pacer.sent(now, bytes, kbps);
    }
}

/// Whether `qp`'s packets may leave as trains (one UDP GSO buffer each): not while DCQCN
/// limits it. A queue takes a train as one packet: RED marks or drops all of it at once (up
/// to [`super::OUTBOX`] packets lost together, a gap the requester asks for as a run), and a
/// RoCE NIC's rate limiter paces packets, not bursts. NVMe-oF through the 8 Mbit/s bottleneck
/// without trains carried 0.93-0.94 of the link with 0.01-0.04 % dropped, against 0.84-0.93
/// and up to 0.30 % with them (``congestion.rst``).
pub(super) fn sends_trains(qp: &Qp<RrxeDevice>) -> bool {
    qp.pipe().cc.lock().rp.rate_kbps().is_none()
}

/// Whether the pacing timer's expiry finds a packet waiting for its time ([`pace_wait`]), which
/// it lets go: the expiry then runs the QP.
pub(super) fn pace_due(qp: &Qp<RrxeDevice>) -> bool {
    core::mem::take(&mut qp.pipe().cc.lock().pace_waiting)
}
