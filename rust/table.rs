// SPDX-License-Identifier: GPL-2.0

//! A sparse table from small indices to values: the data path's lookup of QPs by number, MRs
//! by key and AHs by `ah_num`. Two levels (chunks of [`CHUNK`] slots, allocated on first use) so
//! lookups are O(1) and an idle device costs little. Lookups take the table's spinlock briefly
//! and clone the value out; they never allocate.

use crate::{
    new_spinlock_irq,
    sync::SpinLockIrq, //
};
use kernel::{
    alloc::Flags,
    prelude::*, //
};

/// Slots per chunk.
const CHUNK: usize = 64;

type Chunk<V> = KBox<[Option<V>; CHUNK]>;

/// A table of values indexed by `0..=max`.
#[pin_data]
pub(crate) struct SparseTable<V: Clone + Send> {
    #[pin]
    chunks: SpinLockIrq<KVec<Option<Chunk<V>>>>,
}

impl<V: Clone + Send> SparseTable<V> {
    /// An empty table for indices up to `max`.
    pub(crate) fn new(max: u32) -> impl PinInit<Self, Error> {
        let n = (max as usize) / CHUNK + 1;
        try_pin_init!(Self {
            chunks <- {
                let mut v = KVec::with_capacity(n, GFP_KERNEL)?;
                for _ in 0..n {
                    v.push(None, GFP_KERNEL)?;
                }
                new_spinlock_irq!(v, "rrxe_table")
            },
        }? Error)
    }

    /// Stores `value` at `index` (replacing any value there). `EINVAL` beyond the table.
    pub(crate) fn insert(&self, index: u32, value: V, flags: Flags) -> Result {
        let (c, s) = split(index);
        let missing = self.chunks.lock().get(c).ok_or(EINVAL)?.is_none();
        // Allocate outside the lock; a racing insert may install its chunk first.
        let mut fresh = if missing {
            Some(KBox::new([const { None }; CHUNK], flags)?)
        } else {
            None
        };
        let mut chunks = self.chunks.lock();
        let slot = chunks.get_mut(c).ok_or(EINVAL)?;
        if slot.is_none() {
            *slot = fresh.take();
        }
        let chunk = slot.as_mut().ok_or(ENOMEM)?;
        let old = chunk[s].replace(value);
        drop(chunks);
        drop(old);
        drop(fresh);
        Ok(())
    }

    /// Removes and returns the value at `index`.
    pub(crate) fn remove(&self, index: u32) -> Option<V> {
        let (c, s) = split(index);
        let mut chunks = self.chunks.lock();
        chunks.get_mut(c)?.as_mut()?[s].take()
    }

    /// A clone of the value at `index`.
    pub(crate) fn get(&self, index: u32) -> Option<V> {
        let (c, s) = split(index);
        let chunks = self.chunks.lock();
        chunks.get(c)?.as_ref()?[s].clone()
    }
}

/// The chunk and slot of `index`.
fn split(index: u32) -> (usize, usize) {
    let i = index as usize;
    (i / CHUNK, i % CHUNK)
}
