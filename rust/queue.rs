// SPDX-License-Identifier: GPL-2.0

//! A queue ring in the rxe shared-memory layout (the `rxe_queue` analogue): a 384-byte header
//! with the element size, index mask, producer and consumer indices, then the slots.
//!
//! One side produces and the other consumes. The kernel keeps a private copy of the index it
//! owns and of the mask; the header copies are only written for user space to read. Indices read
//! from the header are hostile and go through [`ring::sanitize`] (see `proto::ring`).

use crate::{
    mm::UserBuf,
    proto::{
        abi,
        ring::{
            self,
            RingError,
            RingGeometry, //
        },
        wqe::WqeError,
        wqe_encode::WqeOut,
    },
};
use kernel::{
    prelude::*,
    sync::Arc, //
};

/// Maps a sizing failure to the errno verbs report.
pub(crate) fn ring_errno(e: RingError) -> Error {
    match e {
        RingError::TooLarge => ENOMEM,
        RingError::Empty
        | RingError::TooManyElements
        | RingError::TooManySge
        | RingError::InlineTooLarge => EINVAL,
    }
}

/// The entries a ring held when a resize looked, for copying them outside its lock.
pub(crate) struct PendingSnapshot {
    buf: Arc<UserBuf>,
    geo: RingGeometry,
    /// The kernel's consumer index then, and how many entries were posted after it.
    cons: u32,
    n: u32,
}

/// A ring whose producer is user space (send and receive queues); the kernel consumes it.
pub(crate) struct KernelConsumedRing {
    buf: Arc<UserBuf>,
    geo: RingGeometry,
    /// The kernel's consumer index (masked).
    cons: u32,
}

impl KernelConsumedRing {
    /// Allocates a zeroed ring of geometry `geo` and writes its header.
    pub(crate) fn new(geo: RingGeometry) -> Result<Self> {
        Ok(Self {
            buf: new_buf(geo)?,
            geo,
            cons: 0,
        })
    }

    /// The shared buffer, to publish for `mmap`.
    pub(crate) fn buf(&self) -> &Arc<UserBuf> {
        &self.buf
    }

    /// The size of one slot in bytes.
    pub(crate) fn elem_size(&self) -> usize {
        self.geo.elem_size()
    }

    /// Copies the next unconsumed slot into `dst` (at most one slot) and returns `true`, or
    /// `false` when user space has produced nothing more. The producer index is hostile: it is
    /// sanitised, so at most a ring's worth of (possibly garbage) slots can ever be read.
    pub(crate) fn peek(&self, dst: &mut [u8]) -> Result<bool> {
        let prod = self.buf.load_acquire(abi::HDR_PRODUCER)?;
        if ring::checked_consume(prod, self.cons, self.geo.index_mask()).is_none() {
            return Ok(false);
        }
        let len = dst.len().min(self.geo.elem_size());
        self.buf
            .read(self.geo.slot_offset(self.cons), &mut dst[..len])?;
        Ok(true)
    }

    /// Copies what the slot `n` places after the consumer holds into `dst`: its first `head`
    /// bytes, then up to the length `extent` reads from them (at least `head`, at most a slot
    /// and `dst`). Returns the bytes copied, or `None` when user space has not produced that
    /// far (sanitised as [`Self::peek`]); the caller looks at no more of `dst`.
    pub(crate) fn peek_nth(
        &self,
        n: u32,
        dst: &mut [u8],
        head: usize,
        extent: impl FnOnce(&[u8]) -> usize,
    ) -> Result<Option<usize>> {
        let mask = self.geo.index_mask();
        let prod = self.buf.load_acquire(abi::HDR_PRODUCER)?;
        if ring::checked_consume(prod, self.cons, mask).is_none() {
            return Ok(None);
        }
        let prod = ring::sanitize(prod, mask);
        if n >= ring::available(prod, self.cons, mask) {
            return Ok(None);
        }
        let at = self.geo.slot_offset(self.cons.wrapping_add(n) & mask);
        let len = dst.len().min(self.geo.elem_size());
        let head = head.min(len);
        self.buf.read(at, &mut dst[..head])?;
        let end = extent(&dst[..head]).clamp(head, len);
        self.buf
            .read(at.saturating_add(head), &mut dst[head..end])?;
        Ok(Some(end))
    }

    /// The entries posted now, for a resize to copy without holding the ring's lock.
    pub(crate) fn pending_snapshot(&self) -> Result<PendingSnapshot> {
        let prod = self.buf.load_acquire(abi::HDR_PRODUCER)?;
        Ok(PendingSnapshot {
            buf: self.buf.clone(),
            geo: self.geo,
            cons: self.cons,
            n: ring::available(prod, self.cons, self.geo.index_mask()),
        })
    }

    /// Copies the snapshot's entries into this new, empty ring, at indices `0..n`, and
    /// publishes the producer index after them. Any context; no lock needed (nothing else has
    /// this ring yet). `EINVAL` when they do not fit.
    pub(crate) fn fill_from(&mut self, s: &PendingSnapshot) -> Result {
        if !ring::resize_fits(self.geo.capacity(), s.n) {
            return Err(EINVAL);
        }
        let elem = s.geo.elem_size().min(self.geo.elem_size());
        let (mut from, mut to) = (s.cons, 0);
        for _ in 0..s.n {
            copy_slot(
                &s.buf,
                s.geo.slot_offset(from),
                &self.buf,
                self.geo.slot_offset(to),
                elem,
            )?;
            from = ring::next(from, s.geo.index_mask());
            to = ring::next(to, self.geo.index_mask());
        }
        self.buf.store_release(abi::HDR_PRODUCER, to)
    }

    /// Takes this ring's place after a resize copied `s` from `old` into it ([`Self::fill_from`]):
    /// the entries `old` had consumed since the snapshot count as consumed here too. Under the
    /// lock both are held by; a few index operations. `EBUSY` if `old` is not the ring the
    /// snapshot was taken of (another resize replaced it meanwhile), or if entries were posted
    /// to it since (a post racing the resize: failing the resize loses none of them).
    pub(crate) fn skip_consumed_since(&mut self, old: &Self, s: &PendingSnapshot) -> Result {
        let prod = old.buf.load_acquire(abi::HDR_PRODUCER)?;
        if !Arc::ptr_eq(&old.buf, &s.buf)
            || ring::available(prod, s.cons, s.geo.index_mask()) != s.n
        {
            return Err(EBUSY);
        }
        let consumed = ring::count(old.cons, s.cons, old.geo.index_mask()).min(s.n);
        self.cons = ring::advance(0, consumed, self.geo.index_mask());
        self.buf.store_release(abi::HDR_CONSUMER, self.cons)
    }

    /// How many entries the ring can hold.
    pub(crate) fn capacity(&self) -> u32 {
        self.geo.capacity()
    }

    /// Entries produced and not yet consumed (the producer index sanitised).
    pub(crate) fn pending(&self) -> Result<u32> {
        let prod = self.buf.load_acquire(abi::HDR_PRODUCER)?;
        Ok(ring::available(prod, self.cons, self.geo.index_mask()))
    }

    /// Produces an entry from the kernel side (kernel QPs and SRQs, whose rings are not mapped:
    /// the header's producer index is the kernel's own), written in place by `encode` (no copy
    /// through a buffer). `ENOMEM` when the ring is full, as rxe reports a full receive queue;
    /// when `encode` fails, nothing is produced.
    pub(crate) fn push_local_with(
        &mut self,
        encode: impl FnOnce(&mut RingSlot<'_>) -> Result,
    ) -> Result {
        let mask = self.geo.index_mask();
        let prod = ring::sanitize(self.buf.load_acquire(abi::HDR_PRODUCER)?, mask);
        if ring::is_full(prod, self.cons, mask) {
            return Err(ENOMEM);
        }
        encode(&mut RingSlot {
            buf: &self.buf,
            base: self.geo.slot_offset(prod),
            size: self.geo.elem_size(),
        })?;
        self.buf
            .store_release(abi::HDR_PRODUCER, ring::next(prod, mask))
    }

    /// Consumes the slot last returned by [`Self::peek`] and publishes the consumer index.
    pub(crate) fn pop(&mut self) -> Result {
        self.cons = ring::next(self.cons, self.geo.index_mask());
        self.buf.store_release(abi::HDR_CONSUMER, self.cons)
    }
}

/// The free slot a kernel producer writes in place ([`KernelConsumedRing::push_local_with`]).
pub(crate) struct RingSlot<'a> {
    buf: &'a UserBuf,
    base: usize,
    size: usize,
}

impl WqeOut for RingSlot<'_> {
    fn size(&self) -> usize {
        self.size
    }

    fn put(&mut self, off: usize, bytes: &[u8]) -> core::result::Result<(), WqeError> {
        let end = off.checked_add(bytes.len()).ok_or(WqeError::Truncated)?;
        if end > self.size {
            return Err(WqeError::Truncated);
        }
        let at = self.base.checked_add(off).ok_or(WqeError::Truncated)?;
        self.buf.write(at, bytes).map_err(|_| WqeError::Truncated)
    }
}

/// Copies `len` bytes between two ring buffers through a small stack buffer: callers hold a
/// spinlock, so nothing may allocate.
fn copy_slot(src: &UserBuf, from: usize, dst: &UserBuf, to: usize, len: usize) -> Result {
    let mut tmp = [0u8; 64];
    let mut done = 0;
    while done < len {
        let n = (len - done).min(tmp.len());
        src.read(from + done, &mut tmp[..n])?;
        dst.write(to + done, &tmp[..n])?;
        done += n;
    }
    Ok(())
}

/// A zeroed ring buffer with its header (element size and index mask) written.
fn new_buf(geo: RingGeometry) -> Result<Arc<UserBuf>> {
    let buf = Arc::new(UserBuf::new(geo.buf_size())?, GFP_KERNEL)?;
    buf.store(abi::HDR_LOG2_ELEM_SIZE, geo.log2_elem_size())?;
    buf.store(abi::HDR_INDEX_MASK, geo.index_mask())?;
    Ok(buf)
}

/// A ring whose producer is the kernel (completion queues).
pub(crate) struct KernelProducedRing {
    buf: Arc<UserBuf>,
    geo: RingGeometry,
    /// The kernel's producer index (masked).
    prod: u32,
}

impl KernelProducedRing {
    /// Allocates a zeroed ring of geometry `geo` and writes its header.
    pub(crate) fn new(geo: RingGeometry) -> Result<Self> {
        Ok(Self {
            buf: new_buf(geo)?,
            geo,
            prod: 0,
        })
    }

    /// The shared buffer, to publish for `mmap`.
    pub(crate) fn buf(&self) -> &Arc<UserBuf> {
        &self.buf
    }

    /// How many entries the ring can hold.
    pub(crate) fn capacity(&self) -> u32 {
        self.geo.capacity()
    }

    /// The consumer's index, as user space last published it (sanitised).
    fn consumer(&self) -> Result<u32> {
        Ok(ring::sanitize(
            self.buf.load_acquire(abi::HDR_CONSUMER)?,
            self.geo.index_mask(),
        ))
    }

    /// Writes one entry and publishes it; `EOVERFLOW` when user space has not consumed enough.
    pub(crate) fn produce(&mut self, entry: &[u8]) -> Result {
        let mask = self.geo.index_mask();
        let cons = self.buf.load_acquire(abi::HDR_CONSUMER)?;
        let slot = ring::checked_produce(self.prod, cons, mask).ok_or(EOVERFLOW)?;
        if entry.len() > self.geo.elem_size() {
            return Err(EINVAL);
        }
        self.buf.write(self.geo.slot_offset(slot), entry)?;
        self.prod = ring::next(slot, mask);
        self.buf.store_release(abi::HDR_PRODUCER, self.prod)
    }

    /// Entries produced and not yet consumed.
    pub(crate) fn unread(&self) -> Result<u32> {
        Ok(ring::count(
            self.prod,
            self.consumer()?,
            self.geo.index_mask(),
        ))
    }

    /// Moves the unread entries into `new` (a resize): they start at index 0 there. Does not
    /// sleep (the caller holds the CQ lock).
    pub(crate) fn move_unread_into(&self, new: &mut Self) -> Result {
        let mask = self.geo.index_mask();
        let mut cons = self.consumer()?;
        let n = ring::count(self.prod, cons, mask);
        if !ring::resize_fits(new.capacity(), n) {
            return Err(EINVAL);
        }
        let elem = self.geo.elem_size().min(new.geo.elem_size());
        for _ in 0..n {
            let (from, to) = (self.geo.slot_offset(cons), new.geo.slot_offset(new.prod));
            copy_slot(&self.buf, from, &new.buf, to, elem)?;
            new.prod = ring::next(new.prod, new.geo.index_mask());
            cons = ring::next(cons, mask);
        }
        new.buf.store_release(abi::HDR_PRODUCER, new.prod)
    }
}

// The layouts `proto::abi` encodes by hand against the target kernel's headers, field by field:
// a kernel whose rxe user ABI differs fails the build.
const _: () = {
    use crate::ib::uabi;
    assert!(uabi::QUEUE_LOG2_ELEM_SIZE == abi::HDR_LOG2_ELEM_SIZE);
    assert!(uabi::QUEUE_INDEX_MASK == abi::HDR_INDEX_MASK);
    assert!(uabi::QUEUE_PRODUCER == abi::HDR_PRODUCER);
    assert!(uabi::QUEUE_CONSUMER == abi::HDR_CONSUMER);
    assert!(uabi::QUEUE_DATA == abi::HDR_LEN);
    assert!(uabi::SEND_WQE_SIZE == abi::SEND_WQE_HDR_LEN);
    assert!(uabi::SEND_WQE_IOVA == abi::OFF_IOVA);
    assert!(uabi::SEND_WQE_DMA_LENGTH == abi::OFF_DMA_LENGTH);
    assert!(uabi::SEND_WQE_DMA_NUM_SGE == abi::OFF_DMA_NUM_SGE);
    assert!(uabi::SEND_WR_OPCODE == abi::OFF_OPCODE);
    assert!(uabi::SEND_WR_SEND_FLAGS == abi::OFF_SEND_FLAGS);
    assert!(uabi::RECV_WQE_SIZE == abi::RECV_WQE_HDR_LEN);
    assert!(uabi::RECV_WQE_DMA_NUM_SGE == abi::OFF_RECV_DMA_NUM_SGE);
    assert!(uabi::SGE_SIZE == abi::SGE_LEN);
    assert!(uabi::CQE_SIZE == abi::CQE_LEN);
};
