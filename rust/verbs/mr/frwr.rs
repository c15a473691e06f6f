// SPDX-License-Identifier: GPL-2.0

//! Fast-registration MRs (FRWR): a kernel consumer allocates one for up to `max_num_sg` pages,
//! fills its page list with `ib_map_mr_sg` and makes the list the MR's mapping by posting
//! `IB_WR_REG_MR`; `IB_WR_LOCAL_INV` or a SEND with Invalidate ends it. The data path walks the
//! mapping page by page under its lock, so an invalidation never changes the pages under a copy.

use super::{
    check_persistence,
    MrKind,
    RrxeMr, //
};
use crate::{
    device::RrxeDevice,
    ib::{
        AccessFlags,
        Device,
        Mr,
        MrKeys, //
    },
    limits,
    mm::KernelConsumer,
    new_spinlock_irq,
    sync::SpinLockIrq,
};
use kernel::{
    prelude::*,
    sync::atomic::{
        Relaxed,
        Release, //
    },
};

/// A fast-registration page list: preallocated, filled without allocating; and the mapping
/// the last `IB_WR_REG_MR` made valid.
pub(crate) struct PageList {
    pub(super) pages: KVec<u64>,
    /// Valid between a registration and an invalidation.
    pub(super) valid: bool,
    pub(super) iova: u64,
    pub(super) length: u64,
    pub(super) page_size: u64,
}

impl RrxeMr {
    /// Whether `p`, this MR's mapping (locked), is a valid registration named by `key`: not
    /// invalidated, nor registered again under another key since `key` found the MR (the key
    /// changes only under this lock, [`Self::fast_register`]).
    pub(super) fn names(&self, p: &PageList, key: u32) -> bool {
        p.valid && self.key.load(Relaxed) == key
    }

    /// Walks `len` bytes at `va` of the fast-registration mapping `pages` named by `key`,
    /// calling `f(kernel address, bytes)` for each piece within one page, in order, under the
    /// mapping's lock (an invalidation or a new registration cannot change the pages under the
    /// walk).
    pub(super) fn walk(
        &self,
        pages: &SpinLockIrq<PageList>,
        key: u32,
        va: u64,
        len: usize,
        mut f: impl FnMut(u64, core::ops::Range<usize>) -> Result,
    ) -> Result {
        let p = pages.lock();
        let ps = p.page_size;
        if !self.names(&p, key) || ps == 0 {
            return Err(EFAULT);
        }
        let off = va.checked_sub(p.iova).ok_or(EFAULT)?;
        if off.checked_add(len as u64).is_none_or(|e| e > p.length) {
            return Err(EFAULT);
        }
        let mut pos = (p.iova & (ps.wrapping_sub(1)))
            .checked_add(off)
            .ok_or(EFAULT)?;
        let mut done = 0usize;
        while done < len {
            let idx = usize::try_from(pos.checked_div(ps).ok_or(EFAULT)?).map_err(|_| EFAULT)?;
            let in_page = pos.checked_rem(ps).ok_or(EFAULT)?;
            let n = (ps.saturating_sub(in_page) as usize).min(len - done);
            let addr = p.pages.get(idx).ok_or(EFAULT)?.wrapping_add(in_page);
            f(addr, done..done + n)?;
            done += n;
            pos = pos.saturating_add(n as u64);
        }
        Ok(())
    }
}

impl PageList {
    /// The kernel address of the aligned 64-bit word at `va` of a valid fast registration.
    pub(super) fn word(&self, va: u64) -> Result<u64> {
        let p = self;
        let ps = p.page_size;
        if !p.valid || ps < 8 || va % 8 != 0 {
            return Err(EFAULT);
        }
        let off = va.checked_sub(p.iova).ok_or(EFAULT)?;
        if off.checked_add(8).is_none_or(|e| e > p.length) {
            return Err(EFAULT);
        }
        let pos = (p.iova & (ps - 1)).checked_add(off).ok_or(EFAULT)?;
        let idx = usize::try_from(pos / ps).map_err(|_| EFAULT)?;
        Ok(p.pages.get(idx).ok_or(EFAULT)?.wrapping_add(pos % ps))
    }
}

impl RrxeMr {
    /// A fast-registration MR for up to `max_num_sg` pages (`EINVAL` above the device limit).
    pub(crate) fn fast_reg(
        dev: &Device<RrxeDevice>,
        max_num_sg: u32,
        kernel: KernelConsumer,
    ) -> Result<(Self, MrKeys)> {
        if max_num_sg == 0 || max_num_sg > limits::MAX_FAST_REG_PAGES {
            return Err(EINVAL);
        }
        let n = usize::try_from(max_num_sg).map_err(|_| EINVAL)?;
        let pages = KBox::pin_init(
            new_spinlock_irq!(PageList {
                pages: KVec::with_capacity(n, GFP_KERNEL)?,
                valid: false,
                iova: 0,
                length: 0,
                page_size: 0,
            }),
            GFP_KERNEL,
        )?;
        Self::new(
            dev,
            MrKind::FastReg { pages, kernel },
            AccessFlags::empty(),
            0,
            0,
        )
    }

    /// Starts a new page list (`map_mr_sg`); only fast-registration MRs have one.
    pub(crate) fn map_begin(mr: &Mr<RrxeDevice>) -> Result {
        match &mr.kind {
            MrKind::FastReg { pages, .. } => {
                pages.lock().pages.clear();
                Ok(())
            }
            _ => Err(EINVAL),
        }
    }

    /// Appends a page; `ENOMEM` beyond `max_num_sg` (the caller maps fewer entries).
    pub(crate) fn map_page(mr: &Mr<RrxeDevice>, addr: u64) -> Result {
        match &mr.kind {
            MrKind::FastReg { pages, .. } => pages
                .lock()
                .pages
                .push_within_capacity(addr)
                .map_err(|_| ENOMEM),
            _ => Err(EINVAL),
        }
    }

    /// Executes a fast registration (`IB_WR_REG_MR`): the page list `map_mr_sg` built becomes
    /// the MR's valid mapping with `access`, named by `key` (the MR's index with the WQE's key
    /// byte) from now on. `EINVAL` for other MRs or a list too short.
    pub(crate) fn fast_register(mr: &Mr<RrxeDevice>, access: AccessFlags, key: u32) -> Result {
        let MrKind::FastReg { pages, .. } = &mr.kind else {
            return Err(EINVAL);
        };
        check_persistence(access)?;
        let (iova, length, page_size) = mr.frwr_layout();
        let page_size = u64::from(page_size);
        if page_size == 0 || !page_size.is_power_of_two() {
            return Err(EINVAL);
        }
        // The registered range may not wrap: addresses inside it are computed by addition.
        iova.checked_add(length).ok_or(EINVAL)?;
        let mut p = pages.lock();
        let room = (p.pages.len() as u64).saturating_mul(page_size);
        if (iova & (page_size - 1)).saturating_add(length) > room {
            return Err(EINVAL);
        }
        p.iova = iova;
        p.length = length;
        p.page_size = page_size;
        p.valid = true;
        // The rights first, then the key that makes them reachable (Release: a lookup that
        // sees the new key sees the new rights and mapping).
        mr.access.store(access.raw(), Relaxed);
        mr.key.store(key, Release);
        drop(p);
        Ok(())
    }

    /// Invalidates a fast-registration MR (`IB_WR_LOCAL_INV`, SEND with invalidate).
    pub(crate) fn invalidate(&self) -> Result {
        match &self.kind {
            MrKind::FastReg { pages, .. } => {
                pages.lock().valid = false;
                Ok(())
            }
            _ => Err(EINVAL),
        }
    }
}
