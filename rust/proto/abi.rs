// SPDX-License-Identifier: GPL-2.0

//! The user-space ABI rrxe shares with rdma-core's rxe provider (librxe), in one place: the
//! layout of the rings (`struct rxe_queue_buf`), of the work queue entries (`struct
//! rxe_send_wqe`, `struct rxe_recv_wqe`, `struct rxe_sge`) and of the completions (`struct
//! ib_uverbs_wc`), with the limits rxe sizes them by. The values are those of
//! `include/uapi/rdma/rdma_user_rxe.h` and `ib_user_verbs.h`; the module checks them against
//! the kernel's own headers at build time (`queue.rs`, against `ib/uabi.rs`). Native endian:
//! rrxe supports only little-endian targets. [`super::ring`], [`super::wqe`], [`super::wqe_encode`] and
//! [`super::cqe`] read and write these layouts.

// The ring header. Slot zero follows it.

/// Byte offset in the ring header of the `u32` base-two logarithm of the slot size.
pub(crate) const HDR_LOG2_ELEM_SIZE: usize = 0;

/// Byte offset in the ring header of the `u32` index mask, which is the slot count minus one.
pub(crate) const HDR_INDEX_MASK: usize = 4;

/// Byte offset in the ring header of the `u32` producer index.
pub(crate) const HDR_PRODUCER: usize = 128;

/// Byte offset in the ring header of the `u32` consumer index.
pub(crate) const HDR_CONSUMER: usize = 256;

/// Length in bytes of the ring header; slot zero starts at this offset.
pub(crate) const HDR_LEN: usize = 384;

// Sizes of the elements.

/// Size of the fixed part of a send WQE (`struct rxe_send_wqe`); the variable part follows.
pub(crate) const SEND_WQE_HDR_LEN: usize = 208;
/// Size of the fixed part of a receive WQE (`struct rxe_recv_wqe`); the SGE list follows.
pub(crate) const RECV_WQE_HDR_LEN: usize = 40;
/// Size of one scatter/gather entry (`struct rxe_sge`): `u64 addr`, `u32 length`, `u32 lkey`.
pub(crate) const SGE_LEN: usize = 16;
/// The longest message rxe sends (`RXE_PORT_MAX_MSG_SZ`, 2 GiB).
pub(crate) const MAX_MSG_SIZE: u32 = 1 << 31;
/// The largest queue pair number, which is a 24-bit field on the wire.
pub(crate) const MAX_QPN: u32 = 0x00ff_ffff;
/// Size of one completion as user space reads it (`struct ib_uverbs_wc`).
///
/// The C driver's completion slots hold a union with the kernel's larger `struct ib_wc`; rrxe
/// passes this size as the element size of a completion ring and lets the cache-line rounding
/// of [`super::ring::RingGeometry::new`] turn it into a 64-byte slot, which is all the provider
/// requires.
pub(crate) const CQE_LEN: usize = 48;
/// The scatter/gather entry count the largest send WQE is sized for (`RXE_MAX_SGE`).
pub(crate) const MAX_WQE_SGE: u32 = 32;

/// The largest amount of inline data a send WQE can carry (`RXE_MAX_INLINE_DATA`).
///
/// The C driver defines it as the largest WQE size minus the fixed part, which is the space of
/// [`MAX_WQE_SGE`] scatter/gather entries: 32 * 16 = 512 bytes.
pub(crate) const MAX_INLINE_DATA: u32 = MAX_WQE_SGE * SGE_LEN as u32;

/// The largest send WQE size in bytes (`RXE_MAX_WQE_SIZE`).
pub(crate) const MAX_SEND_WQE_SIZE: u32 = SEND_WQE_HDR_LEN as u32 + MAX_INLINE_DATA;

// Fields of the work queue entries.

/// Offset of the `u64 wr_id`, in send and receive WQEs alike.
pub(crate) const OFF_WR_ID: usize = 0;
/// Offset of the send WQE's `u32 opcode` (`enum ib_wr_opcode`).
pub(crate) const OFF_OPCODE: usize = 12;
/// Offset of the send WQE's `u32 send_flags`.
pub(crate) const OFF_SEND_FLAGS: usize = 16;
/// Offset of the `ex` word: big-endian immediate data or an rkey to invalidate.
pub(crate) const OFF_EX: usize = 20;
/// Offset of the `u64 remote_addr` of `wr.rdma`, `wr.atomic` and `wr.flush`, and of `wr.mw.addr`.
pub(crate) const OFF_REMOTE_ADDR: usize = 24;
/// Offset of `wr.rdma.rkey`, also used by `IB_WR_ATOMIC_WRITE`.
pub(crate) const OFF_RDMA_RKEY: usize = 32;
/// Offset of the `u64 wr.atomic.compare_add` (the compare value, or the value to add).
pub(crate) const OFF_ATOMIC_COMPARE_ADD: usize = 32;
/// Offset of the `u64 wr.atomic.swap`.
pub(crate) const OFF_ATOMIC_SWAP: usize = 40;
/// Offset of `wr.atomic.rkey`.
pub(crate) const OFF_ATOMIC_RKEY: usize = 48;
/// Offset of `wr.ud.remote_qpn`.
pub(crate) const OFF_UD_REMOTE_QPN: usize = 24;
/// Offset of `wr.ud.remote_qkey`.
pub(crate) const OFF_UD_REMOTE_QKEY: usize = 28;
/// Offset of the `u16 wr.ud.pkey_index`.
pub(crate) const OFF_UD_PKEY_INDEX: usize = 32;
/// Offset of `wr.ud.ah_num`, the kernel address handle index (the legacy `wr.ud.av` is unused).
pub(crate) const OFF_UD_AH_NUM: usize = 36;
/// Offset of the `u64 wr.mw.length`.
pub(crate) const OFF_MW_LENGTH: usize = 32;
/// Offset of `wr.mw.mr_lkey`, the memory region the window is bound to.
pub(crate) const OFF_MW_MR_LKEY: usize = 40;
/// Offset of `wr.mw.mw_rkey`, the window's current rkey.
pub(crate) const OFF_MW_MW_RKEY: usize = 44;
/// Offset of `wr.mw.rkey`, the window's new rkey.
pub(crate) const OFF_MW_RKEY: usize = 48;
/// Offset of `wr.mw.access`, the window's access flags.
pub(crate) const OFF_MW_ACCESS: usize = 52;
/// Offset of `wr.flush.rkey` (`wr.flush.length` at 32 is unused: the length is `dma.length`).
pub(crate) const OFF_FLUSH_RKEY: usize = 36;
/// Offset of the `u8 wr.flush.type`, the placement type.
pub(crate) const OFF_FLUSH_TYPE: usize = 40;
/// Offset of the `u8 wr.flush.level`, the selectivity level.
pub(crate) const OFF_FLUSH_LEVEL: usize = 41;
/// Offset of the `u64 iova`, the remote address the C requester puts on the wire.
pub(crate) const OFF_IOVA: usize = 152;
/// Offset of the send WQE's `dma.length`, the message length.
pub(crate) const OFF_DMA_LENGTH: usize = 184;
/// Offset of the send WQE's `dma.num_sge`.
pub(crate) const OFF_DMA_NUM_SGE: usize = 196;
/// Offset of the receive WQE's `dma.length`.
pub(crate) const OFF_RECV_DMA_LENGTH: usize = 16;
/// Offset of the receive WQE's `dma.num_sge`.
pub(crate) const OFF_RECV_DMA_NUM_SGE: usize = 28;

// Reading the fields: native endian, which is little endian on every target rrxe supports.

/// Reads `N` bytes at `off` of `buf`, or `None` when they are not all inside it.
pub(crate) fn le<const N: usize>(buf: &[u8], off: usize) -> Option<[u8; N]> {
    buf.get(off..off.checked_add(N)?)?.try_into().ok()
}

/// Reads a `u64` at `off`, or zero past the end (callers check the length first).
pub(crate) fn rd64(buf: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(le(buf, off).unwrap_or_default())
}

/// Reads a `u32` at `off`, or zero past the end (callers check the length first).
pub(crate) fn rd32(buf: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(le(buf, off).unwrap_or_default())
}

/// Reads a `u16` at `off`, or zero past the end (callers check the length first).
pub(crate) fn rd16(buf: &[u8], off: usize) -> u16 {
    u16::from_le_bytes(le(buf, off).unwrap_or_default())
}
