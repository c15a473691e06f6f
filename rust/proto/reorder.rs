// SPDX-License-Identifier: GPL-2.0

//! The responder's store of requests that arrived ahead of a gap (`Documentation/pipeline.rst`,
//! "Selective recovery"): an RC responder keeps the packets after a lost one instead of
//! dropping them, NAKs the gap once, and when the missing packet comes executes what it kept,
//! in PSN order, and acknowledges past all of it. The requester, which learns from that
//! acknowledgement that the peer kept them, sends again only what was lost; a C rxe peer sends
//! everything after the gap again, and finds it acknowledged already.
//!
//! The store holds at most [`REORDER_SLOTS`] - 1 packets, the PSNs after the expected one up
//! to that distance; a packet's slot is its PSN modulo [`REORDER_SLOTS`], so the PSNs within
//! reach never share one. What the store holds is a copy of what arrived, executed only when
//! its turn comes, with every check a packet in order gets: keeping it grants it nothing.

use super::psn::{
    cmp_psn,
    Psn, //
};
use core::cmp::Ordering;

/// The slots of a store; PSNs at most `REORDER_SLOTS - 1` ahead of the expected one are kept.
pub(crate) const REORDER_SLOTS: usize = 64;

/// Whether `psn` is within the store's reach of `epsn`: ahead of it, by less than
/// [`REORDER_SLOTS`].
pub(crate) fn within_reach(psn: Psn, epsn: Psn) -> bool {
    let d = psn.distance_from(epsn);
    d >= 1 && (d as usize) < REORDER_SLOTS
}

/// The requests a responder keeps past a gap, `T` each (a received buffer in the kernel).
pub(crate) struct Reorder<T> {
    slots: [Option<(Psn, T)>; REORDER_SLOTS],
    held: usize,
}

impl<T> Default for Reorder<T> {
    fn default() -> Self {
        Self {
            slots: [const { None }; REORDER_SLOTS],
            held: 0,
        }
    }
}

/// What [`Reorder::insert`] did.
pub(crate) enum Insert<T> {
    /// Kept; an entry that had fallen behind `epsn` in its slot comes back, to be dropped.
    Kept(Option<T>),
    /// Not kept (out of reach, or its PSN is held already): the item comes back.
    Refused(T),
}

impl<T> Reorder<T> {
    /// How many packets the store holds.
    pub(crate) fn len(&self) -> usize {
        self.held
    }

    /// Whether it holds none.
    pub(crate) fn is_empty(&self) -> bool {
        self.held == 0
    }

    fn slot(psn: Psn) -> usize {
        psn.value() as usize % REORDER_SLOTS
    }

    /// Keeps `item` of PSN `psn` while the responder expects `epsn`.
    pub(crate) fn insert(&mut self, psn: Psn, epsn: Psn, item: T) -> Insert<T> {
        if !within_reach(psn, epsn) {
            return Insert::Refused(item);
        }
        let slot = &mut self.slots[Self::slot(psn)];
        let stale = match slot.take() {
            None => None,
            Some((p, old)) if cmp_psn(p, epsn) == Ordering::Less => {
                self.held -= 1;
                Some(old)
            }
            Some(entry) => {
                // Its PSN is held (another PSN within reach cannot share the slot).
                *slot = Some(entry);
                return Insert::Refused(item);
            }
        };
        *slot = Some((psn, item));
        self.held += 1;
        Insert::Kept(stale)
    }

    /// The packet of PSN `psn`, if held.
    pub(crate) fn get(&self, psn: Psn) -> Option<&T> {
        match &self.slots[Self::slot(psn)] {
            Some((p, item)) if *p == psn => Some(item),
            _ => None,
        }
    }

    /// Takes the packet of PSN `psn` out, if held.
    pub(crate) fn remove(&mut self, psn: Psn) -> Option<T> {
        self.take_due(psn)
    }

    /// Takes the packet of PSN `epsn` if held: the one whose turn has come.
    pub(crate) fn take_due(&mut self, epsn: Psn) -> Option<T> {
        let slot = &mut self.slots[Self::slot(epsn)];
        match slot.take() {
            Some((p, item)) if p == epsn => {
                self.held -= 1;
                Some(item)
            }
            other => {
                *slot = other;
                None
            }
        }
    }

    /// Takes one held packet whose PSN is behind `epsn` (the responder moved past it: another
    /// copy went first), if any. The one of PSN `epsn` is due, not stale.
    pub(crate) fn take_stale(&mut self, epsn: Psn) -> Option<T> {
        let at = self
            .slots
            .iter()
            .position(|s| matches!(s, Some((p, _)) if cmp_psn(*p, epsn) == Ordering::Less))?;
        self.held -= 1;
        self.slots[at].take().map(|(_, item)| item)
    }

    /// Takes any held packet (the store is being emptied).
    pub(crate) fn take_any(&mut self) -> Option<T> {
        let at = self.slots.iter().position(Option::is_some)?;
        self.held -= 1;
        self.slots[at].take().map(|(_, item)| item)
    }
}
