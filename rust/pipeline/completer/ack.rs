// SPDX-License-Identifier: GPL-2.0

//! ACKs and NAKs: what a positive ACK retires and what it answers, and how each NAK is
//! recovered or fails its request.

use super::{
    ack_up_to,
    fail_at,
    fail_oldest,
    probe,
    read_gaps,
    retry,
    rewind,
    sample_rtt,
    CompOutcome,
    SendGuard,
    SendState,
    SendWait,
    Snapshot, //
};
use crate::{
    counters::{
        Counter,
        DropReason, //
    },
    device::RrxeDevice,
    ib::Qp,
    proto::{
        cqe::WcStatus,
        packet::ParsedHeaders,
        retry::RetryCause,
        seq::{
            self,
            AckDecision, //
        },
        window::Outstanding,
    },
    sync::ObjRef,
};

/// An ACK retires what it covers. A sequence error NAK goes back to the PSN the responder
/// expects (a transport retry); an RNR NAK waits for the timer it names and resends from
/// there (an RNR retry); any other NAK fails the request it names and the QP ([`fail_at`]).
pub(super) fn on_ack(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    mut st: SendGuard<'_>,
    h: &ParsedHeaders,
    psn: Outstanding,
) -> CompOutcome {
    let mut out = CompOutcome::default();
    let Some(aeth) = h.headers.aeth else {
        return CompOutcome::drop(DropReason::Malformed);
    };
    match seq::classify_ack(aeth, psn) {
        AckDecision::Ack { last_acked } => {
            out.fatal = on_positive_ack(qp, snap, &mut st, last_acked)
        }
        AckDecision::NakSeqErr { expected } => {
            probe::learn(&mut st, expected.psn().wrapping_sub(1));
            ack_up_to(&mut st, expected.acks_before());
            qp.counts().inc(Counter::RcvdSeqErr);
            let at = Some(expected.psn());
            out.fatal = probe::retry_probing(qp, &mut st, RetryCause::Response, at);
        }
        AckDecision::RnrNak { timer_us } => {
            ack_up_to(&mut st, psn.acks_before());
            qp.counts().inc(Counter::RcvdRnrErr);
            if st.rnr_retry.consume() {
                rewind(&mut st);
                st.wait = SendWait::Rnr;
                drop(st);
                qp.pipe()
                    .timer
                    .arm(&ObjRef::new(qp), u64::from(timer_us).max(10));
                return out;
            }
            let status = st.rnr_retry.exhausted_status();
            fail_oldest(&mut st, status);
            qp.counts().inc(Counter::RetryRnrExceededErr);
            out.fatal = true;
        }
        d @ (AckDecision::NakInvalidRequest
        | AckDecision::NakRemoteAccess
        | AckDecision::NakRemoteOperation) => {
            let implicit_nak = ack_up_to(&mut st, psn.acks_before());
            if fail_at(
                &mut st,
                psn.psn(),
                d.wc_status().unwrap_or(WcStatus::RemOpErr),
            ) {
                out.fatal = true;
            } else if implicit_nak {
                // An unanswered READ or atomic before the request the NAK names: its
                // responses were lost. It is asked for again, as C rxe's completer does;
                // the failed request is answered with the same NAK when it goes again.
                out.fatal = retry(qp, &mut st, RetryCause::Response);
            } else {
                out.dropped = Some(DropReason::StaleResponse);
            }
        }
        AckDecision::Ignore => out.dropped = Some(DropReason::Malformed),
    }
    out
}

/// A positive ACK through `last_acked`: what it acknowledges is retired, and it may answer a
/// probe or show READ responses lost. Returns whether the QP must move to ERR.
fn on_positive_ack(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: &mut SendState,
    last_acked: Outstanding,
) -> bool {
    // A probe's packet acknowledged sooner than a round trip after it went was acknowledged
    // on its first way: the answer teaches nothing.
    let sent_alone = st.alone_out();
    let too_soon = sent_alone.is_some() && st.too_soon_for_alone(crate::kernel_ext::now_ns());
    let alone = sent_alone.filter(|_| !too_soon);
    if !too_soon {
        probe::learn(st, last_acked.psn());
    }
    sample_rtt(qp, snap, st, last_acked.psn());
    // An unanswered READ before what this acknowledges lost responses: asked for again,
    // selectively when it can be, else from there on.
    let lost = ack_up_to(st, last_acked.acks_through());
    let asked =
        crate::params::selective_recovery() && read_gaps::recover(st, last_acked.psn(), lost);
    if lost && !asked {
        return retry(qp, st, RetryCause::Response);
    }
    if let Some((p, why)) = alone {
        probe::answered_alone(st, p, why, last_acked.psn());
    }
    false
}
