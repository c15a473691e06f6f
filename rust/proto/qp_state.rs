// SPDX-License-Identifier: GPL-2.0

//! The IBA queue pair state machine and the attributes each Modify QP transition takes.
//!
//! A queue pair moves through the states of IBA Vol 1 section 10.3.1 (Reset, Init, Ready To
//! Receive, Ready To Send, Send Queue Drain, Send Queue Error and Error) only by Modify QP calls,
//! apart from the transitions the device makes on its own (to SQE or ERR on errors, and the end of
//! an SQ drain). Each call names the attributes it sets with a bit mask; for each transition and
//! queue pair type the IBA lists which attributes are required and which are optional, and any
//! other attribute makes the call fail. [`check_transition`] enforces that table exactly as the
//! core's `ib_modify_qp_is_ok` does, so that rrxe can apply it to every Modify QP, from user space
//! and from kernel consumers alike.
//!
//! The module also holds the pure range checks of individual Modify QP attributes (timeouts, retry
//! counts, path MTU and RDMA read/atomic depths) and the IBA tables that turn the encoded timer
//! values into durations. Every raw value mirrors the kernel's `include/rdma/ib_verbs.h`.

use core::ops::BitAnd;
use core::ops::BitOr;
use core::ops::BitOrAssign;

/// The state of a queue pair, numbered as `enum ib_qp_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum QpState {
    /// Reset (`IB_QPS_RESET`, 0): the state of a new queue pair; nothing is processed.
    Reset,
    /// Initialized (`IB_QPS_INIT`, 1): receive WRs may be posted but are not processed.
    Init,
    /// Ready To Receive (`IB_QPS_RTR`, 2): incoming requests are processed.
    Rtr,
    /// Ready To Send (`IB_QPS_RTS`, 3): send WRs are processed as well.
    Rts,
    /// Send Queue Drain (`IB_QPS_SQD`, 4): no new send WRs are started.
    Sqd,
    /// Send Queue Error (`IB_QPS_SQE`, 5): a send WR of an unreliable queue pair failed.
    Sqe,
    /// Error (`IB_QPS_ERR`, 6): every outstanding and new WR completes in error.
    Err,
}

impl QpState {
    /// Every state, in the order of their raw values.
    pub(crate) const ALL: [Self; 7] = [
        Self::Reset,
        Self::Init,
        Self::Rtr,
        Self::Rts,
        Self::Sqd,
        Self::Sqe,
        Self::Err,
    ];

    /// Returns the state whose `enum ib_qp_state` value is `raw`, or `None` for an unknown value.
    pub(crate) const fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Self::Reset),
            1 => Some(Self::Init),
            2 => Some(Self::Rtr),
            3 => Some(Self::Rts),
            4 => Some(Self::Sqd),
            5 => Some(Self::Sqe),
            6 => Some(Self::Err),
            _ => None,
        }
    }

    /// Returns the `enum ib_qp_state` value of this state.
    pub(crate) const fn to_raw(self) -> u32 {
        match self {
            Self::Reset => 0,
            Self::Init => 1,
            Self::Rtr => 2,
            Self::Rts => 3,
            Self::Sqd => 4,
            Self::Sqe => 5,
            Self::Err => 6,
        }
    }
}

/// The transport service of a queue pair, numbered as `enum ib_qp_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum QpType {
    /// Subnet management interface, QP0 (`IB_QPT_SMI`, 0); it does not exist on RoCE.
    Smi,
    /// General services interface, QP1 (`IB_QPT_GSI`, 1), a UD queue pair for management datagrams.
    Gsi,
    /// Reliable connected (`IB_QPT_RC`, 2).
    Rc,
    /// Unreliable connected (`IB_QPT_UC`, 3).
    Uc,
    /// Unreliable datagram (`IB_QPT_UD`, 4).
    Ud,
}

impl QpType {
    /// Every type this module knows, in the order of their raw values.
    pub(crate) const ALL: [Self; 5] = [Self::Smi, Self::Gsi, Self::Rc, Self::Uc, Self::Ud];

    /// Returns the type whose `enum ib_qp_type` value is `raw`, or `None` for a type this module
    /// does not model (raw packet, XRC and driver-specific types).
    pub(crate) const fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(Self::Smi),
            1 => Some(Self::Gsi),
            2 => Some(Self::Rc),
            3 => Some(Self::Uc),
            4 => Some(Self::Ud),
            _ => None,
        }
    }

    /// Returns the `enum ib_qp_type` value of this type.
    pub(crate) const fn to_raw(self) -> u32 {
        match self {
            Self::Smi => 0,
            Self::Gsi => 1,
            Self::Rc => 2,
            Self::Uc => 3,
            Self::Ud => 4,
        }
    }

    /// Returns whether rrxe creates queue pairs of this type: RC, UC, UD and GSI, but not SMI.
    pub(crate) const fn is_supported(self) -> bool {
        !matches!(self, Self::Smi)
    }

    /// Returns whether this is a connected service (RC or UC), whose queue pair talks to exactly
    /// one remote queue pair.
    pub(crate) const fn is_connected(self) -> bool {
        matches!(self, Self::Rc | Self::Uc)
    }
}

/// A set of Modify QP attributes, the bits of `enum ib_qp_attr_mask`.
///
/// Any `u32` can be wrapped, including bits that name no attribute; [`check_transition`] treats
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
    /// [`AttrMask::STANDARD_BITS`].
    ///
    /// The C driver fails a Modify QP naming any of them with `EOPNOTSUPP` before it looks at the
    /// state table, even though the table itself tolerates [`AttrMask::RATE_LIMIT`].
    pub(crate) const fn unsupported(self) -> Self {
        self.difference(Self::STANDARD_BITS)
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

/// Why a Modify QP is not a legal state transition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QpStateError {
    /// A raw state value names no state.
    UnknownState(u32),
    /// The caller claims, through [`AttrMask::CUR_STATE`], a current state other than the actual
    /// one.
    CurStateMismatch {
        /// The state the caller claims the queue pair is in.
        claimed: QpState,
        /// The state the queue pair is actually in.
        actual: QpState,
    },
    /// [`AttrMask::CUR_STATE`] was given although the current state is none of RTR, RTS, SQD and
    /// SQE, the only states it may be given in.
    CurStateNotAllowed,
    /// The state machine has no transition between the two states.
    InvalidTransition {
        /// The state the transition starts in.
        from: QpState,
        /// The state the transition was to end in.
        to: QpState,
    },
    /// Attributes the transition requires are missing from the mask; the value holds them.
    MissingRequired(AttrMask),
    /// The mask names attributes the transition neither requires nor allows; the value holds them.
    IllegalAttrs(AttrMask),
    /// The state change must wait: the queue pair is in SQD and its send queue is still draining,
    /// so it may only move to ERR.
    SqDraining,
}

/// The attributes one transition requires and those it optionally accepts.
#[derive(Clone, Copy)]
struct Rule {
    /// Attributes the transition requires.
    required: AttrMask,
    /// Attributes the transition accepts but does not require.
    optional: AttrMask,
}

impl Rule {
    /// A valid transition that takes no attribute besides the state.
    const BARE: Self = Self::req(AttrMask::EMPTY);

    /// A transition requiring `required` and accepting nothing else.
    const fn req(required: AttrMask) -> Self {
        Self {
            required,
            optional: AttrMask::EMPTY,
        }
    }

    /// A transition requiring nothing and accepting `optional`.
    const fn opt(optional: AttrMask) -> Self {
        Self {
            required: AttrMask::EMPTY,
            optional,
        }
    }
}

/// Returns the rule of the transition from `cur` to `next` for a queue pair of type `ty`, or
/// `None` when the state machine has no such transition.
///
/// This is the core's `qp_state_table` restricted to the types of [`QpType`].
fn rule(cur: QpState, next: QpState, ty: QpType) -> Option<Rule> {
    use AttrMask as M;
    use QpState as S;
    use QpType as T;

    let rule = match (cur, next) {
        // Every state may be reset.
        (_, S::Reset) => Rule::BARE,
        (S::Reset, S::Init) => Rule::req(match ty {
            T::Rc | T::Uc => M::all_of(&[M::PKEY_INDEX, M::PORT, M::ACCESS_FLAGS]),
            T::Ud => M::all_of(&[M::PKEY_INDEX, M::PORT, M::QKEY]),
            T::Smi | T::Gsi => M::all_of(&[M::PKEY_INDEX, M::QKEY]),
        }),
        // A queue pair in reset can only be reset again or initialised, not moved to ERR.
        (S::Reset, _) => return None,
        // Every other state may be moved to ERR.
        (_, S::Err) => Rule::BARE,
        (S::Init, S::Init) => Rule::opt(match ty {
            T::Rc | T::Uc => M::all_of(&[M::PKEY_INDEX, M::PORT, M::ACCESS_FLAGS]),
            T::Ud => M::all_of(&[M::PKEY_INDEX, M::PORT, M::QKEY]),
            T::Smi | T::Gsi => M::all_of(&[M::PKEY_INDEX, M::QKEY]),
        }),
        (S::Init, S::Rtr) => match ty {
            T::Rc => Rule {
                required: M::all_of(&[
                    M::AV,
                    M::PATH_MTU,
                    M::DEST_QPN,
                    M::RQ_PSN,
                    M::MAX_DEST_RD_ATOMIC,
                    M::MIN_RNR_TIMER,
                ]),
                optional: M::all_of(&[M::ALT_PATH, M::ACCESS_FLAGS, M::PKEY_INDEX]),
            },
            T::Uc => Rule {
                required: M::all_of(&[M::AV, M::PATH_MTU, M::DEST_QPN, M::RQ_PSN]),
                optional: M::all_of(&[M::ALT_PATH, M::ACCESS_FLAGS, M::PKEY_INDEX]),
            },
            T::Ud | T::Smi | T::Gsi => Rule::opt(M::all_of(&[M::PKEY_INDEX, M::QKEY])),
        },
        (S::Rtr, S::Rts) => match ty {
            T::Rc => Rule {
                required: M::all_of(&[
                    M::TIMEOUT,
                    M::RETRY_CNT,
                    M::RNR_RETRY,
                    M::SQ_PSN,
                    M::MAX_QP_RD_ATOMIC,
                ]),
                optional: M::all_of(&[
                    M::CUR_STATE,
                    M::ALT_PATH,
                    M::ACCESS_FLAGS,
                    M::MIN_RNR_TIMER,
                    M::PATH_MIG_STATE,
                ]),
            },
            T::Uc => Rule {
                required: M::SQ_PSN,
                optional: M::all_of(&[
                    M::CUR_STATE,
                    M::ALT_PATH,
                    M::ACCESS_FLAGS,
                    M::PATH_MIG_STATE,
                ]),
            },
            T::Ud | T::Smi | T::Gsi => Rule {
                required: M::SQ_PSN,
                optional: M::all_of(&[M::CUR_STATE, M::QKEY]),
            },
        },
        // RTS to RTS and SQD to RTS accept the same optional attributes.
        (S::Rts | S::Sqd, S::Rts) => Rule::opt(match ty {
            T::Rc => M::all_of(&[
                M::CUR_STATE,
                M::ACCESS_FLAGS,
                M::ALT_PATH,
                M::PATH_MIG_STATE,
                M::MIN_RNR_TIMER,
            ]),
            T::Uc => M::all_of(&[
                M::CUR_STATE,
                M::ACCESS_FLAGS,
                M::ALT_PATH,
                M::PATH_MIG_STATE,
            ]),
            T::Ud | T::Smi | T::Gsi => M::all_of(&[M::CUR_STATE, M::QKEY]),
        }),
        (S::Rts, S::Sqd) => Rule::opt(M::EN_SQD_ASYNC_NOTIFY),
        (S::Sqd, S::Sqd) => Rule::opt(match ty {
            T::Rc => M::all_of(&[
                M::PORT,
                M::AV,
                M::TIMEOUT,
                M::RETRY_CNT,
                M::RNR_RETRY,
                M::MAX_QP_RD_ATOMIC,
                M::MAX_DEST_RD_ATOMIC,
                M::ALT_PATH,
                M::ACCESS_FLAGS,
                M::PKEY_INDEX,
                M::MIN_RNR_TIMER,
                M::PATH_MIG_STATE,
            ]),
            T::Uc => M::all_of(&[
                M::AV,
                M::ALT_PATH,
                M::ACCESS_FLAGS,
                M::PKEY_INDEX,
                M::PATH_MIG_STATE,
            ]),
            T::Ud | T::Smi | T::Gsi => M::all_of(&[M::PKEY_INDEX, M::QKEY]),
        }),
        (S::Sqe, S::Rts) => Rule::opt(match ty {
            // An RC queue pair never enters SQE; the table still allows the bare transition.
            T::Rc => M::EMPTY,
            T::Uc => M::all_of(&[M::CUR_STATE, M::ACCESS_FLAGS]),
            T::Ud | T::Smi | T::Gsi => M::all_of(&[M::CUR_STATE, M::QKEY]),
        }),
        _ => return None,
    };
    Some(rule)
}

/// Returns whether the state machine has a transition from `cur` to `next`.
///
/// The valid transitions are: any state to RESET; any state but RESET to ERR; RESET to INIT;
/// INIT to INIT and RTR; RTR to RTS; RTS to RTS and SQD; SQD to RTS and SQD; and SQE to RTS. The
/// answer does not depend on the queue pair type.
pub(crate) fn is_valid_transition(cur: QpState, next: QpState) -> bool {
    rule(cur, next, QpType::Rc).is_some()
}

/// Returns the attributes the transition from `cur` to `next` requires for a queue pair of type
/// `ty`, or [`AttrMask::EMPTY`] when there is no such transition.
pub(crate) fn required(cur: QpState, next: QpState, ty: QpType) -> AttrMask {
    rule(cur, next, ty).map_or(AttrMask::EMPTY, |r| r.required)
}

/// Returns the attributes the transition from `cur` to `next` optionally accepts for a queue pair
/// of type `ty`, or [`AttrMask::EMPTY`] when there is no such transition.
///
/// [`AttrMask::STATE`] and [`AttrMask::RATE_LIMIT`], which every transition accepts, are not
/// included.
pub(crate) fn optional(cur: QpState, next: QpState, ty: QpType) -> AttrMask {
    rule(cur, next, ty).map_or(AttrMask::EMPTY, |r| r.optional)
}

/// Checks a Modify QP against the IBA state table, exactly as the core's `ib_modify_qp_is_ok`.
///
/// `cur` is the queue pair's current state and `next` the requested one; when the mask lacks
/// [`AttrMask::STATE`] the caller passes `next == cur`, so that the attributes are checked against
/// the transition from the current state to itself (INIT, RTS and SQD allow that; RTR does not).
/// The checks run in this order: [`AttrMask::CUR_STATE`] is only allowed when `cur` is RTR, RTS,
/// SQD or SQE; the transition must exist; every required attribute must be in the mask; and the
/// mask may name nothing beyond the required and optional attributes, [`AttrMask::STATE`] and
/// [`AttrMask::RATE_LIMIT`]. Unknown bits are illegal.
pub(crate) fn check_transition(
    cur: QpState,
    next: QpState,
    ty: QpType,
    mask: AttrMask,
) -> Result<(), QpStateError> {
    if mask.contains(AttrMask::CUR_STATE)
        && !matches!(
            cur,
            QpState::Rtr | QpState::Rts | QpState::Sqd | QpState::Sqe
        )
    {
        return Err(QpStateError::CurStateNotAllowed);
    }
    let Some(rule) = rule(cur, next, ty) else {
        return Err(QpStateError::InvalidTransition {
            from: cur,
            to: next,
        });
    };
    let missing = rule.required.difference(mask);
    if !missing.is_empty() {
        return Err(QpStateError::MissingRequired(missing));
    }
    let allowed = AttrMask::all_of(&[
        rule.required,
        rule.optional,
        AttrMask::STATE,
        AttrMask::RATE_LIMIT,
    ]);
    let illegal = mask.difference(allowed);
    if !illegal.is_empty() {
        return Err(QpStateError::IllegalAttrs(illegal));
    }
    Ok(())
}

/// Works out the current and next state of a Modify QP from the queue pair's actual state and the
/// raw `cur_qp_state` and `qp_state` attributes.
///
/// When the mask has [`AttrMask::CUR_STATE`] the claimed current state must be a known state and
/// equal the actual one. The C driver instead takes the claimed state on trust, which lets a
/// caller skip the state machine (claim RTS while in RESET and move "from RTS to RTS"); rrxe
/// refuses the mismatch. When the mask has [`AttrMask::STATE`] the next state is `raw_next`,
/// which must be a known state; otherwise the queue pair stays in its current state.
pub(crate) fn resolve_states(
    actual: QpState,
    mask: AttrMask,
    raw_cur: u32,
    raw_next: u32,
) -> Result<(QpState, QpState), QpStateError> {
    if mask.contains(AttrMask::CUR_STATE) {
        let claimed = QpState::from_raw(raw_cur).ok_or(QpStateError::UnknownState(raw_cur))?;
        if claimed != actual {
            return Err(QpStateError::CurStateMismatch { claimed, actual });
        }
    }
    let next = if mask.contains(AttrMask::STATE) {
        QpState::from_raw(raw_next).ok_or(QpStateError::UnknownState(raw_next))?
    } else {
        actual
    };
    Ok((actual, next))
}

/// Checks that a state change does not leave SQD while the send queue is still draining.
///
/// As in the C driver, a queue pair in SQD whose drain has not finished may only be moved to ERR
/// (not even to RESET); the check only applies when the mask has [`AttrMask::STATE`].
pub(crate) fn check_sq_drain(
    cur: QpState,
    next: QpState,
    mask: AttrMask,
    sq_draining: bool,
) -> Result<(), QpStateError> {
    if mask.contains(AttrMask::STATE) && cur == QpState::Sqd && sq_draining && next != QpState::Err
    {
        Err(QpStateError::SqDraining)
    } else {
        Ok(())
    }
}

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

/// Checks a local ACK timeout exponent (also used for the alternate path's timeout).
pub(crate) const fn check_timeout(timeout: u8) -> Result<u8, QpAttrError> {
    if timeout > MAX_TIMEOUT {
        Err(QpAttrError::Timeout)
    } else {
        Ok(timeout)
    }
}

/// Checks a transport retry count.
pub(crate) const fn check_retry_cnt(retry_cnt: u8) -> Result<u8, QpAttrError> {
    if retry_cnt > MAX_RETRY_CNT {
        Err(QpAttrError::RetryCount)
    } else {
        Ok(retry_cnt)
    }
}

/// Checks an RNR retry count.
pub(crate) const fn check_rnr_retry(rnr_retry: u8) -> Result<u8, QpAttrError> {
    if rnr_retry > MAX_RNR_RETRY {
        Err(QpAttrError::RnrRetry)
    } else {
        Ok(rnr_retry)
    }
}

/// Checks a minimum RNR NAK timer code.
pub(crate) const fn check_min_rnr_timer(code: u8) -> Result<u8, QpAttrError> {
    if code > MAX_MIN_RNR_TIMER {
        Err(QpAttrError::MinRnrTimer)
    } else {
        Ok(code)
    }
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
