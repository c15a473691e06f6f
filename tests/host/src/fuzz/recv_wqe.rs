// SPDX-License-Identifier: GPL-2.0

//! Fuzzing of the receive WQE parser and encoder, and of the WQE accessors with forged values.

use super::wqe::{
    get32,
    mutate_slot,
    sge_at,
    MAX_SLOT,
    SEND_OPCODES, //
};
use super::*;

/// Offsets of the receive WQE fields the parser reads.
const RECV_FIELDS: [usize; 6] = [
    OFF_WR_ID,
    OFF_RECV_DMA_LENGTH,
    OFF_RECV_DMA_NUM_SGE,
    RECV_WQE_HDR_LEN + 8,
    RECV_WQE_HDR_LEN + SGE_LEN + 8,
    RECV_WQE_HDR_LEN + 2 * SGE_LEN + 8,
];

/// Checks the invariants of a receive WQE `r` accepted from `slot` for `max_sge`.
fn check_recv(rng: &mut Rng, slot: &[u8], max_sge: u32, r: &RecvWqe) {
    assert!(r.num_sge <= max_sge);
    assert_eq!(Some(r.wr_id), peek_wr_id(slot));
    assert_eq!(Some(r.num_sge), get32(slot, OFF_RECV_DMA_NUM_SGE));
    assert!(RECV_WQE_HDR_LEN + r.num_sge as usize * SGE_LEN <= slot.len());
    let mut sum = 0u64;
    for i in 0..r.num_sge {
        let sge = r.sge(slot, i).expect("every listed SGE is inside the slot");
        assert_eq!(sge, sge_at(slot, RECV_WQE_HDR_LEN + i as usize * SGE_LEN));
        sum += u64::from(sge.length);
    }
    assert_eq!(sum, u64::from(r.length));
    assert_eq!(r.sge(slot, r.num_sge), None);
    assert_eq!(r.sge(slot, u32::MAX), None);
    let cut = &slot[..rng.upto(slot.len())];
    let i = rng.below(u64::from(r.num_sge) + 2) as u32;
    if let Some(sge) = r.sge(cut, i) {
        assert_eq!(sge, sge_at(cut, RECV_WQE_HDR_LEN + i as usize * SGE_LEN));
    }
}

#[test]
fn recv_wqe_parser_survives_random_and_mutated_slots() {
    let (mut accepted, mut encoded) = (0u32, 0u32);
    fuzz(0x4ec5_0000, 8_000, |rng, _| {
        let max_sge = rng.upto(40) as u32;
        // An encoding of random SGEs into a slot holding garbage: check encode's documented
        // failures, and that what it accepts parses back to the same entries.
        let len = rng.upto(MAX_SLOT);
        let mut slot = rng.bytes(len);
        let most = if rng.bool() { 6 } else { 60 };
        let num = rng.upto(most);
        let sges: Vec<Sge> = (0..num)
            .map(|_| Sge {
                addr: rng.next_u64(),
                length: if rng.chance(1, 8) {
                    rng.edgy_u32()
                } else {
                    rng.u32() & 0xfff
                },
                lkey: rng.u32(),
            })
            .collect();
        let wr_id = rng.next_u64();
        let total: u64 = sges.iter().map(|s| u64::from(s.length)).sum();
        let expected = if num as u64 > u64::from(max_sge) {
            Err(WqeError::TooManySge)
        } else if RECV_WQE_HDR_LEN + num * SGE_LEN > slot.len() {
            Err(WqeError::Truncated)
        } else if total > u64::from(u32::MAX) {
            Err(WqeError::LengthOverflow)
        } else {
            Ok(())
        };
        assert_eq!(
            encode_recv_wqe(&mut slot[..], wr_id, &sges, max_sge),
            expected
        );
        if expected.is_ok() {
            encoded += 1;
            let r = parse_recv_wqe(&slot, max_sge);
            let want = RecvWqe {
                wr_id,
                length: total as u32,
                num_sge: num as u32,
            };
            assert_eq!(r, Ok(want));
            for (i, sge) in sges.iter().enumerate() {
                assert_eq!(want.sge(&slot, i as u32), Some(*sge));
            }
            check_recv(rng, &slot, max_sge, &want);
        }

        // Mutations of whatever the slot holds now, with the same or another limit.
        for _ in 0..2 {
            let mut mutated = slot.clone();
            mutate_slot(rng, &mut mutated, &RECV_FIELDS);
            let max_sge = if rng.chance(1, 4) {
                rng.upto(40) as u32
            } else {
                max_sge
            };
            if let Ok(r) = parse_recv_wqe(&mutated, max_sge) {
                accepted += 1;
                check_recv(rng, &mutated, max_sge, &r);
            }
        }
    });
    assert!(
        encoded > 1000 && accepted > 1000,
        "{encoded} encoded, {accepted} accepted"
    );
}

#[test]
fn wqe_accessors_survive_forged_values() {
    // The WQE types have public fields; even values no parser returns must not make the
    // accessors panic or reach outside the slot they are given.
    fuzz(0xacce_5500, 20_000, |rng, _| {
        let len = rng.len_upto(MAX_SLOT);
        let slot = rng.bytes(len);
        let start = match rng.below(3) {
            0 => rng.upto(MAX_SLOT + 64),
            1 => usize::MAX - rng.upto(64),
            _ => rng.next_u64() as usize,
        };
        let count = rng.edgy_u32();
        let payload = match rng.below(3) {
            0 => Payload::None,
            1 => Payload::Inline {
                start,
                len: if rng.bool() {
                    rng.upto(2048)
                } else {
                    rng.next_u64() as usize
                },
            },
            _ => Payload::Sges { start, count },
        };
        let range = payload.byte_range();
        assert!(range.start <= range.end);
        let w = SendWqe {
            wr_id: rng.next_u64(),
            opcode: rng.pick(&SEND_OPCODES),
            flags: SendFlags(rng.u32()),
            ex: rng.u32(),
            detail: WrDetail::None,
            iova: rng.next_u64(),
            length: rng.u32(),
            num_sge: count,
            payload,
        };
        let i = rng.edgy_u32();
        if let Some(sge) = w.sge(&slot, i) {
            let Payload::Sges { start, count } = payload else {
                panic!("an SGE from a non-SGE payload");
            };
            assert!(i < count);
            assert_eq!(sge, sge_at(&slot, start + i as usize * SGE_LEN));
        }
        if let Some(data) = w.inline_data(&slot) {
            assert_eq!(data, &slot[range]);
        }
        let r = RecvWqe {
            wr_id: rng.next_u64(),
            length: rng.u32(),
            num_sge: count,
        };
        if let Some(sge) = r.sge(&slot, i) {
            assert!(i < count);
            assert_eq!(sge, sge_at(&slot, RECV_WQE_HDR_LEN + i as usize * SGE_LEN));
        }
        let _ = peek_wr_id(&slot);
    });
}
