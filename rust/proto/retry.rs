// SPDX-License-Identifier: GPL-2.0

//! Retry budgets of the requester (IBA Vol 1 sections 9.7.6.1.3 and 9.7.5.2.8).
//!
//! A QP carries two budgets from its attributes: `retry_cnt` transport retries (retransmission
//! timeouts and losses found by responses) and `rnr_retry` RNR retries. Each is used one retry at
//! a time and reset whenever the requester progresses. The completer asks
//! [`RetryCounter::decide`] what to do about a loss; nothing here touches a queue pair.

use super::cqe::WcStatus;

/// What set off a transport retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RetryCause {
    /// The retransmission timer expired with nothing acknowledged since it was armed.
    Timeout,
    /// A response showed a loss: a PSN sequence error NAK, an ACK past an unanswered READ or
    /// atomic (an implicit NAK), or a READ response past a gap.
    Response,
}

/// What to do about a transport retry (see [`RetryCounter::decide`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RetryDecision {
    /// Go back and send again from the oldest unacknowledged packet; one retry was used.
    Retry,
    /// A retry already went back and nothing progressed since: the response was set off by a
    /// packet sent before it went back. Nothing to do.
    Ignore,
    /// No retry is left: the oldest WQE fails with [`RetryCounter::exhausted_status`].
    Exhausted,
}

/// A transport or RNR retry budget, reset to its initial value whenever the requester progresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RetryCounter {
    /// Retries still allowed.
    left: u8,
    /// Whether retries never run out.
    infinite: bool,
    /// The status the failed work request completes with once the budget is exhausted.
    exhausted: WcStatus,
    /// A retry went back since the budget was (re)set, that is since the last progress.
    started: bool,
}

impl RetryCounter {
    /// The 3-bit RNR retry count that means "retry forever".
    pub(crate) const INFINITE_RNR: u8 = 7;

    /// Creates the transport retry budget (timeouts and PSN sequence error NAKs) for a `retry_cnt`
    /// of up to 7 retries; larger values are treated as 7.
    ///
    /// Following the IBA, 7 means seven retries. The C driver treats a `retry_cnt` of 7 as
    /// infinite as well; rrxe does not.
    pub(crate) fn new(retry_cnt: u8) -> Self {
        Self {
            left: retry_cnt.min(7),
            infinite: false,
            exhausted: WcStatus::RetryExcErr,
            started: false,
        }
    }

    /// Creates the RNR retry budget for an `rnr_retry` count, where 7 (or more) means infinite.
    pub(crate) fn new_rnr(rnr_retry: u8) -> Self {
        Self {
            left: rnr_retry.min(Self::INFINITE_RNR),
            infinite: rnr_retry >= Self::INFINITE_RNR,
            exhausted: WcStatus::RnrRetryExcErr,
            started: false,
        }
    }

    /// Uses one retry; returns `false`, and changes nothing, when none is left.
    pub(crate) fn consume(&mut self) -> bool {
        if self.infinite {
            return true;
        }
        match self.left.checked_sub(1) {
            Some(left) => {
                self.left = left;
                true
            }
            None => false,
        }
    }

    /// Decides a transport retry set off by `cause`.
    ///
    /// Going back does not recall what was sent before: the responses to those packets keep
    /// arriving, and each would look like a new loss (an ACK of a later SEND while the READ
    /// before it is being asked again, a READ response from the first round). Taken as such
    /// they would go back again and again, each time using a retry without any loss, and
    /// exhaust the budget of a QP that carries many messages at once. So once a retry went back,
    /// only the timer retries until the requester progresses (which resets the budget); as in
    /// the C driver, whose completer does the same (`started_retry`).
    pub(crate) fn decide(&mut self, cause: RetryCause) -> RetryDecision {
        if cause == RetryCause::Response && self.started {
            return RetryDecision::Ignore;
        }
        if self.consume() {
            self.started = true;
            RetryDecision::Retry
        } else {
            RetryDecision::Exhausted
        }
    }

    /// Returns how many retries are left (meaningless when the budget is infinite).
    pub(crate) const fn left(&self) -> u8 {
        self.left
    }

    /// Returns whether retries never run out.
    pub(crate) const fn is_infinite(&self) -> bool {
        self.infinite
    }

    /// Returns the completion status once [`Self::consume`] has failed: `IB_WC_RETRY_EXC_ERR` for a
    /// transport budget, `IB_WC_RNR_RETRY_EXC_ERR` for an RNR budget.
    pub(crate) const fn exhausted_status(&self) -> WcStatus {
        self.exhausted
    }
}
