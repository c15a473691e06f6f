// SPDX-License-Identifier: GPL-2.0

//! Tests of the send WQE parser, field by field: each opcode's details, SGE lists, inline
//! data, lengths, alignment, flush placement, remote addresses, UD addressing and truncated
//! slots. The slots come from `tests_wqe`'s encoder (offsets from the uAPI headers, written as
//! literals).

use crate::proto::abi::MAX_MSG_SIZE;
use crate::proto::qp_state::QpType;
use crate::proto::wqe::Payload;
use crate::proto::wqe::Sge;
use crate::proto::wqe::WqeError;
use crate::proto::wqe::WrDetail;
use crate::proto::wqe::WrOpcode;
use crate::proto::wqe_parse::parse_recv_wqe;
use crate::proto::wqe_parse::parse_send_wqe;
use crate::tests_wqe::*;

#[test]
fn details_of_each_opcode() {
    let rc = |op| parse(&good_send(op), QpType::Rc).unwrap();
    let sges = Payload::Sges {
        start: 208,
        count: 1,
    };
    let w = rc(RDMA_WRITE);
    assert_eq!(
        (w.detail, w.iova, w.length, w.num_sge),
        (WrDetail::Rdma { rkey: 0x4141 }, 0x1000, 8, 1)
    );
    assert_eq!(w.payload, sges);
    assert_eq!(
        w.sge(&good_send(RDMA_WRITE).0, 0),
        Some(Sge {
            addr: 0xa000,
            length: 8,
            lkey: 0x77
        })
    );
    assert_eq!(w.sge(&good_send(RDMA_WRITE).0, 1), None);
    let w = rc(ATOMIC_CMP_AND_SWP);
    let atomic = WrDetail::Atomic {
        compare_add: 5,
        swap: 6,
        rkey: 0x4242,
    };
    assert_eq!((w.detail, w.iova, w.length), (atomic, 0x1000, 8));
    let w = rc(SEND);
    assert_eq!((w.detail, w.iova, w.payload), (WrDetail::None, 0, sges));
    let w = rc(FLUSH);
    let flush = WrDetail::Flush {
        rkey: 0x4343,
        kind: 2,
        level: 1,
    };
    assert_eq!(
        (w.detail, w.iova, w.length, w.payload),
        (flush, 0x1000, 8, Payload::None)
    );
    let w = rc(ATOMIC_WRITE);
    assert_eq!(
        (w.detail, w.length, w.num_sge),
        (WrDetail::Rdma { rkey: 0x4141 }, 8, 0)
    );
    let slot = good_send(ATOMIC_WRITE);
    assert_eq!(w.inline_data(&slot.0), Some(&slot.0[208..216]));
    for op in [LOCAL_INV, BIND_MW] {
        let w = rc(op);
        assert_eq!(
            (w.length, w.num_sge, w.payload, w.iova),
            (0, 0, Payload::None, 0)
        );
    }
    let mut s = good_send(BIND_MW);
    s.u64(24, 0x5000)
        .u64(32, 0x600)
        .u32(40, 1)
        .u32(44, 2)
        .u32(48, 3)
        .u32(52, 4);
    let mw = WrDetail::Mw {
        addr: 0x5000,
        length: 0x600,
        mr_lkey: 1,
        mw_rkey: 2,
        rkey: 3,
        access: 4,
    };
    assert_eq!(parse(&s, QpType::Uc).unwrap().detail, mw);
    let mut s = good_send(SEND_WITH_IMM);
    make_ud(&mut s);
    let ud = WrDetail::Ud {
        remote_qpn: 0x12_3456,
        remote_qkey: 0x1111_1111,
        pkey_index: 3,
        ah_num: 7,
    };
    assert_eq!(parse(&s, QpType::Ud).unwrap().detail, ud);
}

#[test]
fn local_ops_and_flush_ignore_the_sge_list() {
    for op in [LOCAL_INV, BIND_MW, FLUSH, ATOMIC_WRITE] {
        let mut s = good_send(op);
        s.u32(196, u32::MAX).u32(16, F_SIGNALED | F_INLINE);
        assert!(parse(&s, QpType::Rc).is_ok(), "{op}");
    }
    let mut s = good_send(FLUSH);
    s.u32(184, u32::MAX); // a flush range may exceed the message size limit
    assert_eq!(parse(&s, QpType::Rc).unwrap().length, u32::MAX);
}

#[test]
fn too_many_sges_and_sge_array_outside_the_slot() {
    let mut s = good_send(SEND);
    s.u32(196, MAX_SGE + 1);
    assert_eq!(parse(&s, QpType::Rc), Err(WqeError::TooManySge));
    s.u32(196, u32::MAX);
    assert_eq!(parse(&s, QpType::Rc), Err(WqeError::TooManySge));
    // Four entries granted, but a slot with room for three.
    let mut s = Slot::new(208 + 3 * 16);
    s.put(0, &good_send(SEND).0[..208]).u32(196, 4);
    assert_eq!(parse(&s, QpType::Rc), Err(WqeError::Truncated));
    // A hostile max_sge (never granted, but still safe).
    let s = good_send(SEND);
    assert_eq!(
        parse_send_wqe(&s.0[..240], QpType::Rc, u32::MAX, 0).map(|w| w.num_sge),
        Ok(1)
    );
    let mut s = good_send(SEND);
    s.u32(196, 0x1000_0000);
    assert_eq!(
        parse_send_wqe(&s.0, QpType::Rc, u32::MAX, 0),
        Err(WqeError::Truncated)
    );
}

#[test]
fn full_sge_list() {
    let mut s = good_send(RDMA_WRITE);
    for i in 0..4 {
        s.sge(208, i, 0x1_0000 * i as u64, 100 + i as u32, i as u32);
    }
    s.u32(196, 4).u32(184, 406);
    let w = parse(&s, QpType::Uc).unwrap();
    assert_eq!((w.num_sge, w.length), (4, 406));
    assert_eq!(w.payload.byte_range(), 208..272);
    assert_eq!(
        w.sge(&s.0, 3),
        Some(Sge {
            addr: 0x3_0000,
            length: 103,
            lkey: 3
        })
    );
    assert_eq!(w.sge(&s.0, 4), None);
}

#[test]
fn inline_data() {
    let mut s = good_send(SEND);
    s.u32(16, F_INLINE).u32(184, MAX_INLINE).u32(196, 3);
    for i in 0..MAX_INLINE as usize {
        s.0[208 + i] = i as u8;
    }
    let w = parse(&s, QpType::Rc).unwrap();
    assert_eq!((w.length, w.num_sge), (MAX_INLINE, 0));
    assert_eq!(
        w.inline_data(&s.0).unwrap(),
        &s.0[208..208 + MAX_INLINE as usize]
    );
    assert_eq!(w.sge(&s.0, 0), None);
    s.u32(184, MAX_INLINE + 1);
    assert_eq!(parse(&s, QpType::Rc), Err(WqeError::InlineTooLong));
    // Within max_inline but past the end of the slot.
    assert_eq!(
        parse_send_wqe(&s.0[..240], QpType::Rc, 0, 100),
        Err(WqeError::Truncated)
    );
    assert_eq!(
        parse_send_wqe(&s.0[..273], QpType::Rc, 0, 65).map(|w| w.length),
        Ok(65)
    );
    // Zero-length inline send.
    s.u32(184, 0);
    assert_eq!(
        parse(&s, QpType::Rc).unwrap().inline_data(&s.0),
        Some(&[][..])
    );
    // UD inline send.
    let mut s = good_send(SEND);
    make_ud(&mut s);
    s.u32(16, F_INLINE).u32(184, 16);
    assert_eq!(
        parse(&s, QpType::Ud).unwrap().payload,
        Payload::Inline {
            start: 208,
            len: 16
        }
    );
    // Inline is meaningless for reads and atomics.
    for op in [RDMA_READ, ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD] {
        let mut s = good_send(op);
        s.u32(16, F_INLINE);
        assert_eq!(
            parse(&s, QpType::Rc),
            Err(WqeError::InlineNotAllowed),
            "{op}"
        );
    }
}

#[test]
fn length_mismatch_overflow_and_limit() {
    let mut s = good_send(SEND);
    s.u32(184, 9);
    assert_eq!(parse(&s, QpType::Rc), Err(WqeError::LengthMismatch));
    s.u32(184, 0);
    assert_eq!(parse(&s, QpType::Rc), Err(WqeError::LengthMismatch));
    let mut s = good_send(RDMA_WRITE);
    s.sge(208, 0, 0, u32::MAX, 1)
        .sge(208, 1, 0, 1, 1)
        .u32(196, 2)
        .u32(184, 0);
    assert_eq!(parse(&s, QpType::Rc), Err(WqeError::LengthOverflow));
    s.sge(208, 0, 0, 0x7fff_ffff, 1);
    s.u32(184, 0x8000_0000);
    assert_eq!(parse(&s, QpType::Rc).map(|w| w.length), Ok(MAX_MSG_SIZE));
    s.sge(208, 1, 0, 2, 1).u32(184, 0x8000_0001);
    assert_eq!(parse(&s, QpType::Rc), Err(WqeError::MessageTooLong));
    // Atomics: at least 8 bytes of local buffer; atomic write exactly 8 operand bytes.
    let mut s = good_send(ATOMIC_FETCH_AND_ADD);
    s.sge(208, 0, 0xa000, 4, 1).u32(184, 4);
    assert_eq!(parse(&s, QpType::Rc), Err(WqeError::AtomicLength));
    s.sge(208, 0, 0xa000, 16, 1).u32(184, 16);
    assert!(parse(&s, QpType::Rc).is_ok());
    let mut s = good_send(ATOMIC_WRITE);
    s.u32(184, 16);
    assert_eq!(parse(&s, QpType::Rc), Err(WqeError::LengthMismatch));
}

#[test]
fn misaligned_atomics() {
    for op in [ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD] {
        for off in 1..8u64 {
            let mut s = good_send(op);
            s.u64(24, 0x1000 + off).u64(152, 0x1000 + off);
            assert_eq!(
                parse(&s, QpType::Rc),
                Err(WqeError::Misaligned),
                "{op} {off}"
            );
        }
    }
    // Atomic write alignment is the responder's to check (IBA A19.4.2), as in C rxe.
    let mut s = good_send(ATOMIC_WRITE);
    s.u64(24, 0x1003).u64(152, 0x1003);
    assert_eq!(parse(&s, QpType::Rc).map(|w| w.iova), Ok(0x1003));
}

#[test]
fn flush_placement_and_selectivity() {
    // FETH placement type: bit 0 global, bit 1 persistent, at least one; level 0 or 1.
    for (kind, level, ok) in [
        (1u8, 0u8, true),
        (2, 0, true),
        (3, 1, true),
        (1, 1, true),
        (0, 0, false),
        (4, 0, false),
        (9, 1, false),
        (1, 2, false),
        (1, 3, false),
    ] {
        let mut s = good_send(FLUSH);
        s.put(40, &[kind, level]);
        let r = parse(&s, QpType::Rc);
        if ok {
            assert_eq!(
                r.map(|w| w.detail),
                Ok(WrDetail::Flush {
                    rkey: 0x4343,
                    kind,
                    level
                })
            );
        } else {
            assert_eq!(r, Err(WqeError::BadFlush), "type {kind} level {level}");
        }
    }
    // The length names the remote range, not a payload: beyond the message limit is fine.
    let mut s = good_send(FLUSH);
    s.u32(184, u32::MAX);
    assert_eq!(parse(&s, QpType::Rc).map(|w| w.length), Ok(u32::MAX));
}

#[test]
fn operations_answered_by_more_than_an_ack() {
    use WrOpcode as W;
    for op in crate::tests_seq::WR_ALL {
        // Each holds a responder resource (read credit) while outstanding.
        let wants = matches!(
            op,
            W::RdmaRead | W::AtomicCmpAndSwp | W::AtomicFetchAndAdd | W::Flush | W::AtomicWrite
        );
        assert_eq!(op.wants_response(), wants, "{op:?}");
        // C rxe answers FLUSH and ATOMIC WRITE with a zero-length READ RESPONSE ONLY.
        let read = matches!(op, W::RdmaRead | W::Flush | W::AtomicWrite);
        assert_eq!(op.answered_by_read_response(), read, "{op:?}");
        assert!(!read || wants, "{op:?}");
        // Only ATOMIC WRITE of these carries its (8-byte) payload in the request.
        let empty = wants && op != W::AtomicWrite;
        assert_eq!(op.request_has_no_payload(), empty, "{op:?}");
    }
}

#[test]
fn iova_must_match_the_remote_address() {
    for op in [
        RDMA_WRITE,
        RDMA_READ,
        ATOMIC_CMP_AND_SWP,
        FLUSH,
        ATOMIC_WRITE,
    ] {
        let mut s = good_send(op);
        s.u64(152, 0x2000);
        assert_eq!(
            parse(&s, QpType::Rc),
            Err(WqeError::AddressMismatch),
            "{op}"
        );
    }
    // Sends ignore iova, which the provider fills from the union.
    let mut s = good_send(SEND);
    s.u64(152, 0x2000);
    assert_eq!(parse(&s, QpType::Rc).map(|w| w.iova), Ok(0));
}

#[test]
fn ud_needs_an_address_handle_and_a_24_bit_qpn() {
    for qp in [QpType::Ud, QpType::Gsi] {
        let mut s = good_send(SEND);
        make_ud(&mut s);
        s.u32(36, 0);
        assert_eq!(parse(&s, qp), Err(WqeError::NoAddressHandle));
        make_ud(&mut s);
        s.u32(24, 0x0100_0000);
        assert_eq!(parse(&s, qp), Err(WqeError::QpnRange));
        s.u32(24, 0x00ff_ffff);
        assert!(parse(&s, qp).is_ok());
    }
}

#[test]
fn truncated_slots() {
    for op in [
        SEND,
        RDMA_WRITE,
        ATOMIC_CMP_AND_SWP,
        FLUSH,
        LOCAL_INV,
        ATOMIC_WRITE,
    ] {
        let s = good_send(op);
        for len in 0..208 {
            let r = parse_send_wqe(&s.0[..len], QpType::Rc, MAX_SGE, MAX_INLINE);
            assert_eq!(r, Err(WqeError::Truncated), "{op} {len}");
        }
        // The fixed part, plus the 8-byte operand of an atomic write or one 16-byte SGE.
        let needed = match op {
            FLUSH | LOCAL_INV => 208,
            ATOMIC_WRITE => 216,
            _ => 224,
        };
        for len in 208..needed {
            assert_eq!(
                parse_send_wqe(&s.0[..len], QpType::Rc, 4, 64),
                Err(WqeError::Truncated)
            );
        }
        assert!(
            parse_send_wqe(&s.0[..needed], QpType::Rc, 4, 64).is_ok(),
            "{op}"
        );
    }
    let r = recv_slot(&[(0x1000, 10, 1)], 10);
    for len in 0..56 {
        assert_eq!(
            parse_recv_wqe(&r[..len], 4),
            Err(WqeError::Truncated),
            "{len}"
        );
    }
    assert!(parse_recv_wqe(&r[..56], 4).is_ok());
}
