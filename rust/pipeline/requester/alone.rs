// SPDX-License-Identifier: GPL-2.0

//! A probe sent alone (selective recovery, [`ProbeWay::Alone`]): the packet a sequence NAK
//! names goes again by itself, rebuilt from the WQE that holds its PSN, while the sender stays
//! where it was. What followed the lost packet stays sent and tracked: a peer that kept it
//! executes it once the probe fills the gap, and its answers (READ responses among them) find
//! the WQEs waiting. Going back instead (the sender's other way, [`super::rewind`]) dropped
//! their entries, so the responses to the READs the peer had kept came in before the READs
//! were tracked again, were dropped as stale, and the READs went again whole: NVMe-oF at 5 %
//! loss lost most of its throughput that way.
//!
//! The WQE is read again from the send queue into a slot of its own (the one being sent keeps
//! its own) and must still be the operation its entry tracks. The packet gets the PSN, the
//! opcode for its place in the message and the payload from its offset, as when it first went.

use super::{
    mtu_of,
    packet, //
};
use crate::{
    counters::Counter,
    device::RrxeDevice,
    ib::Qp,
    pipeline::{
        state::{
            ProbeWay,
            Progress,
            SendState,
            Snapshot, //
        },
        TxItem,
    },
    proto::{
        cqe::WcStatus,
        psn::Psn,
        seq,
        wqe::WrOpcode,
        wqe_parse, //
    },
};

/// Sends the probe's packet alone if it is due ([`SendState::alone_due`]). `Ok(None)` when
/// none is due or its payload waits for a page being faulted in. A WQE that no longer reads as
/// the operation its entry tracks (a user rewrote a posted slot) is recovered the other way:
/// the sender goes back to the probe. `Err` when building the packet failed its WQE (its
/// buffers went bad since it first went): the QP must move to ERR.
pub(super) fn send(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: &mut SendState,
) -> Result<Option<TxItem>, ()> {
    let Some(p) = st.alone_due() else {
        return Ok(None);
    };
    let Some(i) = st.holding(p) else {
        // Acknowledged meanwhile: nothing to probe.
        st.probe = None;
        st.probe_way = ProbeWay::Rewound;
        return Ok(None);
    };
    let Some(progress) = rebuild(qp, snap, st, i, p) else {
        super::rewind(st);
        st.probe = Some(p);
        return Ok(None);
    };
    let saved = (st.cur.take(), st.psn, st.since_ackreq);
    core::mem::swap(&mut st.slot, &mut st.alone_slot);
    st.cur = Some(progress);
    st.psn = p;
    let built = packet::next_packet(qp, snap, st, None);
    core::mem::swap(&mut st.slot, &mut st.alone_slot);
    (st.cur, st.psn, st.since_ackreq) = saved;
    match built {
        Ok(Some(item)) => {
            st.alone_sent(true);
            st.alone_sent_ns = crate::kernel_ext::now_ns();
            qp.counts().inc(Counter::ResentAlone);
            super::tail::plan_answer_wait(qp, snap, st);
            Ok(Some(item))
        }
        Ok(None) => Ok(None),
        Err(status) => {
            fail(st, i, status);
            Err(())
        }
    }
}

/// The progress of entry `i`'s WQE at its packet of PSN `p`, read again from the send queue
/// into `st.alone_slot`; `None` when the slot no longer holds the operation the entry tracks.
fn rebuild(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: &mut SendState,
    i: usize,
    p: Psn,
) -> Option<Progress> {
    let t = *st.entry(i)?;
    let n = u32::try_from(i).ok()?;
    let len = qp.sq_read_nth(n, &mut st.alone_slot).ok()??;
    let copied = st.alone_slot.get(..len)?;
    let w =
        wqe_parse::parse_send_wqe(copied, snap.qp_type, qp.max_send_sge(), qp.max_inline()).ok()?;
    if (w.wr_id, w.opcode, w.length) != (t.wr_id, t.opcode, t.length) {
        return None;
    }
    let mtu = mtu_of(snap);
    let k = p.distance_from(t.first_psn);
    if w.opcode.wants_response() {
        // A READ's or atomic's request, whole: it takes the first of the WQE's PSNs.
        return (k == 0).then_some(Progress {
            wqe: w,
            offset: 0,
            sent: 0,
            npkts: 1,
            mtu,
        });
    }
    let npkts = if w.opcode == WrOpcode::Flush {
        1
    } else {
        seq::packets_for(w.length, mtu)?
    };
    (k < npkts).then_some(Progress {
        wqe: w,
        offset: k.checked_mul(mtu)?,
        sent: k,
        npkts,
        mtu,
    })
}

/// Fails entry `i`'s WQE with `status`.
fn fail(st: &mut SendState, i: usize, status: WcStatus) {
    st.probe = None;
    st.probe_way = ProbeWay::Rewound;
    if let Some(t) = st.entry(i) {
        t.done = Some(status);
    }
}
