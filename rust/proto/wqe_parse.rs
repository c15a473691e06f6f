// SPDX-License-Identifier: GPL-2.0

//! Validation of the work queue entries user space posts. Every WQE is hostile input: user
//! space can change a slot at any time, so the kernel copies the slot into private memory first
//! and parses the copy exactly once with [`parse_send_wqe`] or [`parse_recv_wqe`]. The parsers
//! never allocate and never panic; they return offsets into the copy instead of copying
//! scatter/gather lists.

use super::{
    abi::*,
    qp_state::QpType,
    wqe::{
        allowed,
        sge_at,
        sge_bytes,
        Payload,
        RecvWqe,
        SendFlags,
        SendWqe,
        WqeError,
        WqeResult,
        WrDetail,
        WrOpcode,
        FLUSH_GLOBAL,
        FLUSH_MR,
        FLUSH_PERSISTENT,
        FLUSH_RANGE, //
    },
};

/// Checks that `num` SGEs at `start` are at most `max`, lie inside `slot` and have lengths that
/// sum, without overflow, to exactly `dma_length`; returns them as a [`Payload::Sges`].
fn check_sges(slot: &[u8], start: usize, num: u32, max: u32, dma_length: u32) -> WqeResult {
    if num > max {
        return Err(WqeError::TooManySge);
    }
    let end = sge_bytes(num).and_then(|n| n.checked_add(start));
    if end.is_none_or(|end| end > slot.len()) {
        return Err(WqeError::Truncated);
    }
    let mut sum: u32 = 0;
    for i in 0..num {
        let sge = sge_at(slot, start, num, i).ok_or(WqeError::Truncated)?;
        sum = sum
            .checked_add(sge.length)
            .ok_or(WqeError::LengthOverflow)?;
    }
    if sum != dma_length {
        return Err(WqeError::LengthMismatch);
    }
    Ok(Payload::Sges { start, count: num })
}

/// Returns the `len` bytes after the send WQE's fixed part as a [`Payload::Inline`].
fn inline_payload(slot: &[u8], len: u32) -> WqeResult {
    let len = usize::try_from(len).map_err(|_| WqeError::Truncated)?;
    let end = SEND_WQE_HDR_LEN.checked_add(len);
    if end.is_none_or(|end| end > slot.len()) {
        return Err(WqeError::Truncated);
    }
    let start = SEND_WQE_HDR_LEN;
    Ok(Payload::Inline { start, len })
}

/// How much of a send slot [`parse_send_wqe`] may read, from its fixed part `hdr` (at least
/// [`SEND_WQE_HDR_LEN`] bytes): the fixed part and the inline bytes or the SGEs it claims,
/// whichever is longer. A slot copied out of a ring needs only this much copied (at most a
/// slot): parsing that prefix gives what parsing the whole slot would, error or not.
pub(crate) fn send_wqe_extent(hdr: &[u8]) -> usize {
    let inline = SendFlags(rd32(hdr, OFF_SEND_FLAGS)).contains(SendFlags::INLINE)
        || rd32(hdr, OFF_OPCODE) == WrOpcode::AtomicWrite.to_raw();
    let data = if inline {
        usize::try_from(rd32(hdr, OFF_DMA_LENGTH)).unwrap_or(usize::MAX)
    } else {
        0
    };
    let sges = sge_bytes(rd32(hdr, OFF_DMA_NUM_SGE)).unwrap_or(usize::MAX);
    SEND_WQE_HDR_LEN.saturating_add(data.max(sges))
}

/// Returns the `wr_id` of a send or receive slot, for the error completion of a rejected WQE.
pub(crate) fn peek_wr_id(slot: &[u8]) -> Option<u64> {
    le(slot, OFF_WR_ID).map(u64::from_le_bytes)
}

/// Parses and validates `slot`, the private copy of a send queue slot.
///
/// `qp`, `max_sge` and `max_inline` are the queue pair's type and granted capabilities. Local
/// operations ignore the data fields; flush takes its length from `dma.length` and atomic write
/// its operand from the 8 bytes after the fixed part, as the provider writes them, whatever
/// `num_sge` and the inline flag say. Other opcodes use inline data when the flag is set and the
/// SGE list otherwise, whose lengths must sum to `dma.length` exactly: a provider that disagrees
/// with itself is rejected rather than believed either way. `iova` must equal the union's remote
/// address (the provider writes both), so that exactly one remote address exists. Atomics need at
/// least 8 bytes of local buffer, as the provider checks; the alignment of an atomic write is left
/// to the responder (IBA A19.4.2), as in C rxe.
pub(crate) fn parse_send_wqe(
    slot: &[u8],
    qp: QpType,
    max_sge: u32,
    max_inline: u32,
) -> Result<SendWqe, WqeError> {
    if slot.len() < SEND_WQE_HDR_LEN {
        return Err(WqeError::Truncated);
    }
    let opcode = WrOpcode::from_raw(rd32(slot, OFF_OPCODE)).ok_or(WqeError::BadOpcode)?;
    if !allowed(opcode, qp) {
        return Err(WqeError::OpcodeNotAllowed);
    }
    let flags = SendFlags(rd32(slot, OFF_SEND_FLAGS));
    let detail = match opcode {
        WrOpcode::RdmaWrite
        | WrOpcode::RdmaWriteWithImm
        | WrOpcode::RdmaRead
        | WrOpcode::AtomicWrite => WrDetail::Rdma {
            rkey: rd32(slot, OFF_RDMA_RKEY),
        },
        WrOpcode::AtomicCmpAndSwp | WrOpcode::AtomicFetchAndAdd => WrDetail::Atomic {
            compare_add: rd64(slot, OFF_ATOMIC_COMPARE_ADD),
            swap: rd64(slot, OFF_ATOMIC_SWAP),
            rkey: rd32(slot, OFF_ATOMIC_RKEY),
        },
        WrOpcode::Flush => WrDetail::Flush {
            rkey: rd32(slot, OFF_FLUSH_RKEY),
            kind: slot.get(OFF_FLUSH_TYPE).copied().unwrap_or(0),
            level: slot.get(OFF_FLUSH_LEVEL).copied().unwrap_or(0),
        },
        WrOpcode::BindMw => WrDetail::Mw {
            addr: rd64(slot, OFF_REMOTE_ADDR),
            length: rd64(slot, OFF_MW_LENGTH),
            mr_lkey: rd32(slot, OFF_MW_MR_LKEY),
            mw_rkey: rd32(slot, OFF_MW_MW_RKEY),
            rkey: rd32(slot, OFF_MW_RKEY),
            access: rd32(slot, OFF_MW_ACCESS),
        },
        WrOpcode::Send | WrOpcode::SendWithImm if matches!(qp, QpType::Ud | QpType::Gsi) => {
            WrDetail::Ud {
                remote_qpn: rd32(slot, OFF_UD_REMOTE_QPN),
                remote_qkey: rd32(slot, OFF_UD_REMOTE_QKEY),
                pkey_index: rd16(slot, OFF_UD_PKEY_INDEX),
                ah_num: rd32(slot, OFF_UD_AH_NUM),
            }
        }
        _ => WrDetail::None,
    };
    let remote = matches!(
        detail,
        WrDetail::Rdma { .. } | WrDetail::Atomic { .. } | WrDetail::Flush { .. }
    );
    let iova = if remote {
        rd64(slot, OFF_REMOTE_ADDR)
    } else {
        0
    };
    if remote && rd64(slot, OFF_IOVA) != iova {
        return Err(WqeError::AddressMismatch);
    }
    let atomic = matches!(detail, WrDetail::Atomic { .. });
    match detail {
        WrDetail::Ud { ah_num: 0, .. } => return Err(WqeError::NoAddressHandle),
        WrDetail::Ud { remote_qpn, .. } if remote_qpn > MAX_QPN => return Err(WqeError::QpnRange),
        WrDetail::Atomic { .. } if iova % 8 != 0 => return Err(WqeError::Misaligned),
        WrDetail::Flush { kind, level, .. }
            if kind == 0
                || kind & !(FLUSH_GLOBAL | FLUSH_PERSISTENT) != 0
                || !matches!(level, FLUSH_RANGE | FLUSH_MR) =>
        {
            return Err(WqeError::BadFlush)
        }
        _ => {}
    }
    let dma_length = rd32(slot, OFF_DMA_LENGTH);
    let inline = flags.contains(SendFlags::INLINE);
    let payload = match opcode {
        WrOpcode::LocalInv | WrOpcode::BindMw | WrOpcode::Flush => Payload::None,
        WrOpcode::AtomicWrite if dma_length != 8 => return Err(WqeError::LengthMismatch),
        WrOpcode::AtomicWrite => inline_payload(slot, 8)?,
        WrOpcode::RdmaRead | WrOpcode::AtomicCmpAndSwp | WrOpcode::AtomicFetchAndAdd if inline => {
            return Err(WqeError::InlineNotAllowed)
        }
        _ if inline && dma_length > max_inline => return Err(WqeError::InlineTooLong),
        _ if inline => inline_payload(slot, dma_length)?,
        _ => {
            let num = rd32(slot, OFF_DMA_NUM_SGE);
            check_sges(slot, SEND_WQE_HDR_LEN, num, max_sge, dma_length)?
        }
    };
    let length = match opcode {
        WrOpcode::LocalInv | WrOpcode::BindMw => 0,
        _ => dma_length,
    };
    if length > MAX_MSG_SIZE && opcode != WrOpcode::Flush {
        return Err(WqeError::MessageTooLong);
    }
    if atomic && length < 8 {
        return Err(WqeError::AtomicLength);
    }
    let num_sge = match payload {
        Payload::Sges { count, .. } => count,
        _ => 0,
    };
    Ok(SendWqe {
        wr_id: rd64(slot, OFF_WR_ID),
        opcode,
        flags,
        ex: rd32(slot, OFF_EX),
        detail,
        iova,
        length,
        num_sge,
        payload,
    })
}

/// Returns the `wr_id` of the WQE in `slot` (send or receive), even of one that does not parse
/// (to complete it in error); zero if the slot is too short to hold one.
pub(crate) fn wr_id(slot: &[u8]) -> u64 {
    rd64(slot, OFF_WR_ID)
}

/// Parses and validates `slot`, the private copy of a receive queue slot: at most `max_sge`
/// entries, inside the slot, whose lengths sum without overflow to exactly `dma.length`.
pub(crate) fn parse_recv_wqe(slot: &[u8], max_sge: u32) -> Result<RecvWqe, WqeError> {
    if slot.len() < RECV_WQE_HDR_LEN {
        return Err(WqeError::Truncated);
    }
    let length = rd32(slot, OFF_RECV_DMA_LENGTH);
    let num_sge = rd32(slot, OFF_RECV_DMA_NUM_SGE);
    check_sges(slot, RECV_WQE_HDR_LEN, num_sge, max_sge, length)?;
    let wr_id = rd64(slot, OFF_WR_ID);
    Ok(RecvWqe {
        wr_id,
        length,
        num_sge,
    })
}
