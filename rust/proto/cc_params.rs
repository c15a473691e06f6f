// SPDX-License-Identifier: GPL-2.0

//! The congestion control settings of a device ([`CcParam`]): DCQCN's, with the names mlx5
//! gives them in its `cc_params` and the defaults ConnectX firmware reports, and rrxe's two
//! switches; each with its range, to which a value is clamped where it is read
//! ([`CcParams::clamped`]). The algorithm is in [`super::dcqcn`].

use core::ffi::CStr;

/// The ceiling of a QP's rate when `rp_max_rate` is 0 (line rate): 100 Gb/s, above anything a
/// software device sends, so a QP that recovered to it is not paced at all.
pub(crate) const LINE_KBPS: u32 = 100_000_000;

/// One unit of `alpha`: 1024 is 1.
pub(crate) const ALPHA_ONE: u32 = 1024;

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
    pub(crate) fn ceiling_kbps(&self) -> u32 {
        match self.get(CcParam::RpMaxRate) {
            0 => LINE_KBPS,
            m => m.saturating_mul(1000).min(LINE_KBPS),
        }
    }

    /// The lowest rate, kb/s (at least 1 kb/s: the pacer divides by it).
    pub(crate) fn floor_kbps(&self) -> u32 {
        self.get(CcParam::RpMinRate).saturating_mul(1000).max(1)
    }
}
