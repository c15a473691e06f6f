// SPDX-License-Identifier: GPL-2.0

//! Local operations of the send queue, executed by the requester without packets: a kernel
//! consumer's fast registration (`IB_WR_REG_MR`), `IB_WR_LOCAL_INV` and `IB_WR_BIND_MW`. Each
//! completes its WQE at once, in order with the ones before it.

use super::Start;
use crate::{
    device::RrxeDevice,
    ib::{
        AccessFlags,
        Qp, //
    },
    pipeline::{
        rkey,
        state::{
            SendState,
            Snapshot,
            Track, //
        },
    },
    proto::{
        cqe::WcStatus,
        wqe::{
            SendFlags,
            SendWqe,
            WrDetail,
            WrOpcode, //
        },
        wqe_encode::RegWqe,
    },
    verbs::mr::RrxeMr,
    verbs::mw::BindRequest,
};
use kernel::prelude::*;

/// Records the local operation `track` as finished, with `error` if it failed.
fn finish(st: &mut SendState, track: Track, ok: bool, error: WcStatus) -> Start {
    let status = if ok { WcStatus::Success } else { error };
    st.push(track.finished(status));
    if ok {
        Start::Finished
    } else {
        Start::Failed
    }
}

/// A kernel QP's fast registration: the region named by the WQE's key takes the access it
/// asks for (only kernel QPs can post one; user space registers through verbs).
pub(super) fn fast_register(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: &mut SendState,
    r: &RegWqe,
) -> Start {
    // The MR's key is the one of its last registration; this one gives it the WQE's key, which
    // must name the same MR (its upper 24 bits are the index, as C rxe checks).
    let ok = r.key >> 8 == r.mr_index
        && qp
            .device()
            .lookup_mr_index(r.mr_index, snap.pd)
            .is_some_and(|mr| {
                RrxeMr::fast_register(&mr, AccessFlags::from_raw(r.access), r.key).is_ok()
            });
    let signaled = snap.sq_sig_all || r.flags & SendFlags::SIGNALED != 0;
    let t = Track::new(r.wr_id, WrOpcode::RegMr, signaled, st.psn, 0);
    finish(st, t, ok, WcStatus::MwBindErr)
}

/// Executes `w` when it is a local operation (LOCAL_INV or BIND_MW); `None` when it sends
/// packets.
pub(super) fn execute(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: &mut SendState,
    w: &SendWqe,
    track: Track,
) -> Option<Start> {
    match w.opcode {
        WrOpcode::LocalInv => {
            let ok = rkey::invalidate(qp.device(), w.ex, snap.pd, None).is_ok();
            Some(finish(st, track, ok, WcStatus::LocProtErr))
        }
        WrOpcode::BindMw => {
            let ok = bind_mw(qp, snap, w).is_ok();
            Some(finish(st, track, ok, WcStatus::MwBindErr))
        }
        _ => None,
    }
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
        access: AccessFlags::from_raw(access),
    };
    mw.bind(&req, mr.as_deref(), snap.pd, qp.mw_token())
}
