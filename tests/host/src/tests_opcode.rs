// SPDX-License-Identifier: GPL-2.0

//! Tests of the opcode table in `proto::opcode`.
//!
//! [`EXPECTED`] is transcribed by hand from the header masks, lengths and flag masks of the C
//! driver's `rxe_opcode[]` table (`rxe_opcode.c`), so the derived fields of `OpcodeInfo` are
//! checked against an independent source rather than against themselves.

use crate::proto::opcode::info;
use crate::proto::opcode::ExtHeader;
use crate::proto::opcode::OpKind;
use crate::proto::opcode::Opcode;
use crate::proto::opcode::Position;
use crate::proto::opcode::Service;

use ExtHeader::Aeth as AETH;
/// Shorthand for the extension headers in the table.
use ExtHeader::AtomicAckEth as ATMACK;
use ExtHeader::AtomicEth as ATMETH;
use ExtHeader::Deth as DETH;
use ExtHeader::Feth as FETH;
use ExtHeader::Ieth as IETH;
use ExtHeader::Immdt as IMMDT;
use ExtHeader::Reth as RETH;

/// One row of the C driver's table: the opcode, its extension headers in wire order, the total
/// header length and the payload, request, receive-WQE, completion, start and end masks.
pub(crate) struct Expected {
    /// The opcode.
    pub(crate) op: u8,
    /// The extension headers in wire order.
    pub(crate) ext: &'static [ExtHeader],
    /// The length of the BTH and the extension headers.
    pub(crate) len: usize,
    /// Whether the packet carries a payload.
    pub(crate) payload: bool,
    /// Whether the packet is a request.
    pub(crate) req: bool,
    /// Whether the packet consumes a receive WQE.
    pub(crate) rwr: bool,
    /// Whether the packet completes a receive WQE.
    pub(crate) comp: bool,
    /// Whether the packet starts a message.
    pub(crate) start: bool,
    /// Whether the packet ends a message.
    pub(crate) end: bool,
}

/// Builds an [`Expected`] row.
const fn row(
    op: u8,
    ext: &'static [ExtHeader],
    len: usize,
    flags: (bool, bool, bool, bool, bool, bool),
) -> Expected {
    let (payload, req, rwr, comp, start, end) = flags;
    Expected {
        op,
        ext,
        len,
        payload,
        req,
        rwr,
        comp,
        start,
        end,
    }
}

/// Short for `true` in the table.
const T: bool = true;
/// Short for `false` in the table.
const F: bool = false;

/// Every opcode of the C driver's table except the RD ones, which this driver does not implement.
/// Flags: (payload, request, consumes receive WQE, completes, start, end).
pub(crate) const EXPECTED: &[Expected] = &[
    row(0x00, &[], 12, (T, T, T, F, T, F)),
    row(0x01, &[], 12, (T, T, F, F, F, F)),
    row(0x02, &[], 12, (T, T, F, T, F, T)),
    row(0x03, &[IMMDT], 16, (T, T, F, T, F, T)),
    row(0x04, &[], 12, (T, T, T, T, T, T)),
    row(0x05, &[IMMDT], 16, (T, T, T, T, T, T)),
    row(0x06, &[RETH], 28, (T, T, F, F, T, F)),
    row(0x07, &[], 12, (T, T, F, F, F, F)),
    row(0x08, &[], 12, (T, T, F, F, F, T)),
    row(0x09, &[IMMDT], 16, (T, T, T, T, F, T)),
    row(0x0a, &[RETH], 28, (T, T, F, F, T, T)),
    row(0x0b, &[RETH, IMMDT], 32, (T, T, T, T, T, T)),
    row(0x0c, &[RETH], 28, (F, T, F, F, T, T)),
    row(0x0d, &[AETH], 16, (T, F, F, F, T, F)),
    row(0x0e, &[], 12, (T, F, F, F, F, F)),
    row(0x0f, &[AETH], 16, (T, F, F, F, F, T)),
    row(0x10, &[AETH], 16, (T, F, F, F, T, T)),
    row(0x11, &[AETH], 16, (F, F, F, F, T, T)),
    row(0x12, &[AETH, ATMACK], 24, (F, F, F, F, T, T)),
    row(0x13, &[ATMETH], 40, (F, T, F, F, T, T)),
    row(0x14, &[ATMETH], 40, (F, T, F, F, T, T)),
    row(0x16, &[IETH], 16, (T, T, F, T, F, T)),
    row(0x17, &[IETH], 16, (T, T, T, T, T, T)),
    row(0x1c, &[FETH, RETH], 32, (F, T, F, F, T, T)),
    row(0x1d, &[RETH], 28, (T, T, F, F, T, T)),
    row(0x20, &[], 12, (T, T, T, F, T, F)),
    row(0x21, &[], 12, (T, T, F, F, F, F)),
    row(0x22, &[], 12, (T, T, F, T, F, T)),
    row(0x23, &[IMMDT], 16, (T, T, F, T, F, T)),
    row(0x24, &[], 12, (T, T, T, T, T, T)),
    row(0x25, &[IMMDT], 16, (T, T, T, T, T, T)),
    row(0x26, &[RETH], 28, (T, T, F, F, T, F)),
    row(0x27, &[], 12, (T, T, F, F, F, F)),
    row(0x28, &[], 12, (T, T, F, F, F, T)),
    row(0x29, &[IMMDT], 16, (T, T, T, T, F, T)),
    row(0x2a, &[RETH], 28, (T, T, F, F, T, T)),
    row(0x2b, &[RETH, IMMDT], 32, (T, T, T, T, T, T)),
    row(0x64, &[DETH], 20, (T, T, T, T, T, T)),
    row(0x65, &[DETH, IMMDT], 24, (T, T, T, T, T, T)),
];

#[test]
fn table_matches_the_c_driver() {
    for e in EXPECTED {
        let i = info(Opcode(e.op)).unwrap_or_else(|| panic!("opcode {:#04x} missing", e.op));
        let name = format!("opcode {:#04x}", e.op);
        assert_eq!(i.ext_headers, e.ext, "{name}");
        assert_eq!(i.header_len, e.len, "{name}");
        assert_eq!(i.has_payload, e.payload, "{name}");
        assert_eq!(i.is_request, e.req, "{name}");
        assert_eq!(i.is_response(), !e.req, "{name}");
        assert_eq!(i.consumes_recv_wqe, e.rwr, "{name}");
        assert_eq!(i.completes_recv_wqe, e.comp, "{name}");
        assert_eq!(i.position.starts_message(), e.start, "{name}");
        assert_eq!(i.position.ends_message(), e.end, "{name}");
        assert_eq!(Opcode(e.op).info(), Some(i), "{name}");
    }
}

#[test]
fn exactly_the_expected_opcodes_are_supported() {
    let supported: Vec<u8> = (0..=255_u8)
        .filter(|&op| info(Opcode(op)).is_some())
        .collect();
    let expected: Vec<u8> = EXPECTED.iter().map(|e| e.op).collect();
    assert_eq!(supported, expected);
    assert_eq!(supported.len(), 39);
}

#[test]
fn rd_cnp_and_reserved_opcodes_are_rejected() {
    for op in 0x40..=0x5f_u8 {
        assert_eq!(info(Opcode(op)), None, "RD opcode {op:#04x}");
    }
    for op in [
        0x15, 0x18, 0x19, 0x1a, 0x1b, 0x1e, 0x1f, 0x2c, 0x36, 0x60, 0x66, 0x81, 0xe0,
    ] {
        assert_eq!(info(Opcode(op)), None, "opcode {op:#04x}");
    }
}

#[test]
fn services_follow_the_top_three_bits() {
    for e in EXPECTED {
        let expected = match e.op >> 5 {
            0 => Service::Rc,
            1 => Service::Uc,
            3 => Service::Ud,
            _ => unreachable!(),
        };
        assert_eq!(info(Opcode(e.op)).unwrap().service, expected);
    }
}

#[test]
fn named_constants_have_the_ib_pack_values() {
    let named = [
        (Opcode::RC_SEND_FIRST, 0x00),
        (Opcode::RC_SEND_ONLY_IMM, 0x05),
        (Opcode::RC_WRITE_FIRST, 0x06),
        (Opcode::RC_WRITE_ONLY_IMM, 0x0b),
        (Opcode::RC_READ_REQUEST, 0x0c),
        (Opcode::RC_READ_RESPONSE_FIRST, 0x0d),
        (Opcode::RC_READ_RESPONSE_ONLY, 0x10),
        (Opcode::RC_ACK, 0x11),
        (Opcode::RC_ATOMIC_ACK, 0x12),
        (Opcode::RC_COMPARE_SWAP, 0x13),
        (Opcode::RC_FETCH_ADD, 0x14),
        (Opcode::RC_SEND_LAST_INV, 0x16),
        (Opcode::RC_SEND_ONLY_INV, 0x17),
        (Opcode::RC_FLUSH, 0x1c),
        (Opcode::RC_ATOMIC_WRITE, 0x1d),
        (Opcode::UC_SEND_FIRST, 0x20),
        (Opcode::UC_WRITE_ONLY_IMM, 0x2b),
        (Opcode::UD_SEND_ONLY, 0x64),
        (Opcode::UD_SEND_ONLY_IMM, 0x65),
    ];
    for (op, value) in named {
        assert_eq!(op.0, value);
    }
}

#[test]
fn kinds_and_positions() {
    let check = |op: Opcode, kind, position| {
        let i = op.info().unwrap();
        assert_eq!((i.kind, i.position), (kind, position), "{op:?}");
    };
    check(Opcode::RC_SEND_MIDDLE, OpKind::Send, Position::Middle);
    check(Opcode::UC_WRITE_LAST_IMM, OpKind::Write, Position::Last);
    check(Opcode::RC_READ_REQUEST, OpKind::ReadRequest, Position::Only);
    check(
        Opcode::RC_READ_RESPONSE_FIRST,
        OpKind::ReadResponse,
        Position::First,
    );
    check(Opcode::RC_ACK, OpKind::Ack, Position::Only);
    check(Opcode::RC_ATOMIC_ACK, OpKind::AtomicAck, Position::Only);
    check(Opcode::RC_COMPARE_SWAP, OpKind::CompareSwap, Position::Only);
    check(Opcode::RC_FETCH_ADD, OpKind::FetchAdd, Position::Only);
    check(Opcode::RC_FLUSH, OpKind::Flush, Position::Only);
    check(Opcode::RC_ATOMIC_WRITE, OpKind::AtomicWrite, Position::Only);
    check(Opcode::UD_SEND_ONLY_IMM, OpKind::Send, Position::Only);
}

#[test]
fn only_rc_requests_are_acknowledged() {
    for e in EXPECTED {
        let i = info(Opcode(e.op)).unwrap();
        let expected = e.req && e.op < 0x20;
        assert_eq!(i.is_acknowledged, expected, "opcode {:#04x}", e.op);
    }
}

#[test]
fn extension_header_offsets() {
    let flush = Opcode::RC_FLUSH.info().unwrap();
    assert_eq!(flush.ext_offset(ExtHeader::Feth), Some(12));
    assert_eq!(flush.ext_offset(ExtHeader::Reth), Some(16));
    assert_eq!(flush.ext_offset(ExtHeader::Aeth), None);

    let write_imm = Opcode::UC_WRITE_ONLY_IMM.info().unwrap();
    assert_eq!(write_imm.ext_offset(ExtHeader::Reth), Some(12));
    assert_eq!(write_imm.ext_offset(ExtHeader::Immdt), Some(28));
    assert!(write_imm.has_ext(ExtHeader::Immdt));
    assert!(!write_imm.has_ext(ExtHeader::Ieth));

    let atomic_ack = Opcode::RC_ATOMIC_ACK.info().unwrap();
    assert_eq!(atomic_ack.ext_offset(ExtHeader::Aeth), Some(12));
    assert_eq!(atomic_ack.ext_offset(ExtHeader::AtomicAckEth), Some(16));

    let ud = Opcode::UD_SEND_ONLY_IMM.info().unwrap();
    assert_eq!(ud.ext_offset(ExtHeader::Deth), Some(12));
    assert_eq!(ud.ext_offset(ExtHeader::Immdt), Some(20));
}

#[test]
fn table_is_usable_in_constants() {
    const HEADER_LEN: usize = match info(Opcode::RC_COMPARE_SWAP) {
        Some(i) => i.header_len,
        None => 0,
    };
    assert_eq!(HEADER_LEN, 40);
}
