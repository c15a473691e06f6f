// SPDX-License-Identifier: GPL-2.0

//! Geometry and index arithmetic of the rings shared with user space, the `rxe_queue` analogue.
//!
//! The stock rdma-core rxe provider maps every send queue, receive queue, shared receive queue and
//! completion queue as one buffer: a 384-byte header followed by a power-of-two number of
//! power-of-two-sized slots. The header holds `log2_elem_size` at byte 0 and `index_mask` at byte 4
//! (both written once by the kernel), the producer index at byte 128 and the consumer index at
//! byte 256 (each on its own cache line). Slot `i` starts `i << log2_elem_size` bytes after the
//! header. The ring is empty when both indices are equal and full when advancing the producer would
//! make them equal, so a ring of `slots` slots holds at most `slots - 1` entries.
//!
//! Ownership of the indices is split between the two sides. For send, receive and shared receive
//! queues user space produces and the kernel consumes; for completion queues the kernel produces
//! and user space consumes. The kernel keeps a private copy of the index it owns and only ever
//! publishes that copy into the header; it never reads its own index back from the shared header,
//! because user space can overwrite it at any time. The index user space owns is hostile input:
//! it is always masked with the kernel's private copy of the index mask (never the header word)
//! before use, so that a corrupted or malicious value can only yield a count in `0..=mask` and a
//! slot inside the data area. The functions below encode those rules; the memory ordering
//! (release stores of an index after writing or reading a slot, acquire loads of the peer's index
//! before reading or writing one) is the caller's responsibility.
//!
//! The element sizes are those of the rxe uABI: a send WQE is a 208-byte fixed part followed by
//! either its scatter/gather list or its inline data, a receive WQE is a 40-byte fixed part
//! followed by its scatter/gather list, and a completion is a 48-byte `struct ib_uverbs_wc`.

use super::abi::{
    HDR_LEN,
    MAX_INLINE_DATA,
    MAX_WQE_SGE,
    RECV_WQE_HDR_LEN,
    SEND_WQE_HDR_LEN,
    SGE_LEN, //
};

/// The smallest slot size, one cache line, so that no two slots share a line.
///
/// This is the x86_64 and arm64 cache line size that the C driver's `cache_line_size()` returns.
/// User space reads the actual slot size from the header, so the value is not part of the uABI.
pub(crate) const CACHE_LINE: u32 = 64;

/// The largest ring buffer size in bytes.
///
/// The mmap information returned to user space carries the page-aligned buffer size as a `u32`.
/// Limiting the unaligned size to `0xffff_0000` keeps the aligned size representable for every
/// page size up to 64 KiB, and also keeps every byte offset inside a ring representable as a
/// `u32`.
pub(crate) const MAX_BUF_SIZE: u64 = 0xffff_0000;

/// The sizes the capability rounding computes with, as `u32`.
const SGE_SIZE: u32 = SGE_LEN as u32;
const SEND_WQE_HDR_SIZE: u32 = SEND_WQE_HDR_LEN as u32;
const RECV_WQE_HDR_SIZE: u32 = RECV_WQE_HDR_LEN as u32;

/// Why a ring could not be sized or a queue's capabilities could not be granted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RingError {
    /// A ring of zero entries was requested where at least one is required.
    Empty,
    /// More entries were requested than the device limit allows.
    TooManyElements,
    /// The slot size or the total buffer size overflows, or exceeds [`MAX_BUF_SIZE`].
    TooLarge,
    /// More scatter/gather entries per WQE were requested than [`MAX_WQE_SGE`].
    TooManySge,
    /// More inline data per send WQE was requested than [`MAX_INLINE_DATA`].
    InlineTooLarge,
}

/// Converts a `u32` byte count or offset to `usize`.
///
/// Every target the kernel supports has a `usize` of at least 32 bits, so the conversion cannot
/// fail; should it ever, the result is `usize::MAX`, which any bounds-checked access rejects.
fn to_usize(value: u32) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

/// The shape of one ring: how many slots it has and how large each slot is.
///
/// A value of this type always describes a ring whose slot count is a non-zero power of two, whose
/// slot size is a power of two of at least [`CACHE_LINE`] bytes and whose total size, header
/// included, is at most [`MAX_BUF_SIZE`]. The fields are private so that this invariant holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RingGeometry {
    /// Base-two logarithm of the slot size in bytes.
    log2_elem_size: u32,
    /// Number of slots, a power of two; one more than the capacity.
    slots: u32,
}

impl RingGeometry {
    /// Sizes a ring for at least `num_elem` entries of `elem_size` bytes each.
    ///
    /// The slot count is `num_elem + 1` rounded up to a power of two, so that the capacity
    /// (`slots - 1`) is at least `num_elem`; the slot size is the larger of `elem_size` and
    /// [`CACHE_LINE`], rounded up to a power of two. Fails with [`RingError::Empty`] when
    /// `num_elem` is zero, with [`RingError::TooManyElements`] when it exceeds `max_elem`, and with
    /// [`RingError::TooLarge`] when the buffer would exceed [`MAX_BUF_SIZE`]. Use this for
    /// completion queues and shared receive queues, which must hold at least one entry.
    pub(crate) fn new(num_elem: u32, elem_size: u32, max_elem: u32) -> Result<Self, RingError> {
        if num_elem == 0 {
            return Err(RingError::Empty);
        }
        Self::new_allow_empty(num_elem, elem_size, max_elem)
    }

    /// Sizes a ring like [`RingGeometry::new`], but accepts `num_elem == 0`.
    ///
    /// Verbs allows a queue pair without send or without receive work requests; the C driver then
    /// creates a one-slot ring of capacity zero, which is always both empty and full. Use this for
    /// the send and receive queues of a queue pair.
    pub(crate) fn new_allow_empty(
        num_elem: u32,
        elem_size: u32,
        max_elem: u32,
    ) -> Result<Self, RingError> {
        if num_elem > max_elem {
            return Err(RingError::TooManyElements);
        }
        let slots = num_elem
            .checked_add(1)
            .and_then(u32::checked_next_power_of_two)
            .ok_or(RingError::TooLarge)?;
        let elem = elem_size
            .max(CACHE_LINE)
            .checked_next_power_of_two()
            .ok_or(RingError::TooLarge)?;
        let data = u64::from(slots)
            .checked_mul(u64::from(elem))
            .ok_or(RingError::TooLarge)?;
        // HDR_LEN is a small constant; the conversion cannot fail.
        let hdr = u64::try_from(HDR_LEN).map_err(|_| RingError::TooLarge)?;
        let total = data.checked_add(hdr).ok_or(RingError::TooLarge)?;
        if total > MAX_BUF_SIZE {
            return Err(RingError::TooLarge);
        }
        Ok(Self {
            log2_elem_size: elem.trailing_zeros(),
            slots,
        })
    }

    /// Returns the base-two logarithm of the slot size, the header's `log2_elem_size` word.
    pub(crate) const fn log2_elem_size(&self) -> u32 {
        self.log2_elem_size
    }

    /// Returns the number of slots, a power of two.
    pub(crate) const fn slots(&self) -> u32 {
        self.slots
    }

    /// Returns the index mask, the header's `index_mask` word: the slot count minus one.
    ///
    /// The kernel must keep this value privately and use it, never the header word that user
    /// space can overwrite, to mask indices.
    pub(crate) const fn index_mask(&self) -> u32 {
        self.slots - 1
    }

    /// Returns how many entries the ring can hold, the slot count minus one.
    ///
    /// This is the rounded-up number of work requests or completions reported back to the user.
    pub(crate) const fn capacity(&self) -> u32 {
        self.slots - 1
    }

    /// Returns the slot size in bytes, a power of two of at least [`CACHE_LINE`].
    pub(crate) fn elem_size(&self) -> usize {
        to_usize(1 << self.log2_elem_size)
    }

    /// Returns the total buffer size in bytes: the header plus every slot.
    pub(crate) fn buf_size(&self) -> usize {
        // The constructor bounded this sum by MAX_BUF_SIZE, so it fits in a u32.
        HDR_LEN.saturating_add(to_usize(self.slots << self.log2_elem_size))
    }

    /// Returns the byte offset of slot `index` from the start of the buffer, header included.
    ///
    /// The index is masked first, so any `u32`, however hostile, yields the offset of a slot that
    /// lies entirely inside the buffer: `slot_offset(i) + elem_size() <= buf_size()`.
    pub(crate) fn slot_offset(&self, index: u32) -> usize {
        // (index & mask) < slots, so the shifted value is below slots << log2, which fits in a u32.
        HDR_LEN.saturating_add(to_usize((index & self.index_mask()) << self.log2_elem_size))
    }
}

/// Returns the number of entries between a consumer index and a producer index.
///
/// The result is always in `0..=mask`, whatever the inputs.
pub(crate) const fn count(prod: u32, cons: u32, mask: u32) -> u32 {
    prod.wrapping_sub(cons) & mask
}

/// Returns whether a ring holds no entries: the masked indices are equal.
pub(crate) const fn is_empty(prod: u32, cons: u32, mask: u32) -> bool {
    count(prod, cons, mask) == 0
}

/// Returns whether a ring is full: advancing the producer would make it equal to the consumer.
pub(crate) const fn is_full(prod: u32, cons: u32, mask: u32) -> bool {
    next(prod, mask) == cons & mask
}

/// Returns the masked index that follows `index`.
pub(crate) const fn next(index: u32, mask: u32) -> u32 {
    index.wrapping_add(1) & mask
}

/// Returns the masked index `n` slots after `index`.
pub(crate) const fn advance(index: u32, n: u32, mask: u32) -> u32 {
    index.wrapping_add(n) & mask
}

/// Makes an index read from user-writable memory safe to use by masking it.
///
/// `mask` must be the kernel's private copy of the index mask. The result always names a slot of
/// the ring, although not necessarily one holding valid data: a hostile producer can make the
/// kernel consume stale or garbage entries of its own ring, which the WQE validation must handle,
/// but never make it address memory outside the ring.
pub(crate) const fn sanitize(untrusted: u32, mask: u32) -> u32 {
    untrusted & mask
}

/// Returns how many entries a kernel consumer may read, given a hostile producer index.
///
/// `user_prod` is the producer index read from the header; `own_cons` is the kernel's private
/// consumer index. The result is in `0..=mask`, that is never more than the ring's capacity.
pub(crate) const fn available(user_prod: u32, own_cons: u32, mask: u32) -> u32 {
    count(sanitize(user_prod, mask), own_cons, mask)
}

/// Returns the slot index a kernel consumer should read next, or `None` when the ring is empty.
///
/// `user_prod` is the producer index read from the header (hostile) and `own_cons` the kernel's
/// private consumer index. After reading the slot the kernel sets its private index to
/// [`next`] of the returned index and publishes it as the header's consumer index.
pub(crate) const fn checked_consume(user_prod: u32, own_cons: u32, mask: u32) -> Option<u32> {
    if available(user_prod, own_cons, mask) == 0 {
        None
    } else {
        Some(own_cons & mask)
    }
}

/// Returns how many entries a kernel producer may still write, given a hostile consumer index.
///
/// `own_prod` is the kernel's private producer index and `user_cons` the consumer index read from
/// the header. The result is in `0..=mask`. A lying consumer can only make the kernel overwrite
/// completions that user space has not read yet, which harms nobody but itself.
pub(crate) const fn free_space(own_prod: u32, user_cons: u32, mask: u32) -> u32 {
    mask - count(own_prod, sanitize(user_cons, mask), mask)
}

/// Returns the slot index a kernel producer should write next, or `None` when the ring is full.
///
/// `own_prod` is the kernel's private producer index and `user_cons` the consumer index read from
/// the header (hostile). After writing the slot the kernel sets its private index to [`next`] of
/// the returned index and publishes it as the header's producer index.
pub(crate) const fn checked_produce(own_prod: u32, user_cons: u32, mask: u32) -> Option<u32> {
    if free_space(own_prod, user_cons, mask) == 0 {
        None
    } else {
        Some(own_prod & mask)
    }
}

/// Returns whether a ring resized to `new_capacity` entries can keep the `used` entries it holds.
///
/// Resizing a completion queue or shared receive queue below its current fill level must fail.
pub(crate) const fn resize_fits(new_capacity: u32, used: u32) -> bool {
    used <= new_capacity
}

/// Returns the larger of two `u32` values in a `const` context.
const fn max_u32(a: u32, b: u32) -> u32 {
    if a > b {
        a
    } else {
        b
    }
}

/// Returns the size in bytes of a send WQE with room for `max_sge` scatter/gather entries or
/// `max_inline` bytes of inline data, whichever is larger, or `None` on overflow.
///
/// This is `208 + max(max_sge * 16, max_inline)`, before the rounding to a slot size.
pub(crate) const fn send_wqe_size(max_sge: u32, max_inline: u32) -> Option<u32> {
    let Some(sges) = max_sge.checked_mul(SGE_SIZE) else {
        return None;
    };
    SEND_WQE_HDR_SIZE.checked_add(max_u32(sges, max_inline))
}

/// Returns the size in bytes of a receive WQE with room for `max_sge` scatter/gather entries, or
/// `None` on overflow.
///
/// This is `40 + max_sge * 16`, before the rounding to a slot size.
pub(crate) const fn recv_wqe_size(max_sge: u32) -> Option<u32> {
    let Some(sges) = max_sge.checked_mul(SGE_SIZE) else {
        return None;
    };
    RECV_WQE_HDR_SIZE.checked_add(sges)
}

/// The send queue capabilities granted to a new queue pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SendCaps {
    /// Scatter/gather entries per send WQE, reported back as `max_send_sge`.
    pub(crate) max_sge: u32,
    /// Inline data bytes per send WQE, reported back as `max_inline_data`.
    pub(crate) max_inline: u32,
    /// Send WQE size in bytes before the rounding to a slot size; the ring's element size.
    pub(crate) wqe_size: u32,
}

/// Rounds the requested send capabilities the way the C driver does at queue pair creation.
///
/// The variable part of a send WQE holds either the scatter/gather list or the inline data, so
/// both share `max(max_send_sge * 16, max_inline_data)` bytes: the granted inline size is that
/// many bytes and the granted scatter/gather count is that many bytes divided by 16. Both may be
/// larger than requested, and user space relies on the granted values. Requests above the device
/// limits ([`MAX_WQE_SGE`] entries, [`MAX_INLINE_DATA`] bytes) are rejected rather than capped, as
/// in the C driver, which keeps the granted values within those limits too.
pub(crate) fn round_send_caps(
    max_send_sge: u32,
    max_inline_data: u32,
) -> Result<SendCaps, RingError> {
    if max_send_sge > MAX_WQE_SGE {
        return Err(RingError::TooManySge);
    }
    if max_inline_data > MAX_INLINE_DATA {
        return Err(RingError::InlineTooLarge);
    }
    // Both factors are bounded above, so neither the product nor the sum can overflow.
    let space = max_u32(max_send_sge * SGE_SIZE, max_inline_data);
    Ok(SendCaps {
        max_sge: space / SGE_SIZE,
        max_inline: space,
        wqe_size: SEND_WQE_HDR_SIZE + space,
    })
}
