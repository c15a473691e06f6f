// SPDX-License-Identifier: GPL-2.0

//! Selective recovery, the requester's half (`Documentation/pipeline.rst`, "Selective
//! recovery"): what an RC requester learns of its peer from the answers to its probes.
//!
//! A PSN sequence NAK names the first packet the responder is missing. Go-back-N sends
//! everything from there again. A responder that keeps the packets past a gap (rrxe) needs only
//! the missing one: the requester sends that one alone, with AckReq, and waits for its answer
//! (the probe). An answer that acknowledges past the probe says the peer kept what followed:
//! the requester goes on from there, and probes every later gap. An answer that stops at the
//! probe, when packets after it had been sent, says the peer dropped them (C rxe, or every one
//! of them was lost too): the requester sends them again, go-back-N. The wire format does not
//! change; a peer that shows [`MISSES_FOR_GO_BACK_N`] times without ever having kept anything
//! that it drops what follows a gap gets go-back-N from then on, at no more than one round
//! trip's cost per gap until then.

use super::psn::{
    cmp_psn,
    Psn, //
};
use core::cmp::Ordering;

/// How many probes must show a peer dropping what followed a gap, and none keeping it, before
/// the requester stops probing that peer.
pub(crate) const MISSES_FOR_GO_BACK_N: u8 = 2;

/// What a requester knows of how its peer recovers from a gap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PeerRecovery {
    /// Not known yet; `misses` probes showed it dropping what followed a gap.
    Unknown { misses: u8 },
    /// It kept packets past a gap at least once: every gap is probed.
    Keeps,
    /// It drops what follows a gap: go-back-N.
    GoBackN,
}

impl Default for PeerRecovery {
    fn default() -> Self {
        Self::Unknown { misses: 0 }
    }
}

impl PeerRecovery {
    /// Whether a gap is recovered by a probe (else go-back-N).
    pub(crate) fn probes(self) -> bool {
        self != Self::GoBackN
    }

    /// The answer to the probe of PSN `probe`: it acknowledged through `acked` (an ACK's PSN;
    /// a sequence NAK's expected PSN less one); `sent_beyond`: packets after the probe had
    /// been sent before it. An answer that acknowledges nothing of the probe tells nothing.
    pub(crate) fn answered(&mut self, probe: Psn, acked: Psn, sent_beyond: bool) {
        match cmp_psn(acked, probe) {
            Ordering::Greater => *self = Self::Keeps,
            Ordering::Equal if sent_beyond => {
                if let Self::Unknown { misses } = *self {
                    let misses = misses.saturating_add(1);
                    *self = if misses >= MISSES_FOR_GO_BACK_N {
                        Self::GoBackN
                    } else {
                        Self::Unknown { misses }
                    };
                }
            }
            _ => {}
        }
    }
}
