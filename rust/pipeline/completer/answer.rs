// SPDX-License-Identifier: GPL-2.0

//! The completer's answers with data: READ responses and atomic ACKs. Each must answer the
//! oldest unanswered READ or atomic, by kind and PSN, before it acknowledges anything, and a READ
//! response must fit its place in the READ; its data goes into the local buffers the request's
//! sink copied when it started.

use super::{
    ack_up_to,
    progress,
    psn_le,
    read_gaps,
    retry,
    CompOutcome,
    SendGuard, //
};
use crate::{
    counters::DropReason,
    device::RrxeDevice,
    ib::Qp,
    pipeline::{
        mem,
        odp::Side,
        state::{
            SendState,
            Snapshot,
            Track, //
        },
    },
    proto::{
        cqe::WcStatus,
        opcode::{
            OpKind,
            Position, //
        },
        packet::ParsedHeaders,
        psn::{
            cmp_psn,
            Psn, //
        },
        retry::RetryCause,
        window::Outstanding,
        wqe::WrOpcode,
    },
};
use core::cmp::Ordering;
use kernel::prelude::*;

/// The READ or atomic a response at `psn` answers, if it is of the response's kind (`is_read`:
/// a READ response) and no READ or atomic before it is unanswered: its index. Looked up before
/// the response acknowledges anything: a response that answers nothing tracked (forged, or
/// from before a rewind) changes nothing.
fn answered_wqe(st: &mut SendState, psn: Psn, is_read: bool) -> Option<usize> {
    let first = st.oldest_unfinished()?;
    (first..st.count).find_map(|i| {
        let t = *st.entry(i)?;
        if t.done.is_some() || !t.wants_response() {
            return None;
        }
        // The first unanswered READ or atomic decides: a response for a later one is not
        // for anything the completer can take now.
        let inside = psn_le(t.first_psn, psn) && psn_le(psn, t.last_psn);
        let kind = t.opcode.answered_by_read_response() == is_read;
        Some((inside && kind).then_some(i))
    })?
}

/// A READ response or atomic ACK: it must answer the oldest unanswered READ or atomic, by
/// kind and PSN ([`answered_wqe`]); then it acknowledges everything before that one, must be
/// its next response in PSN order (one from further on means some were lost: the READ is asked
/// for again, once per gap), and must fit its place in the READ (one MTU until the last, the
/// last carrying the rest; [`window::read_response_fits`]). Its data (the original value for
/// an atomic) goes into the local buffers the request's sink copied. The last response
/// completes the WQE and frees its read credit.
pub(super) fn on_answer(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    mut st: SendGuard<'_>,
    h: &ParsedHeaders,
    psn: Outstanding,
    payload: &[u8],
) -> CompOutcome {
    let mut out = CompOutcome::default();
    let is_read = h.info.kind == OpKind::ReadResponse;
    let selective = crate::params::selective_recovery();
    if is_read && selective {
        if let Some(out) = place_past_gap(qp, snap, &mut st, (h, payload), psn) {
            return out;
        }
    }
    if answered_wqe(&mut st, psn.psn(), is_read).is_none() {
        return CompOutcome::drop(DropReason::StaleResponse);
    }
    // Everything before the READ/atomic it answers is implicitly acknowledged.
    ack_up_to(&mut st, psn.acks_before());
    let Some((i, t)) = answered(qp, &mut st, psn.psn(), &mut out) else {
        return out;
    };
    let is_data = t.opcode == WrOpcode::RdmaRead;
    let index = psn.psn().distance_from(t.first_psn);
    if !shape_fits(snap, &st, &t, index, h, payload) {
        return CompOutcome::drop(DropReason::ResponseLength);
    }
    let ends = h.info.position.ends_message();
    let orig;
    let data: &[u8] = if is_read {
        payload
    } else {
        let Some(a) = h.headers.atomic_ack_eth else {
            return CompOutcome::drop(DropReason::Malformed);
        };
        orig = a.orig.to_ne_bytes();
        &orig
    };
    let offset = index.saturating_mul(snap.mtu);
    let delivered = if is_read && !is_data {
        Ok(())
    } else {
        deliver_local(qp, snap, &mut st, i, offset, data)
    };
    let status = match delivered {
        Ok(()) => WcStatus::Success,
        // A local page is being faulted in: the response is handled again after.
        Err(e) if e == EAGAIN => return out,
        Err(_) => WcStatus::LocProtErr,
    };
    st.comp_psn = psn.psn().next();
    progress(&mut st);
    // A READ's first response ends the round-trip sample of its request: what a tail probe
    // for a READ waits for has the time of the path its responses take.
    super::sample_rtt(qp, snap, &mut st, psn.psn());
    // A READ's last response completes it (an early LAST, at the end of a run asked for
    // again, does not).
    let last = if is_data {
        psn.psn() == t.last_psn
    } else {
        !is_read || ends
    };
    if last || status != WcStatus::Success {
        retire_answered(&mut st, i, status);
        out.fatal = status != WcStatus::Success;
    }
    if selective && !out.fatal {
        read_gaps::advance(&mut st);
        let early_end = is_data && ends && !last;
        let rest_missing = early_end && read_gaps::rest_missing(&st, t.last_psn);
        read_gaps::recover(&mut st, psn.psn(), rest_missing);
    }
    out
}

/// Whether a response at `index` of `t` (READ or atomic) has the shape of its answer: FLUSH
/// and ATOMIC WRITE are answered by one zero-length READ RESPONSE ONLY, a READ's responses
/// must fit their place ([`read_gaps::fits`]).
fn shape_fits(
    snap: &Snapshot,
    st: &SendState,
    t: &Track,
    index: u32,
    h: &ParsedHeaders,
    payload: &[u8],
) -> bool {
    let position = h.info.position;
    match (
        h.info.kind == OpKind::ReadResponse,
        t.opcode == WrOpcode::RdmaRead,
    ) {
        (true, false) => payload.is_empty() && position == Position::Only,
        (_, true) => read_gaps::fits(snap, st, t, index, position, payload.len()),
        (false, false) => true,
    }
}

/// A READ response past the oldest unacknowledged PSN: placed, once what it acknowledges
/// before its READ is retired; `None` when it is not one (the expected response goes the way
/// of [`on_answer`], looked up and acknowledged once).
fn place_past_gap(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: &mut SendState,
    response: (&ParsedHeaders, &[u8]),
    psn: Outstanding,
) -> Option<CompOutcome> {
    if psn.psn() == st.comp_psn {
        return None;
    }
    let j = read_gaps::read_of(st, psn.psn())?;
    ack_up_to(st, psn.acks_before());
    if psn.psn() == st.comp_psn {
        return None;
    }
    let out = read_gaps::place(qp, snap, st, response, psn.psn(), j);
    read_gaps::recover(st, psn.psn(), false);
    Some(out)
}

/// The READ or atomic of entry `i` is answered with `status`: finished, its read credit and
/// sink freed.
fn retire_answered(st: &mut SendState, i: usize, status: WcStatus) {
    if let Some(e) = st.entry(i) {
        e.done = Some(status);
    }
    if st.rd_outstanding > 0 {
        st.rd_outstanding -= 1;
        st.sinks.retire_oldest();
    }
}

/// The oldest unanswered READ or atomic (its index and entry) when `psn` is its next response.
/// Otherwise the packet is dropped; one from further into its range means responses were lost,
/// and the READ is asked for again, once for this gap (the responses still coming behind it
/// are dropped; the timer covers a lost retry).
fn answered(
    qp: &Qp<RrxeDevice>,
    st: &mut SendState,
    psn: Psn,
    out: &mut CompOutcome,
) -> Option<(usize, Track)> {
    let found = st.oldest_unfinished().and_then(|i| {
        let t = *st.entry(i)?;
        t.wants_response().then_some((i, t))
    });
    let Some((i, t)) = found else {
        out.dropped = Some(DropReason::StaleResponse);
        return None;
    };
    let in_range = psn_le(t.first_psn, psn) && psn_le(psn, t.last_psn);
    if in_range && psn == st.comp_psn {
        return Some((i, t));
    }
    let ahead = in_range && cmp_psn(psn, st.comp_psn) == Ordering::Greater;
    if ahead && st.asked_again != Some(st.comp_psn) {
        st.asked_again = Some(st.comp_psn);
        out.fatal = retry(qp, st, RetryCause::Response);
    } else {
        out.dropped = Some(DropReason::StaleResponse);
    }
    None
}

/// Writes response data into the local buffers of entry `i` at message byte `offset`: the
/// copy its sink took when the request started, never the ring.
pub(super) fn deliver_local(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: &mut SendState,
    i: usize,
    offset: u32,
    data: &[u8],
) -> Result {
    let sink = st.entry(i).and_then(|t| t.sink).ok_or(EINVAL)?;
    mem::scatter(qp, Side::Recv, snap, st.sinks.get(sink), offset, data)
}
