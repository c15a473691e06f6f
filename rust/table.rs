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

    /// Calls `f` with each value, outside the lock: under it, the values of one chunk are
    /// cloned at a time, after skipping at most [`CHUNK`] empty chunks, so interrupts stay off
    /// briefly. A value inserted or removed meanwhile may or may not be seen.
    pub(crate) fn for_each(&self, mut f: impl FnMut(&V)) {
        let mut c = 0;
        loop {
            let mut batch: [Option<V>; CHUNK] = [const { None }; CHUNK];
            {
                let chunks = self.chunks.lock();
                let end = c + CHUNK;
                while c < end && matches!(chunks.get(c), Some(None)) {
                    c += 1;
                }
                let Some(slot) = chunks.get(c) else {
                    return;
                };
                if let Some(chunk) = slot {
                    for (b, v) in batch.iter_mut().zip(chunk.iter()) {
                        b.clone_from(v);
                    }
                }
            }
            batch.iter().flatten().for_each(&mut f);
            c += 1;
        }
    }
}

/// The chunk and slot of `index`.
fn split(index: u32) -> (usize, usize) {
    let i = index as usize;
    (i / CHUNK, i % CHUNK)
}

#[kernel::prelude::kunit_tests(rrxe_table)]
mod tests {
    use super::*;

    #[test]
    fn each_value_is_visited_once_across_empty_chunks() -> Result {
        let t = KBox::pin_init(SparseTable::<u32>::new(CHUNK as u32 * 300), GFP_KERNEL)?;
        // Values in the first chunk, after more than a skip's worth of empty ones, and last.
        let at = [0u32, 5, CHUNK as u32 * 200 + 1, CHUNK as u32 * 300];
        for &i in &at {
            t.insert(i, i + 1, GFP_KERNEL)?;
        }
        let _ = t.remove(5);
        let (mut n, mut sum) = (0, 0);
        t.for_each(|v| {
            n += 1;
            sum += *v;
        });
        assert_eq!(n, 3);
        assert_eq!(sum, 1 + CHUNK as u32 * 200 + 2 + CHUNK as u32 * 300 + 1);
        Ok(())
    }
}
