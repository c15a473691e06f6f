// SPDX-License-Identifier: GPL-2.0

//! The InfiniBand transport opcodes this driver implements and what each one means.
//!
//! The top three bits of a BTH opcode select the transport service and the low five bits the
//! operation (IBA Vol 1 section 9.2.1, `include/rdma/ib_pack.h`). The driver implements the
//! reliable connected (RC), unreliable connected (UC) and unreliable datagram (UD) services,
//! including the FLUSH and ATOMIC WRITE extensions of IBA Annex A19. Reliable datagram (RD), CNP
//! and manufacturer-specific opcodes are not implemented, so [`info`] returns `None` for them and
//! for every other unassigned value; the receive path must drop such packets.

use super::hdr::Aeth;
use super::hdr::AtomicAckEth;
use super::hdr::AtomicEth;
use super::hdr::Bth;
use super::hdr::Deth;
use super::hdr::Feth;
use super::hdr::Ieth;
use super::hdr::Immdt;
use super::hdr::Reth;

/// A BTH opcode: any byte value, of which [`info`] describes the implemented ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Opcode(pub(crate) u8);

/// Bits of an opcode that select the operation within a transport service.
const OP_MASK: u8 = 0x1f;

/// Shift that moves the transport service bits of an opcode to the bottom.
const SERVICE_SHIFT: u32 = 5;

impl Opcode {
    /// RC SEND First.
    pub(crate) const RC_SEND_FIRST: Self = Self(0x00);
    /// RC SEND Middle.
    pub(crate) const RC_SEND_MIDDLE: Self = Self(0x01);
    /// RC SEND Last.
    pub(crate) const RC_SEND_LAST: Self = Self(0x02);
    /// RC SEND Last with Immediate.
    pub(crate) const RC_SEND_LAST_IMM: Self = Self(0x03);
    /// RC SEND Only.
    pub(crate) const RC_SEND_ONLY: Self = Self(0x04);
    /// RC SEND Only with Immediate.
    pub(crate) const RC_SEND_ONLY_IMM: Self = Self(0x05);
    /// RC RDMA WRITE First.
    pub(crate) const RC_WRITE_FIRST: Self = Self(0x06);
    /// RC RDMA WRITE Middle.
    pub(crate) const RC_WRITE_MIDDLE: Self = Self(0x07);
    /// RC RDMA WRITE Last.
    pub(crate) const RC_WRITE_LAST: Self = Self(0x08);
    /// RC RDMA WRITE Last with Immediate.
    pub(crate) const RC_WRITE_LAST_IMM: Self = Self(0x09);
    /// RC RDMA WRITE Only.
    pub(crate) const RC_WRITE_ONLY: Self = Self(0x0a);
    /// RC RDMA WRITE Only with Immediate.
    pub(crate) const RC_WRITE_ONLY_IMM: Self = Self(0x0b);
    /// RC RDMA READ Request.
    pub(crate) const RC_READ_REQUEST: Self = Self(0x0c);
    /// RC RDMA READ Response First.
    pub(crate) const RC_READ_RESPONSE_FIRST: Self = Self(0x0d);
    /// RC RDMA READ Response Middle.
    pub(crate) const RC_READ_RESPONSE_MIDDLE: Self = Self(0x0e);
    /// RC RDMA READ Response Last.
    pub(crate) const RC_READ_RESPONSE_LAST: Self = Self(0x0f);
    /// RC RDMA READ Response Only.
    pub(crate) const RC_READ_RESPONSE_ONLY: Self = Self(0x10);
    /// RC Acknowledge.
    pub(crate) const RC_ACK: Self = Self(0x11);
    /// RC ATOMIC Acknowledge.
    pub(crate) const RC_ATOMIC_ACK: Self = Self(0x12);
    /// RC CmpSwap.
    pub(crate) const RC_COMPARE_SWAP: Self = Self(0x13);
    /// RC FetchAdd.
    pub(crate) const RC_FETCH_ADD: Self = Self(0x14);
    /// RC SEND Last with Invalidate.
    pub(crate) const RC_SEND_LAST_INV: Self = Self(0x16);
    /// RC SEND Only with Invalidate.
    pub(crate) const RC_SEND_ONLY_INV: Self = Self(0x17);
    /// RC FLUSH.
    pub(crate) const RC_FLUSH: Self = Self(0x1c);
    /// RC ATOMIC WRITE.
    pub(crate) const RC_ATOMIC_WRITE: Self = Self(0x1d);
    /// UC SEND First.
    pub(crate) const UC_SEND_FIRST: Self = Self(0x20);
    /// UC SEND Middle.
    pub(crate) const UC_SEND_MIDDLE: Self = Self(0x21);
    /// UC SEND Last.
    pub(crate) const UC_SEND_LAST: Self = Self(0x22);
    /// UC SEND Last with Immediate.
    pub(crate) const UC_SEND_LAST_IMM: Self = Self(0x23);
    /// UC SEND Only.
    pub(crate) const UC_SEND_ONLY: Self = Self(0x24);
    /// UC SEND Only with Immediate.
    pub(crate) const UC_SEND_ONLY_IMM: Self = Self(0x25);
    /// UC RDMA WRITE First.
    pub(crate) const UC_WRITE_FIRST: Self = Self(0x26);
    /// UC RDMA WRITE Middle.
    pub(crate) const UC_WRITE_MIDDLE: Self = Self(0x27);
    /// UC RDMA WRITE Last.
    pub(crate) const UC_WRITE_LAST: Self = Self(0x28);
    /// UC RDMA WRITE Last with Immediate.
    pub(crate) const UC_WRITE_LAST_IMM: Self = Self(0x29);
    /// UC RDMA WRITE Only.
    pub(crate) const UC_WRITE_ONLY: Self = Self(0x2a);
    /// UC RDMA WRITE Only with Immediate.
    pub(crate) const UC_WRITE_ONLY_IMM: Self = Self(0x2b);
    /// UD SEND Only.
    pub(crate) const UD_SEND_ONLY: Self = Self(0x64);
    /// UD SEND Only with Immediate.
    pub(crate) const UD_SEND_ONLY_IMM: Self = Self(0x65);

    /// Describes this opcode, or returns `None` if the driver does not implement it.
    pub(crate) const fn info(self) -> Option<OpcodeInfo> {
        info(self)
    }
}

/// The transport service of an opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Service {
    /// Reliable connected.
    Rc,
    /// Unreliable connected.
    Uc,
    /// Unreliable datagram.
    Ud,
}

/// The operation an opcode performs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpKind {
    /// SEND, consuming a receive WQE at the responder.
    Send,
    /// RDMA WRITE into responder memory.
    Write,
    /// RDMA READ request.
    ReadRequest,
    /// RDMA READ response carrying the data read.
    ReadResponse,
    /// Acknowledgement (ACK, NAK or RNR NAK).
    Ack,
    /// Acknowledgement of an atomic operation, carrying the original value.
    AtomicAck,
    /// Atomic compare-and-swap request.
    CompareSwap,
    /// Atomic fetch-and-add request.
    FetchAdd,
    /// FLUSH request making prior writes visible or persistent.
    Flush,
    /// ATOMIC WRITE request storing an 8-byte payload atomically.
    AtomicWrite,
}

/// Where a packet lies within its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Position {
    /// The first packet of a message with more to follow.
    First,
    /// A packet that neither starts nor ends its message.
    Middle,
    /// The last packet of a message that started earlier.
    Last,
    /// The single packet of a one-packet message.
    Only,
}

impl Position {
    /// Returns whether a packet at this position starts a message.
    pub(crate) const fn starts_message(self) -> bool {
        matches!(self, Self::First | Self::Only)
    }

    /// Returns whether a packet at this position ends a message.
    pub(crate) const fn ends_message(self) -> bool {
        matches!(self, Self::Last | Self::Only)
    }
}

/// An extension header that may follow the BTH.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ExtHeader {
    /// RDMA extended transport header ([`Reth`]).
    Reth,
    /// ACK extended transport header ([`Aeth`]).
    Aeth,
    /// Datagram extended transport header ([`Deth`]).
    Deth,
    /// Immediate data ([`Immdt`]).
    Immdt,
    /// Invalidate extended transport header ([`Ieth`]).
    Ieth,
    /// Atomic extended transport header ([`AtomicEth`]).
    AtomicEth,
    /// Atomic acknowledge extended transport header ([`AtomicAckEth`]).
    AtomicAckEth,
    /// Flush extended transport header ([`Feth`]).
    Feth,
}

impl ExtHeader {
    /// Returns the length in bytes of this header on the wire.
    pub(crate) const fn len(self) -> usize {
        match self {
            Self::Reth => Reth::LEN,
            Self::Aeth => Aeth::LEN,
            Self::Deth => Deth::LEN,
            Self::Immdt => Immdt::LEN,
            Self::Ieth => Ieth::LEN,
            Self::AtomicEth => AtomicEth::LEN,
            Self::AtomicAckEth => AtomicAckEth::LEN,
            Self::Feth => Feth::LEN,
        }
    }
}

/// What the driver needs to know about one implemented opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OpcodeInfo {
    /// The transport service.
    pub(crate) service: Service,
    /// The operation.
    pub(crate) kind: OpKind,
    /// The position of the packet within its message.
    pub(crate) position: Position,
    /// The extension headers that follow the BTH, in wire order.
    pub(crate) ext_headers: &'static [ExtHeader],
    /// Length of the BTH and all extension headers, which is where the payload starts.
    pub(crate) header_len: usize,
    /// Whether the packet carries a payload after its headers.
    pub(crate) has_payload: bool,
    /// Whether the packet travels from requester to responder.
    pub(crate) is_request: bool,
    /// Whether the responder answers the request with an acknowledgement or response (RC only).
    pub(crate) is_acknowledged: bool,
    /// Whether the responder consumes a receive WQE when the packet arrives.
    pub(crate) consumes_recv_wqe: bool,
    /// Whether the packet completes a receive WQE at the responder.
    pub(crate) completes_recv_wqe: bool,
}

impl OpcodeInfo {
    /// Builds the description of an opcode from the facts that determine all the others.
    const fn new(
        service: Service,
        kind: OpKind,
        position: Position,
        ext_headers: &'static [ExtHeader],
    ) -> Self {
        let mut header_len = Bth::LEN;
        let mut has_immediate = false;
        let mut i = 0;
        while i < ext_headers.len() {
            header_len += ext_headers[i].len();
            has_immediate |= matches!(ext_headers[i], ExtHeader::Immdt);
            i += 1;
        }
        let has_payload = matches!(
            kind,
            OpKind::Send | OpKind::Write | OpKind::ReadResponse | OpKind::AtomicWrite
        );
        let is_request = !matches!(kind, OpKind::ReadResponse | OpKind::Ack | OpKind::AtomicAck);
        let (consumes_recv_wqe, completes_recv_wqe) = match kind {
            OpKind::Send => (position.starts_message(), position.ends_message()),
            OpKind::Write => (has_immediate, has_immediate),
            _ => (false, false),
        };
        Self {
            service,
            kind,
            position,
            ext_headers,
            header_len,
            has_payload,
            is_request,
            is_acknowledged: is_request && matches!(service, Service::Rc),
            consumes_recv_wqe,
            completes_recv_wqe,
        }
    }

    /// Returns whether the packet travels from responder to requester.
    pub(crate) const fn is_response(&self) -> bool {
        !self.is_request
    }

    /// Returns the offset of extension header `hdr` from the start of the BTH, if present.
    pub(crate) const fn ext_offset(&self, hdr: ExtHeader) -> Option<usize> {
        let mut offset = Bth::LEN;
        let mut i = 0;
        while i < self.ext_headers.len() {
            // Comparing discriminants keeps this usable in constant expressions.
            if self.ext_headers[i] as u8 == hdr as u8 {
                return Some(offset);
            }
            offset += self.ext_headers[i].len();
            i += 1;
        }
        None
    }

    /// Returns whether the packet carries extension header `hdr`.
    pub(crate) const fn has_ext(&self, hdr: ExtHeader) -> bool {
        self.ext_offset(hdr).is_some()
    }
}

/// No extension headers.
const EXT_NONE: &[ExtHeader] = &[];
/// Immediate data only.
const EXT_IMMDT: &[ExtHeader] = &[ExtHeader::Immdt];
/// Invalidate header only.
const EXT_IETH: &[ExtHeader] = &[ExtHeader::Ieth];
/// RDMA header only.
const EXT_RETH: &[ExtHeader] = &[ExtHeader::Reth];
/// RDMA header followed by immediate data.
const EXT_RETH_IMMDT: &[ExtHeader] = &[ExtHeader::Reth, ExtHeader::Immdt];
/// ACK header only.
const EXT_AETH: &[ExtHeader] = &[ExtHeader::Aeth];
/// ACK header followed by the atomic acknowledge header.
const EXT_AETH_ATOMIC_ACK: &[ExtHeader] = &[ExtHeader::Aeth, ExtHeader::AtomicAckEth];
/// Atomic header only.
const EXT_ATOMIC: &[ExtHeader] = &[ExtHeader::AtomicEth];
/// Flush header followed by the RDMA header.
const EXT_FETH_RETH: &[ExtHeader] = &[ExtHeader::Feth, ExtHeader::Reth];
/// Datagram header only.
const EXT_DETH: &[ExtHeader] = &[ExtHeader::Deth];
/// Datagram header followed by immediate data.
const EXT_DETH_IMMDT: &[ExtHeader] = &[ExtHeader::Deth, ExtHeader::Immdt];

/// Describes `op`, or returns `None` if the driver does not implement it.
pub(crate) const fn info(op: Opcode) -> Option<OpcodeInfo> {
    let service = match op.0 >> SERVICE_SHIFT {
        0 => Service::Rc,
        1 => Service::Uc,
        3 => Service::Ud,
        _ => return None,
    };
    let (kind, position, ext) = match (service, op.0 & OP_MASK) {
        (Service::Ud, 0x04) => (OpKind::Send, Position::Only, EXT_DETH),
        (Service::Ud, 0x05) => (OpKind::Send, Position::Only, EXT_DETH_IMMDT),
        (Service::Ud, _) => return None,
        (_, 0x00) => (OpKind::Send, Position::First, EXT_NONE),
        (_, 0x01) => (OpKind::Send, Position::Middle, EXT_NONE),
        (_, 0x02) => (OpKind::Send, Position::Last, EXT_NONE),
        (_, 0x03) => (OpKind::Send, Position::Last, EXT_IMMDT),
        (_, 0x04) => (OpKind::Send, Position::Only, EXT_NONE),
        (_, 0x05) => (OpKind::Send, Position::Only, EXT_IMMDT),
        (_, 0x06) => (OpKind::Write, Position::First, EXT_RETH),
        (_, 0x07) => (OpKind::Write, Position::Middle, EXT_NONE),
        (_, 0x08) => (OpKind::Write, Position::Last, EXT_NONE),
        (_, 0x09) => (OpKind::Write, Position::Last, EXT_IMMDT),
        (_, 0x0a) => (OpKind::Write, Position::Only, EXT_RETH),
        (_, 0x0b) => (OpKind::Write, Position::Only, EXT_RETH_IMMDT),
        (Service::Uc, _) => return None,
        (Service::Rc, 0x0c) => (OpKind::ReadRequest, Position::Only, EXT_RETH),
        (Service::Rc, 0x0d) => (OpKind::ReadResponse, Position::First, EXT_AETH),
        (Service::Rc, 0x0e) => (OpKind::ReadResponse, Position::Middle, EXT_NONE),
        (Service::Rc, 0x0f) => (OpKind::ReadResponse, Position::Last, EXT_AETH),
        (Service::Rc, 0x10) => (OpKind::ReadResponse, Position::Only, EXT_AETH),
        (Service::Rc, 0x11) => (OpKind::Ack, Position::Only, EXT_AETH),
        (Service::Rc, 0x12) => (OpKind::AtomicAck, Position::Only, EXT_AETH_ATOMIC_ACK),
        (Service::Rc, 0x13) => (OpKind::CompareSwap, Position::Only, EXT_ATOMIC),
        (Service::Rc, 0x14) => (OpKind::FetchAdd, Position::Only, EXT_ATOMIC),
        (Service::Rc, 0x16) => (OpKind::Send, Position::Last, EXT_IETH),
        (Service::Rc, 0x17) => (OpKind::Send, Position::Only, EXT_IETH),
        (Service::Rc, 0x1c) => (OpKind::Flush, Position::Only, EXT_FETH_RETH),
        (Service::Rc, 0x1d) => (OpKind::AtomicWrite, Position::Only, EXT_RETH),
        (Service::Rc, _) => return None,
    };
    Some(OpcodeInfo::new(service, kind, position, ext))
}
