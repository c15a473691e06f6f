// SPDX-License-Identifier: GPL-2.0

//! Selective recovery of READ responses ([`crate::proto::read_gaps`]; module parameter
//! `recovery` bit 0): a response past a gap is placed at once, the oldest unanswered READ's
//! missing runs are asked for again one at a time, and the oldest PSN not yet acknowledged
//! moves over everything placed once the gap before it fills, completing every READ (and every
//! SEND or WRITE between them) it passes.

use super::{
    answer::deliver_local,
    progress,
    psn_le,
    CompOutcome, //
};
use crate::{
    counters::{
        Counter,
        DropReason, //
    },
    device::RrxeDevice,
    ib::Qp,
    pipeline::state::{
        SendState,
        Snapshot,
        Track, //
    },
    proto::{
        cqe::WcStatus,
        opcode::Position,
        packet::ParsedHeaders,
        psn::{
            cmp_psn,
            Psn, //
        },
        read_gaps::Mark,
        window,
        wqe::WrOpcode,
    },
};
use core::cmp::Ordering;
use kernel::prelude::*;

/// The unanswered RDMA READ whose responses include `psn`, when only READs are unanswered
/// before it (a SEND or WRITE between them is acknowledged by any response after it; an
/// unanswered atomic is answered in turn, never past a gap): its index.
pub(super) fn read_of(st: &mut SendState, psn: Psn) -> Option<usize> {
    let first = st.oldest_unfinished()?;
    for i in first..st.count {
        let t = *st.entry(i)?;
        if t.done.is_some() || !t.wants_response() {
            continue;
        }
        if t.opcode != WrOpcode::RdmaRead {
            return None;
        }
        if psn_le(t.first_psn, psn) && psn_le(psn, t.last_psn) {
            return Some(i);
        }
    }
    None
}

/// Whether a response at `index` of READ `t`, at `position` with `len` bytes, fits its place
/// ([`window::read_response_fits`]): a response may start where the READ was asked for again
/// (`read_resumed_at`) and end early at the end of the ask, or of one it replaced whose answer
/// is still coming.
pub(super) fn fits(
    snap: &Snapshot,
    st: &SendState,
    t: &Track,
    index: u32,
    position: Position,
    len: usize,
) -> bool {
    let place = |p: Option<Psn>| {
        p.filter(|p| psn_le(t.first_psn, *p) && psn_le(*p, t.last_psn))
            .map(|p| p.distance_from(t.first_psn))
    };
    let fits_with = |resumed_at: Option<Psn>, ask_end: Option<Psn>| {
        let asked = (place(resumed_at), place(ask_end));
        window::read_response_fits(t.length, snap.mtu, index, asked, position, len)
    };
    let (ask, resumed) = (st.read_ask, st.read_resumed_at);
    fits_with(resumed, ask.map(|a| a.end))
        || ask
            .and_then(|a| a.late_end)
            .is_some_and(|e| fits_with(resumed, Some(e)))
        || st
            .extra_asks
            .iter()
            .flatten()
            .any(|a| fits_with(Some(a.start), Some(a.end)))
}

/// Places a READ response for entry `j` that arrived past the oldest PSN not yet acknowledged:
/// it must fit its place in the READ, and each place is filled once; its data goes into the
/// READ's sink now. One whose page is being faulted in is handled again once it is in; one
/// whose data cannot be placed (a local protection error) is forgotten, and asked for again
/// when its turn comes, when the error fails the READ.
pub(super) fn place(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: &mut SendState,
    (h, payload): (&ParsedHeaders, &[u8]),
    psn: Psn,
    j: usize,
) -> CompOutcome {
    if cmp_psn(psn, st.comp_psn) != Ordering::Greater {
        return CompOutcome::drop(DropReason::StaleResponse);
    }
    let Some(t) = st.entry(j).copied() else {
        return CompOutcome::drop(DropReason::StaleResponse);
    };
    let index = psn.distance_from(t.first_psn);
    if !fits(snap, st, &t, index, h.info.position, payload.len()) {
        return CompOutcome::drop(DropReason::ResponseLength);
    }
    st.placed.rebase(st.comp_psn);
    match st.placed.mark(psn) {
        Mark::Fresh => {}
        Mark::Already => return CompOutcome::drop(DropReason::Duplicate),
        Mark::OutOfReach => return CompOutcome::drop(DropReason::PsnOutOfWindow),
    }
    let offset = index.saturating_mul(snap.mtu);
    match deliver_local(qp, snap, st, j, offset, payload) {
        Ok(()) => {}
        // A local page is being faulted in: the response is handled again after (not a drop).
        Err(e) if e == EAGAIN => {
            st.placed.unmark(psn);
            return CompOutcome::default();
        }
        Err(_) => {
            st.placed.unmark(psn);
            return CompOutcome::drop(DropReason::ResponseLength);
        }
    }
    qp.counts().inc(Counter::ReadPlaced);
    st.rtt.answered_past(psn);
    // Not progress in itself (the oldest READ still waits), but the peer is answering: no
    // retransmission timeout while it does, and the tail probe waits a round trip more.
    st.progressed = true;
    st.probes_unanswered = 0;
    crate::pipeline::requester::tail::replan(qp, snap, st);
    CompOutcome::default()
}

/// Moves the oldest PSN not yet acknowledged over the responses placed from it: a READ all of
/// whose responses came completes (its read credit and sink are freed), and so does a SEND or
/// WRITE that a placed response after it acknowledges. Stops at the first place still missing.
pub(super) fn advance(st: &mut SendState) {
    st.placed.rebase(st.comp_psn);
    if st.placed.is_empty() {
        return;
    }
    let Some(mut i) = st.oldest_unfinished() else {
        return;
    };
    let mut moved = false;
    // One walk forward from the oldest unfinished WQE (each it completes, the next is).
    while let Some(t) = st.entry(i).copied() {
        if t.done.is_some() {
            i += 1;
            continue;
        }
        let mut at = st.comp_psn;
        if t.opcode == WrOpcode::RdmaRead {
            if !psn_le(t.first_psn, at) || !psn_le(at, t.last_psn) {
                break;
            }
            while psn_le(at, t.last_psn) && st.placed.has(at) {
                at = at.next();
            }
            moved |= at != st.comp_psn;
            st.comp_psn = at;
            if psn_le(at, t.last_psn) {
                break;
            }
            if let Some(e) = st.entry(i) {
                e.done = Some(WcStatus::Success);
            }
            if st.rd_outstanding > 0 {
                st.rd_outstanding -= 1;
                st.sinks.retire_oldest();
            }
            i += 1;
        } else if !t.wants_response() && st.placed.next_placed(t.last_psn.next()).is_some() {
            if let Some(e) = st.entry(i) {
                e.done = Some(WcStatus::Success);
            }
            at = t.last_psn.next();
            if cmp_psn(at, st.comp_psn) == Ordering::Greater {
                st.comp_psn = at;
            }
            moved = true;
            i += 1;
        } else {
            break;
        }
    }
    st.placed.rebase(st.comp_psn);
    if moved {
        progress(st);
    }
}

/// After an in-order response that ends a run asked for again before its READ's last
/// response (`last_psn`; [`crate::proto::window::read_response_fits`]): whether the READ is
/// still missing responses. The responder answers in order, so everything it sent before this
/// answer has come or was lost: what is missing now was lost, cut short by the ask, or never
/// sent (a responder that never saw the READ took the ask for a new one), and is asked for at
/// once ([`recover`]'s `lost`) instead of after another tail probe.
pub(super) fn rest_missing(st: &SendState, last_psn: Psn) -> bool {
    psn_le(st.comp_psn, last_psn)
}

/// With selective recovery on, after an answer at `psn`: ends the wait for an ask that was answered, and asks for the
/// oldest unanswered READ's first missing run once its loss is known (a response after it
/// was placed, or `lost`: the answer acknowledged past the READ). Returns whether that READ is
/// being recovered this way (an ask waits for its answer or is due): then a response past a
/// gap or an acknowledgement past the READ need not go back.
pub(super) fn recover(st: &mut SendState, psn: Psn, lost: bool) -> bool {
    let asked = match st.read_ask {
        Some(a) if !a.over(psn, st.comp_psn) => true,
        _ => {
            st.read_ask = None;
            st.ask_missing_read_run(lost)
        }
    };
    // The later runs known missing, to a peer that keeps (`state/extra_asks.rs`).
    if asked {
        st.plan_extra_asks();
    }
    asked
}
