// SPDX-License-Identifier: GPL-2.0

//! The completer: reads the responder's answers to this QP's requests (ACKs and NAKs, READ
//! responses, atomic ACKs), retires the WQEs they cover in order, decides retransmission
//! (go-back-N on NAK, timeout or implicit NAK; RNR waits) and writes the completions.

use super::{
    requester::rewind,
    state::{
        ProbeWay,
        SendState,
        SendWait,
        Snapshot,
        Track, //
    },
};
use crate::sync::ObjRef;
use crate::{
    counters::{
        Counter,
        DropReason, //
    },
    device::RrxeDevice,
    ib::Qp,
    proto::{
        cqe::{
            self,
            Cqe,
            WcStatus, //
        },
        opcode::OpKind,
        packet::ParsedHeaders,
        psn::{
            cmp_psn,
            Psn, //
        },
        qp_state::QpType,
        retry::{
            RetryCause,
            RetryCounter, //
        },
        seq::{
            self,
            AckDecision, //
        },
        window::{
            AckedThrough,
            AnswerPsn,
            SendWindow, //
        },
        wqe::WrOpcode,
    },
    verbs::cq::{
        Pushed,
        RrxeCq, //
    },
};
use core::cmp::Ordering;
use kernel::prelude::*;

/// Whether `a` is at or before `b` (24-bit serial order).
fn psn_le(a: Psn, b: Psn) -> bool {
    cmp_psn(a, b) != Ordering::Greater
}

/// What a completer step asks of the engine.
#[derive(Default)]
pub(crate) struct CompOutcome {
    /// The QP must move to ERR.
    pub(crate) fatal: bool,
    /// A drop to count: why the packet changed nothing.
    pub(crate) dropped: Option<DropReason>,
}

impl CompOutcome {
    /// The packet is dropped for `reason`.
    fn drop(reason: DropReason) -> Self {
        Self {
            fatal: false,
            dropped: Some(reason),
        }
    }
}

/// Marks the oldest unfinished WQE as failed with `status`.
fn fail_oldest(st: &mut SendState, status: WcStatus) {
    if let Some(t) = st.oldest_unfinished().and_then(|i| st.entry(i)) {
        t.done = Some(status);
    }
}

/// Fails the request a NAK names: the oldest unfinished WQE, if `psn` is one of its PSNs.
/// `false` otherwise: a rewind took it back to be sent again (the responder answers it again
/// with the same NAK: its checks do not change), an unanswered READ or atomic comes first, or
/// the NAK names nothing of ours. Failing the oldest WQE whatever the PSN, as before, moved the
/// QP to ERR with no WQE failed when a retransmission timeout had rewound the sender just
/// before the NAK came (the debug kernel, `verbs_ops`: the WRITE completed flushed instead of
/// with a remote access error), and failed a READ for a later WRITE's NAK.
fn fail_at(st: &mut SendState, psn: Psn, status: WcStatus) -> bool {
    let Some(t) = st.oldest_unfinished().and_then(|i| st.entry(i)) else {
        return false;
    };
    let named = psn_le(t.first_psn, psn) && psn_le(psn, t.last_psn);
    if named {
        t.done = Some(status);
    }
    named
}

/// Progress resets the retry budgets, and ends the wait for a probe's answer.
fn progress(st: &mut SendState) {
    st.progressed = true;
    st.retry = RetryCounter::new(st.retry_cnt);
    st.rnr_retry = RetryCounter::new_rnr(st.rnr_retry_cnt);
    st.probe = None;
    st.probe_way = ProbeWay::Rewound;
    st.tail_probe_at = None;
    st.probes_unanswered = 0;
}

/// Moves the packets of the WQE being sent forward to `p + 1` when the peer acknowledged
/// through `p` (`p` inside it, at or past the next PSN to send): a late acknowledgement, or
/// the answer to a probe from a peer that kept what followed it. Those packets are not sent
/// again (IBA 9.7.5.1.1: a request may be resent from any packet).
fn skip_sending(st: &mut SendState, p: Psn) {
    let k = p.next().distance_from(st.psn);
    let Some(cur) = st.cur.as_mut() else {
        return;
    };
    if k == 0 || k >= cur.npkts.saturating_sub(cur.sent) {
        return;
    }
    cur.sent += k;
    cur.offset = cur.offset.saturating_add(k.saturating_mul(cur.mtu));
    st.psn = p.next();
    st.since_ackreq = 0;
}

/// Retires SEND/WRITE WQEs whose last PSN is at or before `acked`'s last. Returns `true` when
/// a READ or atomic at or before it is still unanswered (an implicit NAK: its responses were
/// lost). `acked` comes from an answer inside the send window ([`SendWindow::classify`]): it
/// never reaches past the newest PSN sent.
///
/// The oldest PSN not yet acknowledged moves up to `p + 1`, but never into an unanswered READ
/// or atomic: only its own responses, in order, move it through those PSNs. A response from
/// further into a READ says nothing about the responses before it; taking it as an
/// acknowledgement would skip them, and the READ would complete with their bytes missing.
///
/// During a retransmission `p` may lie past the next PSN to send: the acknowledgement of the
/// first transmission came late. A WQE it covers whole is done even while being sent again
/// (the rest of it is not sent); the sequence goes on after it. WQEs the rewind untracked are
/// done when they are started again ([`SendState::acked_ahead`]), before any packet of them
/// goes. Without this the requester relied on the peer acknowledging the duplicates, which a
/// peer that completed the message and destroyed its QP never does: rc_pingpong's server used
/// up its retries that way.
fn ack_up_to(st: &mut SendState, acked: AckedThrough) -> bool {
    let p = acked.last();
    let sending_last = st.cur.is_some();
    let count = st.count;
    let mut i = 0;
    let mut moved = false;
    let mut implicit_nak = false;
    // The first PSN of the oldest unanswered READ or atomic, if one stopped the walk.
    let mut answer_first = None;
    while let Some(t) = st.entry(i) {
        if t.done.is_some() {
            i += 1;
            continue;
        }
        if t.wants_response() {
            implicit_nak = psn_le(t.first_psn, p);
            answer_first = Some(t.first_psn);
            break;
        }
        if !psn_le(t.last_psn, p) {
            // Acknowledged in part while being sent again: only the rest goes.
            if sending_last && i + 1 == count && psn_le(st.psn, p) {
                skip_sending(st, p);
                moved = true;
            }
            break;
        }
        t.done = Some(WcStatus::Success);
        let last_psn = t.last_psn;
        moved = true;
        i += 1;
        if sending_last && i == count {
            // Acknowledged before it was sent whole again: the sending stops here.
            st.cur = None;
            st.psn = last_psn.next();
            st.since_ackreq = 0;
            break;
        }
    }
    // Past every tracked WQE and past the next PSN to send: a late acknowledgement after a
    // rewind. The WQEs it covers are done when they are started again.
    if i >= st.count && psn_le(st.psn, p) {
        st.acked_ahead = Some(match st.acked_ahead {
            Some(a) if psn_le(p, a) => a,
            _ => p,
        });
        moved = true;
    }
    let mut next = p.next();
    if let Some(first) = answer_first {
        if cmp_psn(next, first) == Ordering::Greater {
            next = first;
        }
    }
    // Not past what is being sent again: the WQEs after it are not tracked yet (they are sent
    // again, and the peer acknowledges them as duplicates).
    if cmp_psn(next, st.psn) == Ordering::Greater {
        next = st.psn;
    }
    if cmp_psn(next, st.comp_psn) == Ordering::Greater {
        st.comp_psn = next;
        moved = true;
    }
    if moved {
        progress(st);
    }
    implicit_nak
}

/// Goes back to the oldest unfinished WQE, using one transport retry, unless a response set it
/// off after an earlier retry without progress since ([`RetryCounter::decide`]); fails the WQE
/// when no retry is left. Returns whether the QP must move to ERR.
fn retry(qp: &Qp<RrxeDevice>, st: &mut SendState, cause: RetryCause) -> bool {
    probe::retry_probing(qp, st, cause, None)
}

/// The send state, locked.
type SendGuard<'a> = kernel::sync::lock::Guard<'a, SendState, crate::sync::SpinLockIrqBackend>;

/// The window of PSNs `st` has sent and the peer has not acknowledged.
fn window_of(st: &SendState) -> SendWindow {
    SendWindow::new(st.comp_psn, st.sent_to)
}

/// An answer through `through` (an ACK, or the first response to a READ or atomic) may end
/// the running round-trip sample; the shortest round trip then is shared with the device's
/// other QPs to the same destination ([`crate::proto::path_rtt`]).
fn sample_rtt(qp: &Qp<RrxeDevice>, snap: &Snapshot, st: &mut SendState, through: Psn) {
    // Most answers end no sample: no clock read or path lookup for them (every READ response
    // comes here).
    if !st.rtt.ends_with(through) {
        return;
    }
    let dev = qp.device();
    let dgid = &snap.av.dgid;
    if let Some(min) = st.rtt.acked(
        through,
        crate::kernel_ext::now_ns(),
        dev.path_min_rtt_ns(dgid),
    ) {
        dev.path_rtt_sampled(dgid, min);
    }
}

/// Handles a response packet for `qp`'s requests: an ACK or NAK ([`ack::on_ack`]), or a READ
/// response or atomic ACK ([`answer::on_answer`]). A UC QP gets none. Every answer is classified
/// against the send window before it changes anything: one for a PSN never sent (forged, or
/// from a broken peer) or already acknowledged is dropped and counted.
pub(crate) fn on_response(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    h: &ParsedHeaders,
    payload: &[u8],
) -> CompOutcome {
    if snap.qp_type != QpType::Rc {
        return CompOutcome::drop(DropReason::OpcodeForQpType);
    }
    let mut st = qp.pipe().send.lock();
    // The snapshot may be older than a move to ERR: after it, nothing is answered.
    if !st.open {
        return CompOutcome::drop(DropReason::QpState);
    }
    let psn = match window_of(&st).classify(h.headers.bth.psn) {
        AnswerPsn::Outstanding(psn) => psn,
        AnswerPsn::Stale => {
            st.answered = true;
            return CompOutcome::drop(DropReason::StaleResponse);
        }
        AnswerPsn::Unsent => return CompOutcome::drop(DropReason::ResponseUnsent),
    };
    st.answered = true;
    match h.info.kind {
        OpKind::Ack => ack::on_ack(qp, snap, st, h, psn),
        OpKind::ReadResponse | OpKind::AtomicAck => {
            answer::on_answer(qp, snap, st, h, psn, payload)
        }
        _ => CompOutcome::drop(DropReason::OpcodeForQpType),
    }
}

/// Looks at an expired timer: resumes after an RNR delay, or retransmits when nothing was
/// acknowledged for a whole timeout. Returns whether the QP must move to ERR.
pub(crate) fn on_timer(qp: &Qp<RrxeDevice>, snap: &Snapshot) -> CompOutcome {
    let mut out = CompOutcome::default();
    let pipe = qp.pipe();
    let mut st = pipe.send.lock();
    if !st.timer_fired || !st.open {
        return out;
    }
    st.timer_fired = false;
    if st.wait == SendWait::Rnr {
        st.wait = SendWait::None;
        return out;
    }
    if st.oldest_unfinished().is_none() {
        return out;
    }
    if st.progressed {
        st.progressed = false;
    } else {
        qp.counts().inc(Counter::CompleterRetryErr);
        out.fatal = retry(qp, &mut st, RetryCause::Timeout);
    }
    let retries = st.retry_cnt.saturating_sub(st.retry.left());
    let silent = out.fatal && !st.answered;
    drop(st);
    if silent {
        silent::report(qp, snap, retries);
    }
    if let Some(us) = super::timeout_us(snap.timeout, retries) {
        pipe.timer.arm(&ObjRef::new(qp), us);
    }
    out
}

/// What [`complete_done`] did.
pub(crate) struct Retired {
    /// WQEs were retired: the tracking window has room again.
    pub(crate) any: bool,
    /// One failed: the QP must move to ERR.
    pub(crate) failed: bool,
}

/// Retires finished WQEs in order: pops them from the send ring and writes completions for
/// the signaled and the failed ones, both under the send lock (the CQ's handlers run later,
/// from its notifiers, never inside: [`RrxeCq::push`]). Under that lock, so a move to ERR,
/// which closes the send side under it and only then flushes the ring, never writes a flushed
/// completion of a later WQE before the completion of an earlier one that this pass retired:
/// with the QP's runs on its home CPU and the move on another, that happened.
pub(crate) fn complete_done(qp: &Qp<RrxeDevice>, snap: &Snapshot) -> Retired {
    let pipe = qp.pipe();
    let mut any = false;
    loop {
        let mut n = 0;
        let mut failed = false;
        let mut pushed = Pushed::Written;
        {
            let mut st = pipe.send.lock();
            while n < RETIRE_BATCH {
                let Some(t) = st.entry(0).copied() else {
                    break;
                };
                let Some(status) = t.done else {
                    break;
                };
                st.pop();
                let _ = qp.sq_pop();
                n += 1;
                if let Some(p) = retire(qp, snap, &t, status) {
                    pushed = p;
                }
                if status != WcStatus::Success {
                    failed = true;
                    break;
                }
            }
        }
        super::after_push(qp, pushed);
        any |= n > 0;
        if failed || n < RETIRE_BATCH {
            return Retired { any, failed };
        }
    }
}

/// WQEs retired per hold of the send lock.
const RETIRE_BATCH: usize = 16;

/// Counts a retired WQE and writes its completion if it is signaled or failed: what the CQ
/// made of it, if written.
fn retire(qp: &Qp<RrxeDevice>, snap: &Snapshot, t: &Track, status: WcStatus) -> Option<Pushed> {
    if status == WcStatus::Success
        && matches!(
            t.opcode,
            WrOpcode::Send | WrOpcode::SendWithImm | WrOpcode::SendWithInv
        )
    {
        qp.counts().inc(Counter::RdmaSends);
    }
    if !t.signaled && status == WcStatus::Success {
        return None;
    }
    let opcode = cqe::wc_opcode_for(t.opcode);
    let c = Cqe::sent(t.wr_id, status, opcode, t.length, snap.qpn);
    Some(RrxeCq::push(qp.send_cq()?, &c, qp.handle(), false))
}

mod ack;
mod answer;
mod kunit;
mod probe;
mod read_gaps;
mod silent;
