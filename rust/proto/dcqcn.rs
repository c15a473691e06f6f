// SPDX-License-Identifier: GPL-2.0

//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015), the
//! congestion control RoCE NICs run, as a QP's reaction point ([`ReactionPoint`]) and
//! notification point ([`CnpGate`]), with the settings mlx5 exposes (`cc_params`) under their
//! names and with the defaults ConnectX firmware reports ([`CcParam`]).
//!
//! The reaction point keeps a current rate `Rc` and a target rate `Rt` while it is limited,
//! and the congestion estimate `alpha`. A CNP cuts the rate (`Rt = Rc`,
//! `Rc = Rc * (1 - alpha / 2)`, at most once per monitor period) and restarts the increase;
//! each period of `rp_time_reset` without a CNP and each `rp_byte_reset` bytes sent is an
//! increase event: fast recovery (`Rc` halves its distance to `Rt`) for the first
//! `rp_threshold`, then additive increase (`Rt` grows by `rp_ai_rate`) and, once both
//! counters pass the threshold, hyper increase (`Rt` grows by `rp_hai_rate` times their
//! excess). `alpha` moves each `rp_dce_tcp_rtt` towards 1 if a CNP came in the period and
//! towards 0 if none did, by a gain of `(1024 - rp_dce_tcp_g) / 1024`. A QP back at the
//! ceiling (`rp_max_rate`, or [`super::cc_params::LINE_KBPS`]) is not limited any more.
//!
//! Timers are not kernel timers: every event is applied when the QP next sends or receives a
//! CNP, for the periods that elapsed since ([`ReactionPoint::advance`]), which is what timers
//! would have done while the QP did not send. Times are nanoseconds of a monotonic clock;
//! rates are kb/s inside, Mb/s in the settings (mlx5's unit).

use super::cc_params::ALPHA_ONE;
pub(crate) use super::cc_params::{
    CcParam,
    CcParams, //
};

/// Increase events applied at most per call: a QP idle for long recovers over a few sends.
const MAX_EVENTS: u32 = 256;

/// The window over which a QP's sending rate is measured (the rate a first CNP cuts from).
const MEASURE_NS: u64 = 1_000_000;

/// `alpha * (keep / 1024)^n`, in fixed point (exponentiation by squaring, 2^-30 units).
fn decay(alpha: u32, keep: u32, n: u64) -> u32 {
    const ONE: u64 = 1 << 30;
    let mut factor = ONE;
    let mut base = u64::from(keep.min(ALPHA_ONE)) << 20;
    let mut e = n;
    while e > 0 && factor > 0 {
        if e & 1 == 1 {
            factor = (factor * base) >> 30;
        }
        base = (base * base) >> 30;
        e >>= 1;
    }
    ((u64::from(alpha) * factor) >> 30) as u32
}

/// A QP's DCQCN reaction point.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ReactionPoint {
    /// Rate-limited since a CNP; else the fields below up to `cut_ns` mean nothing.
    limited: bool,
    /// The current rate `Rc`, kb/s.
    rc: u32,
    /// The target rate `Rt`, kb/s.
    rt: u32,
    /// The congestion estimate in 1/1024.
    alpha: u32,
    /// Timer increase events since the last cut.
    t: u32,
    /// Byte-counter increase events since the last cut.
    bc: u32,
    /// Bytes sent since the last byte-counter event.
    bytes: u64,
    /// Start of the current increase timer period.
    timer_ns: u64,
    /// Start of the current alpha period.
    alpha_ns: u64,
    /// A CNP arrived in the current alpha period.
    cnp_seen: bool,
    /// When the rate was last cut.
    cut_ns: u64,
    /// Start of the current measurement window, and bytes sent in it.
    meas_ns: u64,
    meas_bytes: u64,
    /// The rate of the last whole measurement window, kb/s.
    meas_kbps: u32,
}

impl ReactionPoint {
    /// The rate the QP is limited to, kb/s; `None` when it is not limited.
    pub(crate) fn rate_kbps(&self) -> Option<u32> {
        self.limited.then_some(self.rc)
    }

    /// The congestion estimate, in 1/1024 (0 when not limited).
    pub(crate) fn alpha(&self) -> u32 {
        if self.limited {
            self.alpha
        } else {
            0
        }
    }

    /// The target rate, kb/s, while limited.
    pub(crate) fn target_kbps(&self) -> Option<u32> {
        self.limited.then_some(self.rt)
    }

    /// Applies the alpha updates and timer increase events of the periods elapsed until `now`.
    pub(crate) fn advance(&mut self, p: &CcParams, now: u64) {
        if !self.limited {
            return;
        }
        let period = u64::from(p.get(CcParam::RpDceTcpRtt)) * 1000;
        if period > 0 && now > self.alpha_ns {
            let n = (now - self.alpha_ns) / period;
            if n > 0 {
                let keep = p.get(CcParam::RpDceTcpG).min(ALPHA_ONE);
                if self.cnp_seen {
                    let a = u64::from(self.alpha) * u64::from(keep)
                        + u64::from(ALPHA_ONE) * u64::from(ALPHA_ONE - keep);
                    self.alpha = (a / u64::from(ALPHA_ONE)) as u32;
                    self.alpha = decay(self.alpha, keep, n - 1);
                } else {
                    self.alpha = decay(self.alpha, keep, n);
                }
                self.cnp_seen = false;
                self.alpha_ns = now - (now - self.alpha_ns) % period;
            }
        }
        let period = u64::from(p.get(CcParam::RpTimeReset)) * 1000;
        if period > 0 && now > self.timer_ns {
            let n = (now - self.timer_ns) / period;
            let mut applied = 0;
            while applied < n && applied < u64::from(MAX_EVENTS) && self.limited {
                self.t = self.t.saturating_add(1);
                self.increase(p);
                applied += 1;
            }
            // Periods beyond the cap are forgone, not kept for later.
            self.timer_ns = now - (now - self.timer_ns) % period;
        }
    }

    /// One increase event (the timer's or the byte counter's, already counted).
    fn increase(&mut self, p: &CcParams) {
        let f = p.get(CcParam::RpThreshold);
        let ceiling = p.ceiling_kbps();
        if self.t.max(self.bc) < f {
            // Fast recovery: towards the rate before the cut.
        } else if self.t.min(self.bc) > f {
            let i = self.t.min(self.bc) - f;
            let step = p.get(CcParam::RpHaiRate).saturating_mul(1000);
            self.rt = self.rt.saturating_add(step.saturating_mul(i));
        } else {
            let step = p.get(CcParam::RpAiRate).saturating_mul(1000);
            self.rt = self.rt.saturating_add(step);
        }
        self.rt = self.rt.min(ceiling);
        self.rc = ((u64::from(self.rc) + u64::from(self.rt)) / 2) as u32;
        if self.rc >= ceiling - ceiling / 64 {
            self.limited = false;
        }
    }

    /// The QP sent `bytes` at `now`: the measurement of its sending rate only (all an unlimited
    /// QP needs; [`Self::on_sent`] does it too).
    pub(crate) fn measure(&mut self, now: u64, bytes: u64) {
        let el = now.saturating_sub(self.meas_ns);
        if el > 10 * MEASURE_NS {
            // Idle for long: what it sent before says nothing of now.
            self.meas_ns = now;
            self.meas_bytes = 0;
        } else if el >= MEASURE_NS {
            self.meas_kbps = Self::kbps(self.meas_bytes, el);
            self.meas_ns = now;
            self.meas_bytes = 0;
        }
        self.meas_bytes = self.meas_bytes.saturating_add(bytes);
    }

    /// The QP sent `bytes` at `now`: the measurement and the byte counter.
    pub(crate) fn on_sent(&mut self, p: &CcParams, now: u64, bytes: u64) {
        self.measure(now, bytes);
        if !self.limited {
            return;
        }
        self.advance(p, now);
        let reset = u64::from(p.get(CcParam::RpByteReset));
        if reset == 0 {
            return;
        }
        self.bytes = self.bytes.saturating_add(bytes);
        let mut events = 0;
        while self.bytes >= reset && self.limited {
            self.bytes -= reset;
            self.bc = self.bc.saturating_add(1);
            self.increase(p);
            events += 1;
            if events == MAX_EVENTS {
                self.bytes %= reset;
                break;
            }
        }
    }

    /// `bytes` over `ns` in kb/s (0 over no time).
    fn kbps(bytes: u64, ns: u64) -> u32 {
        if ns == 0 {
            return 0;
        }
        let k = bytes.saturating_mul(8_000_000) / ns;
        k.min(u64::from(u32::MAX)) as u32
    }

    /// The rate a first CNP starts from: the last measured rate, or the current window's if
    /// higher and long enough to mean something; the ceiling when the QP sent nothing yet.
    fn sending_kbps(&self, p: &CcParams, now: u64) -> u32 {
        let el = now.saturating_sub(self.meas_ns);
        let current = if el >= MEASURE_NS / 10 {
            Self::kbps(self.meas_bytes, el)
        } else {
            0
        };
        match self.meas_kbps.max(current) {
            0 => p.ceiling_kbps(),
            r => r.min(p.ceiling_kbps()),
        }
    }

    /// A CNP arrived at `now`: cuts the rate unless it was cut within the monitor period.
    /// `true` when it cut.
    pub(crate) fn on_cnp(&mut self, p: &CcParams, now: u64) -> bool {
        if !self.limited {
            let first = p.get(CcParam::RpRateToSetOnFirstCnp).saturating_mul(1000);
            let rc = if first > 0 {
                first.min(p.ceiling_kbps())
            } else {
                self.sending_kbps(p, now)
            };
            *self = Self {
                limited: true,
                rc,
                rt: rc,
                alpha: p.get(CcParam::RpInitialAlphaValue).min(ALPHA_ONE),
                timer_ns: now,
                alpha_ns: now,
                cut_ns: now,
                ..*self
            };
            self.cnp_seen = true;
            if first == 0 {
                self.cut(p, now);
            }
            return true;
        }
        self.advance(p, now);
        self.cnp_seen = true;
        let monitor = u64::from(p.get(CcParam::RpRateReduceMonitorPeriod)) * 1000;
        if now.saturating_sub(self.cut_ns) < monitor {
            return false;
        }
        self.cut(p, now);
        true
    }

    /// `Rt = Rc`, `Rc = Rc * (1 - alpha / 2^gd)` bounded by `rp_min_dec_fac` and the floor;
    /// the increase starts over.
    fn cut(&mut self, p: &CcParams, now: u64) {
        let rc = u64::from(self.rc);
        let gd = p.get(CcParam::RpGd).min(31);
        let cut = (rc * u64::from(self.alpha)) >> gd;
        let kept = rc * u64::from(p.get(CcParam::RpMinDecFac).min(100)) / 100;
        let next = rc.saturating_sub(cut).max(kept);
        self.rt = self.rc;
        self.rc = (next as u32).max(p.floor_kbps());
        self.t = 0;
        self.bc = 0;
        self.bytes = 0;
        self.timer_ns = now;
        self.cut_ns = now;
    }
}

/// The fewest PSNs [`in_flight_cap`] allows unacknowledged.
pub(crate) const IN_FLIGHT_FLOOR: u32 = 32;

/// How many PSNs an RC QP that DCQCN limits may have unacknowledged, at most `max`: what the
/// path holds (`path_psns`: its delivery rate over its shortest round trip, from
/// [`super::recovery::Rtt::path_psns`]; `max` before it is known) and [`IN_FLIGHT_FLOOR`] more.
///
/// DCQCN paces and caps nothing else, and its increase steps are absolute rates made for fast
/// links: at a slow bottleneck its rate is above the link most of the time, and the QP sends
/// all it may have in flight (up to 192 PSNs) into the switch's buffer, which drops at its
/// limit. As IRN (Mittal et al., SIGCOMM 2018) caps a flow's packets in flight at the path's
/// bandwidth-delay product, this keeps a congested QP's share of a queue to about what the
/// path carries in a round trip. A queue that builds makes the samples' round trips longer
/// than the shortest, and the cap smaller.
///
/// Not twice the path, as IRN: a QP that the cap holds delivers its cap per round trip, so
/// twice the path is twice the cap times the shortest round trip over the sample's, and each
/// QP went to the floor or to `max` by whether its own shortest sample was under half the
/// queue's round trip (four flows: Jain fairness 0.70-0.75). The path plus the floor settles
/// where the cap is the floor over one less that ratio, which moves with it smoothly.
pub(crate) fn in_flight_cap(path_psns: Option<u32>, max: u32) -> u32 {
    path_psns
        .map_or(max, |p| p.saturating_add(IN_FLIGHT_FLOOR))
        .clamp(IN_FLIGHT_FLOOR, max.max(IN_FLIGHT_FLOOR))
}

/// How many of an RC requester's smoothed round trips a CE-marked READ response holds its
/// in-flight cap on for ([`reads_congested`]).
pub(crate) const READ_MARK_HOLD_RTTS: u64 = 8;

/// The shortest such hold: before a round trip is measured, or where eight are shorter.
pub(crate) const READ_MARK_HOLD_MIN_NS: u64 = 1_000_000;

/// Whether an RC requester's READs met congestion lately: a response to one arrived with a CE
/// mark at `marked_ns`, less than [`READ_MARK_HOLD_RTTS`] smoothed round trips (`srtt_ns`,
/// [`READ_MARK_HOLD_MIN_NS`] at least) before `now`. The requester's [`in_flight_cap`] then
/// holds what it asks for, as it holds a QP that CNPs limit.
///
/// The data of a READ travels from the responder, whose reaction point the requester's CNPs
/// slow; but DCQCN's rate stays above a slow link ([`in_flight_cap`]), and nothing
/// acknowledges READ responses, so nothing else bounds how many the responder has in the
/// network: the requester's outstanding READs do (their response PSNs count in its window).
/// NVMe-oF's writes are such READs (the target reads the host's buffers): through a bottleneck
/// of 8 Mbit/s they filled the queue to its limit.
///
/// The mark is taken from a packet of the connection (its addresses checked, not yet its PSN):
/// an off-path sender that forges CE-marked READ responses holds the cap on, never below its
/// floor, as a forged CNP can only cut the rate.
pub(crate) fn reads_congested(marked_ns: Option<u64>, now: u64, srtt_ns: Option<u64>) -> bool {
    let Some(at) = marked_ns else {
        return false;
    };
    let hold = srtt_ns
        .map_or(0, |s| s.saturating_mul(READ_MARK_HOLD_RTTS))
        .max(READ_MARK_HOLD_MIN_NS);
    now.saturating_sub(at) < hold
}

/// A QP's notification point: at most one CNP per `np_min_time_between_cnps`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CnpGate {
    /// When the last CNP was sent, if any was.
    last_ns: Option<u64>,
}

impl CnpGate {
    /// A CE-marked packet arrived at `now`: whether to send a CNP (and then one is counted as
    /// sent).
    pub(crate) fn due(&mut self, p: &CcParams, now: u64) -> bool {
        let gap = u64::from(p.get(CcParam::NpMinTimeBetweenCnps)) * 1000;
        match self.last_ns {
            Some(last) if now.saturating_sub(last) < gap => false,
            _ => {
                self.last_ns = Some(now);
                true
            }
        }
    }
}

/// Paces a rate-limited QP's packets: each one moves the earliest departure of the next by
/// its length at the rate; a pass sends while that is at most [`PACE_BURST_NS`] ahead, so
/// packets leave in bursts of that length, and waits for the rest.
///
/// A wait ends late (a timer's latency, the pass's scheduling: a millisecond in a TCG guest):
/// the packets that follow it keep their schedule, and go at once until the pacer caught up
/// with the clock, for at most [`PACE_CATCHUP_NS`] of lateness, so the rate holds whatever the
/// timers' latency. A QP that had nothing to send (no wait) gets no credit for its idle time
/// beyond one burst.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Pacer {
    /// The earliest departure of the next packet.
    next_ns: u64,
    /// The QP waits for its departure (the last [`Pacer::wait_ns`] said so and nothing was
    /// sent since).
    waiting: bool,
}

/// How far ahead of the clock a pass may send.
pub(crate) const PACE_BURST_NS: u64 = 20_000;

/// How much of a wait's lateness the packets after it make up.
pub(crate) const PACE_CATCHUP_NS: u64 = 4_000_000;

impl Pacer {
    /// How long to wait from `now` before sending more, `None` to send now.
    pub(crate) fn wait_ns(&mut self, now: u64) -> Option<u64> {
        let wait = (self.next_ns > now + PACE_BURST_NS).then(|| self.next_ns - now);
        self.waiting |= wait.is_some();
        wait
    }

    /// A packet of `bytes` left at `now` at `kbps`.
    pub(crate) fn sent(&mut self, now: u64, bytes: u64, kbps: u32) {
        let from = if self.waiting {
            now.saturating_sub(PACE_CATCHUP_NS)
        } else {
            now
        };
        let start = self.next_ns.max(from);
        let ns = bytes.saturating_mul(8_000_000) / u64::from(kbps.max(1));
        self.next_ns = start.saturating_add(ns);
        // Behind after a late wait until the schedule is ahead of the clock again.
        self.waiting = self.waiting && self.next_ns < now;
    }
}
