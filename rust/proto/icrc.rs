// SPDX-License-Identifier: GPL-2.0

//! The RoCEv2 invariant CRC (IBA Vol 1 section 7.8.1 and Annex A17.8).
//!
//! The ICRC is the IEEE 802.3 CRC-32 (reflected polynomial `0xEDB88320`, initial value all ones,
//! final inversion; the same function as zlib's `crc32`) computed over:
//!
//! 1. eight `0xFF` bytes standing for the InfiniBand local route header, which RoCEv2 lacks;
//! 2. the 20-byte IPv4 header with the type of service, time to live and header checksum set to
//!    all ones, or the 40-byte IPv6 header with the traffic class, flow label and hop limit set to
//!    all ones (the version nibble is kept);
//! 3. the 8-byte UDP header with the checksum set to all ones;
//! 4. the transport packet from the BTH through the pad, with BTH byte 4 (FECN, BECN and the six
//!    reserved bits before the destination QPN) set to all ones, excluding the ICRC itself.
//!
//! Everything else, including IP lengths, addresses, UDP ports and the IPv4 identification, is
//! covered as sent, so the ICRC must be computed after those fields have their final values.
//!
//! # Byte order on the wire
//!
//! The functions here return the CRC as a number: the value zlib's `crc32` would return. On the
//! wire the four ICRC bytes are that number in little-endian order, least significant byte
//! first ([`icrc_to_wire`]). The C driver stores the `crc32_le` result through a `__be32` pointer
//! without a byte swap, which on little-endian hosts yields the same bytes; RoCEv2 hardware
//! (a ConnectX-4 Lx capture is among the host tests) uses this order too.

use super::hdr::ICRC_LEN;
use super::Error;

/// Length of an IPv4 header without options.
pub(crate) const IPV4_HDR_LEN: usize = 20;

/// Length of an IPv6 header.
pub(crate) const IPV6_HDR_LEN: usize = 40;

/// Length of a UDP header.
pub(crate) const UDP_HDR_LEN: usize = 8;

/// The IEEE 802.3 CRC-32 polynomial in reflected (least significant bit first) form.
const CRC32_POLY: u32 = 0xedb8_8320;

/// The CRC-32 remainder of every byte value, for byte-at-a-time computation.
const CRC32_TABLE: [u32; 256] = crc32_table();

/// Offset within the transport packet of the BTH byte that the ICRC treats as all ones.
const BTH_MASKED_BYTE: usize = 4;

/// The CRC-32 register after the eight all-ones bytes that stand for the local route header.
const LRH_SEED: u32 = crc32_feed(!0, &[0xff; 8]);

/// Builds [`CRC32_TABLE`].
const fn crc32_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut byte = 0;
    while byte < table.len() {
        let mut rem = byte as u32;
        let mut bit = 0;
        while bit < 8 {
            rem = if rem & 1 != 0 {
                (rem >> 1) ^ CRC32_POLY
            } else {
                rem >> 1
            };
            bit += 1;
        }
        table[byte] = rem;
        byte += 1;
    }
    table
}

/// Advances the CRC-32 register `reg` over `data`, without the initial or final inversion.
const fn crc32_feed(mut reg: u32, data: &[u8]) -> u32 {
    let mut i = 0;
    while i < data.len() {
        let index = (reg.to_le_bytes()[0] ^ data[i]) as usize;
        reg = CRC32_TABLE[index] ^ (reg >> 8);
        i += 1;
    }
    reg
}

/// How bytes are folded into a CRC-32 register (no inversion at either end): the byte table
/// here, which the host tests use as the reference, or an accelerated implementation of the
/// same function (the kernel's `crc32_le`, which folds with carry-less multiplication).
pub(crate) trait Crc32Engine {
    /// Advances the register `reg` over `data`.
    fn feed(reg: u32, data: &[u8]) -> u32;
}

/// The byte-at-a-time table CRC-32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TableCrc32;

impl Crc32Engine for TableCrc32 {
    fn feed(reg: u32, data: &[u8]) -> u32 {
        crc32_feed(reg, data)
    }
}

/// An incremental IEEE 802.3 CRC-32, for data that arrives in several pieces, computed by `E`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Crc32With<E: Crc32Engine> {
    /// The CRC register: all ones initially, not yet inverted.
    reg: u32,
    _engine: core::marker::PhantomData<E>,
}

/// The CRC-32 computed by the table.
pub(crate) type Crc32 = Crc32With<TableCrc32>;

impl<E: Crc32Engine> Crc32With<E> {
    /// Starts a CRC-32 computation.
    pub(crate) const fn new() -> Self {
        Self::from_register(!0)
    }

    /// Continues a computation from the raw register `reg`.
    const fn from_register(reg: u32) -> Self {
        Self {
            reg,
            _engine: core::marker::PhantomData,
        }
    }

    /// Feeds `data` into the computation.
    pub(crate) fn update(&mut self, data: &[u8]) {
        self.reg = E::feed(self.reg, data);
    }

    /// Returns the CRC-32 of all data fed so far; the computation may continue afterwards.
    pub(crate) const fn finish(&self) -> u32 {
        !self.reg
    }

    /// Returns the raw register, which is what the C driver's `crc32_le` passes between calls.
    pub(crate) const fn register(&self) -> u32 {
        self.reg
    }
}

impl<E: Crc32Engine> Default for Crc32With<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// Returns the IEEE 802.3 CRC-32 of `data`.
pub(crate) fn crc32(data: &[u8]) -> u32 {
    let mut crc = Crc32::new();
    crc.update(data);
    crc.finish()
}

/// An incremental ICRC computation over a packet whose transport part is scattered in pieces,
/// with the CRC-32 computed by `E`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IcrcWith<E: Crc32Engine> {
    /// The CRC over the masked headers and the transport bytes fed so far.
    crc: Crc32With<E>,
    /// How many transport packet bytes have been fed so far.
    transport_len: usize,
}

/// The ICRC computed by the table.
pub(crate) type Icrc = IcrcWith<TableCrc32>;

impl<E: Crc32Engine> IcrcWith<E> {
    /// Starts the ICRC of an IPv4 packet from its IP header (options excluded) and UDP header.
    pub(crate) fn ipv4(ip_hdr: &[u8; IPV4_HDR_LEN], udp_hdr: &[u8; UDP_HDR_LEN]) -> Self {
        let mut ip = *ip_hdr;
        // Type of service (DSCP and ECN).
        ip[1] = 0xff;
        // Time to live.
        ip[8] = 0xff;
        // Header checksum.
        ip[10] = 0xff;
        ip[11] = 0xff;
        Self::with_network_headers(&ip, udp_hdr)
    }

    /// Starts the ICRC of an IPv6 packet from its IP header and UDP header.
    pub(crate) fn ipv6(ip_hdr: &[u8; IPV6_HDR_LEN], udp_hdr: &[u8; UDP_HDR_LEN]) -> Self {
        let mut ip = *ip_hdr;
        // The version nibble stays; the traffic class and flow label fill the rest of the word.
        ip[0] |= 0x0f;
        ip[1] = 0xff;
        ip[2] = 0xff;
        ip[3] = 0xff;
        // Hop limit.
        ip[7] = 0xff;
        Self::with_network_headers(&ip, udp_hdr)
    }

    /// Starts the ICRC from an already masked IP header and an unmasked UDP header.
    fn with_network_headers(masked_ip: &[u8], udp_hdr: &[u8; UDP_HDR_LEN]) -> Self {
        let mut udp = *udp_hdr;
        // Checksum.
        udp[6] = 0xff;
        udp[7] = 0xff;
        let mut crc = Crc32With::from_register(LRH_SEED);
        crc.update(masked_ip);
        crc.update(&udp);
        Self {
            crc,
            transport_len: 0,
        }
    }

    /// Feeds the next piece of the transport packet, which starts at the BTH.
    ///
    /// The pieces must together be the transport packet up to and including the pad, in order,
    /// and must not include the ICRC. BTH byte 4 is replaced by all ones wherever it falls.
    pub(crate) fn update(&mut self, piece: &[u8]) {
        let start = self.transport_len;
        self.transport_len = start.saturating_add(piece.len());
        let split = BTH_MASKED_BYTE
            .checked_sub(start)
            .and_then(|at| piece.split_at_checked(at));
        match split {
            Some((before, [_, after @ ..])) => {
                self.crc.update(before);
                self.crc.update(&[0xff]);
                self.crc.update(after);
            }
            _ => self.crc.update(piece),
        }
    }

    /// Returns the ICRC of everything fed so far as a number; see [`icrc_to_wire`].
    pub(crate) const fn finish(&self) -> u32 {
        self.crc.finish()
    }

    /// Returns the ICRC of everything fed so far as the four bytes that go on the wire.
    pub(crate) const fn finish_wire(&self) -> [u8; ICRC_LEN] {
        icrc_to_wire(self.finish())
    }
}

impl<E: Crc32Engine> IcrcWith<E> {
    /// Returns the ICRC of an IPv4 RoCEv2 packet.
    ///
    /// `transport` runs from the BTH through the pad and excludes the ICRC.
    pub(crate) fn of_ipv4(
        ip_hdr: &[u8; IPV4_HDR_LEN],
        udp_hdr: &[u8; UDP_HDR_LEN],
        transport: &[u8],
    ) -> u32 {
        let mut icrc = Self::ipv4(ip_hdr, udp_hdr);
        icrc.update(transport);
        icrc.finish()
    }

    /// Returns the ICRC of an IPv6 RoCEv2 packet.
    ///
    /// `transport` runs from the BTH through the pad and excludes the ICRC.
    pub(crate) fn of_ipv6(
        ip_hdr: &[u8; IPV6_HDR_LEN],
        udp_hdr: &[u8; UDP_HDR_LEN],
        transport: &[u8],
    ) -> u32 {
        let mut icrc = Self::ipv6(ip_hdr, udp_hdr);
        icrc.update(transport);
        icrc.finish()
    }

    /// Finishes the computation over `transport` the way C rxe does for an RC FLUSH.
    ///
    /// rxe's opcode table gives FLUSH no payload offset, so the payload rxe adds to the CRC
    /// (`payload_addr()`, `payload_size()` in `rxe_icrc.c`) starts at the BTH itself: after the
    /// headers it covers the whole transport packet once more, unmasked. rxe both sends and
    /// expects this value; IBA-conformant peers compute [`Self::of_ipv4`] / [`Self::of_ipv6`].
    fn finish_rxe_flush(mut self, transport: &[u8]) -> u32 {
        self.update(transport);
        self.crc.update(transport);
        self.finish()
    }

    /// Returns the ICRC C rxe puts on an IPv4 RC FLUSH ([`Self::finish_rxe_flush`]).
    pub(crate) fn rxe_flush_ipv4(
        ip_hdr: &[u8; IPV4_HDR_LEN],
        udp_hdr: &[u8; UDP_HDR_LEN],
        transport: &[u8],
    ) -> u32 {
        Self::ipv4(ip_hdr, udp_hdr).finish_rxe_flush(transport)
    }

    /// Returns the ICRC C rxe puts on an IPv6 RC FLUSH ([`Self::finish_rxe_flush`]).
    pub(crate) fn rxe_flush_ipv6(
        ip_hdr: &[u8; IPV6_HDR_LEN],
        udp_hdr: &[u8; UDP_HDR_LEN],
        transport: &[u8],
    ) -> u32 {
        Self::ipv6(ip_hdr, udp_hdr).finish_rxe_flush(transport)
    }

    /// Checks the ICRC that ends the IPv4 RoCEv2 transport packet `pkt` (BTH through ICRC). An
    /// RC FLUSH may also carry C rxe's ICRC ([`Self::rxe_flush_ipv4`]).
    pub(crate) fn verify_ipv4(
        ip_hdr: &[u8; IPV4_HDR_LEN],
        udp_hdr: &[u8; UDP_HDR_LEN],
        pkt: &[u8],
    ) -> Result<(), Error> {
        let (covered, carried) = split_icrc(pkt)?;
        if Self::of_ipv4(ip_hdr, udp_hdr, covered) == carried
            || (is_rc_flush(covered) && Self::rxe_flush_ipv4(ip_hdr, udp_hdr, covered) == carried)
        {
            Ok(())
        } else {
            Err(Error::BadIcrc)
        }
    }

    /// Checks the ICRC that ends the IPv6 RoCEv2 transport packet `pkt` (BTH through ICRC). An
    /// RC FLUSH may also carry C rxe's ICRC ([`Self::rxe_flush_ipv6`]).
    pub(crate) fn verify_ipv6(
        ip_hdr: &[u8; IPV6_HDR_LEN],
        udp_hdr: &[u8; UDP_HDR_LEN],
        pkt: &[u8],
    ) -> Result<(), Error> {
        let (covered, carried) = split_icrc(pkt)?;
        if Self::of_ipv6(ip_hdr, udp_hdr, covered) == carried
            || (is_rc_flush(covered) && Self::rxe_flush_ipv6(ip_hdr, udp_hdr, covered) == carried)
        {
            Ok(())
        } else {
            Err(Error::BadIcrc)
        }
    }
}

/// [`IcrcWith::of_ipv4`] by the table.
pub(crate) fn icrc_ipv4(
    ip_hdr: &[u8; IPV4_HDR_LEN],
    udp_hdr: &[u8; UDP_HDR_LEN],
    transport: &[u8],
) -> u32 {
    Icrc::of_ipv4(ip_hdr, udp_hdr, transport)
}

/// [`IcrcWith::of_ipv6`] by the table.
pub(crate) fn icrc_ipv6(
    ip_hdr: &[u8; IPV6_HDR_LEN],
    udp_hdr: &[u8; UDP_HDR_LEN],
    transport: &[u8],
) -> u32 {
    Icrc::of_ipv6(ip_hdr, udp_hdr, transport)
}

/// The BTH opcode of RC FLUSH, the one packet C rxe computes a different ICRC for.
const RC_FLUSH: u8 = 0x1c;

/// Whether the transport packet `transport` (from the BTH) is an RC FLUSH request.
pub(crate) fn is_rc_flush(transport: &[u8]) -> bool {
    transport.first() == Some(&RC_FLUSH)
}

/// [`IcrcWith::rxe_flush_ipv4`] by the table.
pub(crate) fn rxe_flush_icrc_ipv4(
    ip_hdr: &[u8; IPV4_HDR_LEN],
    udp_hdr: &[u8; UDP_HDR_LEN],
    transport: &[u8],
) -> u32 {
    Icrc::rxe_flush_ipv4(ip_hdr, udp_hdr, transport)
}

/// [`IcrcWith::rxe_flush_ipv6`] by the table.
pub(crate) fn rxe_flush_icrc_ipv6(
    ip_hdr: &[u8; IPV6_HDR_LEN],
    udp_hdr: &[u8; UDP_HDR_LEN],
    transport: &[u8],
) -> u32 {
    Icrc::rxe_flush_ipv6(ip_hdr, udp_hdr, transport)
}

/// Returns the bytes that carry the ICRC value `icrc` on the wire: little-endian order.
pub(crate) const fn icrc_to_wire(icrc: u32) -> [u8; ICRC_LEN] {
    icrc.to_le_bytes()
}

/// Returns the ICRC value carried by the wire bytes `bytes`.
pub(crate) const fn icrc_from_wire(bytes: [u8; ICRC_LEN]) -> u32 {
    u32::from_le_bytes(bytes)
}

/// Splits a transport packet, BTH through ICRC, into the covered part and the ICRC it carries.
pub(crate) fn split_icrc(pkt: &[u8]) -> Result<(&[u8], u32), Error> {
    let (covered, icrc) = pkt.split_last_chunk::<ICRC_LEN>().ok_or(Error::Truncated)?;
    Ok((covered, icrc_from_wire(*icrc)))
}

/// [`IcrcWith::verify_ipv4`] by the table.
pub(crate) fn verify_ipv4(
    ip_hdr: &[u8; IPV4_HDR_LEN],
    udp_hdr: &[u8; UDP_HDR_LEN],
    pkt: &[u8],
) -> Result<(), Error> {
    Icrc::verify_ipv4(ip_hdr, udp_hdr, pkt)
}

/// [`IcrcWith::verify_ipv6`] by the table.
pub(crate) fn verify_ipv6(
    ip_hdr: &[u8; IPV6_HDR_LEN],
    udp_hdr: &[u8; UDP_HDR_LEN],
    pkt: &[u8],
) -> Result<(), Error> {
    Icrc::verify_ipv6(ip_hdr, udp_hdr, pkt)
}
