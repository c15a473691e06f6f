// SPDX-License-Identifier: GPL-2.0

//! Tests of the send/receive WQE parsers and the completion encoding in `proto::wqe`: the
//! layout, the opcode table, receive WQEs and error statuses here, each send WQE field in
//! `tests_wqe_send`.
//!
//! The slots are built by a small encoder of its own that writes each field at the offset
//! `offsetof()` reports for the uAPI structures of `rdma_user_rxe.h` and `ib_user_verbs.h` on
//! x86_64 (measured with gcc), written as literals rather than the module's constants. The
//! expected opcode table is transcribed from rxe's `rxe_wr_opcode_info`, minus the entries its
//! requester cannot execute.

use crate::proto::abi::CQE_LEN;
use crate::proto::abi::MAX_MSG_SIZE;
use crate::proto::abi::RECV_WQE_HDR_LEN;
use crate::proto::abi::SEND_WQE_HDR_LEN;
use crate::proto::abi::SGE_LEN;
use crate::proto::cqe::WcStatus;
use crate::proto::qp_state::QpType;
use crate::proto::wqe::allowed;
use crate::proto::wqe::SendFlags;
use crate::proto::wqe::SendWqe;
use crate::proto::wqe::Sge;
use crate::proto::wqe::WqeError;
use crate::proto::wqe::WrOpcode;
use crate::proto::wqe_parse::parse_recv_wqe;
use crate::proto::wqe_parse::parse_send_wqe;
use crate::proto::wqe_parse::peek_wr_id;

/// Slot size of a send queue created with 32 SGEs / 512 inline bytes: 208 + 512 rounded up.
pub(crate) const SLOT: usize = 1024;
/// Granted SGE count used by most tests.
pub(crate) const MAX_SGE: u32 = 4;
/// Granted inline size used by most tests.
pub(crate) const MAX_INLINE: u32 = 64;

// Raw `enum ib_wr_opcode` values from include/rdma/ib_verbs.h.
pub(crate) const RDMA_WRITE: u32 = 0;
pub(crate) const RDMA_WRITE_WITH_IMM: u32 = 1;
pub(crate) const SEND: u32 = 2;
pub(crate) const SEND_WITH_IMM: u32 = 3;
pub(crate) const RDMA_READ: u32 = 4;
pub(crate) const ATOMIC_CMP_AND_SWP: u32 = 5;
pub(crate) const ATOMIC_FETCH_AND_ADD: u32 = 6;
pub(crate) const LOCAL_INV: u32 = 7;
pub(crate) const BIND_MW: u32 = 8;
pub(crate) const SEND_WITH_INV: u32 = 9;
const LSO: u32 = 10;
const RDMA_READ_WITH_INV: u32 = 11;
const MASKED_CMP_AND_SWP: u32 = 12;
const MASKED_FETCH_AND_ADD: u32 = 13;
pub(crate) const FLUSH: u32 = 14;
pub(crate) const ATOMIC_WRITE: u32 = 15;
const REG_MR: u32 = 0x20;

// Raw `enum ib_send_flags` values.
pub(crate) const F_SIGNALED: u32 = 2;
pub(crate) const F_INLINE: u32 = 8;

/// The queue pair types the tests exercise, with their `enum ib_qp_type` names.
pub(crate) const TYPES: [QpType; 5] =
    [QpType::Smi, QpType::Gsi, QpType::Rc, QpType::Uc, QpType::Ud];

/// Returns whether rrxe must accept `op` on `qp`, from an independent transcription of the
/// `rxe_wr_opcode_info` masks (minus UC/UD SEND_WITH_INV and READ_WITH_INV, which rxe's
/// requester cannot execute, and REG_MR, which is kernel-only).
pub(crate) fn expected_allowed(op: u32, qp: QpType) -> bool {
    let rc: &[u32] = &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 14, 15];
    let uc: &[u32] = &[0, 1, 2, 3, 8];
    let ud: &[u32] = &[2, 3];
    match qp {
        QpType::Rc => rc.contains(&op),
        QpType::Uc => uc.contains(&op),
        QpType::Ud | QpType::Gsi => ud.contains(&op),
        QpType::Smi => false,
    }
}

/// Returns whether `op` is an opcode rrxe knows at all.
pub(crate) fn known(op: u32) -> bool {
    matches!(op, 0..=9 | 14 | 15)
}

/// A send WQE slot under construction.
pub(crate) struct Slot(pub(crate) Vec<u8>);

impl Slot {
    /// Returns an all-zero slot of `len` bytes.
    pub(crate) fn new(len: usize) -> Self {
        Self(vec![0; len])
    }

    /// Writes `bytes` at `off`.
    pub(crate) fn put(&mut self, off: usize, bytes: &[u8]) -> &mut Self {
        self.0[off..off + bytes.len()].copy_from_slice(bytes);
        self
    }

    /// Writes a native-endian (little-endian) `u32` at `off`.
    pub(crate) fn u32(&mut self, off: usize, v: u32) -> &mut Self {
        self.put(off, &v.to_le_bytes())
    }

    /// Writes a native-endian (little-endian) `u64` at `off`.
    pub(crate) fn u64(&mut self, off: usize, v: u64) -> &mut Self {
        self.put(off, &v.to_le_bytes())
    }

    /// Writes SGE `i` of a list starting at `base`.
    pub(crate) fn sge(
        &mut self,
        base: usize,
        i: usize,
        addr: u64,
        length: u32,
        lkey: u32,
    ) -> &mut Self {
        let off = base + 16 * i;
        self.u64(off, addr).u32(off + 8, length).u32(off + 12, lkey)
    }
}

/// Builds a well-formed send WQE for `op`, valid for every opcode on every queue pair type that
/// allows it: one 8-byte SGE, an 8-byte-aligned remote address mirrored in `iova`, an address
/// handle, and 8 bytes at the start of the variable part for an atomic write.
pub(crate) fn good_send(op: u32) -> Slot {
    let mut s = Slot::new(SLOT);
    s.u64(0, 0x1122_3344_5566_7788) // wr_id
        .u32(12, op) // opcode
        .u32(16, F_SIGNALED) // send_flags
        .u32(20, 0xdead_beef) // ex
        .u64(24, 0x1000) // wr.rdma.remote_addr = wr.atomic.remote_addr = wr.flush.remote_addr
        .u64(152, 0x1000) // iova
        .u32(184, 8) // dma.length
        .u32(188, 8) // dma.resid, ignored
        .u32(196, 1) // dma.num_sge
        .sge(208, 0, 0xa000, 8, 0x77);
    if matches!(op, ATOMIC_CMP_AND_SWP | ATOMIC_FETCH_AND_ADD) {
        s.u64(32, 5).u64(40, 6).u32(48, 0x4242); // compare_add, swap, rkey
    } else if op == FLUSH {
        s.u32(36, 0x4343).put(40, &[2, 1]); // rkey, type, level
    } else {
        s.u32(32, 0x4141); // wr.rdma.rkey
    }
    s
}

/// Turns a good send WQE into a UD one: qpn, qkey, pkey index and address handle.
pub(crate) fn make_ud(s: &mut Slot) {
    s.u32(24, 0x12_3456)
        .u32(28, 0x1111_1111)
        .put(32, &[3, 0])
        .u32(36, 7);
    s.u64(152, 0); // the provider writes iova from the union; it is meaningless for sends
}

/// Parses with the default capabilities.
pub(crate) fn parse(s: &Slot, qp: QpType) -> Result<SendWqe, WqeError> {
    parse_send_wqe(&s.0, qp, MAX_SGE, MAX_INLINE)
}

#[test]
fn layout_matches_the_uabi() {
    assert_eq!(SEND_WQE_HDR_LEN, 208);
    assert_eq!(RECV_WQE_HDR_LEN, 40);
    assert_eq!(SGE_LEN, 16);
    assert_eq!(CQE_LEN, 48);
    assert_eq!(MAX_MSG_SIZE, 0x8000_0000);
}

#[test]
fn opcode_numbers() {
    for raw in 0..=300u32 {
        match WrOpcode::from_raw(raw) {
            Some(op) => {
                assert!(known(raw), "{raw}");
                assert_eq!(op.to_raw(), raw);
            }
            None => assert!(!known(raw), "{raw}"),
        }
    }
    for raw in [
        LSO,
        RDMA_READ_WITH_INV,
        MASKED_CMP_AND_SWP,
        MASKED_FETCH_AND_ADD,
        REG_MR,
    ] {
        assert_eq!(WrOpcode::from_raw(raw), None);
    }
}

#[test]
fn opcode_matrix_every_type() {
    for qp in TYPES {
        for op in 0..=255u32 {
            let mut s = good_send(op);
            if matches!(qp, QpType::Ud | QpType::Gsi) {
                make_ud(&mut s);
            }
            let r = parse(&s, qp);
            if expected_allowed(op, qp) {
                let w = r.unwrap_or_else(|e| panic!("{qp:?} op {op}: {e:?}"));
                assert_eq!(w.opcode.to_raw(), op);
                assert_eq!(w.wr_id, 0x1122_3344_5566_7788);
                assert_eq!(w.ex, 0xdead_beef);
                assert!(w.flags.contains(SendFlags::SIGNALED));
                let fn_allowed = allowed(WrOpcode::from_raw(op).unwrap(), qp);
                assert!(fn_allowed);
            } else if known(op) {
                assert_eq!(r, Err(WqeError::OpcodeNotAllowed), "{qp:?} op {op}");
                assert!(!allowed(WrOpcode::from_raw(op).unwrap(), qp));
            } else {
                assert_eq!(r, Err(WqeError::BadOpcode), "{qp:?} op {op}");
            }
        }
    }
}

#[test]
fn reg_mr_and_other_kernel_opcodes_are_rejected_everywhere() {
    for qp in TYPES {
        for op in [REG_MR, REG_MR + 1, 0xf0, 0xf9, 0x100, u32::MAX] {
            let mut s = good_send(op);
            s.u64(24, 0xffff_8880_0000_0000); // what a kernel `struct ib_mr *` would look like
            assert_eq!(parse(&s, qp), Err(WqeError::BadOpcode), "{qp:?} {op:#x}");
        }
    }
}

#[test]
fn error_statuses() {
    use WqeError as E;
    let qp_op = [
        E::Truncated,
        E::BadOpcode,
        E::OpcodeNotAllowed,
        E::InlineNotAllowed,
        E::TooManySge,
        E::Misaligned,
        E::AddressMismatch,
        E::NoAddressHandle,
        E::QpnRange,
        E::BadFlush,
    ];
    for e in qp_op {
        assert_eq!(e.wc_status(), WcStatus::LocQpOpErr, "{e:?}");
    }
    let len = [
        E::InlineTooLong,
        E::LengthOverflow,
        E::LengthMismatch,
        E::MessageTooLong,
        E::AtomicLength,
    ];
    for e in len {
        assert_eq!(e.wc_status(), WcStatus::LocLenErr, "{e:?}");
    }
}

/// Builds a receive WQE slot of 128 bytes with the given SGEs and `dma.length`.
pub(crate) fn recv_slot(sges: &[(u64, u32, u32)], length: u32) -> Vec<u8> {
    let mut s = Slot::new(128);
    s.u64(0, 0xabcd)
        .u32(16, length)
        .u32(28, u32::try_from(sges.len()).unwrap());
    for (i, &(addr, len, lkey)) in sges.iter().enumerate() {
        s.sge(40, i, addr, len, lkey);
    }
    s.0
}

#[test]
fn receive_wqes() {
    let s = recv_slot(&[(0x1000, 10, 1), (0x2000, 20, 2)], 30);
    let w = parse_recv_wqe(&s, 4).unwrap();
    assert_eq!((w.wr_id, w.length, w.num_sge), (0xabcd, 30, 2));
    assert_eq!(
        w.sge(&s, 1),
        Some(Sge {
            addr: 0x2000,
            length: 20,
            lkey: 2
        })
    );
    assert_eq!(w.sge(&s, 2), None);
    assert_eq!(parse_recv_wqe(&s, 1), Err(WqeError::TooManySge));
    let s = recv_slot(&[(0x1000, 10, 1)], 11);
    assert_eq!(parse_recv_wqe(&s, 4), Err(WqeError::LengthMismatch));
    let s = recv_slot(&[(0, u32::MAX, 1), (0, 1, 1)], 0);
    assert_eq!(parse_recv_wqe(&s, 4), Err(WqeError::LengthOverflow));
    let s = recv_slot(&[], 0);
    assert_eq!(parse_recv_wqe(&s, 0).map(|w| w.num_sge), Ok(0));
    // Five entries need 120 bytes; six do not fit in a 128-byte slot.
    let s = recv_slot(&[(0, 1, 1); 5], 5);
    assert!(parse_recv_wqe(&s, 32).is_ok());
    let mut s = recv_slot(&[(0, 1, 1); 5], 5);
    s[28] = 6;
    assert_eq!(parse_recv_wqe(&s, 32), Err(WqeError::Truncated));
}

#[test]
fn peek_wr_id_reads_the_first_eight_bytes() {
    assert_eq!(
        peek_wr_id(&good_send(u32::MAX).0),
        Some(0x1122_3344_5566_7788)
    );
    assert_eq!(peek_wr_id(&[1, 0, 0, 0, 0, 0, 0, 0]), Some(1));
    assert_eq!(peek_wr_id(&[1; 7]), None);
}

/// A small xorshift generator, so that the fuzz run is reproducible.
pub(crate) struct XorShift(pub(crate) u64);

impl XorShift {
    /// Returns the next pseudo-random word.
    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// Returns a pseudo-random value below `n`.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
