// SPDX-License-Identifier: GPL-2.0

//! Selective recovery of READ responses (`Documentation/pipeline.rst`, "Selective recovery"):
//! the responses placed past a gap, and the request that asks for a missing run again.
//!
//! A READ response's PSN says where its data goes, so one that arrives past a gap (a lost
//! response before it, of its own READ or of an earlier one) is placed at once and remembered
//! in [`Placed`]. The requester then asks again for the first missing run of the oldest
//! unanswered READ only ([`missing_run`], [`ReadAsk`]): a READ request at the run's first PSN
//! whose RETH names the run's bytes. Both responders answer such a duplicate from its PSN over
//! the range its RETH names. Asking for the oldest READ alone, always at its first missing
//! response, keeps every READ's asks in ascending order, which C rxe's responder needs: it
//! refuses a duplicate READ that starts before the one it answered last. When the oldest
//! READ's responses have all been placed it completes, and the next READ's placed responses
//! move the expected PSN on at once.
//!
//! The responder answers requests in the order they arrived, so an answer to a request sent
//! after the ask ([`ReadAsk::after`]) means the ask was answered: a run still missing then was
//! lost again and is asked for once more.

use super::psn::{
    cmp_psn,
    Psn, //
};
use core::cmp::Ordering;

/// How far past the oldest PSN not yet acknowledged a response is placed and remembered.
pub(crate) const READ_GAP_REACH: u32 = 512;

const WORDS: usize = (READ_GAP_REACH / 64) as usize;

/// The READ responses placed past the oldest PSN not yet acknowledged (`base`): bit `i` is
/// PSN `base + i`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Placed {
    base: Psn,
    bits: [u64; WORDS],
}

/// What [`Placed::mark`] made of a response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mark {
    /// Remembered: its data is to be placed.
    Fresh,
    /// Placed already (a duplicate).
    Already,
    /// Before the base or past [`READ_GAP_REACH`]: not kept.
    OutOfReach,
}

impl Placed {
    /// Whether none is placed.
    pub(crate) fn is_empty(&self) -> bool {
        self.bits.iter().all(|&w| w == 0)
    }

    /// Forgets them all (a rewind: what follows is asked for again whole).
    pub(crate) fn clear(&mut self) {
        self.bits = [0; WORDS];
    }

    /// Moves the base to `base` (the oldest PSN not yet acknowledged, which only moves forward
    /// between clears): PSNs before it are forgotten.
    pub(crate) fn rebase(&mut self, base: Psn) {
        let d = base.distance_from(self.base);
        if d == 0 {
            return;
        }
        if cmp_psn(base, self.base) != Ordering::Greater || d >= READ_GAP_REACH {
            self.clear();
        } else {
            self.shift_down(d);
        }
        self.base = base;
    }

    /// Shifts every bit `d` (below [`READ_GAP_REACH`]) places down.
    fn shift_down(&mut self, d: u32) {
        let (words, bits) = ((d / 64) as usize, d % 64);
        for w in 0..WORDS {
            let lo = self.bits.get(w + words).copied().unwrap_or(0);
            let hi = self.bits.get(w + words + 1).copied().unwrap_or(0);
            self.bits[w] = if bits == 0 {
                lo
            } else {
                (lo >> bits) | (hi << (64 - bits))
            };
        }
    }

    /// The bit of `psn`, if within reach of the base.
    fn index(&self, psn: Psn) -> Option<(usize, u64)> {
        let i = psn.distance_from(self.base);
        (i < READ_GAP_REACH).then(|| ((i / 64) as usize, 1u64 << (i % 64)))
    }

    /// Whether the response at `psn` is placed.
    pub(crate) fn has(&self, psn: Psn) -> bool {
        self.index(psn).is_some_and(|(w, b)| self.bits[w] & b != 0)
    }

    /// Remembers the response at `psn` as placed.
    pub(crate) fn mark(&mut self, psn: Psn) -> Mark {
        let Some((w, b)) = self.index(psn) else {
            return Mark::OutOfReach;
        };
        if self.bits[w] & b != 0 {
            return Mark::Already;
        }
        self.bits[w] |= b;
        Mark::Fresh
    }

    /// Forgets the response at `psn` (its data could not be placed after all).
    pub(crate) fn unmark(&mut self, psn: Psn) {
        if let Some((w, b)) = self.index(psn) {
            self.bits[w] &= !b;
        }
    }

    /// How many placed PSNs lie in `from..to` (only those within reach are known).
    pub(crate) fn count_in(&self, from: Psn, to: Psn) -> u32 {
        let place = |p: Psn| {
            if cmp_psn(p, self.base) == Ordering::Greater {
                p.distance_from(self.base).min(READ_GAP_REACH)
            } else {
                0
            }
        };
        let (start, end) = (place(from), place(to));
        let mut n = 0;
        for (w, &bits) in (0u32..).zip(self.bits.iter()) {
            let (lo, hi) = (w * 64, w * 64 + 64);
            if end <= lo || start >= hi {
                continue;
            }
            let mut mask = u64::MAX;
            if start > lo {
                mask &= u64::MAX << (start - lo);
            }
            if end < hi {
                mask &= (1u64 << (end - lo)) - 1;
            }
            n += (bits & mask).count_ones();
        }
        n
    }

    /// The first placed PSN from `from` on, if any within reach.
    pub(crate) fn next_placed(&self, from: Psn) -> Option<Psn> {
        let start = from.distance_from(self.base);
        if start >= READ_GAP_REACH {
            return None;
        }
        let mut w = (start / 64) as usize;
        let mut word = self.bits[w] & (u64::MAX << (start % 64));
        loop {
            if word != 0 {
                let i = w as u32 * 64 + word.trailing_zeros();
                return Some(self.base.wrapping_add(i));
            }
            w += 1;
            word = *self.bits.get(w)?;
        }
    }
}

/// The run of responses of a READ (PSNs `first..=last`) missing from `expected`, the oldest
/// PSN not yet acknowledged, once the loss is known: a response after it was placed, or
/// (`lost`) the responder answered a later request. The run ends before the next placed
/// response of the READ, or at its last. `None` while the loss is not known or `expected` is
/// not the READ's.
pub(crate) fn missing_run(
    placed: &Placed,
    (first, last): (Psn, Psn),
    expected: Psn,
    lost: bool,
) -> Option<Psn> {
    let inside =
        cmp_psn(expected, first) != Ordering::Less && cmp_psn(expected, last) != Ordering::Greater;
    if !inside || placed.has(expected) {
        return None;
    }
    match placed.next_placed(expected.next()) {
        Some(next) if cmp_psn(next, last) != Ordering::Greater => Some(next.wrapping_sub(1)),
        Some(_) => Some(last),
        None => lost.then_some(last),
    }
}

/// The most asks for later runs a requester has out beside the one for the oldest run
/// ([`next_missing_run`]): one fewer than an rrxe responder queues behind the READ it sends.
pub(crate) const EXTRA_ASKS: usize = 7;

/// The first run of a READ's responses (PSNs `first..=last`) known missing from `from` on:
/// PSNs not placed, up to the next one placed (a responder answers in order, so a response
/// placed after them shows them lost), at most to the READ's last. `None` when none is known
/// missing there (every PSN placed, or none placed after the first missing one).
pub(crate) fn next_missing_run(
    placed: &Placed,
    from: Psn,
    (first, last): (Psn, Psn),
) -> Option<(Psn, Psn)> {
    let mut at = if cmp_psn(from, first) == Ordering::Less {
        first
    } else {
        from
    };
    // Within reach of the placed ones only: `has` is false past it.
    while cmp_psn(at, last) != Ordering::Greater && placed.has(at) {
        at = at.next();
    }
    if cmp_psn(at, last) == Ordering::Greater {
        return None;
    }
    let next = placed.next_placed(at)?;
    let end = if cmp_psn(next, last) == Ordering::Greater {
        last
    } else {
        next.wrapping_sub(1)
    };
    Some((at, end))
}

/// A request asking again for the responses `start..=end` of the oldest unanswered READ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReadAsk {
    /// The first PSN asked for: the request's PSN.
    pub(crate) start: Psn,
    /// The last PSN asked for.
    pub(crate) end: Psn,
    /// The next new PSN when the request was sent (`None`: not sent yet): any answer from
    /// there on comes after the answer to this one.
    pub(crate) after: Option<Psn>,
    /// The last PSN of an ask this one replaced, whose answer may still be coming: its early
    /// LAST there fits too.
    pub(crate) late_end: Option<Psn>,
}

impl ReadAsk {
    /// An ask for `start..=end`, to be sent.
    pub(crate) const fn new(start: Psn, end: Psn) -> Self {
        Self {
            start,
            end,
            after: None,
            late_end: None,
        }
    }

    /// Whether an answer at `psn` (an ACK's or a response's), with `expected` the oldest PSN
    /// not yet acknowledged after it, ends the wait for this ask: its run has all come, its last
    /// response came, or the responder answered a request sent after it.
    pub(crate) fn over(&self, psn: Psn, expected: Psn) -> bool {
        let Some(after) = self.after else {
            return false;
        };
        cmp_psn(expected, self.end) == Ordering::Greater
            || psn == self.end
            || cmp_psn(psn, after) != Ordering::Less
    }
}
