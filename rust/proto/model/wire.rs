// SPDX-License-Identifier: GPL-2.0

//! The packets of a trace: base transport header and extension headers, read from hex.
//!
//! Written from IBA Vol 1 section 9.2 (Base Transport Header), 9.3 (extended transport headers)
//! and Annex A19 (FLUSH, ATOMIC WRITE), not from the driver's header code: an oracle must not
//! share the code it judges. Everything here is `core` only and never panics: the header bytes of
//! a fuzzer's trace are hostile (mangled packets are logged too).

use crate::proto::psn::Psn;

/// The transport service selected by an opcode's top three bits (IBA 9.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Service {
    /// Reliable connected, opcodes 0x00-0x1f.
    Rc,
    /// Unreliable connected, opcodes 0x20-0x3f.
    Uc,
    /// Any other service (UD, RD, CNP, manufacturer-specific).
    Other,
}

/// The operation of an RC or UC opcode (its low five bits, IBA table 35).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// SEND First.
    SendFirst,
    /// SEND Middle.
    SendMiddle,
    /// SEND Last.
    SendLast,
    /// SEND Last with Immediate.
    SendLastImm,
    /// SEND Only.
    SendOnly,
    /// SEND Only with Immediate.
    SendOnlyImm,
    /// RDMA WRITE First.
    WriteFirst,
    /// RDMA WRITE Middle.
    WriteMiddle,
    /// RDMA WRITE Last.
    WriteLast,
    /// RDMA WRITE Last with Immediate.
    WriteLastImm,
    /// RDMA WRITE Only.
    WriteOnly,
    /// RDMA WRITE Only with Immediate.
    WriteOnlyImm,
    /// RDMA READ Request.
    ReadRequest,
    /// RDMA READ Response First.
    ReadRespFirst,
    /// RDMA READ Response Middle.
    ReadRespMiddle,
    /// RDMA READ Response Last.
    ReadRespLast,
    /// RDMA READ Response Only.
    ReadRespOnly,
    /// Acknowledge (ACK, NAK or RNR NAK by its AETH).
    Ack,
    /// ATOMIC Acknowledge.
    AtomicAck,
    /// CmpSwap.
    CmpSwap,
    /// FetchAdd.
    FetchAdd,
    /// SEND Last with Invalidate.
    SendLastInv,
    /// SEND Only with Invalidate.
    SendOnlyInv,
    /// FLUSH (Annex A19).
    Flush,
    /// ATOMIC WRITE (Annex A19).
    AtomicWrite,
}

impl Op {
    /// Returns the operation of the low five bits of an RC opcode, if it is one RC defines.
    pub(crate) const fn from_low(low: u8) -> Option<Self> {
        Some(match low {
            0x00 => Self::SendFirst,
            0x01 => Self::SendMiddle,
            0x02 => Self::SendLast,
            0x03 => Self::SendLastImm,
            0x04 => Self::SendOnly,
            0x05 => Self::SendOnlyImm,
            0x06 => Self::WriteFirst,
            0x07 => Self::WriteMiddle,
            0x08 => Self::WriteLast,
            0x09 => Self::WriteLastImm,
            0x0a => Self::WriteOnly,
            0x0b => Self::WriteOnlyImm,
            0x0c => Self::ReadRequest,
            0x0d => Self::ReadRespFirst,
            0x0e => Self::ReadRespMiddle,
            0x0f => Self::ReadRespLast,
            0x10 => Self::ReadRespOnly,
            0x11 => Self::Ack,
            0x12 => Self::AtomicAck,
            0x13 => Self::CmpSwap,
            0x14 => Self::FetchAdd,
            0x16 => Self::SendLastInv,
            0x17 => Self::SendOnlyInv,
            0x1c => Self::Flush,
            0x1d => Self::AtomicWrite,
            _ => return None,
        })
    }

    /// Returns whether a responder sends this operation (a response), not a requester.
    pub(crate) const fn is_response(self) -> bool {
        matches!(
            self,
            Self::ReadRespFirst
                | Self::ReadRespMiddle
                | Self::ReadRespLast
                | Self::ReadRespOnly
                | Self::Ack
                | Self::AtomicAck
        )
    }

    /// Returns whether this is one of the RDMA READ response operations.
    pub(crate) const fn is_read_response(self) -> bool {
        matches!(
            self,
            Self::ReadRespFirst | Self::ReadRespMiddle | Self::ReadRespLast | Self::ReadRespOnly
        )
    }

    /// Returns whether this is a packet of a SEND message.
    pub(crate) const fn is_send(self) -> bool {
        matches!(
            self,
            Self::SendFirst
                | Self::SendMiddle
                | Self::SendLast
                | Self::SendLastImm
                | Self::SendOnly
                | Self::SendOnlyImm
                | Self::SendLastInv
                | Self::SendOnlyInv
        )
    }

    /// Returns whether this is a packet of an RDMA WRITE message.
    pub(crate) const fn is_write(self) -> bool {
        matches!(
            self,
            Self::WriteFirst
                | Self::WriteMiddle
                | Self::WriteLast
                | Self::WriteLastImm
                | Self::WriteOnly
                | Self::WriteOnlyImm
        )
    }

    /// Returns whether UC defines this operation (SEND and RDMA WRITE without invalidate).
    pub(crate) const fn in_uc(self) -> bool {
        self.is_write()
            || (self.is_send() && !matches!(self, Self::SendLastInv | Self::SendOnlyInv))
    }

    /// Returns the extension headers this operation carries, in wire order (IBA 9.3).
    const fn headers(self) -> Headers {
        let mut h = Headers::NONE;
        match self {
            Self::SendLastImm | Self::SendOnlyImm | Self::WriteLastImm => h.imm = true,
            Self::WriteFirst | Self::WriteOnly | Self::ReadRequest | Self::AtomicWrite => {
                h.reth = true
            }
            Self::WriteOnlyImm => {
                h.reth = true;
                h.imm = true;
            }
            Self::ReadRespFirst | Self::ReadRespLast | Self::ReadRespOnly | Self::Ack => {
                h.aeth = true
            }
            Self::AtomicAck => {
                h.aeth = true;
                h.atomic_ack = true;
            }
            Self::CmpSwap | Self::FetchAdd => h.atomic = true,
            Self::SendLastInv | Self::SendOnlyInv => h.ieth = true,
            Self::Flush => {
                h.feth = true;
                h.reth = true;
            }
            _ => {}
        }
        h
    }
}

/// Which extension headers follow the BTH.
#[derive(Clone, Copy)]
struct Headers {
    feth: bool,
    reth: bool,
    aeth: bool,
    atomic_ack: bool,
    atomic: bool,
    imm: bool,
    ieth: bool,
}

impl Headers {
    const NONE: Self = Self {
        feth: false,
        reth: false,
        aeth: false,
        atomic_ack: false,
        atomic: false,
        imm: false,
        ieth: false,
    };
}

/// What an AETH syndrome says (IBA 9.3.5, table 43).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Syndrome {
    /// Bits 6:5 = 00: a positive acknowledgement.
    Ack,
    /// Bits 6:5 = 01: receiver not ready.
    Rnr,
    /// Bits 6:5 = 11: a NAK with its code (0 sequence error, 1 invalid request, 2 remote access
    /// error, 3 remote operational error, 4 invalid RD request, others reserved).
    Nak(u8),
    /// Bits 6:5 = 10: reserved.
    Reserved,
}

impl Syndrome {
    /// Decodes an AETH syndrome byte.
    pub(crate) const fn of(byte: u8) -> Self {
        match (byte >> 5) & 3 {
            0 => Self::Ack,
            1 => Self::Rnr,
            3 => Self::Nak(byte & 0x1f),
            _ => Self::Reserved,
        }
    }

    /// Returns whether this syndrome is one a conformant responder may send: ACK, RNR NAK or a
    /// NAK with a defined code.
    pub(crate) const fn is_defined(self) -> bool {
        match self {
            Self::Ack | Self::Rnr => true,
            Self::Nak(code) => code <= 4,
            Self::Reserved => false,
        }
    }
}

/// A packet of a trace: its headers decoded, its payload known by length and hash only.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Packet {
    /// When the fuzzer sent or saw it, CLOCK_MONOTONIC nanoseconds.
    pub(crate) t: u64,
    /// The BTH opcode byte.
    pub(crate) opcode: u8,
    /// The transport service of the opcode.
    pub(crate) service: Service,
    /// The RC/UC operation, if the opcode is one of those this model knows.
    pub(crate) op: Option<Op>,
    /// The destination QP number.
    pub(crate) qpn: u32,
    /// The packet sequence number.
    pub(crate) psn: Psn,
    /// The AETH syndrome byte, if the packet carries an AETH.
    pub(crate) syndrome: Option<u8>,
    /// The immediate data (wire order read as big-endian), if any.
    pub(crate) imm: Option<u32>,
    /// The IETH's rkey, if any.
    pub(crate) ieth: Option<u32>,
    /// The AtomicAckETH's original value, if any.
    pub(crate) orig: Option<u64>,
    /// The RETH's DMA length, if the packet carries a RETH.
    pub(crate) reth_len: Option<u32>,
    /// Payload bytes, pad excluded.
    pub(crate) len: u32,
    /// FNV-1a-64 of the payload.
    pub(crate) hash: u64,
}

/// Why a packet's header could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HdrError {
    /// Not an even number of hex digits, or not hex at all.
    NotHex,
    /// Shorter than the BTH plus the extension headers its opcode calls for.
    Truncated,
}

/// The longest header this model reads: BTH (12) + AtomicETH (28).
const MAX_HDR: usize = 40;

/// Decodes up to [`MAX_HDR`] bytes of hex into `out`, returning how many it decoded.
fn unhex(hex: &str, out: &mut [u8; MAX_HDR]) -> Result<usize, HdrError> {
    let b = hex.as_bytes();
    if b.len() % 2 != 0 {
        return Err(HdrError::NotHex);
    }
    let mut n = 0;
    for pair in b.chunks_exact(2) {
        let hi = nibble(pair[0]).ok_or(HdrError::NotHex)?;
        let lo = nibble(pair[1]).ok_or(HdrError::NotHex)?;
        if n < MAX_HDR {
            out[n] = (hi << 4) | lo;
            n += 1;
        }
    }
    Ok(n)
}

/// The value of one hex digit.
const fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Reads a big-endian number of `N` bytes at `at`, or `None` past the end.
fn be<const N: usize>(b: &[u8], at: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(N)?)?;
    Some(s.iter().fold(0u64, |v, &x| (v << 8) | u64::from(x)))
}

/// Reads a big-endian 32-bit field.
fn be32(b: &[u8], at: usize) -> Option<u32> {
    be::<4>(b, at).and_then(|v| u32::try_from(v).ok())
}

impl Packet {
    /// Decodes a packet from the hex of its headers, its payload length and its payload hash.
    pub(crate) fn parse(t: u64, hex: &str, len: u32, hash: u64) -> Result<Self, HdrError> {
        let mut buf = [0u8; MAX_HDR];
        let n = unhex(hex, &mut buf)?;
        let b = &buf[..n];
        if b.len() < 12 {
            return Err(HdrError::Truncated);
        }
        let opcode = b[0];
        let service = match opcode >> 5 {
            0 => Service::Rc,
            1 => Service::Uc,
            _ => Service::Other,
        };
        let op = match service {
            Service::Rc => Op::from_low(opcode & 0x1f),
            Service::Uc => Op::from_low(opcode & 0x1f).filter(|o| o.in_uc()),
            Service::Other => None,
        };
        let qpn = be32(b, 4).ok_or(HdrError::Truncated)? & 0x00ff_ffff;
        let psn = Psn::new(be32(b, 8).ok_or(HdrError::Truncated)?);
        let mut p = Self {
            t,
            opcode,
            service,
            op,
            qpn,
            psn,
            syndrome: None,
            imm: None,
            ieth: None,
            orig: None,
            reth_len: None,
            len,
            hash,
        };
        let Some(o) = op else {
            return Ok(p);
        };
        let h = o.headers();
        let mut at = 12;
        if h.feth {
            at += 4;
        }
        if h.reth {
            p.reth_len = Some(be32(b, at + 12).ok_or(HdrError::Truncated)?);
            at += 16;
        }
        if h.aeth {
            p.syndrome = Some(*b.get(at).ok_or(HdrError::Truncated)?);
            at += 4;
        }
        if h.atomic_ack {
            p.orig = Some(be::<8>(b, at).ok_or(HdrError::Truncated)?);
            at += 8;
        }
        if h.atomic {
            at += 28;
        }
        if h.imm {
            p.imm = Some(be32(b, at).ok_or(HdrError::Truncated)?);
            at += 4;
        }
        if h.ieth {
            p.ieth = Some(be32(b, at).ok_or(HdrError::Truncated)?);
            at += 4;
        }
        if at > b.len() {
            return Err(HdrError::Truncated);
        }
        Ok(p)
    }

    /// Returns the AETH syndrome decoded, if the packet has an AETH.
    pub(crate) fn aeth(&self) -> Option<Syndrome> {
        self.syndrome.map(Syndrome::of)
    }

    /// Returns whether this is a response (READ response, ACK, atomic ACK) of the RC service.
    pub(crate) fn is_rc_response(&self) -> bool {
        self.service == Service::Rc && self.op.is_some_and(Op::is_response)
    }
}
