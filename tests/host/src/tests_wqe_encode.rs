// SPDX-License-Identifier: GPL-2.0

//! Tests of the kernel WQE encoders (`proto::wqe_encode`): what they write must parse back
//! through the parsers the requester and responder use, whatever the slot held before (the
//! encoders write a ring's slot in place and leave what lies past the data as it was).

use crate::proto::abi::RECV_WQE_HDR_LEN;
use crate::proto::abi::SEND_WQE_HDR_LEN;
use crate::proto::abi::SGE_LEN;
use crate::proto::qp_state::QpType;
use crate::proto::wqe::Payload;
use crate::proto::wqe::SendFlags;
use crate::proto::wqe::Sge;
use crate::proto::wqe::WqeError;
use crate::proto::wqe::WrDetail;
use crate::proto::wqe::WrOpcode;
use crate::proto::wqe_encode::encode_recv_wqe;
use crate::proto::wqe_encode::encode_reg_wqe;
use crate::proto::wqe_encode::encode_send_wqe;
use crate::proto::wqe_encode::parse_reg_wqe;
use crate::proto::wqe_encode::KernelSend;
use crate::proto::wqe_encode::RegWqe;
use crate::proto::wqe_encode::SendData;
use crate::proto::wqe_parse::parse_recv_wqe;
use crate::proto::wqe_parse::parse_send_wqe;

/// A send slot of a queue with 32 SGEs and 512 inline bytes.
const SLOT: usize = 1024;
/// What a stale slot holds before the encoder writes it.
const STALE: u8 = 0xa5;

const SGES: [Sge; 2] = [
    Sge {
        addr: 0x1000,
        length: 100,
        lkey: 0x1234_5601,
    },
    Sge {
        addr: 0xffff_8000_0000_2000,
        length: 28,
        lkey: 7,
    },
];

/// Two SGEs whose lengths overflow a `u32`.
const HUGE: [Sge; 2] = [
    Sge {
        addr: 0,
        length: u32::MAX,
        lkey: 0,
    },
    Sge {
        addr: 0,
        length: 1,
        lkey: 0,
    },
];

fn send(opcode: WrOpcode, detail: WrDetail, data: SendData<'_>) -> KernelSend<'_> {
    KernelSend {
        wr_id: 0x0123_4567_89ab_cdef,
        opcode,
        flags: SendFlags::SIGNALED | SendFlags::SOLICITED,
        ex: 0xfeed_f00d,
        remote_addr: 0x7f00_0000_1000,
        detail,
        data,
    }
}

/// Encodes `s` into a zeroed slot and into a stale one: the bytes up to `end` must be the
/// same (nothing stale shows through), the rest of the stale slot untouched. Returns the
/// stale slot.
fn encode_both(s: &KernelSend<'_>, end: usize) -> Vec<u8> {
    let mut clean = vec![0u8; SLOT];
    let mut stale = vec![STALE; SLOT];
    encode_send_wqe(&mut clean[..], s, 32, 512).unwrap();
    encode_send_wqe(&mut stale[..], s, 32, 512).unwrap();
    assert_eq!(clean[..end], stale[..end]);
    assert!(stale[end..].iter().all(|&b| b == STALE));
    stale
}

#[test]
fn kernel_send_wqes_parse_back_over_stale_slots() {
    let sges_end = SEND_WQE_HDR_LEN + 2 * SGE_LEN;
    let cases = [
        (
            QpType::Rc,
            WrOpcode::RdmaWriteWithImm,
            WrDetail::Rdma { rkey: 0x42 },
        ),
        (
            QpType::Rc,
            WrOpcode::RdmaRead,
            WrDetail::Rdma { rkey: 0x43 },
        ),
        (QpType::Rc, WrOpcode::Send, WrDetail::None),
        (
            QpType::Ud,
            WrOpcode::SendWithImm,
            WrDetail::Ud {
                remote_qpn: 0x00ab_cdef,
                remote_qkey: 0x1111_2222,
                pkey_index: 3,
                ah_num: 9,
            },
        ),
    ];
    for (qp, opcode, detail) in cases {
        let s = send(opcode, detail, SendData::Sges(&SGES));
        let slot = encode_both(&s, sges_end);
        let w = parse_send_wqe(&slot, qp, 32, 512).unwrap();
        assert_eq!(
            (w.wr_id, w.opcode, w.ex, w.detail),
            (s.wr_id, opcode, s.ex, detail)
        );
        assert_eq!(w.flags, SendFlags(s.flags));
        assert_eq!((w.length, w.num_sge), (128, 2));
        assert_eq!(w.sge(&slot, 0), Some(SGES[0]));
        assert_eq!(w.sge(&slot, 1), Some(SGES[1]));
        let iova = if matches!(detail, WrDetail::Rdma { .. }) {
            s.remote_addr
        } else {
            0
        };
        assert_eq!(w.iova, iova);
    }

    let atomic = WrDetail::Atomic {
        compare_add: 5,
        swap: 6,
        rkey: 0x44,
    };
    let s = send(
        WrOpcode::AtomicCmpAndSwp,
        atomic,
        SendData::Sges(&SGES[..1]),
    );
    let slot = encode_both(&s, SEND_WQE_HDR_LEN + SGE_LEN);
    let w = parse_send_wqe(&slot, QpType::Rc, 32, 512).unwrap();
    assert_eq!((w.detail, w.iova, w.num_sge), (atomic, s.remote_addr, 1));

    let bytes: Vec<u8> = (0..77u8).collect();
    let mut s = send(WrOpcode::Send, WrDetail::None, SendData::Inline(&bytes));
    s.flags |= SendFlags::INLINE;
    let slot = encode_both(&s, SEND_WQE_HDR_LEN + bytes.len());
    let w = parse_send_wqe(&slot, QpType::Rc, 32, 512).unwrap();
    assert_eq!((w.length, w.num_sge), (77, 0));
    assert_eq!(
        w.payload,
        Payload::Inline {
            start: SEND_WQE_HDR_LEN,
            len: 77
        }
    );
    assert_eq!(slot[w.payload.byte_range()], bytes[..]);
}

#[test]
fn kernel_send_wqes_that_do_not_fit_are_refused() {
    let mut slot = vec![STALE; SLOT];
    let s = send(WrOpcode::Send, WrDetail::None, SendData::Sges(&SGES));
    assert_eq!(
        encode_send_wqe(&mut slot[..], &s, 1, 512),
        Err(WqeError::TooManySge)
    );
    assert_eq!(
        encode_send_wqe(&mut slot[..SEND_WQE_HDR_LEN + SGE_LEN], &s, 32, 512),
        Err(WqeError::Truncated)
    );
    assert_eq!(
        encode_send_wqe(&mut slot[..SEND_WQE_HDR_LEN - 1], &s, 32, 512),
        Err(WqeError::Truncated)
    );
    let s = send(WrOpcode::Send, WrDetail::None, SendData::Sges(&HUGE));
    assert_eq!(
        encode_send_wqe(&mut slot[..], &s, 32, 512),
        Err(WqeError::LengthOverflow)
    );
    let bytes = [0u8; 65];
    let s = send(WrOpcode::Send, WrDetail::None, SendData::Inline(&bytes));
    assert_eq!(
        encode_send_wqe(&mut slot[..], &s, 32, 64),
        Err(WqeError::InlineTooLong)
    );
}

#[test]
fn fast_registrations_parse_back_over_stale_slots() {
    let r = RegWqe {
        wr_id: 77,
        flags: SendFlags::SIGNALED,
        mr_index: 12,
        key: 0x0c0d_0e0f,
        access: 7,
    };
    let mut slot = vec![STALE; SLOT];
    encode_reg_wqe(&mut slot[..], &r).unwrap();
    assert_eq!(parse_reg_wqe(&slot), Some(r));
    assert!(slot[SEND_WQE_HDR_LEN..].iter().all(|&b| b == STALE));
}

#[test]
fn kernel_recv_wqes_round_trip_through_the_parser() {
    let mut slot = vec![0xaau8; 128];
    encode_recv_wqe(&mut slot[..], 0xdead_beef, &SGES, 4).unwrap();
    let w = parse_recv_wqe(&slot, 4).unwrap();
    assert_eq!((w.wr_id, w.length, w.num_sge), (0xdead_beef, 128, 2));
    assert_eq!(w.sge(&slot, 1), Some(SGES[1]));
    assert!(slot[RECV_WQE_HDR_LEN + 2 * SGE_LEN..]
        .iter()
        .all(|&b| b == 0xaa));
    // Too many SGEs for the queue, a slot too small, lengths that overflow.
    assert_eq!(
        encode_recv_wqe(&mut slot[..], 1, &SGES, 1),
        Err(WqeError::TooManySge)
    );
    assert_eq!(
        encode_recv_wqe(&mut slot[..60], 1, &SGES, 4),
        Err(WqeError::Truncated)
    );
    assert_eq!(
        encode_recv_wqe(&mut slot[..], 1, &HUGE, 4),
        Err(WqeError::LengthOverflow)
    );
}
