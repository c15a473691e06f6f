// SPDX-License-Identifier: GPL-2.0

//! Selective recovery, the responder's half (`Documentation/pipeline.rst`, "Selective
//! recovery"; the store itself is [`crate::proto::reorder`]): an RC request that arrives past a
//! gap is kept instead of dropped, the gap is NAKed once, and when the missing packet has been
//! executed the kept ones are executed in their turn, each acknowledged, so the requester
//! learns at once that it need not send them again.
//!
//! A QP keeps at most [`REORDER_SLOTS`] - 1 packets and the device at most
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
            Reorder,
            REORDER_SLOTS, //
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
/// arrived past a gap: within the store's reach and not kept already.
pub(super) fn would_keep(st: &RecvState, psn: Psn) -> bool {
    within_reach(psn, st.epsn) && !st.reorder.as_ref().is_some_and(|r| r.holds(psn))
}

/// Keeps `skb`, a request of PSN `psn` that arrived past a gap ([`would_keep`] said so when it
/// was checked); the packet comes back when it cannot be kept after all (the store or the
/// device is full, or the responder moved on), to be dropped.
pub(crate) fn keep(qp: &Qp<RrxeDevice>, psn: Psn, skb: SkBuff) -> Result<(), SkBuff> {
    let pipe = qp.pipe();
    // Allocated before the lock is taken, by the first packet a QP keeps.
    let fresh = if pipe.recv.lock().reorder.is_none() {
        KBox::new(Reorder::default(), GFP_ATOMIC).ok()
    } else {
        None
    };
    let Some(share) = Share::take(qp.device().reorder_held()) else {
        return Err(skb);
    };
    let kept = Kept { skb, _share: share };
    let mut st = pipe.recv.lock();
    if st.reorder.is_none() {
        st.reorder = fresh;
    }
    let (epsn, open) = (st.epsn, st.open);
    let refused = match st.reorder.as_mut() {
        Some(store) if open => match store.insert(psn, epsn, kept) {
            Insert::Kept(stale) => {
                drop(st);
                pipe.reordering.store(true, Relaxed);
                qp.device().count(Counter::OooKept);
                if let Some(stale) = stale {
                    qp.device().count_drop(DropReason::Duplicate);
                    drop(stale);
                }
                return Ok(());
            }
            Insert::Refused(kept) => kept,
        },
        _ => kept,
    };
    drop(st);
    Err(refused.skb)
}

/// The kept packet whose turn has come (its PSN is the expected one), to be handled next, as
/// if it had just arrived. When none is due and the store still holds packets, the expected
/// PSN is a gap: NAKed once. Only a QP that kept packets pays for the look
/// ([`QpPipe::reordering`]).
///
/// [`QpPipe::reordering`]: crate::pipeline::state::QpPipe
pub(crate) fn take_due(qp: &Qp<RrxeDevice>, snap: &Snapshot, out: &mut Outbox) -> Option<SkBuff> {
    let pipe = qp.pipe();
    if !pipe.reordering.load(Relaxed) {
        return None;
    }
    let mut st = pipe.recv.lock();
    let epsn = st.epsn;
    let (due, left) = {
        let Some(store) = st.reorder.as_mut() else {
            pipe.reordering.store(false, Relaxed);
            return None;
        };
        while let Some(stale) = store.take_stale(epsn) {
            qp.device().count_drop(DropReason::Duplicate);
            drop(stale);
        }
        (store.take_due(epsn), store.len())
    };
    if let Some(kept) = due {
        st.replay = true;
        drop(st);
        qp.device().count(Counter::OooExecuted);
        return Some(kept.skb);
    }
    st.replay = false;
    if left == 0 {
        pipe.reordering.store(false, Relaxed);
        return None;
    }
    // A packet in order came since the last NAK (it cleared `nak_sent`), and the store still
    // holds packets past the expected PSN: that is a gap of its own.
    if !st.nak_sent {
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

const _: () = assert!(REORDER_SLOTS <= 64);
