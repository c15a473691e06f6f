// SPDX-License-Identifier: GPL-2.0

//! The pure range checks of individual Modify QP attributes (timeouts, retry counts, the RNR
//! timer, path MTU and RDMA read/atomic depths) and the IBA tables that turn the encoded timer
//! values into durations. Every raw value mirrors the kernel's `include/rdma/ib_verbs.h`; which
//! attributes a transition takes is [`super::qp_state`]'s.

/// Why the value of a Modify QP attribute is out of range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QpAttrError {
    /// The local ACK timeout (or the alternate path's) exceeds its 5-bit field.
    Timeout,
    /// The transport retry count exceeds its 3-bit field.
    RetryCount,
    /// The RNR retry count exceeds its 3-bit field.
    RnrRetry,
    /// The minimum RNR NAK timer code exceeds its 5-bit field.
    MinRnrTimer,
    /// The path MTU is not an IB MTU value, or exceeds the port's MTU.
    PathMtu,
    /// The requested RDMA read/atomic depth exceeds the device limit.
    RdAtomic,
}

/// The largest local ACK timeout exponent; the field has five bits.
pub(crate) const MAX_TIMEOUT: u8 = 31;

/// The largest transport retry count; the field has three bits.
pub(crate) const MAX_RETRY_CNT: u8 = 7;

/// The largest RNR retry count; the field has three bits and 7 means "retry forever".
pub(crate) const MAX_RNR_RETRY: u8 = 7;

/// The largest minimum RNR NAK timer code; the field has five bits.
pub(crate) const MAX_MIN_RNR_TIMER: u8 = 31;

/// Returns `value` when it is at most `max`, `err` otherwise.
const fn at_most(value: u8, max: u8, err: QpAttrError) -> Result<u8, QpAttrError> {
    if value > max {
        Err(err)
    } else {
        Ok(value)
    }
}

/// Checks a local ACK timeout exponent (also used for the alternate path's timeout).
pub(crate) const fn check_timeout(timeout: u8) -> Result<u8, QpAttrError> {
    at_most(timeout, MAX_TIMEOUT, QpAttrError::Timeout)
}

/// Checks a transport retry count.
pub(crate) const fn check_retry_cnt(retry_cnt: u8) -> Result<u8, QpAttrError> {
    at_most(retry_cnt, MAX_RETRY_CNT, QpAttrError::RetryCount)
}

/// Checks an RNR retry count.
pub(crate) const fn check_rnr_retry(rnr_retry: u8) -> Result<u8, QpAttrError> {
    at_most(rnr_retry, MAX_RNR_RETRY, QpAttrError::RnrRetry)
}

/// Checks a minimum RNR NAK timer code.
pub(crate) const fn check_min_rnr_timer(code: u8) -> Result<u8, QpAttrError> {
    at_most(code, MAX_MIN_RNR_TIMER, QpAttrError::MinRnrTimer)
}

/// Returns the local ACK timeout in nanoseconds for a timeout exponent, or `None` for zero, which
/// means the timer is disabled.
///
/// The IBA defines the timeout as 4.096 microseconds * 2^`timeout`. Exponents above
/// [`MAX_TIMEOUT`] fail.
pub(crate) const fn local_ack_timeout_ns(timeout: u8) -> Result<Option<u64>, QpAttrError> {
    match check_timeout(timeout) {
        Err(e) => Err(e),
        Ok(0) => Ok(None),
        Ok(t) => Ok(Some(4096 << t)),
    }
}

/// The RNR NAK delays of IBA Vol 1 table 45 in microseconds, indexed by timer code.
///
/// Code 0 is the longest delay, 655.36 ms. (The C driver's copy has 61410 instead of 61440 for
/// code 25; this is the value the specification gives.)
const RNR_TIMER_US: [u32; 32] = [
    655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1_280, 1_920, 2_560, 3_840,
    5_120, 7_680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880, 163_840,
    245_760, 327_680, 491_520,
];

/// Returns the RNR NAK delay in microseconds that a 5-bit timer code stands for, or `None` for a
/// code above [`MAX_MIN_RNR_TIMER`].
pub(crate) fn rnr_timer_us(code: u8) -> Option<u32> {
    RNR_TIMER_US.get(usize::from(code)).copied()
}

/// A path MTU, numbered as `enum ib_mtu`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum PathMtu {
    /// 256 bytes (`IB_MTU_256`, 1).
    Mtu256,
    /// 512 bytes (`IB_MTU_512`, 2).
    Mtu512,
    /// 1024 bytes (`IB_MTU_1024`, 3).
    Mtu1024,
    /// 2048 bytes (`IB_MTU_2048`, 4).
    Mtu2048,
    /// 4096 bytes (`IB_MTU_4096`, 5).
    Mtu4096,
}

impl PathMtu {
    /// Returns the MTU whose `enum ib_mtu` value is `raw`, or `None` for 0 and values above 5.
    pub(crate) const fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            1 => Some(Self::Mtu256),
            2 => Some(Self::Mtu512),
            3 => Some(Self::Mtu1024),
            4 => Some(Self::Mtu2048),
            5 => Some(Self::Mtu4096),
            _ => None,
        }
    }

    /// Returns the `enum ib_mtu` value of this MTU.
    pub(crate) const fn to_raw(self) -> u32 {
        match self {
            Self::Mtu256 => 1,
            Self::Mtu512 => 2,
            Self::Mtu1024 => 3,
            Self::Mtu2048 => 4,
            Self::Mtu4096 => 5,
        }
    }

    /// Returns the MTU in bytes.
    pub(crate) const fn bytes(self) -> u32 {
        128 << self.to_raw()
    }
}

/// Checks a requested path MTU against a port MTU, both given as raw `enum ib_mtu` values.
///
/// The requested value must name an IB MTU and must not exceed `port_mtu`. The C driver compares
/// against the port's `max_mtu` (4096 on rxe), not the MTU the netdev currently allows; which
/// limit to pass is the caller's choice, and [`effective_path_mtu`] is the alternative that clamps
/// instead of failing. An invalid `port_mtu` fails every request.
pub(crate) const fn check_path_mtu(requested: u32, port_mtu: u32) -> Result<PathMtu, QpAttrError> {
    match (PathMtu::from_raw(requested), PathMtu::from_raw(port_mtu)) {
        (Some(mtu), Some(limit)) if mtu.to_raw() <= limit.to_raw() => Ok(mtu),
        _ => Err(QpAttrError::PathMtu),
    }
}

/// Returns whether [`check_path_mtu`] accepts `requested` for a port MTU of `port_mtu`.
pub(crate) const fn path_mtu_ok(requested: u32, port_mtu: u32) -> bool {
    check_path_mtu(requested, port_mtu).is_ok()
}

/// Returns the path MTU to send with: the smaller of the requested one and the port's active MTU.
pub(crate) fn effective_path_mtu(requested: PathMtu, active: PathMtu) -> PathMtu {
    requested.min(active)
}

/// Returns the RDMA read/atomic depth to provision for a requested `max_rd_atomic` or
/// `max_dest_rd_atomic`.
///
/// As in the C driver, a non-zero request is rounded up to a power of two and zero stays zero.
/// The request fails when the rounded depth exceeds `device_max` (the device's `max_qp_rd_atom`
/// for the responder side or `max_qp_init_rd_atom` for the initiator side); for the power-of-two
/// limits rxe advertises that is the same as the request exceeding the limit.
pub(crate) const fn rd_atomic_depth(requested: u32, device_max: u32) -> Result<u32, QpAttrError> {
    if requested == 0 {
        return Ok(0);
    }
    match requested.checked_next_power_of_two() {
        Some(depth) if depth <= device_max => Ok(depth),
        _ => Err(QpAttrError::RdAtomic),
    }
}
