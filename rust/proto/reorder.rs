// SPDX-License-Identifier: GPL-2.0

//! The responder's store of requests that arrived ahead of a gap (`Documentation/pipeline.rst`,
//! "Selective recovery"): an RC responder keeps the packets after a lost one instead of
//! dropping them, NAKs the gap once, and when the missing packet comes executes what it kept,
//! in PSN order, and acknowledges past all of it. The requester, which learns from that
//! acknowledgement that the peer kept them, sends again only what was lost; a C rxe peer sends
//! everything after the gap again, and finds it acknowledged already.
//!
//! The store holds at most [`REORDER_SLOTS`] packets, of PSNs less than [`REORDER_REACH`]
//! after the expected one: a READ request takes one PSN for each of its responses (128 for
//! NVMe-oF's 128 KiB at path MTU 1024), so the requests behind a lost one lie far ahead in PSN
//! while few in number. A packet takes any free slot; a full store refuses more, unless one it
//! holds has fallen behind the expected PSN. What the store holds is a copy of what arrived,
//! executed only when its turn comes, with every check a packet in order gets: keeping it
//! grants it nothing.

use super::psn::{
    cmp_psn,
    Psn, //
};
use core::cmp::Ordering;

/// The most packets a store holds.
pub(crate) const REORDER_SLOTS: usize = 128;

/// PSNs less than this far ahead of the expected one are kept.
pub(crate) const REORDER_REACH: u32 = 1024;

/// Whether `psn` is within the store's reach of `epsn`: ahead of it, by less than
/// [`REORDER_REACH`].
pub(crate) fn within_reach(psn: Psn, epsn: Psn) -> bool {
    let d = psn.distance_from(epsn);
    (1..REORDER_REACH).contains(&d)
}

/// The requests a responder keeps past a gap, `T` each (a received buffer in the kernel).
pub(crate) struct Reorder<T> {
    slots: [Option<(Psn, T)>; REORDER_SLOTS],
    /// Bit `i`: slot `i` holds a packet.
    used: u128,
}

const _: () = assert!(REORDER_SLOTS <= u128::BITS as usize);

impl<T> Default for Reorder<T> {
    fn default() -> Self {
        Self {
            slots: [const { None }; REORDER_SLOTS],
            used: 0,
        }
    }
}

/// What [`Reorder::insert`] did.
pub(crate) enum Insert<T> {
    /// Kept; an entry that had fallen behind `epsn` made room and comes back, to be dropped.
    Kept(Option<T>),
    /// Not kept (out of reach, its PSN is held already, or the store is full): the item comes
    /// back.
    Refused(T),
}

impl<T> Reorder<T> {
    /// How many packets the store holds.
    pub(crate) fn len(&self) -> usize {
        self.used.count_ones() as usize
    }

    /// Whether it holds none.
    pub(crate) fn is_empty(&self) -> bool {
        self.used == 0
    }

    /// The slot holding PSN `psn`, if any.
    fn find(&self, psn: Psn) -> Option<usize> {
        self.first_used(|p| p == psn)
    }

    /// The first used slot whose PSN satisfies `pred`.
    fn first_used(&self, pred: impl Fn(Psn) -> bool) -> Option<usize> {
        let mut used = self.used;
        while used != 0 {
            let i = used.trailing_zeros() as usize;
            used &= used - 1;
            if matches!(&self.slots[i], Some((p, _)) if pred(*p)) {
                return Some(i);
            }
        }
        None
    }

    /// Empties slot `i`.
    fn take(&mut self, i: usize) -> Option<T> {
        self.used &= !(1u128 << i);
        self.slots[i].take().map(|(_, item)| item)
    }

    /// Keeps `item` of PSN `psn` while the responder expects `epsn`.
    pub(crate) fn insert(&mut self, psn: Psn, epsn: Psn, item: T) -> Insert<T> {
        if !within_reach(psn, epsn) || self.find(psn).is_some() {
            return Insert::Refused(item);
        }
        let free = (!self.used).trailing_zeros() as usize;
        let (at, stale) = if free < REORDER_SLOTS {
            (free, None)
        } else {
            match self.first_used(|p| cmp_psn(p, epsn) == Ordering::Less) {
                Some(i) => (i, self.take(i)),
                None => return Insert::Refused(item),
            }
        };
        self.slots[at] = Some((psn, item));
        self.used |= 1u128 << at;
        Insert::Kept(stale)
    }

    /// The packet of PSN `psn`, if held.
    pub(crate) fn get(&self, psn: Psn) -> Option<&T> {
        let i = self.find(psn)?;
        self.slots[i].as_ref().map(|(_, item)| item)
    }

    /// Takes the packet of PSN `psn` out, if held.
    pub(crate) fn remove(&mut self, psn: Psn) -> Option<T> {
        self.take_due(psn)
    }

    /// Takes the packet of PSN `epsn` if held: the one whose turn has come.
    pub(crate) fn take_due(&mut self, epsn: Psn) -> Option<T> {
        let i = self.find(epsn)?;
        self.take(i)
    }

    /// Takes one held packet whose PSN is behind `epsn` (the responder moved past it: another
    /// copy went first), if any. The one of PSN `epsn` is due, not stale.
    pub(crate) fn take_stale(&mut self, epsn: Psn) -> Option<T> {
        let i = self.first_used(|p| cmp_psn(p, epsn) == Ordering::Less)?;
        self.take(i)
    }

    /// Takes any held packet (the store is being emptied).
    pub(crate) fn take_any(&mut self) -> Option<T> {
        let i = self.first_used(|_| true)?;
        self.take(i)
    }
}
