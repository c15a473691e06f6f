// SPDX-License-Identifier: GPL-2.0

//! Layout of a whole RoCEv2 transport packet: headers, payload, pad and ICRC.
//!
//! The transport packet is everything the UDP datagram carries: the BTH, the extension headers
//! chosen by the opcode (see [`super::opcode`]), the payload, `BTH.pad` bytes of padding and the
//! 4-byte ICRC. [`parse_headers`] checks every length before it reads anything, so a malformed
//! packet yields an [`Error`] rather than an out-of-bounds access, and [`TransportHeaders::write`]
//! builds the header part of an outgoing packet.

use super::hdr::Aeth;
use super::hdr::AtomicAckEth;
use super::hdr::AtomicEth;
use super::hdr::Bth;
use super::hdr::Deth;
use super::hdr::Feth;
use super::hdr::Ieth;
use super::hdr::Immdt;
use super::hdr::Reth;
use super::hdr::ICRC_LEN;
use super::opcode::ExtHeader;
use super::opcode::OpcodeInfo;
use super::Error;

/// The BTH of a packet together with the extension headers its opcode carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TransportHeaders {
    /// The base transport header.
    pub(crate) bth: Bth,
    /// The RDMA extended transport header, if the opcode carries one.
    pub(crate) reth: Option<Reth>,
    /// The ACK extended transport header, if the opcode carries one.
    pub(crate) aeth: Option<Aeth>,
    /// The datagram extended transport header, if the opcode carries one.
    pub(crate) deth: Option<Deth>,
    /// The immediate data, if the opcode carries it.
    pub(crate) immdt: Option<Immdt>,
    /// The invalidate extended transport header, if the opcode carries one.
    pub(crate) ieth: Option<Ieth>,
    /// The atomic extended transport header, if the opcode carries one.
    pub(crate) atomic_eth: Option<AtomicEth>,
    /// The atomic acknowledge extended transport header, if the opcode carries one.
    pub(crate) atomic_ack_eth: Option<AtomicAckEth>,
    /// The flush extended transport header, if the opcode carries one.
    pub(crate) feth: Option<Feth>,
}

impl TransportHeaders {
    /// Creates a header set with `bth` and no extension headers filled in yet.
    pub(crate) const fn new(bth: Bth) -> Self {
        Self {
            bth,
            reth: None,
            aeth: None,
            deth: None,
            immdt: None,
            ieth: None,
            atomic_eth: None,
            atomic_ack_eth: None,
            feth: None,
        }
    }

    /// Writes the BTH and, in wire order, the extension headers that its opcode requires.
    ///
    /// Returns the number of bytes written, which is where the payload starts. Fails with
    /// [`Error::BadOpcode`] for an unimplemented opcode, [`Error::NoSpace`] if `buf` cannot hold
    /// all headers (nothing is written then) and [`Error::MissingHeader`] if a required extension
    /// header is `None`. Extension headers the opcode does not carry are ignored.
    pub(crate) fn write(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let info = self.bth.opcode.info().ok_or(Error::BadOpcode)?;
        let headers = buf.get_mut(..info.header_len).ok_or(Error::NoSpace)?;
        self.bth.write(headers)?;
        let mut offset = Bth::LEN;
        for &ext in info.ext_headers {
            let dst = headers.get_mut(offset..).ok_or(Error::NoSpace)?;
            match ext {
                ExtHeader::Reth => self.reth.ok_or(Error::MissingHeader)?.write(dst)?,
                ExtHeader::Aeth => self.aeth.ok_or(Error::MissingHeader)?.write(dst)?,
                ExtHeader::Deth => self.deth.ok_or(Error::MissingHeader)?.write(dst)?,
                ExtHeader::Immdt => self.immdt.ok_or(Error::MissingHeader)?.write(dst)?,
                ExtHeader::Ieth => self.ieth.ok_or(Error::MissingHeader)?.write(dst)?,
                ExtHeader::AtomicEth => self.atomic_eth.ok_or(Error::MissingHeader)?.write(dst)?,
                ExtHeader::AtomicAckEth => self
                    .atomic_ack_eth
                    .ok_or(Error::MissingHeader)?
                    .write(dst)?,
                ExtHeader::Feth => self.feth.ok_or(Error::MissingHeader)?.write(dst)?,
            }
            offset += ext.len();
        }
        Ok(offset)
    }
}

/// The result of [`parse_headers`]: the decoded headers and where the rest of the packet lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ParsedHeaders {
    /// The BTH and the extension headers of the packet's opcode.
    pub(crate) headers: TransportHeaders,
    /// The description of the packet's opcode.
    pub(crate) info: OpcodeInfo,
    /// Offset of the payload from the start of the BTH; equal to `info.header_len`.
    pub(crate) payload_offset: usize,
    /// Length of the payload, excluding the pad bytes and the ICRC.
    pub(crate) payload_len: usize,
    /// Offset of the 4-byte ICRC from the start of the BTH.
    pub(crate) icrc_offset: usize,
}

/// Parses the transport headers of the packet `pkt`, which runs from the BTH through the ICRC.
///
/// `pkt` must be exactly the UDP payload: its length decides where the ICRC is. The function
/// checks, in order, that the BTH is present with version zero ([`Error::Truncated`],
/// [`Error::BadVersion`]), that the opcode is implemented ([`Error::BadOpcode`]), that the packet
/// holds all headers plus the ICRC ([`Error::Truncated`]) and that the pad count fits between the
/// headers and the ICRC ([`Error::BadPad`]). The ICRC itself is not verified here.
pub(crate) fn parse_headers(pkt: &[u8]) -> Result<ParsedHeaders, Error> {
    let bth = Bth::parse(pkt)?;
    let info = bth.opcode.info().ok_or(Error::BadOpcode)?;
    let icrc_offset = pkt
        .len()
        .checked_sub(ICRC_LEN)
        .filter(|&at| at >= info.header_len)
        .ok_or(Error::Truncated)?;
    let payload_len = (icrc_offset - info.header_len)
        .checked_sub(usize::from(bth.pad))
        .ok_or(Error::BadPad)?;

    let mut headers = TransportHeaders::new(bth);
    let mut offset = Bth::LEN;
    for &ext in info.ext_headers {
        let src = pkt.get(offset..).ok_or(Error::Truncated)?;
        match ext {
            ExtHeader::Reth => headers.reth = Some(Reth::parse(src)?),
            ExtHeader::Aeth => headers.aeth = Some(Aeth::parse(src)?),
            ExtHeader::Deth => headers.deth = Some(Deth::parse(src)?),
            ExtHeader::Immdt => headers.immdt = Some(Immdt::parse(src)?),
            ExtHeader::Ieth => headers.ieth = Some(Ieth::parse(src)?),
            ExtHeader::AtomicEth => headers.atomic_eth = Some(AtomicEth::parse(src)?),
            ExtHeader::AtomicAckEth => headers.atomic_ack_eth = Some(AtomicAckEth::parse(src)?),
            ExtHeader::Feth => headers.feth = Some(Feth::parse(src)?),
        }
        offset += ext.len();
    }

    Ok(ParsedHeaders {
        headers,
        info,
        payload_offset: info.header_len,
        payload_len,
        icrc_offset,
    })
}

/// Returns how many pad bytes round a payload of `payload_len` bytes up to a multiple of four.
const fn pad_len(payload_len: usize) -> usize {
    payload_len.wrapping_neg() & 3
}

/// Returns the BTH pad count that rounds a payload of `payload_len` bytes up to four bytes.
pub(crate) const fn pad_for(payload_len: usize) -> u8 {
    // The value is below four, so keeping only the low byte loses nothing.
    pad_len(payload_len) as u8
}

/// Returns the length of a transport packet with opcode `info` and `payload_len` payload bytes.
///
/// The length covers the headers, the payload, the pad and the ICRC, which is what the UDP
/// datagram carries. Returns `None` if the sum overflows.
pub(crate) const fn packet_len(info: &OpcodeInfo, payload_len: usize) -> Option<usize> {
    match info.header_len.checked_add(payload_len) {
        Some(len) => len.checked_add(pad_len(payload_len) + ICRC_LEN),
        None => None,
    }
}

/// Returns the length of a RoCEv2 packet from its IP header through its ICRC, for a transport
/// packet of `transport_len` bytes sent over IPv6 (`ipv6`) or IPv4: what the port's byte
/// counters count (rxe's `sent_bytes`, IBA's PortXmitData and PortRcvData in octets).
pub(crate) const fn ip_packet_len(transport_len: usize, ipv6: bool) -> usize {
    let ip = if ipv6 {
        super::icrc::IPV6_HDR_LEN
    } else {
        super::icrc::IPV4_HDR_LEN
    };
    transport_len + super::icrc::UDP_HDR_LEN + ip
}
