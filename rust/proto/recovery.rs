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

use super::{
    psn::{
        cmp_psn,
        Psn, //
    },
    reorder::REORDER_SLOTS,
};
use core::cmp::Ordering;

/// How many probes must show a peer dropping what followed a gap, and none keeping it, before
/// the requester stops probing that peer.
pub(crate) const MISSES_FOR_GO_BACK_N: u8 = 2;

/// The most PSNs past the oldest unacknowledged one that a requester has sent while a probe
/// sent alone waits for its answer from a peer known to keep what follows a gap: what an rrxe
/// responder keeps past a gap ([`REORDER_SLOTS`]; it refuses more, and each packet refused is
/// a gap of its own, probed in its turn).
pub(crate) const PAST_PROBE_PSNS: u32 = REORDER_SLOTS as u32;

/// Whether a requester whose next PSN is `next` and whose oldest unacknowledged one is
/// `unacked` sends new packets while a probe sent alone waits for its answer. A peer known to
/// keep ([`PeerRecovery::Keeps`]) keeps them too, up to [`PAST_PROBE_PSNS`], and the link does
/// not idle a round trip for each gap (at 5 % loss of single packets, a gap every twenty); one
/// not known to may drop them, and waits.
pub(crate) fn sends_past_probe(peer: PeerRecovery, next: Psn, unacked: Psn) -> bool {
    peer == PeerRecovery::Keeps && next.distance_from(unacked) < PAST_PROBE_PSNS
}

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

/// The round-trip time of a connection, sampled from the AckReq packets it sends and the ACKs
/// that answer them, or a READ's or atomic's request and its first answer (one sample at a
/// time; none from a packet sent again, whose answer could be the first transmission's: Karn's
/// rule), smoothed as TCP does (RFC 6298: 1/8 of each sample, and its variation by 1/4 of each
/// sample's distance from the smoothed time); and what the path holds, from the PSNs
/// acknowledged during a sample.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Rtt {
    srtt_ns: Option<u64>,
    rttvar_ns: u64,
    /// The shortest sample: the path's round trip with the least queueing seen.
    min_ns: Option<u64>,
    /// The PSNs the last sample's delivery rate carries in the shortest round trip.
    path_psns: Option<u32>,
    /// The PSN of the packet being timed, when it left, and the oldest PSN not acknowledged
    /// then.
    sample: Option<(Psn, u64, Psn)>,
}

impl Rtt {
    /// An AckReq packet of PSN `psn` left at `now`, with `unacked` the oldest PSN not yet
    /// acknowledged: timed unless a sample runs.
    pub(crate) fn sending(&mut self, psn: Psn, now: u64, unacked: Psn) {
        if self.sample.is_none() {
            self.sample = Some((psn, now, unacked));
        }
    }

    /// Whether a packet is being timed.
    pub(crate) fn sampling(&self) -> bool {
        self.sample.is_some()
    }

    /// Whether an answer through `through` ends the running sample ([`Self::acked`]): only
    /// then does the answer need the time.
    pub(crate) fn ends_with(&self, through: Psn) -> bool {
        self.sample
            .is_some_and(|(p, ..)| cmp_psn(through, p) != Ordering::Less)
    }

    /// An ACK through `through` arrived at `now`: ends the sample if it covers the timed packet,
    /// and returns the shortest round trip known then. `path_min_ns` is the shortest that other
    /// QPs on the same path measured ([`super::path_rtt`]): QPs that share a bottleneck then
    /// estimate the same path, whenever each started (one that started behind a queue never
    /// sees the path's own round trip, and kept more in flight than those that did).
    pub(crate) fn acked(
        &mut self,
        through: Psn,
        now: u64,
        path_min_ns: Option<u64>,
    ) -> Option<u64> {
        let (psn, sent, unacked) = self.sample?;
        if cmp_psn(through, psn) == Ordering::Less {
            return None;
        }
        self.sample = None;
        let rtt = now.saturating_sub(sent);
        let own = self.min_ns.map_or(rtt, |m| m.min(rtt));
        let min = path_min_ns.map_or(own, |p| p.min(own));
        self.min_ns = Some(min);
        // Delivered during the sample: at its rate, the shortest round trip carries this much.
        let delivered = u64::from(through.next().distance_from(unacked));
        self.path_psns = (rtt > 0)
            .then(|| u32::try_from(delivered.saturating_mul(min) / rtt).unwrap_or(u32::MAX));
        let (srtt, rttvar) = match self.srtt_ns {
            None => (rtt, rtt / 2),
            Some(s) => {
                let v = self.rttvar_ns;
                (s - s / 8 + rtt / 8, v - v / 4 + s.abs_diff(rtt) / 4)
            }
        };
        self.srtt_ns = Some(srtt);
        self.rttvar_ns = rttvar;
        Some(min)
    }

    /// An answer for PSN `psn` came before the timed packet's (a READ response placed past a
    /// gap): the timed packet's answer was lost or comes late, and the sample would time its
    /// recovery rather than the path. It is dropped.
    pub(crate) fn answered_past(&mut self, psn: Psn) {
        if self
            .sample
            .is_some_and(|(p, ..)| cmp_psn(psn, p) == Ordering::Greater)
        {
            self.sample = None;
        }
    }

    /// Packets go again (a rewind): the running sample could be answered by either copy.
    pub(crate) fn cancel(&mut self) {
        self.sample = None;
    }

    /// How long an answer may take before it is late, once sampled: twice the smoothed
    /// round-trip time, or more when the samples vary (the smoothed time and four times its
    /// variation, as TCP's retransmission timeout: a TCG guest's vCPU stalls, a queue that
    /// builds).
    pub(crate) fn answer_wait_ns(&self) -> Option<u64> {
        let s = self.srtt_ns?;
        Some(
            s.saturating_mul(2)
                .max(s.saturating_add(self.rttvar_ns.saturating_mul(4))),
        )
    }

    /// The shortest round-trip time sampled, once sampled.
    pub(crate) fn min_ns(&self) -> Option<u64> {
        self.min_ns
    }

    /// The smoothed round-trip time, once sampled.
    pub(crate) fn srtt_ns(&self) -> Option<u64> {
        self.srtt_ns
    }

    /// The PSNs the path holds at the last sample's delivery rate over the shortest round trip
    /// (its bandwidth-delay product, in packets), once sampled.
    pub(crate) fn path_psns(&self) -> Option<u32> {
        self.path_psns
    }
}

/// The most responses of a READ none of whose responses came that a tail probe asks for
/// whole. A larger one is asked for by its first response only: when the responses are only
/// late (a queue, a stalled vCPU) the probe costs one response again instead of all of them,
/// and when the request was lost the probe's answer, which comes after everything the
/// responder sent before it, shows the rest missing and it is asked for at once (a round trip
/// more than asking for it whole).
pub(crate) const READ_PROBE_WHOLE_PKTS: u32 = 4;

/// The shortest wait before a tail probe.
pub(crate) const TAIL_PROBE_MIN_NS: u64 = 500_000;

/// How long an RC requester with nothing more to send and packets unacknowledged waits before
/// it sends its oldest unacknowledged packet again as a probe (a tail loss probe: the last
/// packets of a burst, or their ACKs, were lost, and nothing after them will make the peer
/// NAK): `wait_ns` ([`Rtt::answer_wait_ns`], doubled for each probe left unanswered), at least
/// [`TAIL_PROBE_MIN_NS`], at most half the local ACK timeout (`timeout_us`, `None` for none).
/// `None` before the first sample: the timeout alone then.
pub(crate) fn tail_probe_delay_ns(wait_ns: Option<u64>, timeout_us: Option<u64>) -> Option<u64> {
    let d = wait_ns?.max(TAIL_PROBE_MIN_NS);
    Some(match timeout_us {
        Some(us) => d.min(us.saturating_mul(1000) / 2),
        None => d,
    })
}
