// SPDX-License-Identifier: GPL-2.0

//! The set of attributes a Modify QP call names (`enum ib_qp_attr_mask`), as a bit set with
//! named constants; [`super::qp_state`] checks a set against the transition it asks for.

use core::ops::BitAnd;
use core::ops::BitOr;
use core::ops::BitOrAssign;

/// A set of Modify QP attributes, the bits of `enum ib_qp_attr_mask`.
///
/// Any `u32` can be wrapped, including bits that name no attribute; [`super::qp_state::check_transition`] treats
/// those as illegal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct AttrMask(u32);

impl AttrMask {
    /// No attribute.
    pub(crate) const EMPTY: Self = Self(0);
    /// The new state (`IB_QP_STATE`).
    pub(crate) const STATE: Self = Self(1 << 0);
    /// The state the caller believes the queue pair is in (`IB_QP_CUR_STATE`).
    pub(crate) const CUR_STATE: Self = Self(1 << 1);
    /// Whether the end of an SQ drain raises an event (`IB_QP_EN_SQD_ASYNC_NOTIFY`).
    pub(crate) const EN_SQD_ASYNC_NOTIFY: Self = Self(1 << 2);
    /// The remote access rights (`IB_QP_ACCESS_FLAGS`).
    pub(crate) const ACCESS_FLAGS: Self = Self(1 << 3);
    /// The partition key index (`IB_QP_PKEY_INDEX`).
    pub(crate) const PKEY_INDEX: Self = Self(1 << 4);
    /// The port number (`IB_QP_PORT`).
    pub(crate) const PORT: Self = Self(1 << 5);
    /// The queue key (`IB_QP_QKEY`).
    pub(crate) const QKEY: Self = Self(1 << 6);
    /// The primary path address vector (`IB_QP_AV`).
    pub(crate) const AV: Self = Self(1 << 7);
    /// The path MTU (`IB_QP_PATH_MTU`).
    pub(crate) const PATH_MTU: Self = Self(1 << 8);
    /// The local ACK timeout (`IB_QP_TIMEOUT`).
    pub(crate) const TIMEOUT: Self = Self(1 << 9);
    /// The transport retry count (`IB_QP_RETRY_CNT`).
    pub(crate) const RETRY_CNT: Self = Self(1 << 10);
    /// The RNR retry count (`IB_QP_RNR_RETRY`).
    pub(crate) const RNR_RETRY: Self = Self(1 << 11);
    /// The expected PSN of the receive side (`IB_QP_RQ_PSN`).
    pub(crate) const RQ_PSN: Self = Self(1 << 12);
    /// The outstanding RDMA reads and atomics this side may initiate (`IB_QP_MAX_QP_RD_ATOMIC`).
    pub(crate) const MAX_QP_RD_ATOMIC: Self = Self(1 << 13);
    /// The alternate path (`IB_QP_ALT_PATH`).
    pub(crate) const ALT_PATH: Self = Self(1 << 14);
    /// The RNR NAK timer this side advertises (`IB_QP_MIN_RNR_TIMER`).
    pub(crate) const MIN_RNR_TIMER: Self = Self(1 << 15);
    /// The first PSN of the send side (`IB_QP_SQ_PSN`).
    pub(crate) const SQ_PSN: Self = Self(1 << 16);
    /// The incoming RDMA reads and atomics this side accepts (`IB_QP_MAX_DEST_RD_ATOMIC`).
    pub(crate) const MAX_DEST_RD_ATOMIC: Self = Self(1 << 17);
    /// The path migration state (`IB_QP_PATH_MIG_STATE`).
    pub(crate) const PATH_MIG_STATE: Self = Self(1 << 18);
    /// The queue sizes (`IB_QP_CAP`); no transition accepts it.
    pub(crate) const CAP: Self = Self(1 << 19);
    /// The destination QPN (`IB_QP_DEST_QPN`).
    pub(crate) const DEST_QPN: Self = Self(1 << 20);
    /// The send rate limit (`IB_QP_RATE_LIMIT`), accepted by the table in every transition.
    pub(crate) const RATE_LIMIT: Self = Self(1 << 25);
    /// The standard attribute bits, 0 to 20 (`IB_QP_ATTR_STANDARD_BITS`).
    pub(crate) const STANDARD_BITS: Self = Self((1 << 21) - 1);
    /// The bits the driver implements: the standard ones and [`AttrMask::RATE_LIMIT`].
    pub(crate) const SUPPORTED_BITS: Self = Self(Self::STANDARD_BITS.0 | Self::RATE_LIMIT.0);

    /// Wraps a raw attribute mask, keeping every bit.
    pub(crate) const fn from_bits(bits: u32) -> Self {
        Self(bits)
    }

    /// Returns the raw attribute mask.
    pub(crate) const fn bits(self) -> u32 {
        self.0
    }

    /// Returns whether no bit is set.
    pub(crate) const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Returns whether every bit of `other` is set in `self`.
    pub(crate) const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// Returns whether `self` and `other` have a bit in common.
    pub(crate) const fn intersects(self, other: Self) -> bool {
        self.0 & other.0 != 0
    }

    /// Returns the bits set in `self` or in `other`.
    pub(crate) const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Returns the bits set in both `self` and `other`.
    pub(crate) const fn intersection(self, other: Self) -> Self {
        Self(self.0 & other.0)
    }

    /// Returns the bits set in `self` but not in `other`.
    pub(crate) const fn difference(self, other: Self) -> Self {
        Self(self.0 & !other.0)
    }

    /// Returns the union of every mask in `masks`.
    pub(crate) const fn all_of(masks: &[Self]) -> Self {
        let mut bits = 0;
        let mut i = 0;
        while i < masks.len() {
            bits |= masks[i].0;
            i += 1;
        }
        Self(bits)
    }

    /// Returns the bits the driver does not implement at all: everything outside
    /// [`AttrMask::SUPPORTED_BITS`].
    ///
    /// A Modify QP naming any of them fails with `EOPNOTSUPP` before the state table is looked
    /// at. C rxe also fails [`AttrMask::RATE_LIMIT`] that way; rrxe paces the QP to it
    /// ([`super::rate`]).
    pub(crate) const fn unsupported(self) -> Self {
        self.difference(Self::SUPPORTED_BITS)
    }
}

impl BitOr for AttrMask {
    type Output = Self;

    fn bitor(self, other: Self) -> Self {
        self.union(other)
    }
}

impl BitOrAssign for AttrMask {
    fn bitor_assign(&mut self, other: Self) {
        *self = self.union(other);
    }
}

impl BitAnd for AttrMask {
    type Output = Self;

    fn bitand(self, other: Self) -> Self {
        self.intersection(other)
    }
}
