// SPDX-License-Identifier: GPL-2.0

//! 24-bit packet sequence number arithmetic.
//!
//! PSNs count packets modulo 2^24. Ordering is only meaningful between PSNs that are close to each
//! other, so two PSNs are compared by the serial-number rule: their difference modulo 2^24 is read
//! as a signed 24-bit value. A difference in `[1, 2^23 - 1]` means "after", a difference in
//! `[2^23, 2^24 - 1]` (a negative signed value, including exactly 2^23) means "before". This is the
//! same rule as the C driver's `psn_compare`, which shifts the 32-bit difference left by eight bits
//! and reads it as an `s32`.
//!
//! [`Psn`] deliberately does not implement [`Ord`]: the serial-number order is not transitive
//! across the whole space, so it must not be used for sorting. Use [`cmp_psn`] instead.

use core::cmp::Ordering;
use core::ops::Add;
use core::ops::AddAssign;
use core::ops::Sub;

/// A packet sequence number, always kept within 24 bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Psn(u32);

impl Psn {
    /// Width of a PSN in bits.
    pub(crate) const BITS: u32 = 24;

    /// Mask selecting the PSN bits of a 32-bit word.
    pub(crate) const MASK: u32 = (1 << Self::BITS) - 1;

    /// The number of distinct PSNs, 2^24.
    pub(crate) const MODULUS: u32 = 1 << Self::BITS;

    /// The PSN zero.
    pub(crate) const ZERO: Self = Self(0);

    /// The largest PSN, 2^24 - 1, which is followed by zero.
    pub(crate) const MAX: Self = Self(Self::MASK);

    /// Creates a PSN from the low 24 bits of `value`, ignoring the upper eight bits.
    pub(crate) const fn new(value: u32) -> Self {
        Self(value & Self::MASK)
    }

    /// Returns the PSN as a number in `[0, 2^24)`.
    pub(crate) const fn value(self) -> u32 {
        self.0
    }

    /// Returns the PSN `n` packets after this one, wrapping modulo 2^24.
    pub(crate) const fn wrapping_add(self, n: u32) -> Self {
        Self::new(self.0.wrapping_add(n))
    }

    /// Returns the PSN `n` packets before this one, wrapping modulo 2^24.
    pub(crate) const fn wrapping_sub(self, n: u32) -> Self {
        Self::new(self.0.wrapping_sub(n))
    }

    /// Returns the PSN that follows this one.
    pub(crate) const fn next(self) -> Self {
        self.wrapping_add(1)
    }

    /// Returns how many packets `self` lies after `start`, counted forwards modulo 2^24.
    pub(crate) const fn distance_from(self, start: Self) -> u32 {
        self.0.wrapping_sub(start.0) & Self::MASK
    }

    /// Returns the signed serial-number difference `self - other`, in `[-2^23, 2^23)`.
    pub(crate) const fn serial_diff(self, other: Self) -> i32 {
        // Moving the 24-bit difference into the top of the word and shifting it back down
        // arithmetically sign-extends bit 23; the cast reinterprets the bits and cannot lose any.
        ((self.0.wrapping_sub(other.0) << 8) as i32) >> 8
    }
}

impl Add<u32> for Psn {
    type Output = Self;

    fn add(self, n: u32) -> Self {
        self.wrapping_add(n)
    }
}

impl AddAssign<u32> for Psn {
    fn add_assign(&mut self, n: u32) {
        *self = self.wrapping_add(n);
    }
}

impl Sub<u32> for Psn {
    type Output = Self;

    fn sub(self, n: u32) -> Self {
        self.wrapping_sub(n)
    }
}

/// Compares two PSNs by the IBA serial-number rule.
///
/// Returns [`Ordering::Greater`] when `a` comes after `b`, that is when `a - b` modulo 2^24 read as
/// a signed 24-bit value is positive. PSNs exactly 2^23 apart compare as [`Ordering::Less`], as in
/// the C driver.
pub(crate) fn cmp_psn(a: Psn, b: Psn) -> Ordering {
    a.serial_diff(b).cmp(&0)
}

/// Returns whether `psn` is one of the `len` consecutive PSNs that start at `start`.
///
/// The window may wrap past [`Psn::MAX`]. A window of length zero contains nothing and a window of
/// 2^24 or more contains every PSN.
pub(crate) const fn in_window(psn: Psn, start: Psn, len: u32) -> bool {
    psn.distance_from(start) < len
}
