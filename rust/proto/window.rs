// SPDX-License-Identifier: GPL-2.0

//! The requester's send window, and the answers the completer may act on.
//!
//! The requester has sent the PSNs `[oldest unacknowledged, one past the newest sent)` and the
//! peer has not acknowledged them. Every ACK, NAK, READ response and atomic ACK is classified
//! against that window before it changes any state ([`SendWindow::classify`]); what the
//! completer then acts on is typed:
//!
//! - an [`Outstanding`] PSN exists only for a PSN inside the window;
//! - an [`AckedThrough`] (how far an answer acknowledges) exists only from an [`Outstanding`]
//!   PSN, so nothing can acknowledge a PSN that was never sent: a forged answer from ahead of
//!   the window cannot mark WQEs done that are posted, or sent, after it.
//!
//! The window's ends are the completer's own state; the classifier only reads them.

use super::opcode::Position;
use super::psn::{
    in_window,
    Psn, //
};

/// The unacknowledged PSNs past which an RC requester starts no new WQE. A WQE may start at
/// the window's edge, so a READ whose responses take the whole window (128 KiB at path MTU
/// 1024, NVMe-oF's I/O size) can have a second one behind it while its data streams back, as
/// with C rxe; with one at a time the responder idles a round trip per READ.
pub(crate) const MAX_UNACKED_PSNS: u32 = 128;

/// The PSNs sent and not yet acknowledged: `[oldest_unacked, sent_to)`, wrapping modulo 2^24.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SendWindow {
    oldest_unacked: Psn,
    sent_to: Psn,
}

/// Where an answer's PSN lies against the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AnswerPsn {
    /// Inside: the answer may be acted on.
    Outstanding(Outstanding),
    /// Before the window: already acknowledged (a duplicate or a late answer).
    Stale,
    /// At or after the next PSN the requester would send: never sent. No peer answers a
    /// request it did not get; such a packet is forged or from a broken peer.
    Unsent,
}

impl SendWindow {
    /// The window from the oldest unacknowledged PSN to one past the newest PSN sent.
    pub(crate) const fn new(oldest_unacked: Psn, sent_to: Psn) -> Self {
        Self {
            oldest_unacked,
            sent_to,
        }
    }

    /// How many PSNs are outstanding.
    pub(crate) const fn len(self) -> u32 {
        self.sent_to.distance_from(self.oldest_unacked)
    }

    /// Classifies the PSN of an answer. The half of the PSN space behind the window's start
    /// (serial order) is stale; the rest outside the window was never sent.
    pub(crate) fn classify(self, psn: Psn) -> AnswerPsn {
        if in_window(psn, self.oldest_unacked, self.len()) {
            AnswerPsn::Outstanding(Outstanding(psn))
        } else if psn.serial_diff(self.oldest_unacked) < 0 {
            AnswerPsn::Stale
        } else {
            AnswerPsn::Unsent
        }
    }

    /// The PSN of an answer when it lies inside the window.
    pub(crate) fn outstanding(self, psn: Psn) -> Option<Outstanding> {
        match self.classify(psn) {
            AnswerPsn::Outstanding(o) => Some(o),
            _ => None,
        }
    }
}

/// A PSN the requester has sent and the peer has not acknowledged. Only
/// [`SendWindow::classify`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Outstanding(Psn);

impl Outstanding {
    /// The PSN.
    pub(crate) const fn psn(self) -> Psn {
        self.0
    }

    /// An ACK of this PSN: it and every PSN before it are acknowledged.
    pub(crate) const fn acks_through(self) -> AckedThrough {
        AckedThrough(self.0)
    }

    /// A NAK of this PSN, or a response to the request at it: every PSN before it is
    /// acknowledged, this one is not.
    pub(crate) const fn acks_before(self) -> AckedThrough {
        AckedThrough(self.0.wrapping_sub(1))
    }
}

/// An acknowledgement of every PSN up to and including [`Self::last`], which is at most the
/// newest PSN sent (it is one before the window when the answer acknowledges nothing new).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AckedThrough(Psn);

impl AckedThrough {
    /// The last PSN acknowledged.
    pub(crate) const fn last(self) -> Psn {
        self.0
    }
}

/// Whether a READ response packet fits its place in the READ: the response at `index`
/// (counted from the READ's first PSN) of a READ of `length` bytes with path MTU `mtu` carries
/// exactly one MTU unless it is the last, and the last carries the rest (a zero-length READ:
/// one empty response). Its opcode's `position` must fit too (9.7.4.1.2): it ends the message
/// (LAST or ONLY) at the last place, and before it only at the last place of a run the
/// requester asked for again (`ask_end`: the responder answers the range the request's RETH
/// names; such a LAST completes nothing, as a READ completes only when each of its responses
/// came); it starts one (FIRST or ONLY) at the first place, and elsewhere only where the
/// requester asked for the rest again (`resumed_at`, the place of its latest READ request
/// after a retransmission: a responder that never saw the READ answers that as a new one, from
/// a FIRST or ONLY). A MIDDLE or LAST at the first place, or a FIRST or early LAST nobody
/// asked for, is no response of any responder's.
pub(crate) fn read_response_fits(
    length: u32,
    mtu: u32,
    index: u32,
    (resumed_at, ask_end): (Option<u32>, Option<u32>),
    position: Position,
    payload_len: usize,
) -> bool {
    let Some(count) = super::seq::packets_for(length, mtu) else {
        return false;
    };
    if index >= count {
        return false;
    }
    let end_fits = if index == count - 1 {
        position.ends_message()
    } else {
        !position.ends_message() || ask_end == Some(index)
    };
    if !end_fits {
        return false;
    }
    // Elsewhere than the first place, a continuation fits where the READ was asked for again
    // too: responses to the earlier request may still come.
    let starts = position.starts_message();
    let start_fits = if index == 0 {
        starts
    } else {
        !starts || resumed_at == Some(index)
    };
    if !start_fits {
        return false;
    }
    let expected = if index < count - 1 {
        Some(mtu)
    } else {
        // The rest after `index` full MTUs (no more than `length`: `index` is below `count`).
        index
            .checked_mul(mtu)
            .and_then(|before| length.checked_sub(before))
    };
    expected
        .and_then(|e| usize::try_from(e).ok())
        .is_some_and(|e| e == payload_len)
}
