// SPDX-License-Identifier: GPL-2.0

//! Fuzzing of the other user-controlled input: Modify QP attributes, completion slots.

use super::*;

// ---------------------------------------------------------------------------------------------
// Other user-controlled input: Modify QP attributes and completion slots.
// ---------------------------------------------------------------------------------------------

#[test]
fn modify_qp_attributes_from_user_space() {
    fuzz(0x3d1f_0000, 30_000, |rng, _| {
        let actual = rng.pick(&QpState::ALL);
        let ty = rng.pick(&QpType::ALL);
        let bits = match rng.below(3) {
            0 => rng.u32() & ((1 << 21) - 1),
            1 => rng.u32() & rng.u32() & rng.u32() & ((1 << 26) - 1),
            _ => rng.edgy_u32(),
        };
        let mask = AttrMask::from_bits(bits);
        let raw = |rng: &mut Rng| {
            if rng.chance(3, 4) {
                rng.below(8) as u32
            } else {
                rng.edgy_u32()
            }
        };
        let (raw_cur, raw_next) = (raw(rng), raw(rng));
        match resolve_states(actual, mask, raw_cur, raw_next) {
            Ok((cur, next)) => {
                assert_eq!(cur, actual);
                if mask.contains(AttrMask::CUR_STATE) {
                    assert_eq!(raw_cur, actual.to_raw());
                }
                if mask.contains(AttrMask::STATE) {
                    assert_eq!(next.to_raw(), raw_next);
                } else {
                    assert_eq!(next, actual);
                }
                if check_transition(cur, next, ty, mask).is_ok() {
                    assert!(is_valid_transition(cur, next));
                    let req = required(cur, next, ty);
                    let allowed = AttrMask::all_of(&[
                        req,
                        optional(cur, next, ty),
                        AttrMask::STATE,
                        AttrMask::RATE_LIMIT,
                    ]);
                    assert!(mask.contains(req));
                    assert!(mask.difference(allowed).is_empty());
                    if mask.contains(AttrMask::CUR_STATE) {
                        assert!(matches!(
                            cur,
                            QpState::Rtr | QpState::Rts | QpState::Sqd | QpState::Sqe
                        ));
                    }
                }
                let _ = check_sq_drain(cur, next, mask, rng.bool());
            }
            Err(QpStateError::UnknownState(v)) => {
                assert!(v == raw_cur || v == raw_next);
                assert_eq!(QpState::from_raw(v), None);
            }
            Err(QpStateError::CurStateMismatch { claimed, actual: a }) => {
                assert_eq!(a, actual);
                assert_ne!(claimed, actual);
                assert_eq!(claimed.to_raw(), raw_cur);
            }
            Err(e) => panic!("resolve_states returned {e:?}"),
        }

        let v = rng.u8();
        assert_eq!(check_timeout(v).is_ok(), v <= 31);
        assert_eq!(check_retry_cnt(v).is_ok(), v <= 7);
        assert_eq!(check_rnr_retry(v).is_ok(), v <= 7);
        assert_eq!(check_min_rnr_timer(v).is_ok(), v <= 31);
        assert_eq!(rnr_timer_us(v).is_some(), v <= 31);
        let expected = match v {
            0 => Ok(None),
            1..=31 => Ok(Some(4096u64 << v)),
            _ => Err(()),
        };
        assert_eq!(local_ack_timeout_ns(v).map_err(|_| ()), expected);

        let (req, port) = (raw(rng), raw(rng));
        match check_path_mtu(req, port) {
            Ok(mtu) => {
                assert_eq!(mtu.to_raw(), req);
                assert!((1..=5).contains(&port) && req <= port);
                assert_eq!(mtu.bytes(), 128 << req);
            }
            Err(_) => assert!(!(1..=5).contains(&req) || !(1..=5).contains(&port) || req > port),
        }

        let (want, limit) = (rng.edgy_u32(), rng.edgy_u32());
        match rd_atomic_depth(want, limit) {
            Ok(0) => assert_eq!(want, 0),
            Ok(depth) => {
                assert!(depth.is_power_of_two() && depth >= want && depth <= limit);
                assert!(u64::from(depth) < 2 * u64::from(want));
            }
            Err(_) => {
                let depth = u64::from(want).next_power_of_two();
                assert!(want != 0 && depth > u64::from(limit));
            }
        }
    });
}

#[test]
fn completion_slots_decode_and_encode_losslessly() {
    fuzz(0xc0e0_0000, 5_000, |rng, _| {
        let mut raw = [0u8; CQE_LEN];
        rng.fill(&mut raw);
        // Half the slots with a status and an opcode rrxe reports, half with any bytes.
        if raw[0] & 1 == 0 {
            let status = u32::from(raw[9] % 22);
            let op = WcOpcode::ALL[usize::from(raw[13]) % WcOpcode::ALL.len()];
            raw[8..12].copy_from_slice(&status.to_le_bytes());
            raw[12..16].copy_from_slice(&op.to_raw().to_le_bytes());
        }
        let known = |b: &[u8]| {
            let word = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
            WcStatus::from_raw(word(8)).is_some() && WcOpcode::from_raw(word(12)).is_some()
        };
        let Some(cqe) = Cqe::from_uverbs(&raw) else {
            assert!(!known(&raw));
            return;
        };
        assert!(known(&raw));
        let mut expected = raw;
        // The last byte is reserved: ignored when decoding and written as zero.
        expected[CQE_LEN - 1] = 0;
        assert_eq!(cqe.to_uverbs(), expected);
        assert_eq!(Cqe::from_uverbs(&expected), Some(cqe));
    });
}
