// SPDX-License-Identifier: GPL-2.0

//! Memory regions: user MRs over pinned user memory and the DMA MR of kernel PDs, with rxe's
//! key scheme (`lkey == rkey == index << 8 | key`, where the low byte is random and is what
//! fast registration may change).

use crate::{
    device::RrxeDevice,
    ib::{
        Device,
        Mr,
        MrKeys,
        Umem, //
    },
    index::PoolIndex,
    kernel_ext::random_u8,
};
use crate::{
    limits,
    new_spinlock_irq,
    sync::SpinLockIrq, //
};
use kernel::{
    prelude::*,
    sync::atomic::{
        Atomic,
        Relaxed, //
    },
};

/// `IB_MR_REREG_ACCESS`.
const REREG_ACCESS: u32 = 1 << 2;

/// What an MR maps.
enum MrKind {
    /// Pinned user memory, unpinned when the MR is deregistered.
    User {
        /// The pinned pages.
        umem: Umem,
    },
    /// All of kernel virtual memory (virtual DMA).
    Dma,
    /// A fast-registration MR: the page list `map_mr_sg` fills (posted with REG_MR).
    FastReg {
        /// The pages, at most the `max_num_sg` given at allocation.
        pages: Pin<KBox<SpinLockIrq<PageList>>>,
    },
}

/// A fast-registration page list: preallocated, filled without allocating.
pub(crate) struct PageList {
    pages: KVec<u64>,
}

/// The driver data of a memory region. TODO[MRDATA]: the data path adds the iova range,
/// access rights and the lookup by key.
pub(crate) struct RrxeMr {
    /// The MR index, returned to the device's pool when the MR is deregistered.
    _index: PoolIndex,
    kind: MrKind,
    /// `IB_ACCESS_*` rights (changed by re-registration).
    access: Atomic<u32>,
}

/// Keys for MR index `index`: the index in the upper 24 bits, a random key byte below.
fn keys_for(index: u32) -> MrKeys {
    let key = index << 8 | u32::from(random_u8());
    MrKeys {
        lkey: key,
        rkey: key,
    }
}

impl RrxeMr {
    fn new(dev: &Device<RrxeDevice>, kind: MrKind, access: u32) -> Result<(Self, MrKeys)> {
        let index = PoolIndex::alloc(dev.mr_pool())?;
        let keys = keys_for(index.get());
        Ok((
            Self {
                _index: index,
                kind,
                access: Atomic::new(access),
            },
            keys,
        ))
    }

    /// Re-registration in place: a new PD (moved by ib_core) and/or new access rights, which
    /// the pinned pages must allow (`EACCES` for write access to read-only memory).
    pub(crate) fn rereg(mr: &Mr<RrxeDevice>, flags: u32, access: u32) -> Result {
        if let MrKind::User { umem } = &mr.kind {
            umem.check_rereg(flags, access)?;
        }
        if flags & REREG_ACCESS != 0 {
            mr.access.store(access, Relaxed);
        }
        Ok(())
    }

    /// Registers pinned user memory addressed from `iova` (which may not wrap around).
    pub(crate) fn user(
        dev: &Device<RrxeDevice>,
        umem: Umem,
        iova: u64,
        access: u32,
    ) -> Result<(Self, MrKeys)> {
        iova.checked_add(umem.len()).ok_or(EINVAL)?;
        Self::new(dev, MrKind::User { umem }, access)
    }

    /// A fast-registration MR for up to `max_num_sg` pages (`EINVAL` above the device limit).
    pub(crate) fn fast_reg(dev: &Device<RrxeDevice>, max_num_sg: u32) -> Result<(Self, MrKeys)> {
        if max_num_sg == 0 || max_num_sg > limits::MAX_FAST_REG_PAGES {
            return Err(EINVAL);
        }
        let n = usize::try_from(max_num_sg).map_err(|_| EINVAL)?;
        let pages = KBox::pin_init(
            new_spinlock_irq!(PageList {
                pages: KVec::with_capacity(n, GFP_KERNEL)?,
            }),
            GFP_KERNEL,
        )?;
        Self::new(dev, MrKind::FastReg { pages }, 0)
    }

    /// Starts a new page list (`map_mr_sg`); only fast-registration MRs have one.
    pub(crate) fn map_begin(mr: &Mr<RrxeDevice>) -> Result {
        match &mr.kind {
            MrKind::FastReg { pages } => {
                pages.lock().pages.clear();
                Ok(())
            }
            _ => Err(EINVAL),
        }
    }

    /// Appends a page; `ENOMEM` beyond `max_num_sg` (the caller maps fewer entries).
    pub(crate) fn map_page(mr: &Mr<RrxeDevice>, addr: u64) -> Result {
        match &mr.kind {
            MrKind::FastReg { pages } => pages
                .lock()
                .pages
                .push_within_capacity(addr)
                .map_err(|_| ENOMEM),
            _ => Err(EINVAL),
        }
    }

    /// The DMA MR of a kernel PD.
    pub(crate) fn dma(dev: &Device<RrxeDevice>, access: u32) -> Result<(Self, MrKeys)> {
        Self::new(dev, MrKind::Dma, access)
    }
}

#[kernel::prelude::kunit_tests(rrxe_mr)]
mod tests {
    use super::*;

    #[test]
    fn keys_carry_the_index() {
        for index in [1u32, 2, 0x7ffff, 0x8_0000] {
            let k = keys_for(index);
            assert_eq!(k.lkey >> 8, index);
            assert_eq!(k.lkey, k.rkey);
        }
    }
}
