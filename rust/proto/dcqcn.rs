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
//! ceiling (`rp_max_rate`, or [`LINE_KBPS`]) is not limited any more.
//!
//! Timers are not kernel timers: every event is applied when the QP next sends or receives a
//! CNP, for the periods that elapsed since ([`ReactionPoint::advance`]), which is what timers
//! would have done while the QP did not send. Times are nanoseconds of a monotonic clock;
//! rates are kb/s inside, Mb/s in the settings (mlx5's unit).

use core::ffi::CStr;

/// The ceiling of a QP's rate when `rp_max_rate` is 0 (line rate): 100 Gb/s, above anything a
/// software device sends, so a QP that recovered to it is not paced at all.
pub(crate) const LINE_KBPS: u32 = 100_000_000;

/// Increase events applied at most per call: a QP idle for long recovers over a few sends.
const MAX_EVENTS: u32 = 256;

/// The window over which a QP's sending rate is measured (the rate a first CNP cuts from).
const MEASURE_NS: u64 = 1_000_000;

/// One unit of `alpha`: 1024 is 1.
const ALPHA_ONE: u32 = 1024;

/// A congestion control setting of a device, with mlx5's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CcParam {
    /// Whether the device's QPs react to CNPs and mark their packets ECN-capable (1) or not.
    RpEnable,
    /// Whether the device answers CE-marked packets with CNPs (1) or not.
    NpEnable,
    /// Microseconds without a CNP per timer increase event.
    RpTimeReset,
    /// Bytes sent per byte-counter increase event.
    RpByteReset,
    /// Increase events of fast recovery before additive increase.
    RpThreshold,
    /// Additive increase step, Mb/s.
    RpAiRate,
    /// Hyper increase step, Mb/s.
    RpHaiRate,
    /// The highest rate, Mb/s; 0: line rate ([`LINE_KBPS`]).
    RpMaxRate,
    /// The lowest rate a cut goes to, Mb/s.
    RpMinRate,
    /// A cut keeps at least this percentage of the rate.
    RpMinDecFac,
    /// log2 of the divisor of alpha in a cut: `Rc * (1 - alpha / 2^rp_gd)`, alpha in 1/1024.
    RpGd,
    /// alpha keeps `rp_dce_tcp_g / 1024` of itself per update.
    RpDceTcpG,
    /// Microseconds between alpha updates.
    RpDceTcpRtt,
    /// Microseconds within which further CNPs do not cut the rate again.
    RpRateReduceMonitorPeriod,
    /// alpha (in 1/1024) when a QP becomes limited.
    RpInitialAlphaValue,
    /// The rate set by the first CNP, Mb/s; 0: the rate the QP was sending at, cut.
    RpRateToSetOnFirstCnp,
    /// Microseconds between two CNPs to one QP.
    NpMinTimeBetweenCnps,
    /// The DSCP of CNPs.
    NpCnpDscp,
}

impl CcParam {
    /// Every setting, in the order of their values' array.
    pub(crate) const ALL: [Self; 18] = [
        Self::RpEnable,
        Self::NpEnable,
        Self::RpTimeReset,
        Self::RpByteReset,
        Self::RpThreshold,
        Self::RpAiRate,
        Self::RpHaiRate,
        Self::RpMaxRate,
        Self::RpMinRate,
        Self::RpMinDecFac,
        Self::RpGd,
        Self::RpDceTcpG,
        Self::RpDceTcpRtt,
        Self::RpRateReduceMonitorPeriod,
        Self::RpInitialAlphaValue,
        Self::RpRateToSetOnFirstCnp,
        Self::NpMinTimeBetweenCnps,
        Self::NpCnpDscp,
    ];

    /// The number of settings.
    pub(crate) const COUNT: usize = Self::ALL.len();

    /// The setting's name (its file in `cc_params`).
    pub(crate) const fn name(self) -> &'static CStr {
        match self {
            Self::RpEnable => c"rp_enable",
            Self::NpEnable => c"np_enable",
            Self::RpTimeReset => c"rp_time_reset",
            Self::RpByteReset => c"rp_byte_reset",
            Self::RpThreshold => c"rp_threshold",
            Self::RpAiRate => c"rp_ai_rate",
            Self::RpHaiRate => c"rp_hai_rate",
            Self::RpMaxRate => c"rp_max_rate",
            Self::RpMinRate => c"rp_min_rate",
            Self::RpMinDecFac => c"rp_min_dec_fac",
            Self::RpGd => c"rp_gd",
            Self::RpDceTcpG => c"rp_dce_tcp_g",
            Self::RpDceTcpRtt => c"rp_dce_tcp_rtt",
            Self::RpRateReduceMonitorPeriod => c"rp_rate_reduce_monitor_period",
            Self::RpInitialAlphaValue => c"rp_initial_alpha_value",
            Self::RpRateToSetOnFirstCnp => c"rp_rate_to_set_on_first_cnp",
            Self::NpMinTimeBetweenCnps => c"np_min_time_between_cnps",
            Self::NpCnpDscp => c"np_cnp_dscp",
        }
    }

    /// The default (ConnectX firmware's, for the `rp_*`/`np_*` ones).
    pub(crate) const fn default(self) -> u32 {
        match self {
            Self::RpEnable | Self::NpEnable => 1,
            Self::RpTimeReset => 300,
            Self::RpByteReset => 32767,
            Self::RpThreshold => 1,
            Self::RpAiRate => 5,
            Self::RpHaiRate => 50,
            Self::RpMaxRate => 0,
            Self::RpMinRate => 1,
            Self::RpMinDecFac => 50,
            Self::RpGd => 11,
            Self::RpDceTcpG => 1019,
            Self::RpDceTcpRtt => 1,
            Self::RpRateReduceMonitorPeriod => 4,
            Self::RpInitialAlphaValue => 1023,
            Self::RpRateToSetOnFirstCnp => 0,
            Self::NpMinTimeBetweenCnps => 4,
            Self::NpCnpDscp => 48,
        }
    }

    /// The largest value the setting takes (writes above it are refused).
    pub(crate) const fn max(self) -> u32 {
        match self {
            Self::RpEnable | Self::NpEnable => 1,
            Self::RpThreshold => 31,
            Self::RpMinDecFac => 100,
            Self::RpGd => 15,
            Self::RpDceTcpG | Self::RpInitialAlphaValue => ALPHA_ONE,
            Self::NpCnpDscp => 63,
            Self::RpAiRate
            | Self::RpHaiRate
            | Self::RpMaxRate
            | Self::RpMinRate
            | Self::RpRateToSetOnFirstCnp => LINE_KBPS / 1000,
            // Times and byte counts: up to about a second, or a GiB.
            Self::RpTimeReset
            | Self::RpDceTcpRtt
            | Self::RpRateReduceMonitorPeriod
            | Self::NpMinTimeBetweenCnps => 1_000_000,
            Self::RpByteReset => 1 << 30,
        }
    }

    /// The setting's index in [`Self::ALL`] (declared in that order).
    pub(crate) const fn index(self) -> usize {
        self as usize
    }

    /// The setting called `name`.
    pub(crate) fn by_name(name: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|p| p.name().to_bytes() == name.as_bytes())
    }
}

/// A device's settings, read once for a decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CcParams(pub(crate) [u32; CcParam::COUNT]);

impl Default for CcParams {
    fn default() -> Self {
        let mut v = [0; CcParam::COUNT];
        for (i, p) in CcParam::ALL.iter().enumerate() {
            v[i] = p.default();
        }
        Self(v)
    }
}

impl CcParams {
    /// The settings `raw` gives by index, each clamped to its maximum: whatever a user wrote
    /// where the values are kept, the algorithm sees values in range.
    pub(crate) fn clamped(raw: impl Fn(usize) -> u32) -> Self {
        let mut v = [0; CcParam::COUNT];
        for (i, p) in CcParam::ALL.iter().enumerate() {
            v[i] = raw(i).min(p.max());
        }
        Self(v)
    }

    /// A setting's value.
    pub(crate) fn get(&self, p: CcParam) -> u32 {
        self.0.get(p.index()).copied().unwrap_or(0)
    }

    /// The rate ceiling, kb/s.
    fn ceiling_kbps(&self) -> u32 {
        match self.get(CcParam::RpMaxRate) {
            0 => LINE_KBPS,
            m => m.saturating_mul(1000).min(LINE_KBPS),
        }
    }

    /// The lowest rate, kb/s (at least 1 kb/s: the pacer divides by it).
    fn floor_kbps(&self) -> u32 {
        self.get(CcParam::RpMinRate).saturating_mul(1000).max(1)
    }
}

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

    /// The QP sent `bytes` at `now`: the measurement and the byte counter.
    pub(crate) fn on_sent(&mut self, p: &CcParams, now: u64, bytes: u64) {
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
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Pacer {
    /// The earliest departure of the next packet.
    next_ns: u64,
}

/// How far ahead of the clock a pass may send.
pub(crate) const PACE_BURST_NS: u64 = 20_000;

impl Pacer {
    /// How long to wait from `now` before sending more, `None` to send now.
    pub(crate) fn wait_ns(&self, now: u64) -> Option<u64> {
        (self.next_ns > now + PACE_BURST_NS).then(|| self.next_ns - now)
    }

    /// A packet of `bytes` left at `now` at `kbps`.
    pub(crate) fn sent(&mut self, now: u64, bytes: u64, kbps: u32) {
        let start = self.next_ns.max(now);
        let ns = bytes.saturating_mul(8_000_000) / u64::from(kbps.max(1));
        self.next_ns = start.saturating_add(ns);
    }
}
