// SPDX-License-Identifier: GPL-2.0

//! Fuzzing of the send and receive WQE parsers and the receive WQE encoder.

use super::*;

// ---------------------------------------------------------------------------------------------
// Work queue entries: parse_send_wqe (receive WQEs and the accessors: recv_wqe.rs).
// ---------------------------------------------------------------------------------------------

/// Every send opcode rrxe accepts.
pub(super) const SEND_OPCODES: [WrOpcode; 12] = [
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

/// The largest slot the fuzzer builds, the slot size of the largest send queue.
pub(super) const MAX_SLOT: usize = 1024;

/// Offsets of the send WQE fields the parser reads, where mutations do the most damage.
const SEND_FIELDS: [usize; 16] = [
    OFF_WR_ID,
    OFF_OPCODE,
    OFF_SEND_FLAGS,
    OFF_EX,
    OFF_REMOTE_ADDR,
    OFF_REMOTE_ADDR + 4,
    OFF_RDMA_RKEY,
    OFF_UD_AH_NUM,
    OFF_ATOMIC_SWAP,
    OFF_ATOMIC_RKEY,
    OFF_IOVA,
    OFF_IOVA + 4,
    OFF_DMA_LENGTH,
    OFF_DMA_NUM_SGE,
    SEND_WQE_HDR_LEN + 8,
    SEND_WQE_HDR_LEN + SGE_LEN + 8,
];

/// Stores `bytes` at `off` of `slot`.
fn put(slot: &mut [u8], off: usize, bytes: &[u8]) {
    slot[off..off + bytes.len()].copy_from_slice(bytes);
}

/// Reads the little-endian `u32` at `off` of `slot`, if it is inside.
pub(super) fn get32(slot: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(slot.get(off..off + 4)?.try_into().ok()?))
}

/// Decodes the SGE at byte `off` of `slot` independently of the code under test.
pub(super) fn sge_at(slot: &[u8], off: usize) -> Sge {
    Sge {
        addr: u64::from_le_bytes(slot[off..off + 8].try_into().unwrap()),
        length: get32(slot, off + 8).unwrap(),
        lkey: get32(slot, off + 12).unwrap(),
    }
}

/// Writes `len` random SGEs at `base` of `slot` and returns the sum of their lengths.
fn put_sges(rng: &mut Rng, slot: &mut [u8], base: usize, num: usize, atomic: bool) -> u32 {
    let mut sum = 0u32;
    for i in 0..num {
        let length = match rng.below(4) {
            _ if atomic && i == 0 => 8,
            0 => 0,
            1 => rng.u32() & 0xffff,
            _ => rng.u32() & 0xff,
        };
        let off = base + i * SGE_LEN;
        put(slot, off, &rng.next_u64().to_le_bytes());
        put(slot, off + 8, &length.to_le_bytes());
        put(slot, off + 12, &rng.u32().to_le_bytes());
        sum += length;
    }
    sum
}

/// A send WQE the fuzzer knows to be valid, with the capabilities it is valid for.
struct SendCase {
    /// The slot contents.
    slot: Vec<u8>,
    /// The queue pair type.
    qp: QpType,
    /// The granted scatter/gather entry count.
    max_sge: u32,
    /// The granted inline data size.
    max_inline: u32,
    /// The opcode that was encoded.
    opcode: WrOpcode,
}

/// Builds a valid send WQE for a random opcode allowed on a random queue pair type, on top of
/// random garbage in every field the opcode does not use.
fn valid_send_wqe(rng: &mut Rng) -> SendCase {
    let qp = rng.pick(&[QpType::Gsi, QpType::Rc, QpType::Uc, QpType::Ud]);
    let ops: Vec<WrOpcode> = SEND_OPCODES
        .into_iter()
        .filter(|&op| allowed(op, qp))
        .collect();
    let op = rng.pick(&ops);
    let mut max_sge = rng.upto(40) as u32;
    let max_inline = rng.upto(1024) as u32;
    let mut slot = rng.bytes(MAX_SLOT);
    put(&mut slot, OFF_OPCODE, &op.to_raw().to_le_bytes());

    let data = matches!(
        op,
        WrOpcode::Send
            | WrOpcode::SendWithImm
            | WrOpcode::SendWithInv
            | WrOpcode::RdmaWrite
            | WrOpcode::RdmaWriteWithImm
    );
    let atomic = matches!(op, WrOpcode::AtomicCmpAndSwp | WrOpcode::AtomicFetchAndAdd);
    let local = matches!(op, WrOpcode::LocalInv | WrOpcode::BindMw | WrOpcode::Flush);
    let inline = if data {
        max_inline > 0 && rng.bool()
    } else {
        // Local operations, flush and atomic write ignore the flag; reads and atomics reject it.
        (local || op == WrOpcode::AtomicWrite) && rng.bool()
    };
    let mut flags = rng.u32() & !SendFlags::INLINE;
    if inline {
        flags |= SendFlags::INLINE;
    }
    put(&mut slot, OFF_SEND_FLAGS, &flags.to_le_bytes());

    let remote = matches!(
        op,
        WrOpcode::RdmaWrite
            | WrOpcode::RdmaWriteWithImm
            | WrOpcode::RdmaRead
            | WrOpcode::AtomicWrite
            | WrOpcode::AtomicCmpAndSwp
            | WrOpcode::AtomicFetchAndAdd
            | WrOpcode::Flush
    );
    if remote {
        let mut addr = rng.next_u64();
        if atomic {
            addr &= !7;
        }
        put(&mut slot, OFF_REMOTE_ADDR, &addr.to_le_bytes());
        put(&mut slot, OFF_IOVA, &addr.to_le_bytes());
    }
    if op == WrOpcode::Flush {
        // A placement type (global and/or persistent) and a selectivity level (range, MR).
        let kind = 1 + rng.below(3) as u8;
        let level = rng.below(2) as u8;
        put(&mut slot, OFF_FLUSH_TYPE, &[kind, level]);
    }
    if matches!(qp, QpType::Ud | QpType::Gsi) {
        put(
            &mut slot,
            OFF_UD_REMOTE_QPN,
            &(rng.u32() & MAX_QPN).to_le_bytes(),
        );
        put(&mut slot, OFF_UD_AH_NUM, &rng.u32().max(1).to_le_bytes());
    }

    let (dma_length, used) = if local {
        (rng.u32(), 0)
    } else if op == WrOpcode::AtomicWrite {
        (8, 8)
    } else if inline {
        let len = rng.upto((max_inline as usize).min(MAX_SLOT - SEND_WQE_HDR_LEN));
        (len as u32, len)
    } else {
        if atomic {
            max_sge = max_sge.max(1);
        }
        let fit = (MAX_SLOT - SEND_WQE_HDR_LEN) / SGE_LEN;
        let limit = (max_sge as usize).min(fit).min(8);
        let num = if atomic {
            1 + rng.upto(limit - 1)
        } else {
            rng.upto(limit)
        };
        put(&mut slot, OFF_DMA_NUM_SGE, &(num as u32).to_le_bytes());
        let sum = put_sges(rng, &mut slot, SEND_WQE_HDR_LEN, num, atomic);
        (sum, num * SGE_LEN)
    };
    put(&mut slot, OFF_DMA_LENGTH, &dma_length.to_le_bytes());
    let len = SEND_WQE_HDR_LEN + used;
    slot.truncate(len + rng.upto((MAX_SLOT - len).min(64)));
    SendCase {
        slot,
        qp,
        max_sge,
        max_inline,
        opcode: op,
    }
}

/// Applies one to three random mutations to a WQE slot, aiming some at the parsed `fields`.
pub(super) fn mutate_slot(rng: &mut Rng, slot: &mut Vec<u8>, fields: &[usize]) {
    for _ in 0..=rng.below(3) {
        let len = slot.len();
        match rng.below(7) {
            0 if len > 0 => {
                let at = rng.upto(len - 1);
                slot[at] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let at = rng.upto(len - 1);
                slot[at] = rng.u8();
            }
            2 | 3 => {
                let at = rng.pick(fields);
                if at + 4 <= len {
                    put(slot, at, &rng.edgy_u32().to_le_bytes());
                }
            }
            4 => slot.truncate(rng.upto(len)),
            5 => {
                let extra = rng.upto(MAX_SLOT.saturating_sub(len).min(64));
                slot.extend(rng.bytes(extra));
            }
            _ => {
                let at = rng.pick(fields);
                if at + 8 <= len {
                    put(slot, at, &rng.next_u64().to_le_bytes());
                }
            }
        }
    }
}

/// Checks the invariants of a send WQE `w` accepted from `slot` for `qp`, `max_sge` and
/// `max_inline`, and that its accessors stay inside whatever slot they are given.
fn check_send(rng: &mut Rng, slot: &[u8], qp: QpType, max_sge: u32, max_inline: u32, w: &SendWqe) {
    assert!(allowed(w.opcode, qp));
    assert_eq!(Some(w.opcode.to_raw()), get32(slot, OFF_OPCODE));
    if let WrDetail::Flush { kind, level, .. } = w.detail {
        // An accepted FLUSH always has a FETH the requester can encode.
        assert!((1..=3).contains(&kind) && level <= 1, "{w:?}");
    }
    assert_eq!(Some(w.wr_id), peek_wr_id(slot));
    assert!(w.num_sge <= max_sge);
    let range = w.payload.byte_range();
    assert!(range.start <= range.end && range.end <= slot.len(), "{w:?}");
    match w.payload {
        Payload::Sges { start, count } => {
            assert_eq!((start, count), (SEND_WQE_HDR_LEN, w.num_sge));
            assert_eq!(range.len(), count as usize * SGE_LEN);
            let mut sum = 0u64;
            for i in 0..count {
                let off = start + i as usize * SGE_LEN;
                assert!(off + SGE_LEN <= slot.len());
                let sge = w.sge(slot, i).expect("every listed SGE is inside the slot");
                assert_eq!(sge, sge_at(slot, off));
                sum += u64::from(sge.length);
            }
            assert_eq!(sum, u64::from(w.length));
            assert!(w.length <= MAX_MSG_SIZE);
            assert_eq!(w.inline_data(slot), None);
        }
        Payload::Inline { start, len } => {
            assert_eq!(start, SEND_WQE_HDR_LEN);
            assert_eq!(w.num_sge, 0);
            // The atomic write operand is the 8 bytes after the fixed part whatever the flags
            // and limits say (documented on parse_send_wqe); all other inline data is limited.
            if w.opcode == WrOpcode::AtomicWrite {
                assert_eq!(len, 8);
            } else {
                assert!(len <= max_inline as usize);
                assert!(w.flags.contains(SendFlags::INLINE));
            }
            assert_eq!(w.inline_data(slot), Some(&slot[range]));
            assert_eq!(u64::from(w.length), len as u64);
        }
        Payload::None => {
            assert_eq!(w.num_sge, 0);
            assert!(matches!(
                w.opcode,
                WrOpcode::LocalInv | WrOpcode::BindMw | WrOpcode::Flush
            ));
        }
    }
    assert_eq!(w.sge(slot, w.num_sge), None);
    assert_eq!(w.sge(slot, u32::MAX), None);
    // The slot can change under a parsed WQE (user space shares it); the accessors must then
    // return None or data inside the slot they are given, never panic.
    let cut = &slot[..rng.upto(slot.len())];
    let i = if rng.bool() {
        rng.u32()
    } else {
        rng.below(u64::from(w.num_sge) + 2) as u32
    };
    if let Some(sge) = w.sge(cut, i) {
        assert!(i < w.num_sge);
        assert_eq!(sge, sge_at(cut, SEND_WQE_HDR_LEN + i as usize * SGE_LEN));
    }
    if let Some(data) = w.inline_data(cut) {
        assert_eq!(data, &cut[w.payload.byte_range()]);
    }
}

/// Parses `slot` whole and as the kernel copies it out of a ring (the prefix
/// `send_wqe_extent` names, as far as the slot goes): both must give the same answer.
fn parse_both(slot: &[u8], qp: QpType, max_sge: u32, max_inline: u32) -> Result<SendWqe, WqeError> {
    let whole = parse_send_wqe(slot, qp, max_sge, max_inline);
    if slot.len() >= SEND_WQE_HDR_LEN {
        let end = send_wqe_extent(&slot[..SEND_WQE_HDR_LEN]).min(slot.len());
        assert_eq!(
            parse_send_wqe(&slot[..end], qp, max_sge, max_inline),
            whole,
            "the copied prefix ({end} of {} bytes) parses differently",
            slot.len()
        );
    }
    whole
}

#[test]
fn send_wqe_parser_survives_random_slots() {
    let mut accepted = 0u32;
    fuzz(0x5e4d_0000, 20_000, |rng, _| {
        let len = rng.upto(MAX_SLOT);
        let mut slot = rng.bytes(len);
        // Random opcode words are almost never valid; steer the key fields into range at times.
        if slot.len() >= SEND_WQE_HDR_LEN && rng.chance(3, 4) {
            put(&mut slot, OFF_OPCODE, &(rng.below(17) as u32).to_le_bytes());
            put(&mut slot, OFF_SEND_FLAGS, &(rng.u32() & 0xf).to_le_bytes());
            put(
                &mut slot,
                OFF_DMA_NUM_SGE,
                &(rng.below(5) as u32).to_le_bytes(),
            );
            put(&mut slot, OFF_DMA_LENGTH, &(rng.u32() & 0x3f).to_le_bytes());
            if rng.bool() {
                let iova: [u8; 8] = slot[OFF_REMOTE_ADDR..OFF_REMOTE_ADDR + 8]
                    .try_into()
                    .unwrap();
                put(&mut slot, OFF_IOVA, &iova);
            }
            for i in 0..4 {
                let off = SEND_WQE_HDR_LEN + i * SGE_LEN + 8;
                if off + 4 <= slot.len() {
                    put(&mut slot, off, &(rng.u32() & 0xf).to_le_bytes());
                }
            }
        }
        let qp = rng.pick(&QpType::ALL);
        let max_sge = rng.upto(40) as u32;
        let max_inline = rng.upto(1024) as u32;
        if let Ok(w) = parse_both(&slot, qp, max_sge, max_inline) {
            accepted += 1;
            check_send(rng, &slot, qp, max_sge, max_inline, &w);
        }
    });
    assert!(accepted > 50, "only {accepted} random send WQEs accepted");
}

#[test]
fn send_wqe_parser_survives_mutated_valid_wqes() {
    let (mut accepted, mut rejected) = (0u32, 0u32);
    fuzz(0x5e4d_1111, 4_000, |rng, _| {
        let case = valid_send_wqe(rng);
        let w = parse_both(&case.slot, case.qp, case.max_sge, case.max_inline)
            .unwrap_or_else(|e| panic!("valid {:?} on {:?}: {e:?}", case.opcode, case.qp));
        assert_eq!(w.opcode, case.opcode);
        check_send(rng, &case.slot, case.qp, case.max_sge, case.max_inline, &w);
        for _ in 0..6 {
            let mut slot = case.slot.clone();
            mutate_slot(rng, &mut slot, &SEND_FIELDS);
            let (qp, max_sge, max_inline) = if rng.chance(1, 4) {
                (
                    rng.pick(&QpType::ALL),
                    rng.upto(40) as u32,
                    rng.upto(1024) as u32,
                )
            } else {
                (case.qp, case.max_sge, case.max_inline)
            };
            match parse_both(&slot, qp, max_sge, max_inline) {
                Ok(w) => {
                    accepted += 1;
                    check_send(rng, &slot, qp, max_sge, max_inline, &w);
                }
                Err(e) => {
                    rejected += 1;
                    // Every rejection maps to an error completion status.
                    let _ = e.wc_status();
                }
            }
        }
    });
    assert!(
        accepted > 1000 && rejected > 1000,
        "{accepted} accepted, {rejected} rejected"
    );
}

/// The parsers on random bytes of random slot sizes (an independent generator from the
/// harness above; moved here from the unit tests).
#[test]
fn fuzz_send_and_recv_never_panic_and_keep_invariants() {
    let mut rng = crate::tests_wqe::XorShift(0x9e37_79b9_7f4a_7c15);
    let mut accepted = 0u32;
    for _ in 0..100_000 {
        let len =
            [0, 100, 207, 208, 224, 256, 512, 1024][rng.below(8) as usize] + rng.below(3) as usize;
        let mut slot: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        // Make a useful fraction of the slots plausible, so that acceptance paths are reached.
        if len >= 208 && rng.below(4) != 0 {
            let num = rng.below(6) as u32;
            let mut s = crate::tests_wqe::Slot(slot);
            s.u32(12, rng.below(17) as u32)
                .u32(16, rng.below(16) as u32)
                .u32(196, num);
            s.u32(36, rng.below(2) as u32)
                .u32(24, rng.below(0x100_0000) as u32);
            // Usually an aligned remote address mirrored in iova, sometimes not.
            let mut remote = u64::from_le_bytes(s.0[24..32].try_into().unwrap());
            if rng.below(2) == 0 {
                remote &= !7;
            }
            let iova = if rng.below(8) == 0 {
                rng.next()
            } else {
                remote
            };
            s.u64(24, remote).u64(152, iova);
            let mut sum = 0u32;
            for i in 0..num as usize {
                let l = rng.below(5000) as u32;
                if 208 + 16 * i + 16 <= len {
                    s.u32(208 + 16 * i + 8, l);
                    sum = sum.wrapping_add(l);
                }
            }
            if rng.below(4) != 0 {
                let choices = [sum, 8, rng.below(80) as u32];
                s.u32(184, choices[rng.below(3) as usize]);
            }
            slot = s.0;
        }
        let qp = QpType::ALL[rng.below(QpType::ALL.len() as u64) as usize];
        let (max_sge, max_inline) = (rng.below(34) as u32, rng.below(600) as u32);
        if let Ok(w) = parse_send_wqe(&slot, qp, max_sge, max_inline) {
            accepted += 1;
            assert!(allowed(w.opcode, qp));
            assert!(crate::tests_wqe::expected_allowed(w.opcode.to_raw(), qp));
            assert!(w.num_sge <= max_sge);
            assert!(w.payload.byte_range().end <= slot.len());
            match w.payload {
                Payload::Sges { start, count } => {
                    assert_eq!((start, count), (208, w.num_sge));
                    let mut sum = 0u64;
                    for i in 0..count {
                        sum += u64::from(w.sge(&slot, i).unwrap().length);
                    }
                    assert_eq!(w.sge(&slot, count), None);
                    assert_eq!(sum, u64::from(w.length));
                    assert!(w.length <= MAX_MSG_SIZE);
                }
                Payload::Inline { start, len } => {
                    assert_eq!(start, 208);
                    assert!(len <= max_inline as usize || w.opcode == WrOpcode::AtomicWrite);
                    assert_eq!(w.inline_data(&slot).map(<[u8]>::len), Some(len));
                }
                Payload::None => assert_eq!(w.num_sge, 0),
            }
            if let WrDetail::Ud {
                ah_num, remote_qpn, ..
            } = w.detail
            {
                assert!(ah_num != 0 && remote_qpn <= 0xff_ffff);
            }
            if matches!(w.detail, WrDetail::Atomic { .. }) {
                assert_eq!(w.iova % 8, 0);
            }
        }
        if let Ok(r) = parse_recv_wqe(&slot, max_sge) {
            assert!(r.num_sge <= max_sge);
            assert!(40 + 16 * r.num_sge as usize <= slot.len());
            let sum: u64 = (0..r.num_sge)
                .map(|i| u64::from(r.sge(&slot, i).unwrap().length))
                .sum();
            assert_eq!(sum, u64::from(r.length));
        }
    }
    assert!(accepted > 1000, "only {accepted} accepted");
}
