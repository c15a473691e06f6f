// SPDX-License-Identifier: GPL-2.0

//! The pipeline's state of a QP as driver attributes of `rdma res show qp` (with `-dd`): what
//! a user needs to tell a QP that waits for its peer from one that stalled, without a debugger.
//! Read under the QP's locks, one side at a time; no addresses, keys or data. Live PSNs and
//! retry state are what a packet injector needs: only a reader with `CAP_NET_ADMIN` gets them
//! (`ResEntry`).

use super::{
    odp::Side,
    state::{
        SendWait,
        Snapshot, //
    },
};
use crate::{
    device::RrxeDevice,
    ib::{
        Qp,
        ResEntry, //
    },
    proto::rate::Kbps,
};
use kernel::{
    prelude::*,
    sync::atomic::Relaxed, //
};

/// Adds the requester's, the responder's and the engine's state of `qp` (whose attributes are
/// `snap`) to `entry`.
pub(crate) fn report(qp: &Qp<RrxeDevice>, snap: &Snapshot, entry: &mut ResEntry) -> Result {
    let pipe = qp.pipe();
    let send = {
        let st = pipe.send.lock();
        SendReport {
            psn: st.psn.value(),
            comp_psn: st.comp_psn.value(),
            tracked: st.count,
            sending: st.cur.is_some(),
            rd_outstanding: st.rd_outstanding,
            retry_left: st.retry.left(),
            rnr_retry_left: st.rnr_retry.left(),
            rnr_wait: st.wait == SendWait::Rnr,
            timer_fired: st.timer_fired,
            cap: super::congestion::in_flight_cap(&st),
            path: st.rtt.path_psns().unwrap_or(0),
            srtt_us: st.rtt.srtt_ns().map_or(0, |ns| ns / 1000),
            rtt_min_us: st.rtt.min_ns().map_or(0, |ns| ns / 1000),
        }
    };
    let (rate_kbps, target_kbps, alpha) = {
        let cc = pipe.cc.lock();
        (
            cc.rp.rate_kbps().unwrap_or(0),
            cc.rp.target_kbps().unwrap_or(0),
            cc.rp.alpha(),
        )
    };
    let limit_kbps = snap.limit.map_or(0, Kbps::get);
    let recv = {
        let st = pipe.recv.lock();
        RecvReport {
            epsn: st.epsn.value(),
            msn: st.msn,
            nak_sent: st.nak_sent,
            in_message: st.last_op.is_some(),
            read_out: st
                .read
                .as_ref()
                .map_or(0, |r| r.npkts.saturating_sub(r.sent)),
            kept: super::responder::kept_packets(&st) as u32,
        }
    };
    entry.u32_hex(c"sq_next_psn", send.psn)?;
    entry.u32_hex(c"sq_unacked_psn", send.comp_psn)?;
    entry.u64(c"sq_tracked_wqes", send.tracked as u64)?;
    entry.u32(c"sq_sending", send.sending.into())?;
    entry.u32(c"sq_reads_outstanding", send.rd_outstanding)?;
    entry.u32(c"sq_retries_left", send.retry_left.into())?;
    entry.u32(c"sq_rnr_retries_left", send.rnr_retry_left.into())?;
    entry.u32(c"sq_rnr_wait", send.rnr_wait.into())?;
    entry.u32(c"timer_armed", pipe.timer.is_armed().into())?;
    entry.u32(c"timer_fired", send.timer_fired.into())?;
    entry.u32_hex(c"rq_expected_psn", recv.epsn)?;
    entry.u32(c"rq_msn", recv.msn)?;
    entry.u32(c"rq_nak_sent", recv.nak_sent.into())?;
    entry.u32(c"rq_in_message", recv.in_message.into())?;
    entry.u32(c"rq_read_packets_left", recv.read_out)?;
    entry.u32(c"rq_kept_past_gap", recv.kept)?;
    entry.u32(c"inbox", pipe.inbox.len())?;
    entry.str(c"run", pipe.gate.name())?;
    entry.u32(c"home_cpu", pipe.home_cpu())?;
    entry.u32(c"tx_in_flight", pipe.flow.in_flight())?;
    entry.u32(c"tx_waiting", pipe.flow.is_waiting().into())?;
    entry.u64(c"tx_bytes", pipe.tx_bytes.load(Relaxed))?;
    entry.u32(c"cc_rate_kbps", rate_kbps)?;
    entry.u32(c"cc_target_kbps", target_kbps)?;
    entry.u32(c"cc_alpha", alpha)?;
    entry.u32(c"cc_cap_psns", send.cap)?;
    entry.u32(c"cc_path_psns", send.path)?;
    entry.u64(c"rtt_smoothed_us", send.srtt_us)?;
    entry.u64(c"rtt_min_us", send.rtt_min_us)?;
    entry.u32(c"rate_limit_kbps", limit_kbps)?;
    entry.u32(c"pace_armed", pipe.pace.is_armed().into())?;
    entry.u32(c"odp_wait_send", pipe.odp.stalled(Side::Send).into())?;
    entry.u32(c"odp_wait_recv", pipe.odp.stalled(Side::Recv).into())
}

/// What the requester side's lock held, copied out before the netlink writes.
struct SendReport {
    psn: u32,
    comp_psn: u32,
    tracked: usize,
    sending: bool,
    rd_outstanding: u32,
    retry_left: u8,
    rnr_retry_left: u8,
    rnr_wait: bool,
    timer_fired: bool,
    /// The in-flight cap while DCQCN limits the QP, and the path's estimate under it.
    cap: u32,
    path: u32,
    /// The smoothed and the shortest round trip sampled (0: none yet).
    srtt_us: u64,
    rtt_min_us: u64,
}

/// What the responder side's lock held.
struct RecvReport {
    epsn: u32,
    msn: u32,
    nak_sent: bool,
    in_message: bool,
    read_out: u32,
    /// Requests kept past a gap.
    kept: u32,
}
