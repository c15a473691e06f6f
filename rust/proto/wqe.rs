// SPDX-License-Identifier: GPL-2.0

//! The work queue entries user space posts, as rrxe reads them: the send opcodes and flags it
//! accepts, what each operation carries, and the errors a WQE is rejected with (the parsers are
//! in [`super::wqe_parse`], the kernel's encoders in [`super::wqe_encode`], the completions in
//! [`super::cqe`]).
//!
//! The stock rdma-core rxe provider writes send WQEs (`struct rxe_send_wqe`: a 208-byte fixed part
//! followed by a scatter/gather list or inline data) and receive WQEs (`struct rxe_recv_wqe`: 40
//! bytes followed by a scatter/gather list) into rings shared with the kernel, and reads each
//! completion as a raw 48-byte `struct ib_uverbs_wc`.
//!
//! The uABI is native endian and rrxe only supports little-endian targets (x86_64 and arm64), so
//! every field is read and written with `from_le_bytes` and `to_le_bytes`. The fields the C driver
//! keeps in the WQE for itself (`status`, `state`, `mask`, the PSNs, `ssn`, `dma.resid`,
//! `dma.cur_sge`, `dma.sge_offset`) are ignored: rrxe keeps that state privately. All values are
//! those of `include/uapi/rdma/rdma_user_rxe.h`, `ib_user_verbs.h` and `include/rdma/ib_verbs.h`.

use super::{
    abi::*,
    cqe::WcStatus,
    qp_state::QpType, //
};

/// A send opcode rrxe accepts from user space, numbered as `enum ib_wr_opcode`.
///
/// `IB_WR_LSO` (10), `IB_WR_RDMA_READ_WITH_INV` (11), the masked atomics (12, 13) and all other
/// values are rejected, `IB_WR_REG_MR` (0x20) in particular: it carries a kernel pointer.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum WrOpcode {
    /// `IB_WR_RDMA_WRITE`.
    RdmaWrite = 0,
    /// `IB_WR_RDMA_WRITE_WITH_IMM`.
    RdmaWriteWithImm = 1,
    /// `IB_WR_SEND`.
    Send = 2,
    /// `IB_WR_SEND_WITH_IMM`.
    SendWithImm = 3,
    /// `IB_WR_RDMA_READ`.
    RdmaRead = 4,
    /// `IB_WR_ATOMIC_CMP_AND_SWP`.
    AtomicCmpAndSwp = 5,
    /// `IB_WR_ATOMIC_FETCH_AND_ADD`.
    AtomicFetchAndAdd = 6,
    /// `IB_WR_LOCAL_INV`, a local operation; the rkey is in the `ex` word.
    LocalInv = 7,
    /// `IB_WR_BIND_MW`, a local operation.
    BindMw = 8,
    /// `IB_WR_SEND_WITH_INV`; the rkey the responder invalidates is in the `ex` word.
    SendWithInv = 9,
    /// `IB_WR_FLUSH`.
    Flush = 14,
    /// `IB_WR_ATOMIC_WRITE`.
    AtomicWrite = 15,
    /// `IB_WR_REG_MR`, a fast registration: a local operation of kernel QPs, which post it in
    /// their own encoding (`wqe_encode`). Never parsed from a WQE ([`WrOpcode::from_raw`]
    /// refuses it): it only names the operation for its completion.
    RegMr = 0x20,
}

impl WrOpcode {
    /// Returns the opcode whose `enum ib_wr_opcode` value is `raw`, or `None`.
    pub(crate) const fn from_raw(raw: u32) -> Option<Self> {
        Some(match raw {
            0 => Self::RdmaWrite,
            1 => Self::RdmaWriteWithImm,
            2 => Self::Send,
            3 => Self::SendWithImm,
            4 => Self::RdmaRead,
            5 => Self::AtomicCmpAndSwp,
            6 => Self::AtomicFetchAndAdd,
            7 => Self::LocalInv,
            8 => Self::BindMw,
            9 => Self::SendWithInv,
            14 => Self::Flush,
            15 => Self::AtomicWrite,
            _ => return None,
        })
    }

    /// Returns the `enum ib_wr_opcode` value of this opcode.
    pub(crate) const fn to_raw(self) -> u32 {
        self as u32
    }

    /// Whether the responder answers with an RDMA READ response or an atomic ACK rather than a
    /// plain ACK. These operations hold one of the responder's resources while outstanding, so
    /// the requester counts them against `max_rd_atomic`.
    pub(crate) const fn wants_response(self) -> bool {
        matches!(
            self,
            Self::RdmaRead
                | Self::AtomicCmpAndSwp
                | Self::AtomicFetchAndAdd
                | Self::Flush
                | Self::AtomicWrite
        )
    }

    /// Whether the answer is an RDMA READ response: data for a READ, a zero-length READ
    /// RESPONSE ONLY for FLUSH and ATOMIC WRITE (IBA oA19-14, as C rxe answers them).
    pub(crate) const fn answered_by_read_response(self) -> bool {
        matches!(self, Self::RdmaRead | Self::Flush | Self::AtomicWrite)
    }

    /// Whether the request carries no payload (its packet count does not follow its length).
    pub(crate) const fn request_has_no_payload(self) -> bool {
        matches!(
            self,
            Self::RdmaRead | Self::AtomicCmpAndSwp | Self::AtomicFetchAndAdd | Self::Flush
        )
    }
}

/// `IB_FLUSH_GLOBAL`: the FLUSH placement type bit for global visibility.
pub(crate) const FLUSH_GLOBAL: u8 = 1;
/// `IB_FLUSH_PERSISTENT`: the FLUSH placement type bit for persistence.
pub(crate) const FLUSH_PERSISTENT: u8 = 2;
/// `IB_FLUSH_RANGE`: the FLUSH selectivity level of the RETH range.
pub(crate) const FLUSH_RANGE: u8 = 0;
/// `IB_FLUSH_MR`: the FLUSH selectivity level of the whole memory region.
pub(crate) const FLUSH_MR: u8 = 1;

/// Returns whether a queue pair of type `qp` may execute `op`.
///
/// This is rxe's `rxe_wr_opcode_info` table narrowed to what its requester can execute. The table
/// also allows `IB_WR_SEND_WITH_INV` on UC and UD and `IB_WR_RDMA_READ_WITH_INV` on RC, but the
/// IBA defines no such UC or UD packet and rxe's `next_opcode` generates none for either, so C rxe
/// fails them later with `IB_WC_LOC_QP_OP_ERR`, the status rejecting them here reports too.
/// `IB_WR_LOCAL_INV` stays RC-only as in rxe, although the IBA would allow it on UC as well.
pub(crate) const fn allowed(op: WrOpcode, qp: QpType) -> bool {
    match op {
        WrOpcode::RdmaWrite | WrOpcode::RdmaWriteWithImm | WrOpcode::BindMw => {
            matches!(qp, QpType::Rc | QpType::Uc)
        }
        WrOpcode::Send | WrOpcode::SendWithImm => {
            matches!(qp, QpType::Rc | QpType::Uc | QpType::Ud | QpType::Gsi)
        }
        WrOpcode::SendWithInv
        | WrOpcode::RdmaRead
        | WrOpcode::AtomicCmpAndSwp
        | WrOpcode::AtomicFetchAndAdd
        | WrOpcode::LocalInv
        | WrOpcode::Flush
        | WrOpcode::AtomicWrite
        | WrOpcode::RegMr => matches!(qp, QpType::Rc),
    }
}

/// The `send_flags` of a send WQE (`enum ib_send_flags`); unknown bits are kept and ignored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct SendFlags(pub(crate) u32);

impl SendFlags {
    /// `IB_SEND_FENCE`: wait for earlier reads and atomics to complete.
    pub(crate) const FENCE: u32 = 1;
    /// `IB_SEND_SIGNALED`: generate a completion on success.
    pub(crate) const SIGNALED: u32 = 1 << 1;
    /// `IB_SEND_SOLICITED`: set the solicited event bit of the last packet.
    pub(crate) const SOLICITED: u32 = 1 << 2;
    /// `IB_SEND_INLINE`: the payload is in the WQE rather than behind an SGE list.
    pub(crate) const INLINE: u32 = 1 << 3;

    /// Returns whether every bit of `flag` is set.
    pub(crate) const fn contains(self, flag: u32) -> bool {
        self.0 & flag == flag
    }
}

/// The opcode-specific part of a send WQE (the `wr` union); remote addresses are in
/// [`SendWqe::iova`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WrDetail {
    /// No union member is used (sends on connected queue pairs and local invalidate).
    None,
    /// RDMA write, RDMA read and atomic write.
    Rdma {
        /// Remote key.
        rkey: u32,
    },
    /// Compare-and-swap and fetch-and-add.
    Atomic {
        /// The compare value, or the value to add.
        compare_add: u64,
        /// The swap value (unused by fetch-and-add).
        swap: u64,
        /// Remote key.
        rkey: u32,
    },
    /// Sends on UD and GSI queue pairs: the destination.
    Ud {
        /// Destination queue pair number, at most 24 bits.
        remote_qpn: u32,
        /// Q_Key (the requester substitutes the queue pair's own when the top bit is set).
        remote_qkey: u32,
        /// P_Key index (only the C driver's GSI path uses it).
        pkey_index: u16,
        /// Index of a kernel address handle, never zero.
        ah_num: u32,
    },
    /// Memory window bind.
    Mw {
        /// Start address of the window.
        addr: u64,
        /// Length of the window.
        length: u64,
        /// Local key of the memory region the window is bound to.
        mr_lkey: u32,
        /// The window's current rkey.
        mw_rkey: u32,
        /// The window's new rkey.
        rkey: u32,
        /// Access flags of the window.
        access: u32,
    },
    /// Flush of the remote range of [`SendWqe::length`] bytes at [`SendWqe::iova`].
    Flush {
        /// Remote key.
        rkey: u32,
        /// Placement type bits of the FETH.
        kind: u8,
        /// Selectivity level of the FETH.
        level: u8,
    },
}

/// Where the local data of a WQE lies, as offsets into the copied slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Payload {
    /// No local data (local operations and flush).
    None,
    /// `len` bytes at byte `start` of the slot: inline data, or the atomic-write operand.
    Inline {
        /// Offset of the first byte.
        start: usize,
        /// Number of bytes.
        len: usize,
    },
    /// `count` scatter/gather entries starting at byte `start` of the slot.
    Sges {
        /// Offset of the first entry.
        start: usize,
        /// Number of entries.
        count: u32,
    },
}

impl Payload {
    /// Returns the bytes of the slot the payload occupies; empty for [`Payload::None`].
    pub(crate) fn byte_range(&self) -> core::ops::Range<usize> {
        let (start, len) = match *self {
            Self::None => (0, 0),
            Self::Inline { start, len } => (start, len),
            Self::Sges { start, count } => (start, sge_bytes(count).unwrap_or(usize::MAX)),
        };
        start..start.saturating_add(len)
    }
}

/// One scatter/gather entry (`struct rxe_sge`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sge {
    /// Local virtual address.
    pub(crate) addr: u64,
    /// Length in bytes.
    pub(crate) length: u32,
    /// Local key of the memory region.
    pub(crate) lkey: u32,
}

/// A validated send WQE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SendWqe {
    /// The caller's work request id, returned in the completion.
    pub(crate) wr_id: u64,
    /// The operation, allowed for the queue pair type.
    pub(crate) opcode: WrOpcode,
    /// The send flags.
    pub(crate) flags: SendFlags,
    /// The `ex` word: immediate data (whose `to_le_bytes` are the wire bytes) or an rkey.
    pub(crate) ex: u32,
    /// The opcode-specific fields.
    pub(crate) detail: WrDetail,
    /// Remote start address of RDMA, atomic and flush operations; zero for the others.
    pub(crate) iova: u64,
    /// Message length: SGE sum, inline length, 8 for atomic write, flush length, or zero.
    pub(crate) length: u32,
    /// Number of scatter/gather entries; zero unless the payload is [`Payload::Sges`].
    pub(crate) num_sge: u32,
    /// Where the local data is.
    pub(crate) payload: Payload,
}

/// A validated receive WQE; its scatter/gather entries start at [`RECV_WQE_HDR_LEN`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RecvWqe {
    /// The caller's work request id, returned in the completion.
    pub(crate) wr_id: u64,
    /// Total length of the buffers, the checked sum of the SGE lengths.
    pub(crate) length: u32,
    /// Number of scatter/gather entries.
    pub(crate) num_sge: u32,
}

/// Why a WQE was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WqeError {
    /// The slot ends before the fixed part, the SGE list or the inline data it claims.
    Truncated,
    /// The opcode is unknown or never accepted from user space.
    BadOpcode,
    /// The opcode is not allowed for the queue pair type.
    OpcodeNotAllowed,
    /// The inline flag is set on an opcode without outgoing data (RDMA read, atomics).
    InlineNotAllowed,
    /// More scatter/gather entries than the queue's `max_sge`.
    TooManySge,
    /// More inline data than the queue's `max_inline`.
    InlineTooLong,
    /// The SGE lengths overflow a `u32`.
    LengthOverflow,
    /// `dma.length` differs from the sum of the SGE lengths (or is not 8 for an atomic write).
    LengthMismatch,
    /// The message is longer than [`MAX_MSG_SIZE`].
    MessageTooLong,
    /// A compare-and-swap or fetch-and-add has less than 8 bytes of local buffer.
    AtomicLength,
    /// A compare-and-swap or fetch-and-add remote address is not 8-byte aligned.
    Misaligned,
    /// `iova` differs from the remote address in the `wr` union.
    AddressMismatch,
    /// A UD or GSI send has no kernel address handle (`ah_num` is zero).
    NoAddressHandle,
    /// A UD or GSI destination QPN does not fit in 24 bits.
    QpnRange,
    /// A FLUSH with no or an unknown placement type, or an unknown selectivity level.
    BadFlush,
}

impl WqeError {
    /// Returns the status of the error completion to report for the rejected WQE.
    pub(crate) const fn wc_status(self) -> WcStatus {
        match self {
            Self::InlineTooLong
            | Self::LengthOverflow
            | Self::LengthMismatch
            | Self::MessageTooLong
            | Self::AtomicLength => WcStatus::LocLenErr,
            _ => WcStatus::LocQpOpErr,
        }
    }
}

/// The result of validating the local data of a WQE.
pub(crate) type WqeResult = Result<Payload, WqeError>;

/// Returns the size in bytes of `count` scatter/gather entries, or `None` on overflow.
pub(crate) fn sge_bytes(count: u32) -> Option<usize> {
    usize::try_from(count).ok()?.checked_mul(SGE_LEN)
}

/// Returns entry `i` of the `count` SGEs at byte `start` of `slot`, if it is inside both.
pub(crate) fn sge_at(slot: &[u8], start: usize, count: u32, i: u32) -> Option<Sge> {
    let off = sge_bytes(i)?.checked_add(start)?;
    (i < count).then_some(Sge {
        addr: u64::from_le_bytes(le(slot, off)?),
        length: u32::from_le_bytes(le(slot, off.checked_add(8)?)?),
        lkey: u32::from_le_bytes(le(slot, off.checked_add(12)?)?),
    })
}

impl SendWqe {
    /// Returns scatter/gather entry `i` from the slot the WQE was parsed from, or `None`.
    pub(crate) fn sge(&self, slot: &[u8], i: u32) -> Option<Sge> {
        match self.payload {
            Payload::Sges { start, count } => sge_at(slot, start, count, i),
            _ => None,
        }
    }

    /// Returns the inline data (or atomic-write operand) in the slot the WQE was parsed from.
    pub(crate) fn inline_data<'a>(&self, slot: &'a [u8]) -> Option<&'a [u8]> {
        match self.payload {
            Payload::Inline { .. } => slot.get(self.payload.byte_range()),
            _ => None,
        }
    }
}

impl RecvWqe {
    /// Returns scatter/gather entry `i` from the slot the WQE was parsed from, or `None`.
    pub(crate) fn sge(&self, slot: &[u8], i: u32) -> Option<Sge> {
        sge_at(slot, RECV_WQE_HDR_LEN, self.num_sge, i)
    }
}
