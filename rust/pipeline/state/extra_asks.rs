// SPDX-License-Identifier: GPL-2.0

//! Selective recovery of READ responses, the asks beside the oldest (`Documentation/pipeline.rst`,
//! "Selective recovery"). The ask for the oldest missing run (`SendState::read_ask`) goes
//! first; to a peer known to keep what follows a gap (an rrxe responder, which queues duplicate
//! READs behind the one it sends), each later run known missing is asked for at once too, up to
//! [`EXTRA_ASKS`], so a READ with several gaps comes back whole in about one round trip instead
//! of one round trip per gap (at 5 % loss of single packets a READ of 128 responses has six).
//! C rxe's responder refuses a duplicate READ that starts before the one it answered last: it
//! gets the oldest run only, always in ascending order.
//!
//! An extra ask waits for nothing: when the oldest PSN not yet acknowledged reaches its run, it
//! becomes the oldest run's ask ([`SendState::take_extra_ask`]), with what that ask does when
//! its answer does not come.

use super::send::SendState;
use crate::proto::{
    psn::{
        cmp_psn,
        Psn, //
    },
    read_gaps::{
        next_missing_run,
        ReadAsk,
        EXTRA_ASKS,
        READ_GAP_REACH, //
    },
    recovery::PeerRecovery,
    wqe::WrOpcode,
};
use core::cmp::Ordering;

/// The most runs one planning looks at (each moves past one run or ask: a bound, not a limit
/// met in practice).
const RUNS_LOOKED_AT: usize = 4 * EXTRA_ASKS;

impl SendState {
    /// Plans asks for the runs of READ responses known missing after the oldest run's ask, to
    /// a peer known to keep (see the module's documentation). Asks whose runs the oldest PSN
    /// not yet acknowledged passed are forgotten first; a run that an ask covers already is
    /// not asked for again, and a run ends before the next ask's.
    pub(crate) fn plan_extra_asks(&mut self) {
        let comp = self.comp_psn;
        for a in self.extra_asks.iter_mut() {
            if a.is_some_and(|a| cmp_psn(a.end, comp) == Ordering::Less) {
                *a = None;
            }
        }
        if self.peer != PeerRecovery::Keeps || self.extra_asks.iter().all(Option::is_some) {
            return;
        }
        let Some(head) = self.read_ask else {
            return;
        };
        let Some(first) = self.oldest_unfinished() else {
            return;
        };
        self.placed.rebase(comp);
        let mut from = head.end.next();
        let mut looked = 0;
        for i in first..self.count {
            let Some(t) = self.entry(i).copied() else {
                break;
            };
            // Nothing past the reach of what is placed is known missing.
            if cmp_psn(t.first_psn, comp) == Ordering::Greater
                && t.first_psn.distance_from(comp) >= READ_GAP_REACH
            {
                break;
            }
            if t.done.is_some()
                || t.opcode != WrOpcode::RdmaRead
                || cmp_psn(t.last_psn, from) == Ordering::Less
            {
                continue;
            }
            while let Some((start, end)) =
                next_missing_run(&self.placed, from, (t.first_psn, t.last_psn))
            {
                looked += 1;
                if looked > RUNS_LOOKED_AT {
                    return;
                }
                if let Some(a) = self.ask_covering(start) {
                    from = a.end.next();
                    continue;
                }
                let end = self.before_next_ask(start, end);
                from = end.next();
                let Some(slot) = self.extra_asks.iter_mut().find(|a| a.is_none()) else {
                    return;
                };
                *slot = Some(ReadAsk::new(start, end));
            }
        }
    }

    /// The extra ask whose run holds `psn` (the oldest PSN not yet acknowledged), taken out
    /// and cut to start there: the oldest run's ask from now on. One sent already keeps
    /// waiting for its answer, which may start with a FIRST at its start (a responder that
    /// never saw the READ takes it for a new one).
    pub(crate) fn take_extra_ask(&mut self, psn: Psn) -> Option<ReadAsk> {
        let a = self
            .extra_asks
            .iter_mut()
            .find(|a| a.is_some_and(|a| covers(&a, psn)))?
            .take()?;
        if a.after.is_some() && a.start == psn {
            self.read_resumed_at = Some(psn);
        }
        Some(ReadAsk { start: psn, ..a })
    }

    /// The ask (the oldest run's or an extra one) whose run holds `psn`.
    fn ask_covering(&self, psn: Psn) -> Option<ReadAsk> {
        self.read_ask
            .iter()
            .chain(self.extra_asks.iter().flatten())
            .copied()
            .find(|a| covers(a, psn))
    }

    /// `end`, or the PSN before the first extra ask that starts after `start` and by `end`.
    fn before_next_ask(&self, start: Psn, end: Psn) -> Psn {
        self.extra_asks
            .iter()
            .flatten()
            .filter(|a| {
                cmp_psn(a.start, start) == Ordering::Greater
                    && cmp_psn(a.start, end) != Ordering::Greater
            })
            .map(|a| a.start.wrapping_sub(1))
            .min_by(|x, y| cmp_psn(*x, *y))
            .unwrap_or(end)
    }
}

/// Whether `a`'s run holds `psn`.
fn covers(a: &ReadAsk, psn: Psn) -> bool {
    cmp_psn(a.start, psn) != Ordering::Greater && cmp_psn(psn, a.end) != Ordering::Greater
}
