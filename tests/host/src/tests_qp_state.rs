// SPDX-License-Identifier: GPL-2.0

//! Tests of the queue pair state machine and attribute checks in `proto::qp_state`.
//!
//! The expectation table below is written independently of the code under test: it is a
//! transcription of the IBA Modify QP table as the core's `qp_state_table` encodes it, using the
//! raw `enum ib_qp_attr_mask`, `enum ib_qp_state` and `enum ib_qp_type` numbers of
//! `include/rdma/ib_verbs.h` rather than the module's constants.

use crate::proto::attr_mask::AttrMask;
use crate::proto::qp_attr::check_min_rnr_timer;
use crate::proto::qp_attr::check_path_mtu;
use crate::proto::qp_attr::check_retry_cnt;
use crate::proto::qp_attr::check_rnr_retry;
use crate::proto::qp_attr::check_timeout;
use crate::proto::qp_attr::effective_path_mtu;
use crate::proto::qp_attr::local_ack_timeout_ns;
use crate::proto::qp_attr::path_mtu_ok;
use crate::proto::qp_attr::rd_atomic_depth;
use crate::proto::qp_attr::rnr_timer_us;
use crate::proto::qp_attr::PathMtu;
use crate::proto::qp_attr::QpAttrError;
use crate::proto::qp_state::check_sq_drain;
use crate::proto::qp_state::check_transition;
use crate::proto::qp_state::is_valid_transition;
use crate::proto::qp_state::optional;
use crate::proto::qp_state::required;
use crate::proto::qp_state::resolve_states;
use crate::proto::qp_state::QpState;
use crate::proto::qp_state::QpStateError;
use crate::proto::qp_state::QpType;

// Raw `enum ib_qp_attr_mask` bits.
const STATE: u32 = 1;
const CUR: u32 = 1 << 1;
const SQD_NOTIFY: u32 = 1 << 2;
const ACCESS: u32 = 1 << 3;
const PKEY: u32 = 1 << 4;
const PORT: u32 = 1 << 5;
const QKEY: u32 = 1 << 6;
const AV: u32 = 1 << 7;
const MTU: u32 = 1 << 8;
const TIMEOUT: u32 = 1 << 9;
const RETRY: u32 = 1 << 10;
const RNR_RETRY: u32 = 1 << 11;
const RQ_PSN: u32 = 1 << 12;
const MAX_QP_RD: u32 = 1 << 13;
const ALT: u32 = 1 << 14;
const MIN_RNR: u32 = 1 << 15;
const SQ_PSN: u32 = 1 << 16;
const MAX_DEST_RD: u32 = 1 << 17;
const MIG: u32 = 1 << 18;
const CAP: u32 = 1 << 19;
const DEST_QPN: u32 = 1 << 20;
const RATE: u32 = 1 << 25;

// Raw `enum ib_qp_state` values.
const RESET: u32 = 0;
const INIT: u32 = 1;
const RTR: u32 = 2;
const RTS: u32 = 3;
const SQD: u32 = 4;
const SQE: u32 = 5;
const ERR: u32 = 6;

// Raw `enum ib_qp_type` values.
const SMI: u32 = 0;
const GSI: u32 = 1;
const RC: u32 = 2;
const UC: u32 = 3;
const UD: u32 = 4;

/// Transitions that are valid for every type and take no attribute but the state.
const BARE: [(u32, u32); 13] = [
    (RESET, RESET),
    (INIT, RESET),
    (INIT, ERR),
    (RTR, RESET),
    (RTR, ERR),
    (RTS, RESET),
    (RTS, ERR),
    (SQD, RESET),
    (SQD, ERR),
    (SQE, RESET),
    (SQE, ERR),
    (ERR, RESET),
    (ERR, ERR),
];

/// The transitions with attributes: (from, to, type, required, optional).
const WITH_ATTRS: [(u32, u32, u32, u32, u32); 40] = [
    // RESET -> INIT
    (RESET, INIT, UD, PKEY | PORT | QKEY, 0),
    (RESET, INIT, UC, PKEY | PORT | ACCESS, 0),
    (RESET, INIT, RC, PKEY | PORT | ACCESS, 0),
    (RESET, INIT, SMI, PKEY | QKEY, 0),
    (RESET, INIT, GSI, PKEY | QKEY, 0),
    // INIT -> INIT
    (INIT, INIT, UD, 0, PKEY | PORT | QKEY),
    (INIT, INIT, UC, 0, PKEY | PORT | ACCESS),
    (INIT, INIT, RC, 0, PKEY | PORT | ACCESS),
    (INIT, INIT, SMI, 0, PKEY | QKEY),
    (INIT, INIT, GSI, 0, PKEY | QKEY),
    // INIT -> RTR
    (INIT, RTR, UD, 0, PKEY | QKEY),
    (
        INIT,
        RTR,
        UC,
        AV | MTU | DEST_QPN | RQ_PSN,
        ALT | ACCESS | PKEY,
    ),
    (
        INIT,
        RTR,
        RC,
        AV | MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD | MIN_RNR,
        ALT | ACCESS | PKEY,
    ),
    (INIT, RTR, SMI, 0, PKEY | QKEY),
    (INIT, RTR, GSI, 0, PKEY | QKEY),
    // RTR -> RTS
    (RTR, RTS, UD, SQ_PSN, CUR | QKEY),
    (RTR, RTS, UC, SQ_PSN, CUR | ALT | ACCESS | MIG),
    (
        RTR,
        RTS,
        RC,
        TIMEOUT | RETRY | RNR_RETRY | SQ_PSN | MAX_QP_RD,
        CUR | ALT | ACCESS | MIN_RNR | MIG,
    ),
    (RTR, RTS, SMI, SQ_PSN, CUR | QKEY),
    (RTR, RTS, GSI, SQ_PSN, CUR | QKEY),
    // RTS -> RTS
    (RTS, RTS, UD, 0, CUR | QKEY),
    (RTS, RTS, UC, 0, CUR | ACCESS | ALT | MIG),
    (RTS, RTS, RC, 0, CUR | ACCESS | ALT | MIG | MIN_RNR),
    (RTS, RTS, SMI, 0, CUR | QKEY),
    (RTS, RTS, GSI, 0, CUR | QKEY),
    // SQD -> RTS
    (SQD, RTS, UD, 0, CUR | QKEY),
    (SQD, RTS, UC, 0, CUR | ALT | ACCESS | MIG),
    (SQD, RTS, RC, 0, CUR | ALT | ACCESS | MIN_RNR | MIG),
    (SQD, RTS, SMI, 0, CUR | QKEY),
    (SQD, RTS, GSI, 0, CUR | QKEY),
    // SQD -> SQD
    (SQD, SQD, UD, 0, PKEY | QKEY),
    (SQD, SQD, UC, 0, AV | ALT | ACCESS | PKEY | MIG),
    (
        SQD,
        SQD,
        RC,
        0,
        PORT | AV
            | TIMEOUT
            | RETRY
            | RNR_RETRY
            | MAX_QP_RD
            | MAX_DEST_RD
            | ALT
            | ACCESS
            | PKEY
            | MIN_RNR
            | MIG,
    ),
    (SQD, SQD, SMI, 0, PKEY | QKEY),
    (SQD, SQD, GSI, 0, PKEY | QKEY),
    // SQE -> RTS
    (SQE, RTS, UD, 0, CUR | QKEY),
    (SQE, RTS, UC, 0, CUR | ACCESS),
    (SQE, RTS, SMI, 0, CUR | QKEY),
    (SQE, RTS, GSI, 0, CUR | QKEY),
    // RC has no optional attribute here but the transition exists.
    (SQE, RTS, RC, 0, 0),
];

/// Transitions valid for every type whose per-type attributes are all in [`WITH_ATTRS`].
const VALID_WITH_ATTRS: [(u32, u32); 8] = [
    (RESET, INIT),
    (INIT, INIT),
    (INIT, RTR),
    (RTR, RTS),
    (RTS, RTS),
    (SQD, RTS),
    (SQD, SQD),
    (SQE, RTS),
];

/// The expected (required, optional) raw masks of a transition, or `None` if it is invalid.
fn expected(cur: u32, next: u32, ty: u32) -> Option<(u32, u32)> {
    if BARE.contains(&(cur, next)) {
        return Some((0, 0));
    }
    if (cur, next) == (RTS, SQD) {
        return Some((0, SQD_NOTIFY));
    }
    WITH_ATTRS
        .iter()
        .find(|row| (row.0, row.1, row.2) == (cur, next, ty))
        .map(|row| (row.3, row.4))
}

/// An independent transcription of `ib_modify_qp_is_ok`.
fn reference_is_ok(cur: u32, next: u32, ty: u32, mask: u32) -> bool {
    if mask & CUR != 0 && !matches!(cur, RTR | RTS | SQD | SQE) {
        return false;
    }
    let Some((req, opt)) = expected(cur, next, ty) else {
        return false;
    };
    mask & req == req && mask & !(req | opt | STATE | RATE) == 0
}

/// The types rrxe supports plus SMI, which the table also covers.
const TYPES: [u32; 5] = [SMI, GSI, RC, UC, UD];

/// Converts raw state and type numbers to the module's types.
fn st(cur: u32, next: u32, ty: u32) -> (QpState, QpState, QpType) {
    (
        QpState::from_raw(cur).unwrap(),
        QpState::from_raw(next).unwrap(),
        QpType::from_raw(ty).unwrap(),
    )
}

/// Shorthand for a raw mask.
fn m(bits: u32) -> AttrMask {
    AttrMask::from_bits(bits)
}

/// A small xorshift generator for reproducible random masks.
struct XorShift(u32);

impl XorShift {
    /// Returns the next pseudo-random word.
    fn next(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }
}

#[test]
fn expectation_table_is_consistent() {
    // Each attributed transition has exactly one row per type.
    for &(cur, next) in &VALID_WITH_ATTRS {
        for ty in TYPES {
            let rows = WITH_ATTRS
                .iter()
                .filter(|r| (r.0, r.1, r.2) == (cur, next, ty))
                .count();
            assert_eq!(rows, 1, "{cur}->{next} type {ty}");
        }
    }
    assert_eq!(WITH_ATTRS.len(), VALID_WITH_ATTRS.len() * TYPES.len());
    // 13 bare + RTS->SQD + 8 attributed = 22 valid transitions out of 49.
    let valid = (0..7u32)
        .flat_map(|c| (0..7u32).map(move |n| (c, n)))
        .filter(|&(c, n)| expected(c, n, RC).is_some())
        .count();
    assert_eq!(valid, 22);
}

#[test]
fn raw_values_match_ib_verbs_h() {
    for (raw, state) in QpState::ALL.iter().enumerate() {
        let raw = u32::try_from(raw).unwrap();
        assert_eq!(state.to_raw(), raw);
        assert_eq!(QpState::from_raw(raw), Some(*state));
    }
    assert_eq!(QpState::from_raw(7), None);
    assert_eq!(QpState::from_raw(u32::MAX), None);
    assert_eq!(QpState::Err.to_raw(), ERR);
    assert_eq!(QpState::Sqe.to_raw(), SQE);

    for (raw, ty) in QpType::ALL.iter().enumerate() {
        let raw = u32::try_from(raw).unwrap();
        assert_eq!(ty.to_raw(), raw);
        assert_eq!(QpType::from_raw(raw), Some(*ty));
    }
    assert_eq!(QpType::Rc.to_raw(), 2);
    assert_eq!(QpType::Uc.to_raw(), 3);
    assert_eq!(QpType::Ud.to_raw(), 4);
    assert_eq!(QpType::Gsi.to_raw(), 1);
    assert_eq!(QpType::Smi.to_raw(), 0);
    // Raw packet, XRC and driver types are not modelled.
    for raw in [5, 6, 7, 8, 9, 10, 0xff, 0x1000] {
        assert_eq!(QpType::from_raw(raw), None);
    }
    assert!(QpType::Rc.is_supported() && QpType::Uc.is_supported());
    assert!(QpType::Ud.is_supported() && QpType::Gsi.is_supported());
    assert!(!QpType::Smi.is_supported());
    assert!(QpType::Rc.is_connected() && QpType::Uc.is_connected());
    assert!(!QpType::Ud.is_connected() && !QpType::Gsi.is_connected());
}

#[test]
fn attr_mask_bits_match_ib_verbs_h() {
    let table = [
        (AttrMask::STATE, STATE),
        (AttrMask::CUR_STATE, CUR),
        (AttrMask::EN_SQD_ASYNC_NOTIFY, SQD_NOTIFY),
        (AttrMask::ACCESS_FLAGS, ACCESS),
        (AttrMask::PKEY_INDEX, PKEY),
        (AttrMask::PORT, PORT),
        (AttrMask::QKEY, QKEY),
        (AttrMask::AV, AV),
        (AttrMask::PATH_MTU, MTU),
        (AttrMask::TIMEOUT, TIMEOUT),
        (AttrMask::RETRY_CNT, RETRY),
        (AttrMask::RNR_RETRY, RNR_RETRY),
        (AttrMask::RQ_PSN, RQ_PSN),
        (AttrMask::MAX_QP_RD_ATOMIC, MAX_QP_RD),
        (AttrMask::ALT_PATH, ALT),
        (AttrMask::MIN_RNR_TIMER, MIN_RNR),
        (AttrMask::SQ_PSN, SQ_PSN),
        (AttrMask::MAX_DEST_RD_ATOMIC, MAX_DEST_RD),
        (AttrMask::PATH_MIG_STATE, MIG),
        (AttrMask::CAP, CAP),
        (AttrMask::DEST_QPN, DEST_QPN),
        (AttrMask::RATE_LIMIT, RATE),
    ];
    for (mask, bits) in table {
        assert_eq!(mask.bits(), bits);
    }
    assert_eq!(AttrMask::STANDARD_BITS.bits(), 0x001f_ffff);
    assert_eq!(AttrMask::EMPTY.bits(), 0);
}

#[test]
fn attr_mask_set_operations() {
    let a = AttrMask::PKEY_INDEX | AttrMask::PORT;
    assert_eq!(a.bits(), PKEY | PORT);
    assert!(a.contains(AttrMask::PORT));
    assert!(a.contains(a));
    assert!(a.contains(AttrMask::EMPTY));
    assert!(!a.contains(AttrMask::PORT | AttrMask::QKEY));
    assert!(a.intersects(AttrMask::PORT | AttrMask::QKEY));
    assert!(!a.intersects(AttrMask::QKEY));
    assert_eq!(a.union(AttrMask::QKEY).bits(), PKEY | PORT | QKEY);
    assert_eq!((a & AttrMask::PORT).bits(), PORT);
    assert_eq!(a.intersection(AttrMask::QKEY), AttrMask::EMPTY);
    assert_eq!(a.difference(AttrMask::PORT), AttrMask::PKEY_INDEX);
    assert!(AttrMask::EMPTY.is_empty() && !a.is_empty());
    let mut b = AttrMask::EMPTY;
    b |= AttrMask::AV;
    b |= AttrMask::DEST_QPN;
    assert_eq!(b.bits(), AV | DEST_QPN);
    assert_eq!(
        AttrMask::all_of(&[AttrMask::AV, AttrMask::DEST_QPN, AttrMask::AV]),
        b
    );
    assert_eq!(AttrMask::all_of(&[]), AttrMask::EMPTY);
    assert_eq!(m(0xffff_ffff).unsupported().bits(), 0xffe0_0000);
    assert_eq!(m(STATE | DEST_QPN).unsupported(), AttrMask::EMPTY);
    assert_eq!(m(RATE | STATE).unsupported().bits(), RATE);
}

#[test]
fn every_transition_matches_the_table() {
    for cur in 0..7 {
        for next in 0..7 {
            let valid_for_rc = expected(cur, next, RC).is_some();
            let (c, n, _) = st(cur, next, RC);
            assert_eq!(is_valid_transition(c, n), valid_for_rc, "{cur}->{next}");
            for ty in TYPES {
                let (c, n, t) = st(cur, next, ty);
                match expected(cur, next, ty) {
                    None => {
                        assert!(!valid_for_rc);
                        assert_eq!(required(c, n, t), AttrMask::EMPTY);
                        assert_eq!(optional(c, n, t), AttrMask::EMPTY);
                        assert_eq!(
                            check_transition(c, n, t, AttrMask::STATE),
                            Err(QpStateError::InvalidTransition { from: c, to: n }),
                            "{cur}->{next} type {ty}"
                        );
                    }
                    Some((req, opt)) => {
                        assert!(valid_for_rc, "validity depends on the type");
                        assert_eq!(required(c, n, t).bits(), req, "{cur}->{next} type {ty}");
                        assert_eq!(optional(c, n, t).bits(), opt, "{cur}->{next} type {ty}");
                        check_valid_transition(c, n, t, req, opt);
                    }
                }
            }
        }
    }
}

/// Checks the accepted and rejected masks of one valid transition bit by bit.
fn check_valid_transition(c: QpState, n: QpState, t: QpType, req: u32, opt: u32) {
    let ctx = (c, n, t);
    assert_eq!(check_transition(c, n, t, m(STATE | req)), Ok(()), "{ctx:?}");
    // The state bit itself is not required by the table.
    assert_eq!(check_transition(c, n, t, m(req)), Ok(()), "{ctx:?}");
    assert_eq!(
        check_transition(c, n, t, m(STATE | RATE | req | opt)),
        Ok(()),
        "{ctx:?}"
    );
    for bit in (0..32).map(|i| 1u32 << i) {
        if req & bit != 0 {
            assert_eq!(
                check_transition(c, n, t, m((STATE | req | opt) & !bit)),
                Err(QpStateError::MissingRequired(m(bit))),
                "{ctx:?} without {bit:#x}"
            );
        } else if opt & bit != 0 || bit == STATE || bit == RATE {
            assert_eq!(
                check_transition(c, n, t, m(req | bit)),
                Ok(()),
                "{ctx:?} {bit:#x}"
            );
        } else {
            let want = if bit == CUR
                && !matches!(c, QpState::Rtr | QpState::Rts | QpState::Sqd | QpState::Sqe)
            {
                QpStateError::CurStateNotAllowed
            } else {
                QpStateError::IllegalAttrs(m(bit))
            };
            assert_eq!(
                check_transition(c, n, t, m(STATE | req | bit)),
                Err(want),
                "{ctx:?} with {bit:#x}"
            );
        }
    }
}

#[test]
fn random_masks_agree_with_the_reference() {
    let mut rng = XorShift(0x0bad_cafe);
    for cur in 0..7 {
        for next in 0..7 {
            for ty in TYPES {
                let (c, n, t) = st(cur, next, ty);
                let (req, opt) = expected(cur, next, ty).unwrap_or((0, 0));
                for i in 0..2_000 {
                    // Mostly masks drawn from the interesting bits, sometimes arbitrary words.
                    let mask = if i % 8 == 0 {
                        rng.next()
                    } else {
                        rng.next() & (req | opt | STATE | RATE | CUR | CAP | PORT)
                    };
                    assert_eq!(
                        check_transition(c, n, t, m(mask)).is_ok(),
                        reference_is_ok(cur, next, ty, mask),
                        "{cur}->{next} type {ty} mask {mask:#x}"
                    );
                }
            }
        }
    }
}

#[test]
fn common_transitions() {
    use AttrMask as M;
    use QpState as S;
    use QpType as T;
    assert_eq!(
        required(S::Reset, S::Init, T::Rc),
        M::PKEY_INDEX | M::PORT | M::ACCESS_FLAGS
    );
    assert_eq!(
        required(S::Reset, S::Init, T::Uc),
        M::PKEY_INDEX | M::PORT | M::ACCESS_FLAGS
    );
    assert_eq!(
        required(S::Reset, S::Init, T::Ud),
        M::PKEY_INDEX | M::PORT | M::QKEY
    );
    assert_eq!(required(S::Reset, S::Init, T::Gsi), M::PKEY_INDEX | M::QKEY);
    assert_eq!(
        required(S::Init, S::Rtr, T::Rc),
        M::AV | M::PATH_MTU | M::DEST_QPN | M::RQ_PSN | M::MAX_DEST_RD_ATOMIC | M::MIN_RNR_TIMER
    );
    assert_eq!(
        required(S::Init, S::Rtr, T::Uc),
        M::AV | M::PATH_MTU | M::DEST_QPN | M::RQ_PSN
    );
    assert_eq!(required(S::Init, S::Rtr, T::Ud), M::EMPTY);
    assert_eq!(
        required(S::Rtr, S::Rts, T::Rc),
        M::SQ_PSN | M::TIMEOUT | M::RETRY_CNT | M::RNR_RETRY | M::MAX_QP_RD_ATOMIC
    );
    assert_eq!(required(S::Rtr, S::Rts, T::Uc), M::SQ_PSN);
    assert_eq!(required(S::Rtr, S::Rts, T::Ud), M::SQ_PSN);
    assert_eq!(optional(S::Rts, S::Sqd, T::Rc), M::EN_SQD_ASYNC_NOTIFY);
    assert_eq!(optional(S::Rts, S::Sqd, T::Ud), M::EN_SQD_ASYNC_NOTIFY);

    // What ibv_rc_pingpong and rdma_cm send for an RC QP.
    let init = M::STATE | M::PKEY_INDEX | M::PORT | M::ACCESS_FLAGS;
    assert_eq!(check_transition(S::Reset, S::Init, T::Rc, init), Ok(()));
    let rtr = M::STATE
        | M::AV
        | M::PATH_MTU
        | M::DEST_QPN
        | M::RQ_PSN
        | M::MAX_DEST_RD_ATOMIC
        | M::MIN_RNR_TIMER;
    assert_eq!(check_transition(S::Init, S::Rtr, T::Rc, rtr), Ok(()));
    let rts = M::STATE | M::TIMEOUT | M::RETRY_CNT | M::RNR_RETRY | M::SQ_PSN | M::MAX_QP_RD_ATOMIC;
    assert_eq!(check_transition(S::Rtr, S::Rts, T::Rc, rts), Ok(()));
    // The same for a UD QP.
    let init = M::STATE | M::PKEY_INDEX | M::PORT | M::QKEY;
    assert_eq!(check_transition(S::Reset, S::Init, T::Ud, init), Ok(()));
    assert_eq!(check_transition(S::Init, S::Rtr, T::Ud, M::STATE), Ok(()));
    assert_eq!(
        check_transition(S::Rtr, S::Rts, T::Ud, M::STATE | M::SQ_PSN),
        Ok(())
    );
    // Reset and error from everywhere but the pair RESET -> ERR.
    for s in QpState::ALL {
        assert_eq!(check_transition(s, S::Reset, T::Rc, M::STATE), Ok(()));
        let to_err = check_transition(s, S::Err, T::Rc, M::STATE);
        if s == S::Reset {
            assert!(to_err.is_err());
        } else {
            assert_eq!(to_err, Ok(()));
        }
    }
    // Draining and recovering.
    assert_eq!(
        check_transition(S::Rts, S::Sqd, T::Rc, M::STATE | M::EN_SQD_ASYNC_NOTIFY),
        Ok(())
    );
    assert_eq!(
        check_transition(S::Sqd, S::Sqd, T::Rc, M::STATE | M::AV | M::TIMEOUT),
        Ok(())
    );
    assert_eq!(
        check_transition(S::Sqd, S::Rts, T::Rc, M::STATE | M::CUR_STATE),
        Ok(())
    );
    assert_eq!(
        check_transition(S::Sqe, S::Rts, T::Ud, M::STATE | M::CUR_STATE | M::QKEY),
        Ok(())
    );
    // Changing attributes without a state change.
    assert_eq!(
        check_transition(S::Rts, S::Rts, T::Rc, M::MIN_RNR_TIMER),
        Ok(())
    );
    assert_eq!(
        check_transition(S::Init, S::Init, T::Rc, M::ACCESS_FLAGS),
        Ok(())
    );
}

#[test]
fn error_cases() {
    use AttrMask as M;
    use QpState as S;
    use QpType as T;
    // RESET -> ERR and RTR -> RTR do not exist; neither do skipped states.
    for (from, to) in [
        (S::Reset, S::Err),
        (S::Rtr, S::Rtr),
        (S::Reset, S::Rts),
        (S::Init, S::Rts),
        (S::Err, S::Rts),
        (S::Sqe, S::Sqd),
        (S::Rts, S::Rtr),
        (S::Rtr, S::Sqd),
    ] {
        assert!(!is_valid_transition(from, to));
        assert_eq!(
            check_transition(from, to, T::Rc, M::STATE),
            Err(QpStateError::InvalidTransition { from, to })
        );
    }
    // Missing attributes are named; the missing check comes before the illegal one.
    assert_eq!(
        check_transition(S::Reset, S::Init, T::Rc, M::STATE | M::PORT | M::QKEY),
        Err(QpStateError::MissingRequired(
            M::PKEY_INDEX | M::ACCESS_FLAGS
        ))
    );
    assert_eq!(
        check_transition(
            S::Init,
            S::Rtr,
            T::Rc,
            M::STATE | M::AV | M::PATH_MTU | M::DEST_QPN
        ),
        Err(QpStateError::MissingRequired(
            M::RQ_PSN | M::MAX_DEST_RD_ATOMIC | M::MIN_RNR_TIMER
        ))
    );
    // Illegal attributes are named.
    assert_eq!(
        check_transition(
            S::Reset,
            S::Init,
            T::Ud,
            M::STATE | M::PKEY_INDEX | M::PORT | M::QKEY | M::ACCESS_FLAGS
        ),
        Err(QpStateError::IllegalAttrs(M::ACCESS_FLAGS))
    );
    assert_eq!(
        check_transition(S::Rts, S::Rts, T::Rc, M::CAP | M::AV | M::MIN_RNR_TIMER),
        Err(QpStateError::IllegalAttrs(M::CAP | M::AV))
    );
    assert_eq!(
        check_transition(S::Rts, S::Rts, T::Ud, M::from_bits(1 << 30)),
        Err(QpStateError::IllegalAttrs(M::from_bits(1 << 30)))
    );
    // CUR_STATE is only allowed from RTR, RTS, SQD and SQE, and only where the table lists it.
    assert_eq!(
        check_transition(S::Init, S::Init, T::Rc, M::CUR_STATE),
        Err(QpStateError::CurStateNotAllowed)
    );
    assert_eq!(
        check_transition(S::Reset, S::Err, T::Rc, M::STATE | M::CUR_STATE),
        Err(QpStateError::CurStateNotAllowed)
    );
    assert_eq!(
        check_transition(S::Rts, S::Sqd, T::Rc, M::STATE | M::CUR_STATE),
        Err(QpStateError::IllegalAttrs(M::CUR_STATE))
    );
    assert_eq!(
        check_transition(S::Sqe, S::Rts, T::Rc, M::STATE | M::CUR_STATE),
        Err(QpStateError::IllegalAttrs(M::CUR_STATE))
    );
    // A transition to RESET or ERR takes nothing but the state.
    assert_eq!(
        check_transition(S::Rts, S::Err, T::Rc, M::STATE | M::QKEY),
        Err(QpStateError::IllegalAttrs(M::QKEY))
    );
    // RATE_LIMIT is tolerated by the table even where nothing else is.
    assert_eq!(
        check_transition(S::Rts, S::Reset, T::Rc, M::STATE | M::RATE_LIMIT),
        Ok(())
    );
}

#[test]
fn resolving_states() {
    use AttrMask as M;
    use QpState as S;
    assert_eq!(
        resolve_states(S::Init, M::STATE, 0, RTR),
        Ok((S::Init, S::Rtr))
    );
    // Without STATE the queue pair stays where it is and the raw values are ignored.
    assert_eq!(
        resolve_states(S::Rts, M::MIN_RNR_TIMER, 99, 99),
        Ok((S::Rts, S::Rts))
    );
    assert_eq!(
        resolve_states(S::Init, M::STATE, 0, 7),
        Err(QpStateError::UnknownState(7))
    );
    assert_eq!(
        resolve_states(S::Sqe, M::STATE | M::CUR_STATE, SQE, RTS),
        Ok((S::Sqe, S::Rts))
    );
    assert_eq!(
        resolve_states(S::Reset, M::STATE | M::CUR_STATE, RTS, RTS),
        Err(QpStateError::CurStateMismatch {
            claimed: S::Rts,
            actual: S::Reset
        })
    );
    assert_eq!(
        resolve_states(S::Rts, M::STATE | M::CUR_STATE, u32::MAX, RTS),
        Err(QpStateError::UnknownState(u32::MAX))
    );
}

#[test]
fn sq_drain_blocks_everything_but_err() {
    use AttrMask as M;
    use QpState as S;
    for next in QpState::ALL {
        let r = check_sq_drain(S::Sqd, next, M::STATE, true);
        if next == S::Err {
            assert_eq!(r, Ok(()));
        } else {
            assert_eq!(r, Err(QpStateError::SqDraining), "{next:?}");
        }
        assert_eq!(check_sq_drain(S::Sqd, next, M::STATE, false), Ok(()));
        assert_eq!(check_sq_drain(S::Rts, next, M::STATE, true), Ok(()));
    }
    // Attribute-only changes are not state changes.
    assert_eq!(check_sq_drain(S::Sqd, S::Sqd, M::AV, true), Ok(()));
}

#[test]
fn attribute_ranges() {
    assert_eq!(check_timeout(0), Ok(0));
    assert_eq!(check_timeout(31), Ok(31));
    assert_eq!(check_timeout(32), Err(QpAttrError::Timeout));
    assert_eq!(check_timeout(u8::MAX), Err(QpAttrError::Timeout));
    assert_eq!(check_retry_cnt(7), Ok(7));
    assert_eq!(check_retry_cnt(8), Err(QpAttrError::RetryCount));
    assert_eq!(check_rnr_retry(7), Ok(7));
    assert_eq!(check_rnr_retry(8), Err(QpAttrError::RnrRetry));
    assert_eq!(check_min_rnr_timer(0), Ok(0));
    assert_eq!(check_min_rnr_timer(31), Ok(31));
    assert_eq!(check_min_rnr_timer(32), Err(QpAttrError::MinRnrTimer));
}

#[test]
fn timers() {
    assert_eq!(local_ack_timeout_ns(0), Ok(None));
    assert_eq!(local_ack_timeout_ns(1), Ok(Some(8192)));
    // 14 is the usual default: 4.096 us * 2^14 = 67.1 ms.
    assert_eq!(local_ack_timeout_ns(14), Ok(Some(67_108_864)));
    assert_eq!(local_ack_timeout_ns(31), Ok(Some(4096 << 31)));
    assert_eq!(local_ack_timeout_ns(32), Err(QpAttrError::Timeout));
    assert_eq!(rnr_timer_us(0), Some(655_360));
    assert_eq!(rnr_timer_us(1), Some(10));
    assert_eq!(rnr_timer_us(12), Some(640));
    assert_eq!(rnr_timer_us(25), Some(61_440));
    assert_eq!(rnr_timer_us(31), Some(491_520));
    assert_eq!(rnr_timer_us(32), None);
    // Codes 1 to 31 grow monotonically.
    for code in 1..31 {
        assert!(rnr_timer_us(code).unwrap() < rnr_timer_us(code + 1).unwrap());
    }
}

#[test]
fn path_mtu() {
    for (raw, bytes) in [(1, 256), (2, 512), (3, 1024), (4, 2048), (5, 4096)] {
        let mtu = PathMtu::from_raw(raw).unwrap();
        assert_eq!(mtu.to_raw(), raw);
        assert_eq!(mtu.bytes(), bytes);
    }
    assert_eq!(PathMtu::from_raw(0), None);
    assert_eq!(PathMtu::from_raw(6), None);
    assert_eq!(check_path_mtu(3, 3), Ok(PathMtu::Mtu1024));
    assert_eq!(check_path_mtu(1, 5), Ok(PathMtu::Mtu256));
    assert_eq!(check_path_mtu(5, 3), Err(QpAttrError::PathMtu));
    assert_eq!(check_path_mtu(0, 5), Err(QpAttrError::PathMtu));
    assert_eq!(check_path_mtu(6, 5), Err(QpAttrError::PathMtu));
    assert_eq!(check_path_mtu(3, 0), Err(QpAttrError::PathMtu));
    assert!(path_mtu_ok(4, 5));
    assert!(!path_mtu_ok(5, 4));
    assert_eq!(
        effective_path_mtu(PathMtu::Mtu4096, PathMtu::Mtu1024),
        PathMtu::Mtu1024
    );
    assert_eq!(
        effective_path_mtu(PathMtu::Mtu512, PathMtu::Mtu1024),
        PathMtu::Mtu512
    );
}

#[test]
fn rd_atomic_depths() {
    assert_eq!(rd_atomic_depth(0, 128), Ok(0));
    assert_eq!(rd_atomic_depth(1, 128), Ok(1));
    assert_eq!(rd_atomic_depth(3, 128), Ok(4));
    assert_eq!(rd_atomic_depth(16, 128), Ok(16));
    assert_eq!(rd_atomic_depth(65, 128), Ok(128));
    assert_eq!(rd_atomic_depth(128, 128), Ok(128));
    assert_eq!(rd_atomic_depth(129, 128), Err(QpAttrError::RdAtomic));
    assert_eq!(rd_atomic_depth(255, 128), Err(QpAttrError::RdAtomic));
    assert_eq!(
        rd_atomic_depth(u32::MAX, u32::MAX),
        Err(QpAttrError::RdAtomic)
    );
    // A limit that is not a power of two bounds the rounded depth.
    assert_eq!(rd_atomic_depth(65, 100), Err(QpAttrError::RdAtomic));
    assert_eq!(rd_atomic_depth(0, 0), Ok(0));
    assert_eq!(rd_atomic_depth(1, 0), Err(QpAttrError::RdAtomic));
}
