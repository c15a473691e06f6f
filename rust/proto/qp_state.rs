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
//! The range checks of individual attributes are in [`super::qp_attr`]. Every raw value mirrors
//! the kernel's `include/rdma/ib_verbs.h`.

use super::attr_mask::AttrMask;

/// The state of a queue pair, numbered as `enum ib_qp_state`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) enum QpState {
    /// Reset (`IB_QPS_RESET`, 0): the state of a new queue pair; nothing is processed.
    #[default]
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
/// raw `cur_qp_state` and `qp_state` attributes: [`resolve`] once each raw value the mask names
/// is known to be a state.
pub(crate) fn resolve_states(
    actual: QpState,
    mask: AttrMask,
    raw_cur: u32,
    raw_next: u32,
) -> Result<(QpState, QpState), QpStateError> {
    let known = |raw| QpState::from_raw(raw).ok_or(QpStateError::UnknownState(raw));
    let claimed = mask
        .contains(AttrMask::CUR_STATE)
        .then(|| known(raw_cur))
        .transpose()?;
    // The claim is checked before the next state is decoded (a mismatch is reported first).
    check_claimed(actual, claimed)?;
    let next = mask
        .contains(AttrMask::STATE)
        .then(|| known(raw_next))
        .transpose()?;
    resolve(actual, None, next)
}

/// Works out the current and next state of a Modify QP from the queue pair's actual state, the
/// state the caller claims it is in (with [`AttrMask::CUR_STATE`]) and the one it asks for (with
/// [`AttrMask::STATE`]).
///
/// A claimed current state must equal the actual one. The C driver instead takes the claimed
/// state on trust, which lets a caller skip the state machine (claim RTS while in RESET and move
/// "from RTS to RTS"); rrxe refuses the mismatch. Without a next state the queue pair stays in its
/// current state.
pub(crate) fn resolve(
    actual: QpState,
    claimed: Option<QpState>,
    next: Option<QpState>,
) -> Result<(QpState, QpState), QpStateError> {
    check_claimed(actual, claimed)?;
    Ok((actual, next.unwrap_or(actual)))
}

fn check_claimed(actual: QpState, claimed: Option<QpState>) -> Result<(), QpStateError> {
    match claimed {
        Some(claimed) if claimed != actual => {
            Err(QpStateError::CurStateMismatch { claimed, actual })
        }
        _ => Ok(()),
    }
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
