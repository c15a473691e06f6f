// SPDX-License-Identifier: GPL-2.0

//! Writing send WQEs for kernel consumers: kernel work requests go into the same send ring, in
//! the same `struct rxe_send_wqe` layout user space writes, so one requester serves both (and
//! parses both with [`super::wqe_parse::parse_send_wqe`]). Fast registration, which only kernel
//! consumers may post, has an rrxe-private encoding ([`OPCODE_REG_MR`]): it names the MR by its
//! index, never by pointer, and is only accepted from rings user space cannot write.

use super::abi::{
    le,
    OFF_ATOMIC_COMPARE_ADD,
    OFF_ATOMIC_RKEY,
    OFF_ATOMIC_SWAP,
    OFF_DMA_LENGTH,
    OFF_DMA_NUM_SGE,
    OFF_EX,
    OFF_IOVA,
    OFF_OPCODE,
    OFF_RDMA_RKEY,
    OFF_RECV_DMA_LENGTH,
    OFF_RECV_DMA_NUM_SGE,
    OFF_REMOTE_ADDR,
    OFF_SEND_FLAGS,
    OFF_UD_AH_NUM,
    OFF_UD_PKEY_INDEX,
    OFF_UD_REMOTE_QKEY,
    OFF_UD_REMOTE_QPN,
    OFF_WR_ID,
    RECV_WQE_HDR_LEN,
    SEND_WQE_HDR_LEN,
    SGE_LEN, //
};
use super::wqe::{
    sge_bytes,
    Sge,
    WqeError,
    WrDetail,
    WrOpcode, //
};

/// `IB_WR_REG_MR`: the opcode of a fast registration (kernel rings only).
pub(crate) const OPCODE_REG_MR: u32 = 0x20;
/// Where a fast registration keeps the MR index.
const OFF_REG_MR_INDEX: usize = 24;
/// Where a fast registration keeps the new key.
const OFF_REG_KEY: usize = 28;
/// Where a fast registration keeps the access flags.
const OFF_REG_ACCESS: usize = 32;

/// The local data of a kernel send; `S`, the consumer's type of SGE, read where it is.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SendData<'a, S = Sge> {
    /// Scatter/gather entries.
    Sges(&'a [S]),
    /// Inline bytes, already copied from the consumer's buffers.
    Inline(&'a [u8]),
}

/// A kernel send work request to encode.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KernelSend<'a, S = Sge> {
    pub(crate) wr_id: u64,
    pub(crate) opcode: WrOpcode,
    /// `enum ib_send_flags`.
    pub(crate) flags: u32,
    /// Immediate data (as stored in memory) or the rkey to invalidate.
    pub(crate) ex: u32,
    /// The remote address of RDMA and atomic operations.
    pub(crate) remote_addr: u64,
    pub(crate) detail: WrDetail,
    pub(crate) data: SendData<'a, S>,
}

/// Where an encoder writes a WQE: a byte slice, or a ring slot written in place.
pub(crate) trait WqeOut {
    /// The slot's size in bytes.
    fn size(&self) -> usize;

    /// Writes `bytes` at `off`; [`WqeError::Truncated`] past the end of the slot.
    fn put(&mut self, off: usize, bytes: &[u8]) -> Result<(), WqeError>;
}

impl WqeOut for [u8] {
    fn size(&self) -> usize {
        self.len()
    }

    fn put(&mut self, off: usize, bytes: &[u8]) -> Result<(), WqeError> {
        let end = off.checked_add(bytes.len()).ok_or(WqeError::Truncated)?;
        self.get_mut(off..end)
            .ok_or(WqeError::Truncated)?
            .copy_from_slice(bytes);
        Ok(())
    }
}

/// Zeros for a WQE header.
const ZEROS: [u8; SEND_WQE_HDR_LEN] = [0; SEND_WQE_HDR_LEN];

/// Writes `s` into `slot`: the header (cleared first) and the SGEs or the inline bytes; what
/// lies past them is left as it was (readers stop at the SGE count or the inline length).
/// Each SGE is read once. Fails when it does not fit, has more than `max_sge` SGEs or more
/// than `max_inline` inline bytes, or its lengths overflow.
pub(crate) fn encode_send_wqe<S: Copy + Into<Sge>>(
    slot: &mut (impl WqeOut + ?Sized),
    s: &KernelSend<'_, S>,
    max_sge: u32,
    max_inline: u32,
) -> Result<(), WqeError> {
    if slot.size() < SEND_WQE_HDR_LEN {
        return Err(WqeError::Truncated);
    }
    slot.put(0, &ZEROS)?;
    slot.put(OFF_WR_ID, &s.wr_id.to_le_bytes())?;
    slot.put(OFF_OPCODE, &s.opcode.to_raw().to_le_bytes())?;
    slot.put(OFF_SEND_FLAGS, &s.flags.to_le_bytes())?;
    slot.put(OFF_EX, &s.ex.to_le_bytes())?;
    match s.detail {
        WrDetail::Rdma { rkey } => {
            slot.put(OFF_REMOTE_ADDR, &s.remote_addr.to_le_bytes())?;
            slot.put(OFF_RDMA_RKEY, &rkey.to_le_bytes())?;
            slot.put(OFF_IOVA, &s.remote_addr.to_le_bytes())?;
        }
        WrDetail::Atomic {
            compare_add,
            swap,
            rkey,
        } => {
            slot.put(OFF_REMOTE_ADDR, &s.remote_addr.to_le_bytes())?;
            slot.put(OFF_ATOMIC_COMPARE_ADD, &compare_add.to_le_bytes())?;
            slot.put(OFF_ATOMIC_SWAP, &swap.to_le_bytes())?;
            slot.put(OFF_ATOMIC_RKEY, &rkey.to_le_bytes())?;
            slot.put(OFF_IOVA, &s.remote_addr.to_le_bytes())?;
        }
        WrDetail::Ud {
            remote_qpn,
            remote_qkey,
            pkey_index,
            ah_num,
        } => {
            slot.put(OFF_UD_REMOTE_QPN, &remote_qpn.to_le_bytes())?;
            slot.put(OFF_UD_REMOTE_QKEY, &remote_qkey.to_le_bytes())?;
            slot.put(OFF_UD_PKEY_INDEX, &pkey_index.to_le_bytes())?;
            slot.put(OFF_UD_AH_NUM, &ah_num.to_le_bytes())?;
        }
        WrDetail::None | WrDetail::Mw { .. } | WrDetail::Flush { .. } => {}
    }
    let (length, num) = match s.data {
        SendData::Sges(sges) => {
            let num = u32::try_from(sges.len()).map_err(|_| WqeError::TooManySge)?;
            if num > max_sge {
                return Err(WqeError::TooManySge);
            }
            let length = put_sges(slot, SEND_WQE_HDR_LEN, sges)?;
            (length, num)
        }
        SendData::Inline(bytes) => {
            let len = u32::try_from(bytes.len()).map_err(|_| WqeError::InlineTooLong)?;
            if len > max_inline {
                return Err(WqeError::InlineTooLong);
            }
            slot.put(SEND_WQE_HDR_LEN, bytes)?;
            (len, 0)
        }
    };
    slot.put(OFF_DMA_LENGTH, &length.to_le_bytes())?;
    slot.put(OFF_DMA_NUM_SGE, &num.to_le_bytes())?;
    Ok(())
}

/// Writes `sges` from `off` on, reading each once; returns their total length.
fn put_sges<S: Copy + Into<Sge>>(
    slot: &mut (impl WqeOut + ?Sized),
    mut off: usize,
    sges: &[S],
) -> Result<u32, WqeError> {
    let mut length: u32 = 0;
    for sge in sges {
        let sge: Sge = (*sge).into();
        length = length
            .checked_add(sge.length)
            .ok_or(WqeError::LengthOverflow)?;
        slot.put(off, &sge.addr.to_le_bytes())?;
        slot.put(off + 8, &sge.length.to_le_bytes())?;
        slot.put(off + 12, &sge.lkey.to_le_bytes())?;
        off += SGE_LEN;
    }
    Ok(length)
}

/// A fast registration: make MR `mr_index` valid with `key` and `access`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RegWqe {
    pub(crate) wr_id: u64,
    pub(crate) flags: u32,
    pub(crate) mr_index: u32,
    pub(crate) key: u32,
    pub(crate) access: u32,
}

/// Writes a fast registration into `slot`.
pub(crate) fn encode_reg_wqe(
    slot: &mut (impl WqeOut + ?Sized),
    r: &RegWqe,
) -> Result<(), WqeError> {
    if slot.size() < SEND_WQE_HDR_LEN {
        return Err(WqeError::Truncated);
    }
    slot.put(0, &ZEROS)?;
    slot.put(OFF_WR_ID, &r.wr_id.to_le_bytes())?;
    slot.put(OFF_OPCODE, &OPCODE_REG_MR.to_le_bytes())?;
    slot.put(OFF_SEND_FLAGS, &r.flags.to_le_bytes())?;
    slot.put(OFF_REG_MR_INDEX, &r.mr_index.to_le_bytes())?;
    slot.put(OFF_REG_KEY, &r.key.to_le_bytes())?;
    slot.put(OFF_REG_ACCESS, &r.access.to_le_bytes())
}

fn rd32(slot: &[u8], off: usize) -> Option<u32> {
    le(slot, off).map(u32::from_le_bytes)
}

/// Reads a fast registration back, or `None` when `slot` holds something else.
pub(crate) fn parse_reg_wqe(slot: &[u8]) -> Option<RegWqe> {
    if rd32(slot, OFF_OPCODE)? != OPCODE_REG_MR {
        return None;
    }
    Some(RegWqe {
        wr_id: le(slot, OFF_WR_ID).map(u64::from_le_bytes)?,
        flags: rd32(slot, OFF_SEND_FLAGS)?,
        mr_index: rd32(slot, OFF_REG_MR_INDEX)?,
        key: rd32(slot, OFF_REG_KEY)?,
        access: rd32(slot, OFF_REG_ACCESS)?,
    })
}

/// Writes a receive WQE (`struct rxe_recv_wqe`) for a kernel work request into `slot`: the
/// kernel posts into the same ring format user space uses. The header is cleared first; what
/// lies past the SGEs is left as it was. Each SGE is read once. Fails if the SGEs do not fit
/// in the slot or exceed `max_sge`, or their lengths overflow.
pub(crate) fn encode_recv_wqe<S: Copy + Into<Sge>>(
    slot: &mut (impl WqeOut + ?Sized),
    wr_id: u64,
    sges: &[S],
    max_sge: u32,
) -> Result<(), WqeError> {
    let num = u32::try_from(sges.len()).map_err(|_| WqeError::TooManySge)?;
    if num > max_sge {
        return Err(WqeError::TooManySge);
    }
    let end = sge_bytes(num)
        .and_then(|b| b.checked_add(RECV_WQE_HDR_LEN))
        .ok_or(WqeError::TooManySge)?;
    if end > slot.size() {
        return Err(WqeError::Truncated);
    }
    slot.put(0, &ZEROS[..RECV_WQE_HDR_LEN])?;
    let length = put_sges(slot, RECV_WQE_HDR_LEN, sges)?;
    slot.put(OFF_WR_ID, &wr_id.to_le_bytes())?;
    slot.put(OFF_RECV_DMA_LENGTH, &length.to_le_bytes())?;
    slot.put(OFF_RECV_DMA_NUM_SGE, &num.to_le_bytes())?;
    Ok(())
}
