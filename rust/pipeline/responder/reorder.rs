// SPDX-License-Identifier: GPL-2.0

//! Selective recovery, the responder's half (`Documentation/pipeline.rst`, "Selective
//! recovery"; the store itself is [`crate::proto::reorder`]): an RC request that arrives past a
//! gap is kept instead of dropped, the gap is NAKed once, and when the missing packet has been
//! executed the kept ones are executed in their turn, each acknowledged, so the requester
//! learns at once that it need not send them again.
//!
//! A QP keeps at most [`crate::proto::reorder::REORDER_SLOTS`] packets and the device at most
//! [`DEVICE_MAX_KEPT`]: each is a received buffer of a few KiB, returned to the budget when it
//! leaves the store whatever the way ([`Kept`]'s drop). Only a QP in RTR, RTS or SQD keeps
//! any; the move to RESET or ERR empties its store. A kept packet is executed with every check
//! a packet in order gets, when its turn comes: keeping it grants it nothing.

use super::{
    reply,
    RecvGuard, //
};
use crate::{
    counters::Counter,
    device::RrxeDevice,
    ib::Qp,
    net::SkBuff,
    pipeline::{
        state::{
            QpPipe,
            RecvState,
            Snapshot, //
        },
        DropReason, Outbox,
    },
    proto::{
        hdr::Aeth,
        psn::Psn,
        reorder::{
            within_reach,
            Insert,
            Reorder, //
        },
    },
};
use kernel::{
    prelude::*,
    sync::{
        atomic::{
            Atomic,
            Relaxed, //
        },
        Arc,
    },
};

/// The most received packets a device's responders keep past gaps at once (a few KiB each).
pub(crate) const DEVICE_MAX_KEPT: u32 = 4096;

/// A share of the device's budget of kept packets, returned when dropped.
struct Share(Arc<Atomic<u32>>);

impl Share {
    /// A share of `budget`, unless the device keeps [`DEVICE_MAX_KEPT`] already.
    fn take(budget: &Arc<Atomic<u32>>) -> Option<Self> {
        if budget.fetch_add(1, Relaxed) >= DEVICE_MAX_KEPT {
            budget.fetch_sub(1, Relaxed);
            return None;
        }
        Some(Self(budget.clone()))
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Relaxed);
    }
}

/// A packet kept past a gap, with its share of the device's budget while it is kept.
pub(crate) struct Kept {
    skb: SkBuff,
    _share: Share,
}

/// The store of a QP's responder: allocated by the first packet it keeps.
pub(crate) type Store = Option<KBox<Reorder<Kept>>>;

/// Whether the responder, expecting `st.epsn`, would keep a request of PSN `psn` that
/// arrived past a gap: within the store's reach. A second copy of one kept already goes to
/// [`keep`] too, which compares the two.
pub(super) fn would_keep(st: &RecvState, psn: Psn) -> bool {
    within_reach(psn, st.epsn)
}

/// Where a request found past a gap is to be kept: its PSN, and the connection (the count of
/// the responder's moves to RTR) it was found under.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeepAt {
    pub(crate) psn: Psn,
    pub(crate) conn: u32,
}

/// Keeps `skb`, a request that arrived past a gap at `at` ([`would_keep`] said so when it was
/// checked); the packet comes back when it cannot be kept after all, with the reason to drop
/// it for: a copy of a kept one (a requester that sent it again), or no room (the store or the
/// device is full, or the responder moved on: to another PSN, or to another connection, which
/// a move through RESET to RTR between the check and now makes).
pub(crate) fn keep(
    qp: &Qp<RrxeDevice>,
    at: KeepAt,
    skb: SkBuff,
) -> Result<(), (SkBuff, DropReason)> {
    let psn = at.psn;
    let pipe = qp.pipe();
    // Allocated before the lock is taken, by the first packet a QP keeps.
    let fresh = if pipe.recv.lock().reorder.is_none() {
        KBox::new(Reorder::default(), GFP_ATOMIC).ok()
    } else {
        None
    };
    let Some(share) = Share::take(qp.device().reorder_held()) else {
        return Err((skb, DropReason::PsnOutOfWindow));
    };
    let kept = Kept { skb, _share: share };
    let mut st = pipe.recv.lock();
    if st.reorder.is_none() {
        st.reorder = fresh;
    }
    let (epsn, open) = (st.epsn, st.open && st.conn == at.conn);
    let refused = match st.reorder.as_mut() {
        Some(store) if open => match store.insert(psn, epsn, kept) {
            Insert::Kept(stale) => {
                drop(st);
                pipe.reordering.store(true, Relaxed);
                qp.counts().inc(Counter::OooKept);
                if let Some(stale) = stale {
                    qp.counts().drop_packet(DropReason::Duplicate);
                    drop(stale);
                }
                return Ok(());
            }
            Insert::Refused(kept) => {
                // A second copy of a kept packet that differs from it: one of them is forged
                // (an off-path sender that learned the PSNs planted it ahead). Neither is
                // executed; the requester sends the packet again.
                let held = store.get(psn).map(|k| k.skb.data() != kept.skb.data());
                let evicted = (held == Some(true)).then(|| store.remove(psn)).flatten();
                drop(st);
                if let Some(e) = evicted {
                    qp.counts().drop_packet(DropReason::Duplicate);
                    drop(e);
                }
                let why = if held.is_some() {
                    DropReason::Duplicate
                } else {
                    DropReason::PsnOutOfWindow
                };
                return Err((kept.skb, why));
            }
        },
        _ => kept,
    };
    drop(st);
    Err((refused.skb, DropReason::PsnOutOfWindow))
}

/// The kept packet whose turn has come (its PSN is the expected one), to be handled next, as
/// if it had just arrived. When none is due right after kept packets were executed (the
/// expected PSN moved past the last one taken) and the store still holds packets, the
/// expected PSN is a gap of its own: NAKed once. Not after a packet that arrived in order,
/// whose successor may be next in the inbox (a go-back-N requester's resends would each draw
/// a NAK), nor after a kept packet that was not executed (an RNR NAK answered it). Only a QP
/// that kept packets pays for the look ([`QpPipe::reordering`]).
///
/// [`QpPipe::reordering`]: crate::pipeline::state::QpPipe
pub(crate) fn take_due(qp: &Qp<RrxeDevice>, snap: &Snapshot, out: &mut Outbox) -> Option<SkBuff> {
    let pipe = qp.pipe();
    if !pipe.reordering.load(Relaxed) {
        return None;
    }
    // Entries the responder moved past (another copy went first), dropped after the lock.
    loop {
        let mut st = pipe.recv.lock();
        let epsn = st.epsn;
        let stale = st.reorder.as_mut().and_then(|r| r.take_stale(epsn));
        drop(st);
        let Some(stale) = stale else {
            break;
        };
        qp.counts().drop_packet(DropReason::Duplicate);
        drop(stale);
    }
    let mut st = pipe.recv.lock();
    let epsn = st.epsn;
    let (due, left) = match st.reorder.as_mut() {
        Some(store) => (store.take_due(epsn), store.len()),
        None => (None, 0),
    };
    if let Some(kept) = due {
        st.replayed = Some(epsn);
        drop(st);
        qp.counts().inc(Counter::OooExecuted);
        return Some(kept.skb);
    }
    let executed = st.replayed.take().is_some_and(|p| p != epsn);
    if left == 0 {
        pipe.reordering.store(false, Relaxed);
        return None;
    }
    if executed && !st.nak_sent {
        st.nak_sent = true;
        nak_gap(qp, snap, st, out);
    }
    None
}

/// NAKs the gap at the expected PSN (a PSN sequence error), releasing the lock.
fn nak_gap(qp: &Qp<RrxeDevice>, snap: &Snapshot, st: RecvGuard<'_>, out: &mut Outbox) {
    let (msn, epsn) = (st.msn, st.epsn);
    drop(st);
    reply::ack(qp, snap, msn, epsn, Aeth::NAK_PSN_SEQ_ERROR, out);
}

/// Empties the store of a QP's responder (`pipe`; the move to RESET or ERR): the packets are
/// dropped one at a time, each after the lock.
pub(crate) fn clear(pipe: &QpPipe) {
    loop {
        let kept = pipe.recv.lock().reorder.as_mut().and_then(|r| r.take_any());
        let Some(kept) = kept else {
            return;
        };
        drop(kept);
    }
}

/// How many packets `st`'s store holds (`rdma res show qp -dd`).
pub(crate) fn held(st: &RecvState) -> usize {
    st.reorder.as_ref().map_or(0, |r| r.len())
}
