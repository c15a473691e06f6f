// SPDX-License-Identifier: GPL-2.0

//! Tests of the completion encoding in `proto::cqe`: status and opcode values, the mapping of
//! send opcodes to completion opcodes, the exact `struct ib_uverbs_wc` layout and flush
//! completions.

use crate::proto::cqe::flush_cqe;
use crate::proto::cqe::wc_opcode_for;
use crate::proto::cqe::Cqe;
use crate::proto::cqe::WcFlags;
use crate::proto::cqe::WcOpcode;
use crate::proto::cqe::WcStatus;
use crate::proto::wqe::WrOpcode;
use crate::tests_wqe::{
    XorShift, ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD, ATOMIC_WRITE, BIND_MW, FLUSH, LOCAL_INV,
    RDMA_READ, RDMA_WRITE, RDMA_WRITE_WITH_IMM, SEND, SEND_WITH_IMM, SEND_WITH_INV,
};

#[test]
fn wc_values() {
    assert_eq!(WcStatus::Success.to_raw(), 0);
    assert_eq!(WcStatus::LocLenErr.to_raw(), 1);
    assert_eq!(WcStatus::LocQpOpErr.to_raw(), 2);
    assert_eq!(WcStatus::LocProtErr.to_raw(), 4);
    assert_eq!(WcStatus::WrFlushErr.to_raw(), 5);
    assert_eq!(WcStatus::RemInvReqErr.to_raw(), 9);
    assert_eq!(WcStatus::RetryExcErr.to_raw(), 12);
    assert_eq!(WcStatus::RnrRetryExcErr.to_raw(), 13);
    assert_eq!(WcStatus::GeneralErr.to_raw(), 21);
    // Every status is in ALL at its raw value, and from_raw knows exactly those.
    for (i, s) in WcStatus::ALL.iter().enumerate() {
        assert_eq!(s.to_raw(), i as u32);
    }
    for raw in 0..64 {
        assert_eq!(
            WcStatus::from_raw(raw).map(WcStatus::to_raw),
            (raw < 22).then_some(raw)
        );
    }
    let opcodes = [
        (WcOpcode::Send, 0),
        (WcOpcode::RdmaWrite, 1),
        (WcOpcode::RdmaRead, 2),
        (WcOpcode::CompSwap, 3),
        (WcOpcode::FetchAdd, 4),
        (WcOpcode::BindMw, 5),
        (WcOpcode::LocalInv, 6),
        (WcOpcode::Flush, 8),
        (WcOpcode::AtomicWrite, 9),
        (WcOpcode::RegMr, 10),
        (WcOpcode::Recv, 128),
        (WcOpcode::RecvRdmaWithImm, 129),
    ];
    for (op, raw) in opcodes {
        assert_eq!(op.to_raw(), raw);
        assert_eq!(WcOpcode::from_raw(raw), Some(op));
    }
    assert_eq!(WcOpcode::ALL.len(), opcodes.len());
    for raw in [7, 11, 12, 127, 130] {
        assert_eq!(WcOpcode::from_raw(raw), None);
    }
    assert_eq!(
        (WcFlags::GRH, WcFlags::WITH_IMM, WcFlags::WITH_INV),
        (1, 2, 8)
    );
}

#[test]
fn wc_opcode_for_send_completions() {
    let expect = [
        (RDMA_WRITE, 1),
        (RDMA_WRITE_WITH_IMM, 1),
        (SEND, 0),
        (SEND_WITH_IMM, 0),
        (RDMA_READ, 2),
        (ATOMIC_CMP_AND_SWP, 3),
        (ATOMIC_FETCH_AND_ADD, 4),
        (LOCAL_INV, 6),
        (BIND_MW, 5),
        (SEND_WITH_INV, 0),
        (FLUSH, 8),
        (ATOMIC_WRITE, 9),
    ];
    for (wr, wc) in expect {
        assert_eq!(
            wc_opcode_for(WrOpcode::from_raw(wr).unwrap()).to_raw(),
            wc,
            "{wr}"
        );
    }
    // A fast registration completes as the kernel's IB_WC_REG_MR, as in C rxe; no WQE parses
    // as one (IB_WR_REG_MR, 0x20, carries a kernel pointer).
    assert_eq!(wc_opcode_for(WrOpcode::RegMr).to_raw(), 10);
    assert_eq!(WrOpcode::from_raw(0x20), None);
}

#[test]
fn cqe_layout_and_round_trip() {
    let cqe = Cqe {
        wr_id: 0x0102_0304_0506_0708,
        status: WcStatus::WrFlushErr,
        opcode: WcOpcode::Recv,
        vendor_err: 0x1112_1314,
        byte_len: 0x2122_2324,
        ex: 0x3132_3334,
        qp_num: 0x0041_4243,
        src_qp: 0x0051_5253,
        wc_flags: WcFlags(WcFlags::GRH | WcFlags::WITH_IMM),
        pkey_index: 0x6162,
        slid: 0x7172,
        sl: 0x81,
        dlid_path_bits: 0x91,
        port_num: 1,
    };
    let expected: [u8; 48] = [
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, // wr_id
        5, 0, 0, 0, // status
        128, 0, 0, 0, // opcode
        0x14, 0x13, 0x12, 0x11, // vendor_err
        0x24, 0x23, 0x22, 0x21, // byte_len
        0x34, 0x33, 0x32, 0x31, // ex
        0x43, 0x42, 0x41, 0x00, // qp_num
        0x53, 0x52, 0x51, 0x00, // src_qp
        3, 0, 0, 0, // wc_flags
        0x62, 0x61, // pkey_index
        0x72, 0x71, // slid
        0x81, 0x91, 1, 0, // sl, dlid_path_bits, port_num, reserved
    ];
    assert_eq!(cqe.to_uverbs(), expected);
    assert_eq!(Cqe::from_uverbs(&expected), Some(cqe));
    // Any other bytes with a status and an opcode rrxe reports decode and encode back.
    let mut rng = XorShift(42);
    for _ in 0..1000 {
        let mut b = [0u8; 48];
        b.iter_mut().for_each(|x| *x = rng.next() as u8);
        b[47] = 0;
        b[8..12].copy_from_slice(&(rng.next() as u32 % 22).to_le_bytes());
        let op = WcOpcode::ALL[rng.next() as usize % WcOpcode::ALL.len()];
        b[12..16].copy_from_slice(&op.to_raw().to_le_bytes());
        assert_eq!(Cqe::from_uverbs(&b).map(Cqe::to_uverbs), Some(b));
    }
    // A status or an opcode it never reports does not decode.
    let mut b = expected;
    b[8] = 22;
    assert_eq!(Cqe::from_uverbs(&b), None);
    let mut b = expected;
    b[12] = 7;
    assert_eq!(Cqe::from_uverbs(&b), None);
    let c = Cqe::new(0, WcStatus::Success, WcOpcode::Send, 0);
    assert_eq!(c.to_uverbs(), [0; 48]);
}

#[test]
fn flush_completions() {
    let c = flush_cqe(77, 0x12, None);
    let expected = Cqe::new(77, WcStatus::WrFlushErr, WcOpcode::Send, 0x12);
    assert_eq!(c, expected);
    assert_eq!((c.byte_len, c.port_num, c.wc_flags), (0, 0, WcFlags(0)));
    assert_eq!(&c.to_uverbs()[8..16], &[5, 0, 0, 0, 0, 0, 0, 0]);
    let c = flush_cqe(78, 0x13, Some(WcOpcode::Recv));
    assert_eq!(
        (c.status, c.opcode, c.byte_len, c.wc_flags),
        (WcStatus::WrFlushErr, WcOpcode::Recv, 0, WcFlags(0))
    );
    let bytes = c.to_uverbs();
    assert_eq!(&bytes[8..16], &[5, 0, 0, 0, 128, 0, 0, 0]);
}

#[test]
fn wc_flags_translate_to_kernel_values() {
    assert_eq!(WcFlags(WcFlags::GRH | WcFlags::WITH_IMM).to_kernel(), 3);
    assert_eq!(WcFlags(WcFlags::WITH_INV).to_kernel(), 4);
    assert_eq!(WcFlags(0xffff_ffff).to_kernel(), 7);
    assert_eq!(WcFlags(0).to_kernel(), 0);
}

#[test]
fn received_completions() {
    let c = Cqe::received(7, WcOpcode::RecvRdmaWithImm, 4096, 0x11, 0x22).with_imm(0xa1b2_c3d4);
    assert_eq!(c.status, WcStatus::Success);
    assert_eq!(c.opcode, WcOpcode::RecvRdmaWithImm);
    assert_eq!(
        (c.wr_id, c.byte_len, c.qp_num, c.src_qp),
        (7, 4096, 0x11, 0x22)
    );
    assert_eq!(
        (c.ex, c.wc_flags.0, c.port_num),
        (0xa1b2_c3d4, WcFlags::WITH_IMM, 1)
    );
    let c = Cqe::received(8, WcOpcode::Recv, 0, 0x11, 0x22).with_inv(0x1234);
    assert_eq!((c.ex, c.wc_flags.0), (0x1234, WcFlags::WITH_INV));
    assert_eq!((c.pkey_index, c.slid, c.sl, c.vendor_err), (0, 0, 0, 0));
}
