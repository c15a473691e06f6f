// SPDX-License-Identifier: GPL-2.0

//! Tail loss probes (`Documentation/pipeline.rst`, "Selective recovery"): when the last packets
//! of a burst, or their ACKs, are lost, nothing after them makes the peer NAK, and the requester
//! used to wait for its retransmission timeout (67 ms at perftest's timeout 14; seconds at the
//! timeouts rdma_cm gives NVMe-oF) with nothing else to send. The same when the NAK of a gap is
//! lost while the sender waits for room in its window. Now a requester that has nothing more it
//! may send and packets unacknowledged sends its oldest unacknowledged packet again as a probe
//! after twice the connection's smoothed round-trip time, or more when it varies
//! ([`crate::proto::recovery::tail_probe_delay_ns`]), without using a retry: a peer that had it
//! acknowledges everything it has, one that lost it executes it (and what it kept after it)
//! or NAKs the gap before it. The QP's high-resolution timer wakes it.

use super::super::state::{
    AloneWhy,
    ProbeWay,
    SendState,
    SendWait,
    Snapshot, //
};
use crate::{
    counters::Counter,
    device::RrxeDevice,
    ib::Qp,
    kernel_ext::now_ns,
    proto::{
        psn::cmp_psn,
        qp_state::QpType,
        read_gaps::ReadAsk,
        recovery::{
            tail_probe_delay_ns,
            READ_PROBE_WHOLE_PKTS, //
        },
        wqe::WrOpcode, //
    },
    sync::ObjRef,
};
use core::cmp::Ordering;

/// Whether `st` has packets the peer has not acknowledged and nothing holds the requester
/// back but their answer (no probe or RNR wait runs).
fn unanswered(st: &SendState) -> bool {
    st.count > 0
        && cmp_psn(st.sent_to, st.comp_psn) == Ordering::Greater
        && st.probe.is_none()
        && st.wait == SendWait::None
}

/// At the start of a run: a tail probe that is due goes now, no retry used: the packet at the
/// oldest unacknowledged PSN alone, built again from its WQE while what followed it stays sent
/// ([`crate::pipeline::state::ProbeWay::Alone`]); where no tracked WQE holds it, after going
/// back to it ([`super::rewind`]). The sender waits for its answer at most as long again: then
/// a probe sent alone goes again, and after going back the sender goes on from the probe (a
/// lost probe or answer must not hold back what is posted meanwhile until the timeout).
pub(super) fn probe_if_due(qp: &Qp<RrxeDevice>, snap: &Snapshot, st: &mut SendState) {
    let Some(at) = st.tail_probe_at else {
        return;
    };
    let now = now_ns();
    if now < at {
        return;
    }
    st.tail_probe_at = None;
    if st.probe.is_some() && st.probe_way == ProbeWay::Tail {
        st.probe = None;
        st.probe_way = ProbeWay::Rewound;
        return;
    }
    if st.alone_out().is_some() {
        // A probe sent alone, not answered: it or its answer was lost (and the peer NAKs a
        // gap only once). It goes again.
        st.alone_sent(false);
        st.probes_unanswered = st.probes_unanswered.saturating_add(1);
        return;
    }
    if !unanswered(st) || st.oldest_unfinished().is_none() {
        return;
    }
    if crate::params::selective_recovery() && read_probe(st) {
        // The READ's run goes again alone: everything after it stays tracked and placed. When
        // WQEs before it wait for their ACK, their oldest packet goes alone too: the peer may
        // be missing that one, with the READ's request kept behind it (its NAK was lost).
        let p = st.comp_psn;
        if st.can_send_data_alone(p) {
            st.probe_alone(p, AloneWhy::Tail);
        }
        qp.counts().inc(Counter::TailProbes);
        return;
    }
    if answer_follows(st) {
        // A READ or atomic after it is unanswered: its answer acknowledges everything before
        // it, and its loss is that READ's to probe. Going back would send it again whole.
        return;
    }
    let p = st.comp_psn;
    if crate::params::selective_recovery() && st.can_send_alone(p) {
        // Alone: a peer that had it answers with what it has, and nothing else goes again
        // unless the answer shows it lost (a probe that a slow answer made needless costs one
        // packet).
        st.probes_unanswered = st.probes_unanswered.saturating_add(1);
        st.probe_alone(p, AloneWhy::Tail);
        qp.counts().inc(Counter::TailProbes);
        return;
    }
    let unanswered = st.probes_unanswered;
    super::rewind(st);
    st.probes_unanswered = unanswered.saturating_add(1);
    st.probe = Some(st.psn);
    st.probe_way = ProbeWay::Tail;
    qp.counts().inc(Counter::TailProbes);
    if let Some(d) = delay(snap, st) {
        st.tail_probe_at = Some(now.saturating_add(d));
        qp.pipe().pace.arm_ns(&ObjRef::new(qp), d.max(1));
    }
}

/// A tail probe for the oldest unanswered READ (selective recovery): a request asking for its
/// oldest unacknowledged response alone, in place of any ask still waiting (a lost tail is one
/// response more often than many, and a response only late comes twice at worst). When none
/// came, a READ of at most
/// [`READ_PROBE_WHOLE_PKTS`] responses is asked for whole, a larger one by its first response.
/// The answer to such an ask comes after everything the responder sent before it: what is
/// still missing then is asked for at once (the completer's `read_gaps::recover`), whether it
/// was lost, cut short by the ask (both responders answer a duplicate READ over the range it
/// names), or never sent (a responder that never saw the READ takes the ask for a new one).
/// Each probe the peer leaves unanswered doubles the wait for the next ([`delay`]): a peer
/// that answers nothing gets one every half timeout until the retransmission timer gives up.
///
/// A READ behind WQEs that wait for their ACK (a WRITE, then the READ) is probed the same way
/// when none of its responses came (they would have acknowledged those WQEs): its request, or
/// all its responses, were lost, and nothing else would make the peer answer before the
/// retransmission timeout; going back would send the WQEs before it again.
///
/// `false` when no READ is to be probed: the first unfinished WQE that waits for an answer is
/// no READ with responses still to come.
pub(super) fn read_probe(st: &mut SendState) -> bool {
    let Some(t) = st.first_unanswered().filter(|t| {
        t.opcode == WrOpcode::RdmaRead && cmp_psn(st.comp_psn, t.last_psn) != Ordering::Greater
    }) else {
        return false;
    };
    st.probes_unanswered = st.probes_unanswered.saturating_add(1);
    // An ask still waiting for its answer is replaced: asking for its whole run again would
    // have the responder send again what of the answer is only late (answers come in bursts
    // through a queue or a stalled vCPU: one capture had 25 of an ask's 64 responses in and
    // the rest on their way when the whole run was asked for again).
    // Its oldest unacknowledged response, or all of a small one none of whose responses came.
    let none_came = cmp_psn(st.comp_psn, t.first_psn) != Ordering::Greater;
    let start = if none_came { t.first_psn } else { st.comp_psn };
    let small = t.last_psn.distance_from(t.first_psn) < READ_PROBE_WHOLE_PKTS;
    let end = if none_came && small {
        t.last_psn
    } else {
        start
    };
    let late_end = st.read_ask.filter(|a| a.after.is_some()).map(|a| a.end);
    st.read_ask = Some(ReadAsk {
        late_end,
        ..ReadAsk::new(start, end)
    });
    true
}

/// Whether a READ or atomic after the oldest unfinished WQE waits for its answer.
fn answer_follows(st: &mut SendState) -> bool {
    let Some(first) = st.oldest_unfinished() else {
        return false;
    };
    (first + 1..st.count).any(|i| {
        st.entry(i)
            .is_some_and(|t| t.done.is_none() && t.wants_response())
    })
}

/// How long a tail probe waits ([`tail_probe_delay_ns`]).
fn delay(snap: &Snapshot, st: &SendState) -> Option<u64> {
    let backoff = u32::from(st.probes_unanswered.min(16));
    tail_probe_delay_ns(
        st.rtt
            .answer_wait_ns()
            .map(|ns| ns.saturating_mul(1u64 << backoff)),
        crate::pipeline::timeout_us(snap.timeout, 0),
    )
}

/// A probe sent alone waits for its answer as long as a tail probe would (twice as long for
/// each earlier one left unanswered), then goes again ([`probe_if_due`]); without a round-trip
/// time sampled yet, the retransmission timer covers its loss.
pub(super) fn plan_answer_wait(qp: &Qp<RrxeDevice>, snap: &Snapshot, st: &mut SendState) {
    if !crate::params::tail_probes() {
        return;
    }
    if let Some(d) = delay(snap, st) {
        st.tail_probe_at = Some(now_ns().saturating_add(d));
        qp.pipe().pace.arm_ns(&ObjRef::new(qp), d.max(1));
    }
}

/// At the expiry of the QP's high-resolution timer, when no paced packet waits for it: whether
/// a tail probe is due, so that the expiry must run the QP. The timer is not cancelled when an
/// answer makes the probe needless (a latency test's answer comes long before it), and
/// [`plan`] leaves an earlier expiry armed: such an expiry finds no probe planned, or one
/// planned for later, for which it arms the timer again; either way the QP does not run for
/// nothing.
pub(crate) fn tail_probe_due(qp: &Qp<RrxeDevice>) -> bool {
    let st = qp.pipe().send.lock();
    let Some(at) = st.tail_probe_at else {
        return false;
    };
    let now = now_ns();
    if at <= now {
        return true;
    }
    qp.pipe().pace.arm_ns(&ObjRef::new(qp), at - now);
    false
}

/// The peer is answering (a READ response placed past a gap): a tail probe planned goes later,
/// a full wait from now, and one is planned if none was. Not cancelled: the requester may not
/// run again before the timeout (nothing more to send, or held back), and when the answers stop
/// short (the last response of the oldest READ, or the answer to its ask, was lost) the probe
/// is all that asks again (a capture of NVMe-oF at 5 % loss had the target wait 1.6 s for its
/// retransmission timer after the last response it placed). A probe waiting for its answer
/// waits a full round trip from now too.
pub(crate) fn replan(qp: &Qp<RrxeDevice>, snap: &Snapshot, st: &mut SendState) {
    match replan_of(st) {
        Replan::AnswerWait => plan_answer_wait(qp, snap, st),
        Replan::TailProbe => plan(qp, snap, st),
        Replan::Nothing => {}
    }
}

/// What a placed READ response changes in the requester's plans ([`replan_of`]).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Replan {
    /// A probe waits for its answer: its deadline moves a round trip on.
    AnswerWait,
    /// No probe waits: the tail probe is planned again from now.
    TailProbe,
    /// A probe is still to go: its wait is planned when it goes.
    Nothing,
}

/// Decides [`replan`]'s step and forgets the deadline it replaces. The deadline of a probe
/// that waits for its answer is moved, never dropped: a lost answer to a probe sent alone
/// would otherwise wait for the retransmission timeout.
pub(super) fn replan_of(st: &mut SendState) -> Replan {
    match (st.probe, st.tail_probe_at) {
        (Some(_), Some(_)) => Replan::AnswerWait,
        (Some(_), None) => Replan::Nothing,
        (None, _) => {
            st.tail_probe_at = None;
            Replan::TailProbe
        }
    }
}

/// At the end of a run that has nothing more to send: a tail probe is planned for later, and
/// the QP's high-resolution timer armed for it (shared with pacing: it fires at the earlier
/// deadline, and the run it wakes plans again).
pub(super) fn plan(qp: &Qp<RrxeDevice>, snap: &Snapshot, st: &mut SendState) {
    if snap.qp_type != QpType::Rc || !unanswered(st) || !crate::params::tail_probes() {
        return;
    }
    let now = now_ns();
    let at = match st.tail_probe_at {
        Some(at) => at,
        None => {
            let Some(d) = delay(snap, st) else {
                return;
            };
            let at = now.saturating_add(d);
            st.tail_probe_at = Some(at);
            at
        }
    };
    qp.pipe()
        .pace
        .arm_ns(&ObjRef::new(qp), at.saturating_sub(now).max(1));
}
