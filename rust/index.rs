// SPDX-License-Identifier: GPL-2.0

//! Object numbers (QPNs, and later MR/MW/SRQ/AH indices): a cyclic allocator over a range, so a
//! number freed by a destroyed object is not handed out again at once (late packets of an old
//! QP must not reach a new one). The numbers a remote peer must name (QPNs, MR indices in rkeys)
//! come from spread pools, which step a random distance between allocations so that one number
//! does not give away the next.

use crate::{
    kernel_ext::random_u8,
    new_spinlock_irq,
    sync::SpinLockIrq, //
};
use kernel::{
    alloc::Flags,
    id_pool::IdPool,
    prelude::*,
    sync::Arc, //
};

/// The allocator state, under the pool's mutex.
struct PoolState {
    ids: IdPool,
    /// Where the next search starts.
    next: usize,
}

/// A cyclic allocator of numbers in `min..=max`. The lock never sleeps; growing the bitmap
/// allocates outside it with the caller's flags (`GFP_ATOMIC` where the caller may not sleep).
#[pin_data]
pub(crate) struct IndexPool {
    #[pin]
    state: SpinLockIrq<PoolState>,
    min: usize,
    max: usize,
    /// Steps a random 1..=256 numbers between allocations instead of one.
    spread: bool,
}

/// The numbers a spread pool's bitmap covers from the start (its random steps land there).
const SPREAD_SPAN: usize = 4096;

impl IndexPool {
    /// An empty pool of the numbers `min..=max`.
    pub(crate) fn new(min: u32, max: u32) -> impl PinInit<Self> {
        let (min, max) = (min as usize, max as usize);
        pin_init!(Self {
            state <- new_spinlock_irq!(PoolState { ids: IdPool::new(), next: min }, "rrxe_index_pool"),
            min,
            max,
            spread: false,
        })
    }

    /// An empty spread pool of the numbers `min..=max`: its bitmap covers [`SPREAD_SPAN`]
    /// numbers from `min` at once, and it steps randomly.
    pub(crate) fn new_spread(min: u32, max: u32) -> Result<impl PinInit<Self>> {
        let (min, max) = (min as usize, max as usize);
        let ids = IdPool::with_capacity(max.saturating_add(1).min(min + SPREAD_SPAN), GFP_KERNEL)?;
        let next = min + usize::from(random_u8());
        Ok(pin_init!(Self {
            state <- new_spinlock_irq!(PoolState { ids, next }, "rrxe_index_pool"),
            min,
            max,
            spread: true,
        }))
    }

    /// Allocates a free number, growing the bitmap (with `flags`) as needed; `ENOSPC` when all
    /// are in use.
    pub(crate) fn alloc(&self, flags: Flags) -> Result<u32> {
        loop {
            let mut st = self.state.lock();
            let start = st.next;
            // Search from the hint, then wrap around to the start of the range once.
            for from in [start, self.min] {
                let found = st.ids.find_unused_id(from).map(|id| id.as_usize());
                if let Some(id) = found.filter(|&id| id <= self.max) {
                    if let Some(unused) = st.ids.find_unused_id(id) {
                        unused.acquire();
                    }
                    let step = if self.spread {
                        1 + usize::from(random_u8())
                    } else {
                        1
                    };
                    st.next = if id >= self.max.saturating_sub(step) {
                        self.min
                    } else {
                        id + step
                    };
                    return u32::try_from(id).map_err(|_| ENOSPC);
                }
            }
            // Nothing free below the bitmap's end: grow it if the range goes further.
            if st.ids.capacity() > self.max {
                return Err(ENOSPC);
            }
            let request = st.ids.grow_request().ok_or(ENOSPC)?;
            drop(st);
            let resizer = request.realloc(flags)?;
            self.state.lock().ids.grow(resizer);
        }
    }

    /// Returns `id` to the pool.
    pub(crate) fn free(&self, id: u32) {
        self.state.lock().ids.release_id(id as usize);
    }
}

/// A number taken from a shared pool, returned when dropped (with the object it names).
pub(crate) struct PoolIndex {
    pool: Arc<IndexPool>,
    id: u32,
}

impl PoolIndex {
    /// Takes a free number from `pool` (process context).
    pub(crate) fn alloc(pool: &Arc<IndexPool>) -> Result<Self> {
        Self::alloc_flags(pool, GFP_KERNEL)
    }

    /// Takes a free number from `pool`, allocating with `flags` if the pool must grow.
    pub(crate) fn alloc_flags(pool: &Arc<IndexPool>, flags: Flags) -> Result<Self> {
        Ok(Self {
            id: pool.alloc(flags)?,
            pool: pool.clone(),
        })
    }

    /// The number.
    pub(crate) fn get(&self) -> u32 {
        self.id
    }
}

impl Drop for PoolIndex {
    fn drop(&mut self) {
        self.pool.free(self.id);
    }
}
