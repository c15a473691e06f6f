// SPDX-License-Identifier: GPL-2.0

//! Tests of the queue pair state machine in `proto::qp_state`, judged against an expectation
//! table written independently of the code under test ([`table`]).

use crate::proto::attr_mask::AttrMask;
use crate::proto::qp_state::check_sq_drain;
use crate::proto::qp_state::check_transition;
use crate::proto::qp_state::is_valid_transition;
use crate::proto::qp_state::optional;
use crate::proto::qp_state::required;
use crate::proto::qp_state::resolve_states;
use crate::proto::qp_state::QpState;
use crate::proto::qp_state::QpStateError;
use crate::proto::qp_state::QpType;

mod table;
use table::*;

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
    assert_eq!(m(0xffff_ffff).unsupported().bits(), 0xffe0_0000 & !RATE);
    assert_eq!(m(STATE | DEST_QPN).unsupported(), AttrMask::EMPTY);
    // The rate limit is implemented (C rxe refuses it).
    assert_eq!(m(RATE | STATE).unsupported(), AttrMask::EMPTY);
    assert_eq!(m(1 << 21 | RATE).unsupported().bits(), 1 << 21);
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
