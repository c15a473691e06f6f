// SPDX-License-Identifier: GPL-2.0

//! A queue ring in the rxe shared-memory layout (the `rxe_queue` analogue): a 384-byte header
//! with the element size, index mask, producer and consumer indices, then the slots.
//!
//! One side produces and the other consumes. The kernel keeps a private copy of the index it
//! owns and of the mask; the header copies are only written for user space to read. Indices read
//! from the header are hostile and go through [`ring::sanitize`] (see `proto::ring`).

use crate::{
    mm::UserBuf,
    proto::ring::{
        self,
        RingError,
        RingGeometry, //
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

/// A ring whose producer is user space (send and receive queues); the kernel consumes it.
pub(crate) struct SharedRing {
    buf: Arc<UserBuf>,
}

impl SharedRing {
    /// Allocates a zeroed ring of geometry `geo` and writes its header.
    pub(crate) fn new(geo: RingGeometry) -> Result<Self> {
        Ok(Self { buf: new_buf(geo)? })
    }

    /// The shared buffer, to publish for `mmap`.
    pub(crate) fn buf(&self) -> &Arc<UserBuf> {
        &self.buf
    }
}

/// A zeroed ring buffer with its header (element size and index mask) written.
fn new_buf(geo: RingGeometry) -> Result<Arc<UserBuf>> {
    let buf = Arc::new(UserBuf::new(geo.buf_size())?, GFP_KERNEL)?;
    buf.store(ring::HDR_LOG2_ELEM_SIZE, geo.log2_elem_size())?;
    buf.store(ring::HDR_INDEX_MASK, geo.index_mask())?;
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
            self.buf.load_acquire(ring::HDR_CONSUMER)?,
            self.geo.index_mask(),
        ))
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
        // Called under the CQ's spinlock: no allocation, copy through a small stack buffer.
        let mut tmp = [0u8; 64];
        for _ in 0..n {
            let (from, to) = (self.geo.slot_offset(cons), new.geo.slot_offset(new.prod));
            let mut done = 0;
            while done < elem {
                let len = (elem - done).min(tmp.len());
                self.buf.read(from + done, &mut tmp[..len])?;
                new.buf.write(to + done, &tmp[..len])?;
                done += len;
            }
            new.prod = ring::next(new.prod, new.geo.index_mask());
            cons = ring::next(cons, mask);
        }
        new.buf.store_release(ring::HDR_PRODUCER, new.prod)
    }
}
