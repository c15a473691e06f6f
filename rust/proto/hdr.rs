// SPDX-License-Identifier: GPL-2.0

//! RoCEv2 transport headers (IBA Vol 1 chapter 9 and Annexes A17 and A19).
//!
//! A RoCEv2 packet is an Ethernet frame carrying IPv4 or IPv6 and UDP to port 4791, then the Base
//! Transport Header, zero or more extension headers chosen by the opcode, the payload, 0 to 3 pad
//! bytes and the 4-byte invariant CRC. Every multi-byte header field is big-endian on the wire.
//!
//! Each header type has a `LEN` constant, a `parse` that reads the first `LEN` bytes of a buffer
//! and fails with [`Error::Truncated`] instead of panicking when the buffer is shorter, and a
//! `write` that fills the first `LEN` bytes of a buffer or fails with [`Error::NoSpace`]. Reserved
//! bits are ignored when parsing and written as zero.

use super::opcode::Opcode;
use super::psn::Psn;
use super::Error;

#[path = "hdr/aeth.rs"]
mod aeth;
pub(crate) use aeth::{
    Aeth,
    AethSyndrome, //
};

/// The UDP destination port assigned to RoCEv2 by IANA.
pub(crate) const ROCE_V2_UDP_PORT: u16 = 4791;

/// The only transport header version the IBA defines; the BTH must carry it.
pub(crate) const BTH_TVER: u8 = 0;

/// The default partition key: full membership of the default partition.
pub(crate) const DEFAULT_PKEY: u16 = 0xffff;

/// The length in bytes of the invariant CRC that ends every RoCEv2 packet.
pub(crate) const ICRC_LEN: usize = 4;

/// The largest BTH pad count: payloads are padded to a multiple of four bytes.
pub(crate) const MAX_PAD: u8 = 3;

/// The largest value of a 24-bit field such as a QPN, an MSN or a PSN.
pub(crate) const U24_MAX: u32 = 0x00ff_ffff;

/// The Q_Key that general services interface (GSI, QP1) datagrams carry.
pub(crate) const GSI_QKEY: u32 = 0x8001_0000;

/// The destination QPN that addresses a multicast group.
pub(crate) const MULTICAST_QPN: u32 = 0x00ff_ffff;

/// Returns the first `N` bytes of `buf`, or [`Error::Truncated`] if it is shorter.
fn head<const N: usize>(buf: &[u8]) -> Result<&[u8; N], Error> {
    buf.first_chunk::<N>().ok_or(Error::Truncated)
}

/// Returns the first `N` bytes of `buf` for writing, or [`Error::NoSpace`] if it is shorter.
fn head_mut<const N: usize>(buf: &mut [u8]) -> Result<&mut [u8; N], Error> {
    buf.first_chunk_mut::<N>().ok_or(Error::NoSpace)
}

/// Checks that `value` fits in a 24-bit wire field.
fn check_u24(value: u32) -> Result<u32, Error> {
    if value > U24_MAX {
        Err(Error::FieldRange)
    } else {
        Ok(value)
    }
}

/// Reads the big-endian `u32` that starts at byte `at` of a fixed-size header.
fn get_be32<const N: usize>(b: &[u8; N], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Reads the big-endian `u64` that starts at byte `at` of a fixed-size header.
fn get_be64<const N: usize>(b: &[u8; N], at: usize) -> u64 {
    (u64::from(get_be32(b, at)) << 32) | u64::from(get_be32(b, at + 4))
}

/// Stores `value` big-endian at byte `at` of a fixed-size header.
fn put_be32<const N: usize>(b: &mut [u8; N], at: usize, value: u32) {
    b[at..at + 4].copy_from_slice(&value.to_be_bytes());
}

/// Stores `value` big-endian at byte `at` of a fixed-size header.
fn put_be64<const N: usize>(b: &mut [u8; N], at: usize, value: u64) {
    b[at..at + 8].copy_from_slice(&value.to_be_bytes());
}

/// The Base Transport Header, present in every packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bth {
    /// The operation and transport service of the packet.
    pub(crate) opcode: Opcode,
    /// Solicited event: the receiver should raise a solicited completion event.
    pub(crate) solicited: bool,
    /// Migration request state of the sender's path migration machinery.
    pub(crate) mig_req: bool,
    /// Number of pad bytes (0 to 3) between the payload and the ICRC.
    pub(crate) pad: u8,
    /// Partition key of the sending QP.
    pub(crate) pkey: u16,
    /// Forward explicit congestion notification.
    pub(crate) fecn: bool,
    /// Backward explicit congestion notification.
    pub(crate) becn: bool,
    /// Destination queue pair number (24 bits).
    pub(crate) dest_qpn: u32,
    /// Acknowledge request: the responder should acknowledge this packet now.
    pub(crate) ack_req: bool,
    /// Packet sequence number.
    pub(crate) psn: Psn,
}

impl Bth {
    /// Length of the header on the wire.
    pub(crate) const LEN: usize = 12;

    /// Bit of byte 1 that holds the solicited event flag.
    const SE_BIT: u8 = 0x80;
    /// Bit of byte 1 that holds the migration request flag.
    const MIG_BIT: u8 = 0x40;
    /// Bits of byte 1 that hold the pad count.
    const PAD_MASK: u8 = 0x30;
    /// Shift of the pad count within byte 1.
    const PAD_SHIFT: u32 = 4;
    /// Bits of byte 1 that hold the transport header version.
    const TVER_MASK: u8 = 0x0f;
    /// Bit of the third word that holds the FECN flag.
    const FECN_BIT: u32 = 0x8000_0000;
    /// Bit of the third word that holds the BECN flag.
    const BECN_BIT: u32 = 0x4000_0000;
    /// Bit of the fourth word that holds the acknowledge request flag.
    const ACK_REQ_BIT: u32 = 0x8000_0000;

    /// A BTH of `opcode` to QP `dest_qpn` at `psn`, with the default P_Key, no pad and every
    /// flag clear: what each sender starts from.
    pub(crate) const fn plain(opcode: Opcode, dest_qpn: u32, psn: Psn) -> Self {
        Self {
            opcode,
            solicited: false,
            mig_req: false,
            pad: 0,
            pkey: DEFAULT_PKEY,
            fecn: false,
            becn: false,
            dest_qpn,
            ack_req: false,
            psn,
        }
    }

    /// Parses a BTH from the start of `buf`, rejecting transport header versions other than zero.
    pub(crate) fn parse(buf: &[u8]) -> Result<Self, Error> {
        let b = head::<{ Self::LEN }>(buf)?;
        let flags = b[1];
        if flags & Self::TVER_MASK != BTH_TVER {
            return Err(Error::BadVersion);
        }
        let qpn_word = get_be32(b, 4);
        let psn_word = get_be32(b, 8);
        Ok(Self {
            opcode: Opcode(b[0]),
            solicited: flags & Self::SE_BIT != 0,
            mig_req: flags & Self::MIG_BIT != 0,
            pad: (flags & Self::PAD_MASK) >> Self::PAD_SHIFT,
            pkey: u16::from_be_bytes([b[2], b[3]]),
            fecn: qpn_word & Self::FECN_BIT != 0,
            becn: qpn_word & Self::BECN_BIT != 0,
            dest_qpn: qpn_word & U24_MAX,
            ack_req: psn_word & Self::ACK_REQ_BIT != 0,
            psn: Psn::new(psn_word),
        })
    }

    /// Writes the BTH to the start of `buf` with transport header version zero.
    pub(crate) fn write(&self, buf: &mut [u8]) -> Result<(), Error> {
        if self.pad > MAX_PAD {
            return Err(Error::FieldRange);
        }
        let mut qpn_word = check_u24(self.dest_qpn)?;
        let b = head_mut::<{ Self::LEN }>(buf)?;
        let mut flags = (self.pad << Self::PAD_SHIFT) | BTH_TVER;
        if self.solicited {
            flags |= Self::SE_BIT;
        }
        if self.mig_req {
            flags |= Self::MIG_BIT;
        }
        if self.fecn {
            qpn_word |= Self::FECN_BIT;
        }
        if self.becn {
            qpn_word |= Self::BECN_BIT;
        }
        let mut psn_word = self.psn.value();
        if self.ack_req {
            psn_word |= Self::ACK_REQ_BIT;
        }
        b[0] = self.opcode.0;
        b[1] = flags;
        b[2..4].copy_from_slice(&self.pkey.to_be_bytes());
        put_be32(b, 4, qpn_word);
        put_be32(b, 8, psn_word);
        Ok(())
    }
}

/// The RDMA Extended Transport Header: the remote buffer of a write, read or flush.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reth {
    /// Remote virtual address.
    pub(crate) va: u64,
    /// Remote key of the memory region or window.
    pub(crate) rkey: u32,
    /// Length in bytes of the whole RDMA operation.
    pub(crate) dma_len: u32,
}

impl Reth {
    /// Length of the header on the wire.
    pub(crate) const LEN: usize = 16;

    /// Parses a RETH from the start of `buf`.
    pub(crate) fn parse(buf: &[u8]) -> Result<Self, Error> {
        let b = head::<{ Self::LEN }>(buf)?;
        Ok(Self {
            va: get_be64(b, 0),
            rkey: get_be32(b, 8),
            dma_len: get_be32(b, 12),
        })
    }

    /// Writes the RETH to the start of `buf`.
    pub(crate) fn write(&self, buf: &mut [u8]) -> Result<(), Error> {
        let b = head_mut::<{ Self::LEN }>(buf)?;
        put_be64(b, 0, self.va);
        put_be32(b, 8, self.rkey);
        put_be32(b, 12, self.dma_len);
        Ok(())
    }
}

/// The Datagram Extended Transport Header carried by UD packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Deth {
    /// Queue key that authorizes access to the destination QP.
    pub(crate) qkey: u32,
    /// Source queue pair number (24 bits).
    pub(crate) src_qpn: u32,
}

impl Deth {
    /// Length of the header on the wire.
    pub(crate) const LEN: usize = 8;

    /// Parses a DETH from the start of `buf`.
    pub(crate) fn parse(buf: &[u8]) -> Result<Self, Error> {
        let b = head::<{ Self::LEN }>(buf)?;
        Ok(Self {
            qkey: get_be32(b, 0),
            src_qpn: get_be32(b, 4) & U24_MAX,
        })
    }

    /// Writes the DETH to the start of `buf`.
    pub(crate) fn write(&self, buf: &mut [u8]) -> Result<(), Error> {
        let src_qpn = check_u24(self.src_qpn)?;
        let b = head_mut::<{ Self::LEN }>(buf)?;
        put_be32(b, 0, self.qkey);
        put_be32(b, 4, src_qpn);
        Ok(())
    }
}

/// The Immediate Data extended header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Immdt {
    /// The immediate value as a number, decoded big-endian; the verbs `__be32` is `imm.to_be()`.
    pub(crate) imm: u32,
}

impl Immdt {
    /// Length of the header on the wire.
    pub(crate) const LEN: usize = 4;

    /// Parses an immediate data header from the start of `buf`.
    pub(crate) fn parse(buf: &[u8]) -> Result<Self, Error> {
        let b = head::<{ Self::LEN }>(buf)?;
        Ok(Self {
            imm: get_be32(b, 0),
        })
    }

    /// Writes the immediate data header to the start of `buf`.
    pub(crate) fn write(&self, buf: &mut [u8]) -> Result<(), Error> {
        put_be32(head_mut::<{ Self::LEN }>(buf)?, 0, self.imm);
        Ok(())
    }
}

/// The Invalidate Extended Transport Header of SEND with invalidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ieth {
    /// Remote key that the responder invalidates.
    pub(crate) rkey: u32,
}

impl Ieth {
    /// Length of the header on the wire.
    pub(crate) const LEN: usize = 4;

    /// Parses an IETH from the start of `buf`.
    pub(crate) fn parse(buf: &[u8]) -> Result<Self, Error> {
        let b = head::<{ Self::LEN }>(buf)?;
        Ok(Self {
            rkey: get_be32(b, 0),
        })
    }

    /// Writes the IETH to the start of `buf`.
    pub(crate) fn write(&self, buf: &mut [u8]) -> Result<(), Error> {
        put_be32(head_mut::<{ Self::LEN }>(buf)?, 0, self.rkey);
        Ok(())
    }
}

/// The Atomic Extended Transport Header of compare-and-swap and fetch-and-add requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AtomicEth {
    /// Remote virtual address of the 8-byte target.
    pub(crate) va: u64,
    /// Remote key of the memory region or window.
    pub(crate) rkey: u32,
    /// Value to swap in (compare-and-swap) or to add (fetch-and-add).
    pub(crate) swap_add: u64,
    /// Value to compare with (compare-and-swap only).
    pub(crate) compare: u64,
}

impl AtomicEth {
    /// Length of the header on the wire.
    pub(crate) const LEN: usize = 28;

    /// Parses an AtomicETH from the start of `buf`.
    pub(crate) fn parse(buf: &[u8]) -> Result<Self, Error> {
        let b = head::<{ Self::LEN }>(buf)?;
        Ok(Self {
            va: get_be64(b, 0),
            rkey: get_be32(b, 8),
            swap_add: get_be64(b, 12),
            compare: get_be64(b, 20),
        })
    }

    /// Writes the AtomicETH to the start of `buf`.
    pub(crate) fn write(&self, buf: &mut [u8]) -> Result<(), Error> {
        let b = head_mut::<{ Self::LEN }>(buf)?;
        put_be64(b, 0, self.va);
        put_be32(b, 8, self.rkey);
        put_be64(b, 12, self.swap_add);
        put_be64(b, 20, self.compare);
        Ok(())
    }
}

/// The Atomic Acknowledge Extended Transport Header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AtomicAckEth {
    /// The value the target held before the atomic operation.
    pub(crate) orig: u64,
}

impl AtomicAckEth {
    /// Length of the header on the wire.
    pub(crate) const LEN: usize = 8;

    /// Parses an AtomicAckETH from the start of `buf`.
    pub(crate) fn parse(buf: &[u8]) -> Result<Self, Error> {
        let b = head::<{ Self::LEN }>(buf)?;
        Ok(Self {
            orig: get_be64(b, 0),
        })
    }

    /// Writes the AtomicAckETH to the start of `buf`.
    pub(crate) fn write(&self, buf: &mut [u8]) -> Result<(), Error> {
        put_be64(head_mut::<{ Self::LEN }>(buf)?, 0, self.orig);
        Ok(())
    }
}

/// The Flush Extended Transport Header of FLUSH requests (IBA Annex A19).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Feth {
    /// Selectivity level (2 bits): 0 flushes the RETH range, 1 the whole memory region.
    pub(crate) selectivity: u8,
    /// Placement type bit mask (4 bits): bit 0 global visibility, bit 1 persistence.
    pub(crate) placement_type: u8,
}

impl Feth {
    /// Length of the header on the wire.
    pub(crate) const LEN: usize = 4;

    /// Bits of the last byte that hold the selectivity level.
    const SEL_MASK: u8 = 0x30;
    /// Shift of the selectivity level within the last byte.
    const SEL_SHIFT: u32 = 4;
    /// Bits of the last byte that hold the placement type.
    const PLT_MASK: u8 = 0x0f;

    /// Parses a FETH from the start of `buf`.
    pub(crate) fn parse(buf: &[u8]) -> Result<Self, Error> {
        let b = head::<{ Self::LEN }>(buf)?;
        Ok(Self {
            selectivity: (b[3] & Self::SEL_MASK) >> Self::SEL_SHIFT,
            placement_type: b[3] & Self::PLT_MASK,
        })
    }

    /// Writes the FETH to the start of `buf`.
    pub(crate) fn write(&self, buf: &mut [u8]) -> Result<(), Error> {
        if self.selectivity > Self::SEL_MASK >> Self::SEL_SHIFT
            || self.placement_type > Self::PLT_MASK
        {
            return Err(Error::FieldRange);
        }
        let b = head_mut::<{ Self::LEN }>(buf)?;
        *b = [
            0,
            0,
            0,
            (self.selectivity << Self::SEL_SHIFT) | self.placement_type,
        ];
        Ok(())
    }
}
