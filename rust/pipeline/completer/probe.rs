// SPDX-License-Identifier: GPL-2.0

//! Probes, the completer's half (selective recovery, [`crate::proto::recovery`]): how a
//! sequence NAK is recovered (the packet it names alone, or going back to it), what the answer
//! to a probe shows of the peer, and what goes next once a probe sent alone is answered.

use super::{
    rewind,
    SendState, //
};
use crate::{
    counters::Counter,
    device::RrxeDevice,
    ib::Qp,
    pipeline::state::{
        AloneWhy,
        ProbeWay, //
    },
    proto::{
        psn::{
            cmp_psn,
            Psn, //
        },
        recovery::PeerRecovery,
        retry::{
            RetryCause,
            RetryDecision, //
        },
    },
};
use core::cmp::Ordering;

/// An answer acknowledged through `acked` while a probe waited: what it shows of the peer
/// ([`PeerRecovery::answered`]). A tail probe's answer shows nothing.
pub(super) fn learn(st: &mut SendState, acked: Psn) {
    if let Some(probe) = st.probe_out().filter(|_| !st.probe_is_tail()) {
        let sent_beyond = cmp_psn(st.sent_to, probe.next()) == Ordering::Greater;
        st.peer.answered(probe, acked, sent_beyond);
    }
}

/// Goes back to the oldest unfinished WQE, using one transport retry, unless a response set it
/// off after an earlier retry without progress since ([`crate::proto::retry::RetryCounter`]);
/// fails the WQE when no retry is left. Returns whether the QP must move to ERR.
///
/// With `probe`, a peer that keeps packets past a gap (or may) gets only the packet at that
/// PSN again, alone, and the requester waits for its answer: without going back when a tracked
/// WQE holds the packet ([`crate::pipeline::state::ProbeWay::Alone`]), else after going back to
/// it.
pub(super) fn retry_probing(
    qp: &Qp<RrxeDevice>,
    st: &mut SendState,
    cause: RetryCause,
    probe: Option<Psn>,
) -> bool {
    match st.retry.decide(cause) {
        RetryDecision::Retry => {
            // What goes again gets a whole timeout: the timer armed for the first round must
            // not retry it at once.
            st.progressed |= cause == RetryCause::Response;
            let probe = probe.filter(|_| st.peer.probes() && crate::params::selective_recovery());
            send_again(st, probe);
            false
        }
        RetryDecision::Ignore => false,
        RetryDecision::Exhausted => {
            let status = st.retry.exhausted_status();
            super::fail_oldest(st, status);
            qp.counts().inc(Counter::RetryExceededErr);
            true
        }
    }
}

/// What a retry sends again: with `probe`, the packet at that PSN alone, without going back
/// when a tracked WQE holds it, else after going back to it; without, everything from the
/// oldest unfinished WQE.
pub(super) fn send_again(st: &mut SendState, probe: Option<Psn>) {
    match probe {
        Some(p) if st.can_send_alone(p) => send_alone(st, p, AloneWhy::Nak),
        _ => {
            rewind(st);
            st.probe = probe;
        }
    }
}

/// The packet at `p` goes alone next, without going back.
fn send_alone(st: &mut SendState, p: Psn, why: AloneWhy) {
    st.probe_alone(p, why);
    st.tail_probe_at = None;
    // The packet being timed may be acknowledged only after the gap is filled.
    st.rtt.cancel();
}

/// A probe sent alone at `probe` (for `why`) was answered by an ACK through `acked` (at or
/// past it), and the packets after `acked` are still unacknowledged. A peer that kept what
/// followed a gap NAKs the next gap once it executed what it kept; an ACK alone says it holds
/// nothing past `acked + 1` that it could execute:
/// - a peer that drops what follows a gap (or may, and has not shown otherwise) gets
///   everything after `acked` again (go-back-N, as a C rxe peer expects);
/// - so does a peer known to keep, when this probe went for that reason already and the answer
///   stops at it: everything from it on was lost or refused (its store was full);
/// - a tail probe went because answers were late, not because the peer NAKed a gap: its
///   answer shows no gap, and unless the peer is known to drop what follows one, nothing goes
///   back (the answers after it are mostly still on their way);
/// - else the packet after `acked` was lost too (bursty loss), and goes alone next, unless it
///   is the request of a READ or atomic, whose answer is on its way or is asked for by its own
///   probe.
///
/// Otherwise the probe is over. An ACK past it usually moves the oldest unacknowledged PSN on,
/// which ends it anyway; not behind a READ still missing responses (the ACK cannot complete
/// what follows the READ), and a probe left waiting went again and again while no tail probe
/// asked for the READ (NVMe-oF at 5 % loss sat out its retransmission timeout so, 1-2 s each).
pub(super) fn answered_alone(st: &mut SendState, probe: Psn, why: AloneWhy, acked: Psn) {
    if cmp_psn(acked, probe) == Ordering::Less {
        return;
    }
    let next = acked.next();
    if cmp_psn(st.sent_to, next) == Ordering::Greater {
        let late_tail = why == AloneWhy::Tail && st.peer != PeerRecovery::GoBackN;
        if (st.peer != PeerRecovery::Keeps && !late_tail)
            || (why == AloneWhy::Next && acked == probe)
        {
            rewind(st);
            return;
        }
        if st.can_send_data_alone(next) {
            send_alone(st, next, AloneWhy::Next);
            return;
        }
    }
    st.probe = None;
    st.probe_way = ProbeWay::Rewound;
}
