// SPDX-License-Identifier: GPL-2.0

//! R5: the causes of the requester's error completions (IBA 9.7.5.2, 10.8.3): a NAK of the
//! matching code in the work request's PSNs, retries exhausted, a response that cannot answer
//! it, a READ response of the wrong length; a flush follows an error (10.3.1).

use super::plan::after;
use super::plan::within;
use super::plan::Generation;
use super::report::Verdict;
use super::requester::chunk_len;
use super::requester::wr_desc;
use super::requester::Ctx;
use super::trace::QpKind;
use super::trace::WrOp;
use super::wire::Op;
use super::wire::Syndrome;
use super::world::World;

/// The NAK codes a requester reports as a remote operational error: code 3, and the codes it
/// has no meaning for on RC (4, invalid RD request; 5-31, reserved), which the spec leaves to
/// the implementation; C rxe and rrxe both report those as remote operational errors.
pub(super) const REM_OP_CODES: [u8; 29] = {
    let mut c = [0u8; 29];
    let mut i = 0;
    while i < 29 {
        c[i] = 3 + i as u8;
        i += 1;
    }
    c
};

impl Ctx<'_> {
    /// R5 for the NAK-driven statuses: a NAK with one of `codes` at one of its PSNs.
    pub(super) fn nak(&self, codes: &[u8]) -> Verdict {
        let found = self
            .own()
            .any(|r| matches!(r.aeth(), Some(Syndrome::Nak(c)) if codes.contains(&c)));
        if found {
            Verdict::Pass
        } else {
            Verdict::Lie(
                "R5-nak",
                format!(
                    "{} failed without a NAK of code {codes:?} at its PSNs; {}",
                    wr_desc(self.wr),
                    self.nearest(self.wr.first)
                ),
            )
        }
    }

    /// R5 for RETRY_EXC: `retry_cnt` retries, each triggered by a sequence NAK in the window,
    /// an implicit NAK (a later response while a READ or atomic is unanswered) or a timeout
    /// (counted at half the local ACK timeout, to be lenient).
    pub(super) fn retry_exc(&self) -> Verdict {
        let wr = self.wr;
        let slack = self.w.cfg.slack_ns;
        let naks = self
            .resps
            .iter()
            .filter(|r| {
                let Some(le) = self.g.last_psn_by(r.t.saturating_add(slack)) else {
                    return false;
                };
                if !within(r.psn, wr.first, le) {
                    return false;
                }
                r.aeth() == Some(Syndrome::Nak(0)) || (!wr.op.is_acked() && after(r.psn, wr.last()))
            })
            .count();
        let half = (self.w.cfg.timeout_ns / 2).max(1);
        let timeouts = self.t_wc.saturating_sub(wr.t) / half;
        let retries = u64::try_from(naks)
            .unwrap_or(u64::MAX)
            .saturating_add(timeouts);
        if retries >= u64::from(self.w.cfg.retry_cnt) {
            Verdict::Pass
        } else {
            Verdict::Lie(
                "R5-retry",
                format!(
                    "{} gave up after {naks} sequence or implicit NAKs and {} ms",
                    wr_desc(wr),
                    self.t_wc.saturating_sub(wr.t) / 1_000_000
                ),
            )
        }
    }

    /// R5 for BAD_RESP: a response at its PSNs that cannot answer it.
    pub(super) fn bad_resp(&self) -> Verdict {
        match self.own().find(|r| !self.fits(r)) {
            Some(_) => Verdict::Pass,
            None => Verdict::Lie(
                "R5-bad-resp",
                format!(
                    "{} failed BAD_RESP but every response at its PSNs fits it; {}",
                    wr_desc(self.wr),
                    self.nearest(self.wr.first)
                ),
            ),
        }
    }

    /// R5 for LOC_LEN: a READ response at its PSNs of a length that does not fit.
    pub(super) fn loc_len(&self) -> Verdict {
        let wr = self.wr;
        let bad = self.own().any(|r| {
            r.op.is_some_and(Op::is_read_response) && {
                let i = r.psn.distance_from(wr.first);
                wr.op != WrOp::Read || r.len != chunk_len(i, wr.npsn, wr.len, self.g.conn.mtu)
            }
        });
        if bad {
            Verdict::Pass
        } else {
            Verdict::Lie(
                "R5-loc-len",
                format!(
                    "{} failed LOC_LEN without a READ response of a wrong length; {}",
                    wr_desc(wr),
                    self.nearest(wr.first)
                ),
            )
        }
    }
}

/// A flush (WR_FLUSH_ERR) is explained by the QP's move to the Error state (IBA 10.3.1): an
/// error completion of the generation other than a flush, a fatal NAK its RC responder sent, or
/// the victim's own move to Error (`err` line) before the completion.
pub(crate) fn flush(w: &World<'_>, q: QpKind, g: &Generation, t_wc: u64) -> Verdict {
    let slack = w.cfg.slack_ns;
    if w.error_gens.contains(&(q, g.conn.gen))
        || w.moved_to_err
            .get(&(q, g.conn.gen))
            .is_some_and(|&t| t <= t_wc.saturating_add(slack))
        || (q == QpKind::Rc
            && w.fatal_nak(g.conn.t.saturating_sub(slack), t_wc.saturating_add(slack)))
    {
        return Verdict::Pass;
    }
    if w.lost > 0 {
        return Verdict::Unjudged("flush unexplained but packets were lost");
    }
    Verdict::Lie(
        "R5-flush",
        format!(
            "flush at {t_wc} in generation {} without an error completion or a fatal NAK",
            g.conn.gen
        ),
    )
}
