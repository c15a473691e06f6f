// SPDX-License-Identifier: GPL-2.0

//! Tests of the sequencing decisions in `proto::seq`.
//!
//! The expected opcodes are the raw IBA values of `include/rdma/ib_pack.h`, and the expected
//! sequence and PSN decisions are transcribed from the C driver's
//! `next_opcode_rc`/`next_opcode_uc` (`rxe_req.c`) and `check_psn`/`check_op_seq` (`rxe_resp.c`),
//! not derived from the code under test; the completer's are in `tests_ack`.

use crate::proto::opcode::Opcode;
use crate::proto::opcode::Position;
use crate::proto::psn::Psn;
use crate::proto::qp_state::QpType;
use crate::proto::seq::check_request_sequence;
use crate::proto::seq::classify_request_psn;
use crate::proto::seq::duplicate_action;
use crate::proto::seq::packets_for;
use crate::proto::seq::payload_fits_position;
use crate::proto::seq::position;
use crate::proto::seq::read_response_opcode;
use crate::proto::seq::request_opcode;
use crate::proto::seq::DuplicateAction;
use crate::proto::seq::ReackPsn;
use crate::proto::seq::RespPsn;
use crate::proto::seq::SeqError;
use crate::proto::wqe::WrOpcode;

/// Every work request opcode.
pub(crate) const WR_ALL: [WrOpcode; 12] = [
    WrOpcode::RdmaWrite,
    WrOpcode::RdmaWriteWithImm,
    WrOpcode::Send,
    WrOpcode::SendWithImm,
    WrOpcode::RdmaRead,
    WrOpcode::AtomicCmpAndSwp,
    WrOpcode::AtomicFetchAndAdd,
    WrOpcode::LocalInv,
    WrOpcode::BindMw,
    WrOpcode::SendWithInv,
    WrOpcode::Flush,
    WrOpcode::AtomicWrite,
];

/// Every position, in the order the multi-packet rows of [`VALID`] list their opcodes.
const POS_ALL: [Position; 4] = [
    Position::First,
    Position::Middle,
    Position::Last,
    Position::Only,
];

/// Every valid multi-packet combination: queue pair type, work request and the FIRST, MIDDLE,
/// LAST and ONLY opcodes.
const MULTI: &[(QpType, WrOpcode, [u8; 4])] = &[
    (QpType::Rc, WrOpcode::Send, [0x00, 0x01, 0x02, 0x04]),
    (QpType::Rc, WrOpcode::SendWithImm, [0x00, 0x01, 0x03, 0x05]),
    (QpType::Rc, WrOpcode::SendWithInv, [0x00, 0x01, 0x16, 0x17]),
    (QpType::Rc, WrOpcode::RdmaWrite, [0x06, 0x07, 0x08, 0x0a]),
    (
        QpType::Rc,
        WrOpcode::RdmaWriteWithImm,
        [0x06, 0x07, 0x09, 0x0b],
    ),
    (QpType::Uc, WrOpcode::Send, [0x20, 0x21, 0x22, 0x24]),
    (QpType::Uc, WrOpcode::SendWithImm, [0x20, 0x21, 0x23, 0x25]),
    (QpType::Uc, WrOpcode::RdmaWrite, [0x26, 0x27, 0x28, 0x2a]),
    (
        QpType::Uc,
        WrOpcode::RdmaWriteWithImm,
        [0x26, 0x27, 0x29, 0x2b],
    ),
];

/// Every valid single-packet combination: queue pair type, work request and the ONLY opcode.
const SINGLE: &[(QpType, WrOpcode, u8)] = &[
    (QpType::Rc, WrOpcode::RdmaRead, 0x0c),
    (QpType::Rc, WrOpcode::AtomicCmpAndSwp, 0x13),
    (QpType::Rc, WrOpcode::AtomicFetchAndAdd, 0x14),
    (QpType::Rc, WrOpcode::Flush, 0x1c),
    (QpType::Rc, WrOpcode::AtomicWrite, 0x1d),
    (QpType::Ud, WrOpcode::Send, 0x64),
    (QpType::Ud, WrOpcode::SendWithImm, 0x65),
    (QpType::Gsi, WrOpcode::Send, 0x64),
    (QpType::Gsi, WrOpcode::SendWithImm, 0x65),
];

/// The expected opcode of packet `pos` (an index into [`POS_ALL`]) of a `wr` message on `qp`.
fn expected_opcode(qp: QpType, wr: WrOpcode, pos: usize) -> Option<Opcode> {
    if let Some((_, _, ops)) = MULTI.iter().find(|(q, w, _)| *q == qp && *w == wr) {
        return ops.get(pos).copied().map(Opcode);
    }
    let (_, _, op) = SINGLE.iter().find(|(q, w, _)| *q == qp && *w == wr)?;
    (POS_ALL.get(pos) == Some(&Position::Only)).then_some(Opcode(*op))
}

#[test]
fn request_opcode_covers_every_combination() {
    let mut valid = 0;
    for qp in QpType::ALL {
        for wr in WR_ALL {
            for (i, pos) in POS_ALL.into_iter().enumerate() {
                let got = request_opcode(qp, wr, pos);
                assert_eq!(got, expected_opcode(qp, wr, i), "{qp:?} {wr:?} {pos:?}");
                if let Some(op) = got {
                    valid += 1;
                    let info = op.info().unwrap();
                    assert!(info.is_request);
                    assert_eq!(info.position, pos);
                }
            }
        }
    }
    assert_eq!(valid, 9 * 4 + 9);
}

#[test]
fn segmentation_counts_at_the_boundaries() {
    let mtu = 1024;
    assert_eq!(packets_for(0, mtu), Some(1));
    assert_eq!(packets_for(1, mtu), Some(1));
    assert_eq!(packets_for(mtu - 1, mtu), Some(1));
    assert_eq!(packets_for(mtu, mtu), Some(1));
    assert_eq!(packets_for(mtu + 1, mtu), Some(2));
    assert_eq!(packets_for(2 * mtu, mtu), Some(2));
    assert_eq!(packets_for(2 * mtu + 1, mtu), Some(3));
    assert_eq!(packets_for(1 << 31, mtu), Some(1 << 21));
    assert_eq!(packets_for(1 << 31, 4096), Some(1 << 19));
    assert_eq!(packets_for((1 << 31) + 1, 4096), Some((1 << 19) + 1));
    assert_eq!(packets_for(u32::MAX, 256), Some(1 << 24));
    assert_eq!(packets_for(u32::MAX, 1), Some(u32::MAX));
    assert_eq!(packets_for(0, 0), None);
    assert_eq!(packets_for(4096, 0), None);
}

#[test]
fn positions_within_a_message() {
    assert_eq!(position(0, 0), None);
    assert_eq!(position(0, 1), Some(Position::Only));
    assert_eq!(position(1, 1), None);
    assert_eq!(position(0, 2), Some(Position::First));
    assert_eq!(position(1, 2), Some(Position::Last));
    assert_eq!(position(2, 2), None);
    assert_eq!(position(1, 3), Some(Position::Middle));
    assert_eq!(position(2, 3), Some(Position::Last));
    assert_eq!(position(1, u32::MAX), Some(Position::Middle));
    assert_eq!(position(u32::MAX - 1, u32::MAX), Some(Position::Last));
    assert_eq!(position(u32::MAX, u32::MAX), None);
}

#[test]
fn a_segmented_message_walks_first_middle_last() {
    let count = packets_for(3 * 4096 + 1, 4096).unwrap();
    let ops: [Option<Opcode>; 4] = core::array::from_fn(|i| {
        let pos = position(u32::try_from(i).unwrap(), count)?;
        request_opcode(QpType::Rc, WrOpcode::SendWithImm, pos)
    });
    assert_eq!(ops, [0x00, 0x01, 0x01, 0x03].map(|op| Some(Opcode(op))));
    assert_eq!(position(4, count), None);
}

#[test]
fn read_response_opcodes() {
    assert_eq!(read_response_opcode(0, 1), Some(Opcode(0x10)));
    assert_eq!(read_response_opcode(0, 2), Some(Opcode(0x0d)));
    assert_eq!(read_response_opcode(1, 2), Some(Opcode(0x0f)));
    assert_eq!(read_response_opcode(0, 3), Some(Opcode(0x0d)));
    assert_eq!(read_response_opcode(1, 3), Some(Opcode(0x0e)));
    assert_eq!(read_response_opcode(2, 3), Some(Opcode(0x0f)));
    assert_eq!(read_response_opcode(3, 3), None);
    assert_eq!(read_response_opcode(0, 0), None);
}

#[test]
fn request_psn_classification_around_the_wrap() {
    let c = |psn: u32, epsn: u32| classify_request_psn(Psn::new(psn), Psn::new(epsn));
    assert_eq!(c(0, 0), RespPsn::Expected);
    assert_eq!(c(1, 0), RespPsn::OutOfSequence);
    assert_eq!(c(0x7f_ffff, 0), RespPsn::OutOfSequence);
    assert_eq!(c(0x80_0000, 0), RespPsn::Duplicate);
    assert_eq!(c(0xff_ffff, 0), RespPsn::Duplicate);
    // Expected PSN just before the wrap: PSNs after the wrap are ahead.
    let e = 0xff_fffe;
    assert_eq!(c(0xff_ffff, e), RespPsn::OutOfSequence);
    assert_eq!(c(0, e), RespPsn::OutOfSequence);
    assert_eq!(c(1, e), RespPsn::OutOfSequence);
    assert_eq!(c(0xff_fffd, e), RespPsn::Duplicate);
    assert_eq!(c(0x7f_fffd, e), RespPsn::OutOfSequence);
    assert_eq!(c(0x7f_fffe, e), RespPsn::Duplicate);
    // Expected PSN just after the wrap: PSNs before the wrap are behind.
    assert_eq!(c(4, 5), RespPsn::Duplicate);
    assert_eq!(c(0xff_ffff, 5), RespPsn::Duplicate);
    assert_eq!(c(0x80_0004, 5), RespPsn::OutOfSequence);
    assert_eq!(c(0x80_0005, 5), RespPsn::Duplicate);
    assert_eq!(c(0x80_0006, 5), RespPsn::Duplicate);
    assert_eq!(RespPsn::OutOfSequence.nak_syndrome(), Some(0x60));
    assert_eq!(RespPsn::Duplicate.nak_syndrome(), None);
    assert_eq!(RespPsn::Expected.nak_syndrome(), None);
}

#[test]
fn duplicate_requests_are_reacked_or_replayed() {
    for op in [
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x16, 0x17,
    ] {
        assert_eq!(
            duplicate_action(Opcode(op)),
            Some(DuplicateAction::Reack),
            "{op:#x}"
        );
    }
    for op in [0x0c, 0x13, 0x14, 0x1c, 0x1d] {
        assert_eq!(
            duplicate_action(Opcode(op)),
            Some(DuplicateAction::Replay),
            "{op:#x}"
        );
    }
    for op in [0x0d, 0x10, 0x11, 0x12, 0x15, 0xff] {
        assert_eq!(duplicate_action(Opcode(op)), None, "{op:#x}");
    }
}

/// A duplicate SEND or WRITE is acknowledged again only while the newest request executed is a
/// SEND or WRITE, naming that one; after a READ, an atomic, a FLUSH or an ATOMIC WRITE nothing is
/// sent (their replayed responses acknowledge it). Both other choices trip C rxe's completer
/// (`check_psn`, `check_ack` and `COMPST_UPDATE_COMP` in `rxe_comp.c`): after a WRITE at PSN 10
/// and a 4-packet READ at 11-14, an ACK naming 14 completes the READ when only its last response
/// is missing; an ACK naming 10 arriving while the completer is in the middle of the READ sets
/// its opcode state to "none", and the READ's next MIDDLE response then fails the QP.
#[test]
fn a_duplicate_is_reacked_only_after_a_send_or_write() {
    let kind = |op: u8| Opcode(op).info().unwrap().kind;
    let mut r = ReackPsn::before(Psn::new(10));
    assert_eq!(r.psn(), Some(Psn::new(9)));
    r.executed(kind(0x0a), Psn::new(10)); // RDMA WRITE ONLY
    assert_eq!(r.psn(), Some(Psn::new(10)));
    r.executed(kind(0x0c), Psn::new(14)); // RDMA READ request, 11-14
    assert_eq!(r.psn(), None);
    for op in [0x13, 0x14, 0x1c, 0x1d] {
        // atomics, FLUSH, ATOMIC WRITE: answered by their own responses
        r.executed(kind(0x04), Psn::new(15));
        assert_eq!(r.psn(), Some(Psn::new(15)), "{op:#x}");
        r.executed(kind(op), Psn::new(16));
        assert_eq!(r.psn(), None, "{op:#x}");
    }
    for (i, op) in [
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x16, 0x17,
    ]
    .into_iter()
    .enumerate()
    {
        let psn = Psn::new(20 + i as u32);
        r.executed(kind(op), psn);
        assert_eq!(r.psn(), Some(psn), "{op:#x}");
    }
    // Responses leave it alone.
    for op in [0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12] {
        r.executed(kind(op), Psn::new(99));
        assert_eq!(r.psn(), Some(Psn::new(33)), "{op:#x}");
    }
    // Nothing executed at PSN 0: the PSN before it, across the wrap.
    assert_eq!(
        ReackPsn::before(Psn::new(0)).psn(),
        Some(Psn::new(0xff_ffff))
    );
}

/// RC request opcodes.
const RC_REQ: &[u8] = &[
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x13, 0x14, 0x16,
    0x17, 0x1c, 0x1d,
];
/// UC request opcodes.
const UC_REQ: &[u8] = &[
    0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b,
];

/// The C driver's `check_op_seq`, transcribed: what may follow `prev` (`None` for `-1`).
fn reference(prev: Option<u8>, next: u8) -> Result<(), SeqError> {
    let allowed: &[u8] = match prev {
        Some(0x00 | 0x01) => &[0x01, 0x02, 0x03, 0x16],
        Some(0x06 | 0x07) => &[0x07, 0x08, 0x09],
        Some(0x20 | 0x21) => &[0x21, 0x22, 0x23],
        Some(0x26 | 0x27) => &[0x27, 0x28, 0x29],
        _ => {
            let middle_or_last = [
                0x01, 0x02, 0x03, 0x16, 0x07, 0x08, 0x09, 0x21, 0x22, 0x23, 0x27, 0x28, 0x29,
            ];
            return if middle_or_last.contains(&next) {
                Err(SeqError::MissingFirst)
            } else {
                Ok(())
            };
        }
    };
    if allowed.contains(&next) {
        Ok(())
    } else {
        Err(SeqError::MissingLast)
    }
}

#[test]
fn opcode_sequence_over_all_pairs() {
    for ops in [RC_REQ, UC_REQ] {
        let prevs = core::iter::once(None).chain(ops.iter().copied().map(Some));
        for prev in prevs {
            for &next in ops {
                let got = check_request_sequence(prev.map(Opcode), Opcode(next));
                assert_eq!(got, reference(prev, next), "{prev:x?} -> {next:#x}");
            }
        }
    }
}

#[test]
fn opcode_sequence_edge_cases() {
    let check = |prev: Option<u8>, next: u8| check_request_sequence(prev.map(Opcode), Opcode(next));
    for next in [
        0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x15, 0x18, 0x40, 0x60, 0xff,
    ] {
        assert_eq!(check(None, next), Err(SeqError::NotRequest), "{next:#x}");
        assert_eq!(
            check(Some(0x00), next),
            Err(SeqError::NotRequest),
            "{next:#x}"
        );
    }
    // A response or unknown opcode leaves no message in progress.
    assert_eq!(check(Some(0x11), 0x04), Ok(()));
    assert_eq!(check(Some(0xff), 0x02), Err(SeqError::MissingFirst));
    // A message cannot be continued by the same operation of another service.
    assert_eq!(check(Some(0x00), 0x21), Err(SeqError::MissingLast));
    assert_eq!(check(Some(0x20), 0x01), Err(SeqError::MissingLast));
    assert_eq!(check(None, 0x64), Ok(()));
    assert_eq!(check(Some(0x64), 0x65), Ok(()));
    for err in [
        SeqError::MissingFirst,
        SeqError::MissingLast,
        SeqError::NotRequest,
    ] {
        assert_eq!(err.nak_syndrome(), 0x61);
        assert_eq!(err.wc_status().to_raw(), 9);
    }
}

/// C9-93 as rxe's `check_length` applies it: first and middle packets carry exactly one MTU, a
/// last packet 1..=MTU bytes, an only packet 0..=MTU bytes.
#[test]
fn payload_length_by_position() {
    for mtu in [256u32, 1024, 4096] {
        let m = mtu as usize;
        for (position, ok) in [
            (Position::First, [false, false, true, false]),
            (Position::Middle, [false, false, true, false]),
            (Position::Last, [false, true, true, false]),
            (Position::Only, [true, true, true, false]),
        ] {
            for (len, want) in [0, 1, m, m + 1].into_iter().zip(ok) {
                assert_eq!(
                    payload_fits_position(position, len, mtu),
                    want,
                    "{position:?} {len} bytes, MTU {mtu}"
                );
            }
        }
        assert!(payload_fits_position(Position::Last, m - 1, mtu));
        assert!(!payload_fits_position(Position::Middle, m - 4, mtu));
    }
}
