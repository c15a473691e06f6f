// SPDX-License-Identifier: GPL-2.0

//! On-demand paging (`struct ib_umem_odp`): user memory registered without pinning. The core
//! tracks the range with an MMU interval notifier; pages are faulted in on demand, in process
//! context, and the kernel may take any of them back at any time (reclaim, migration, `munmap`,
//! `madvise(MADV_DONTNEED)`), telling us through the notifier first.
//!
//! The data path runs in atomic context and cannot fault, nor take the umem's mutex. It reads
//! its own page table instead, under a spinlock:
//!
//! - a fault ([`UmemOdp::fault`], process context) first faults the pages in the way
//!   `get_user_pages` does for a caller that lets it drop the mmap lock (I/O is waited for
//!   without it, killably), then has the core map the range (`ib_umem_odp_map_dma_and_lock`,
//!   which returns with the umem mutex held and the pages valid for the notifier's sequence),
//!   copies the pages into the table, and releases the mutex;
//! - an invalidation (the notifier, under the umem mutex) clears the table's entries for the
//!   range, each under the spinlock, before it returns, that is before the pages go;
//! - an access ([`UmemOdp::read`], [`UmemOdp::write`], [`UmemOdp::atomic_u64`]) holds the
//!   spinlock while it copies: it sees every page of its range present (and then the pages stay
//!   until it is done, as the invalidation waits for the lock), or it fails with `EAGAIN` and
//!   moves no byte; the caller then asks for a fault in process context and tries again.
//!
//! Pages written through the table are marked dirty when their entry is cleared (an invalidation
//! or the release), so writes to file-backed shared mappings are written back.
//!
//! C header: [`include/rdma/ib_umem_odp.h`](srctree/include/rdma/ib_umem_odp.h).

use crate::{
    bindings,
    mm::{
        copy_page,
        page_atomic_u64,
        Fill, //
    },
    new_spinlock_irq,
    sync::SpinLockIrq, //
};
use core::{
    ffi::c_int,
    ptr::NonNull,
    sync::atomic::AtomicU64, //
};
use kernel::{
    alloc::KVVec,
    page::PAGE_SIZE,
    prelude::*, //
};

/// What `ibv_advise_mr` asks for (`enum ib_uverbs_advise_mr_advice`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Prefetch {
    /// Fault the pages in for reading.
    Read,
    /// Fault the pages in for writing.
    Write,
    /// Take note of the pages already present, without faulting.
    NoFault,
}

impl Prefetch {
    /// The advice from its uABI value; `None` for any other.
    pub(super) fn from_raw(advice: u32) -> Option<Self> {
        match advice {
            bindings::ib_uverbs_advise_mr_advice_IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH => {
                Some(Self::Read)
            }
            bindings::ib_uverbs_advise_mr_advice_IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE => {
                Some(Self::Write)
            }
            bindings::ib_uverbs_advise_mr_advice_IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT => {
                Some(Self::NoFault)
            }
            _ => None,
        }
    }
}

/// One range of an `ibv_advise_mr` request (a copy of its `struct ib_sge`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PrefetchRange {
    /// The local key of the MR.
    pub(crate) lkey: u32,
    /// The first address.
    pub(crate) addr: u64,
    /// The length in bytes.
    pub(crate) length: u32,
}

/// A table entry maps a page that may be read.
const READ: usize = 1;
/// A table entry maps a page that may be written.
const WRITE: usize = 2;
/// The page was written through the table (marked dirty when the entry goes).
const DIRTY: usize = 4;
/// The flag bits of an entry; the rest is the `struct page` pointer (at least 8-byte aligned).
const FLAGS: usize = READ | WRITE | DIRTY;

/// The most bytes one fault asks the core for: bounds the time a fault holds the umem mutex
/// and the mmap lock (callers ask again for the rest).
pub(crate) const MAX_FAULT_BYTES: u64 = 4 << 20;

/// The pages of the registration the data path may touch: one entry per page of the umem
/// range, 0 when the page is not present.
#[pin_data]
struct PageTable {
    #[pin]
    entries: SpinLockIrq<KVVec<usize>>,
    /// The first user address of the (page-aligned) range the notifier covers.
    start: usize,
    /// The registration's first byte, as an offset from `start`.
    first_off: usize,
    /// The registration's length in bytes.
    len: usize,
}

/// An on-demand-paging umem and the data path's table of its present pages.
///
/// # Invariants
///
/// `odp` is a live umem from `ib_umem_odp_get` with [`NOTIFIER_OPS`], released once, on drop;
/// its `private` field is null or points to `table`, which outlives the notifier (the release
/// removes it first). `table.entries` has one entry per page of `[start, ib_umem_end)`; a
/// non-zero entry is a page that is mapped at that address for the notifier's current sequence.
/// `ib` is the umem's device, whose memory a reference taken in [`Self::get`] keeps until the
/// release is done (a fault may outlive the MR and the device's registration: see
/// `pipeline/state/odp.rs`).
pub(crate) struct UmemOdp {
    odp: NonNull<bindings::ib_umem_odp>,
    table: Pin<KBox<PageTable>>,
    ib: NonNull<bindings::ib_device>,
}

// SAFETY: The umem is owned by this object and only used through the core's locked calls; the
// table is behind a spinlock.
unsafe impl Send for UmemOdp {}
// SAFETY: As above.
unsafe impl Sync for UmemOdp {}

/// The notifier callbacks of every ODP umem we create.
static NOTIFIER_OPS: bindings::mmu_interval_notifier_ops = bindings::mmu_interval_notifier_ops {
    invalidate: Some(invalidate),
    invalidate_start: None,
    invalidate_finish: None,
};

/// The invalidation callback: clears the table's entries for the range, then has the core
/// unmap it, all under the umem mutex (which a fault holds while it fills the table).
///
/// # Safety
///
/// Called by the MMU notifier core with the notifier of a live umem made by [`UmemOdp::get`].
unsafe extern "C" fn invalidate(
    mni: *mut bindings::mmu_interval_notifier,
    range: *const bindings::mmu_notifier_range,
    cur_seq: kernel::ffi::c_ulong,
) -> bool {
    // SAFETY: `range` is valid for the call.
    if !unsafe { bindings::rrxe_helper_odp_range_blockable(range) } {
        // The umem mutex may sleep; the core retries blockable.
        return false;
    }
    // SAFETY: `mni` is the notifier of a live ODP umem.
    let odp = unsafe { bindings::rrxe_helper_odp_of_notifier(mni) };
    // SAFETY: As above; the mutex orders us with faults and with the release.
    unsafe {
        bindings::rrxe_helper_odp_lock(odp);
        bindings::rrxe_helper_odp_set_seq(mni, cur_seq);
    }
    // SAFETY: The umem is live; `range` is valid.
    let (first, end, r_start, r_end) = unsafe {
        (
            bindings::rrxe_helper_odp_start(odp),
            bindings::rrxe_helper_odp_end(odp),
            (*range).start,
            (*range).end,
        )
    };
    let start = r_start.max(first);
    let stop = r_end.min(end);
    // SAFETY: `private` is read under the umem mutex it is written under; by the type
    // invariant it is null or the live table of this umem.
    let table = unsafe { (*odp).private.cast::<PageTable>().cast_const().as_ref() };
    if let Some(table) = table {
        let mut addr = start & !(PAGE_SIZE - 1);
        while addr < stop {
            table.clear((addr - first) / PAGE_SIZE);
            addr += PAGE_SIZE;
        }
    }
    // SAFETY: The mutex is held, as the core requires; the range is inside the umem.
    unsafe {
        if start < stop {
            bindings::ib_umem_odp_unmap_dma_pages(odp, start as u64, stop as u64);
        }
        bindings::rrxe_helper_odp_unlock(odp);
    }
    true
}

impl PageTable {
    /// Clears entry `idx` (if any), marking its page dirty if it was written. Process context.
    fn clear(&self, idx: usize) {
        let old = {
            let mut e = self.entries.lock();
            e.get_mut(idx).map_or(0, core::mem::take)
        };
        if old & DIRTY != 0 {
            // SAFETY: The entry was present, so the page is still mapped: its invalidation is
            // this call (or the release), which runs before the page goes.
            unsafe { bindings::rrxe_helper_odp_set_dirty((old & !FLAGS) as *mut bindings::page) };
        }
    }

    /// Runs `f(page, offset in page, bytes, done so far)` for each page piece of
    /// `[off, off + total)` of the registration, under the lock, after checking that every
    /// page is present (and writable when `write`); `EAGAIN` if one is not, `EFAULT` outside
    /// the registration.
    fn with_pages(
        &self,
        off: usize,
        total: usize,
        write: bool,
        mut f: impl FnMut(*mut bindings::page, usize, usize, usize),
    ) -> Result {
        if off.checked_add(total).is_none_or(|e| e > self.len) {
            return Err(EFAULT);
        }
        if total == 0 {
            return Ok(());
        }
        let first = self.first_off + off;
        let need = if write { READ | WRITE } else { READ };
        let mut e = self.entries.lock();
        let last = (first + total - 1) / PAGE_SIZE;
        for idx in first / PAGE_SIZE..=last {
            if *e.get(idx).ok_or(EFAULT)? & need != need {
                return Err(EAGAIN);
            }
        }
        let mut pos = first;
        let mut done = 0;
        while done < total {
            let idx = pos / PAGE_SIZE;
            let in_page = pos % PAGE_SIZE;
            let n = (PAGE_SIZE - in_page).min(total - done);
            let entry = e.get_mut(idx).ok_or(EFAULT)?;
            if write {
                *entry |= DIRTY;
            }
            f((*entry & !FLAGS) as *mut bindings::page, in_page, n, done);
            pos += n;
            done += n;
        }
        Ok(())
    }
}

impl UmemOdp {
    /// Registers `len` bytes of the calling process's memory at `addr` for on-demand paging
    /// with `IB_ACCESS_*` `access` (which must include `IB_ACCESS_ON_DEMAND`), and takes note
    /// of the pages already present (no fault).
    ///
    /// # Safety
    ///
    /// `dev` is a registered device; called in the process that owns `addr`.
    pub(super) unsafe fn get(
        dev: *mut bindings::ib_device,
        addr: u64,
        len: u64,
        access: c_int,
    ) -> Result<Self> {
        let ib = NonNull::new(dev).ok_or(EINVAL)?;
        let addr = usize::try_from(addr).map_err(|_| EINVAL)?;
        let len = usize::try_from(len).map_err(|_| EINVAL)?;
        // Implicit ODP (the whole address space) is not supported, as in C rxe.
        if len == 0 || len == usize::MAX {
            return Err(EINVAL);
        }
        let end = addr.checked_add(len).ok_or(EINVAL)?;
        let start = addr & !(PAGE_SIZE - 1);
        let npages = end.div_ceil(PAGE_SIZE) - start / PAGE_SIZE;
        let first_off = addr - start;
        // The table maps 4 KiB pages, also of huge-page mappings (the core would track those
        // by huge page for `IB_ACCESS_HUGETLB`).
        let access = access & !(bindings::ib_access_flags_IB_ACCESS_HUGETLB as c_int);
        // The core first: it refuses what it cannot track (its own page list of the same size
        // is allocated without a warning, so an absurd length is a plain `ENOMEM`).
        // SAFETY: Valid device, process context of the owner of `addr`; the ops are static.
        let odp = unsafe { bindings::ib_umem_odp_get(dev, addr, len, access, &NOTIFIER_OPS) };
        let odp = NonNull::new(kernel::error::from_err_ptr(odp)?).ok_or(ENOMEM)?;
        // SAFETY: A registered device: its struct device is live; put in `release` or on drop.
        unsafe { bindings::rrxe_helper_ib_device_hold(dev) };
        let release = |e: Error| {
            // SAFETY: `odp` is live and owned by nothing else yet; the device reference was
            // taken above.
            unsafe {
                bindings::ib_umem_odp_release(odp.as_ptr());
                bindings::rrxe_helper_ib_device_drop(dev);
            }
            e
        };
        // Sized by the user: accounted to them, and a failure is theirs to see, not a warning.
        let flags = GFP_KERNEL_ACCOUNT | __GFP_NOWARN;
        let mut entries = KVVec::with_capacity(npages, flags).map_err(|e| release(e.into()))?;
        entries
            .resize(npages, 0usize, flags)
            .map_err(|e| release(e.into()))?;
        let table = KBox::pin_init(
            pin_init!(PageTable {
                entries <- new_spinlock_irq!(entries, "rrxe_odp_table"),
                start,
                first_off,
                len,
            }),
            GFP_KERNEL_ACCOUNT,
        )
        .map_err(release)?;
        // SAFETY: `odp` is live; `private` is written under the umem mutex the notifier reads
        // it under. The table is pinned and outlives the umem (field order and `Drop`).
        unsafe {
            let p = odp.as_ptr();
            // The core's range starts at the page of `addr` (4 KiB pages: no huge-page ODP).
            if bindings::rrxe_helper_odp_start(p) != start {
                return Err(release(EINVAL));
            }
            bindings::rrxe_helper_odp_lock(p);
            (*p).private = core::ptr::from_ref::<PageTable>(&table).cast_mut().cast();
            bindings::rrxe_helper_odp_unlock(p);
        }
        let this = Self { odp, table, ib };
        // A snapshot of what is present already (as C rxe takes at registration).
        this.fault(0, len as u64, false, false)?;
        Ok(this)
    }

    /// Makes `[off, off + len)` of the registration present, for writing when `write` (if the
    /// registration is writable), faulting the pages in when `fault` (else only taking note of
    /// those present: `IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT`). At most [`MAX_FAULT_BYTES`]
    /// are faulted per call. Process context: sleeps, for as long as the file system behind the
    /// pages takes; `EINTR` if the caller is sent a fatal signal meanwhile (a work item never
    /// is: see `pipeline/state/odp.rs` for what bounds a fault there).
    pub(crate) fn fault(&self, off: u64, len: u64, write: bool, fault: bool) -> Result {
        let t = &*self.table;
        let off = usize::try_from(off).map_err(|_| EFAULT)?;
        let len = usize::try_from(len.min(MAX_FAULT_BYTES)).map_err(|_| EFAULT)?;
        if off.checked_add(len).is_none_or(|e| e > t.len) {
            return Err(EFAULT);
        }
        if len == 0 {
            return Ok(());
        }
        let va = t.start + t.first_off + off;
        let p = self.odp.as_ptr();
        // SAFETY: `p` is live by the invariant.
        let writable = unsafe { (*p).umem.writable() } != 0;
        // SAFETY: Constants, initialised at build time.
        let (valid, write_bit) =
            unsafe { (bindings::RRXE_HMM_PFN_VALID, bindings::RRXE_HMM_PFN_WRITE) };
        let mask = if write && writable {
            write_bit as u64
        } else {
            0
        };
        if fault {
            // The pages brought in first, waiting for I/O without the owner's mmap lock and
            // killably: `hmm_range_fault` below would wait holding it, uninterruptibly, and a
            // file system that never answers (a stalled FUSE server) would then block the
            // owner's `munmap` and exit. Only a fatal signal of the caller (`advise_mr`) is
            // final here; any other failure is the core's to find and report below.
            // SAFETY: `p` is live; process context, no lock held.
            let r = unsafe { bindings::rrxe_helper_odp_prefault(p, va, len, write && writable) };
            if r == EINTR.to_errno() {
                return Err(EINTR);
            }
        }
        // SAFETY: The range is inside the umem; process context. On success the umem mutex is
        // held and the pfns of the range are valid until it is released.
        let n = unsafe {
            bindings::ib_umem_odp_map_dma_and_lock(p, va as u64, len as u64, mask, fault)
        };
        kernel::error::to_result(n)?;
        let first = va / PAGE_SIZE - t.start / PAGE_SIZE;
        let last = (va + len - 1) / PAGE_SIZE - t.start / PAGE_SIZE;
        for idx in first..=last {
            // SAFETY: The umem mutex is held; `idx` is a page of the umem.
            let pfn = unsafe { bindings::rrxe_helper_odp_pfn(p, idx) };
            if pfn & valid == 0 {
                continue;
            }
            // SAFETY: A valid HMM pfn.
            let page = unsafe { bindings::rrxe_helper_hmm_pfn_to_page(pfn) } as usize;
            let mut entry = page | READ;
            if pfn & write_bit != 0 {
                entry |= WRITE;
            }
            let mut e = t.entries.lock();
            if let Some(slot) = e.get_mut(idx) {
                // Keep the dirty mark of the same page faulted again for writing.
                if *slot & !FLAGS == page {
                    entry |= *slot & DIRTY;
                }
                *slot = entry;
            }
        }
        // SAFETY: Taken by `ib_umem_odp_map_dma_and_lock` above.
        unsafe { bindings::rrxe_helper_odp_unlock(p) };
        Ok(())
    }

    /// Appends `len` bytes at byte `off` of the registration to `dst`; `EAGAIN` (and no byte
    /// moved) if a page is not present.
    pub(crate) fn read(&self, off: usize, len: usize, dst: &mut Fill<'_>) -> Result {
        let copy = |buf: *mut u8| {
            self.table
                .with_pages(off, len, false, |page, in_page, n, done| {
                    // SAFETY: The page is present and stays so while the table lock is held;
                    // `in_page + n <= PAGE_SIZE`; `buf` has `n` bytes at `done` (`append`).
                    unsafe { copy_page(page, in_page, buf.add(done), n, true) }
                })
        };
        // SAFETY: `with_pages` either fails before any page is visited, or visits the pages of
        // exactly `len` bytes, each copied to its place above.
        unsafe { dst.append(len, copy) }
    }

    /// Copies `src` to byte `off` of the registration; `EAGAIN` (and no byte moved) if a page
    /// is not present for writing.
    pub(crate) fn write(&self, off: usize, src: &[u8]) -> Result {
        let buf = src.as_ptr().cast_mut();
        self.table
            .with_pages(off, src.len(), true, |page, in_page, n, done| {
                // SAFETY: As in `read`; `buf` is only read for a copy into the page.
                unsafe { copy_page(page, in_page, buf.add(done), n, false) }
            })
    }

    /// Runs `f` on the 8-byte-aligned 64-bit word at byte `off` of the registration (present
    /// for writing: atomics write); `EAGAIN` if its page is not, `EINVAL` if misaligned.
    pub(crate) fn atomic_u64<R>(&self, off: usize, f: impl FnOnce(&AtomicU64) -> R) -> Result<R> {
        if (self.table.first_off + off) % 8 != 0 {
            return Err(EINVAL);
        }
        let mut f = Some(f);
        let mut r = None;
        self.table.with_pages(off, 8, true, |page, in_page, _, _| {
            if let Some(f) = f.take() {
                // SAFETY: The page is present while the lock is held; an aligned word never
                // crosses a page.
                r = Some(unsafe { page_atomic_u64(page, in_page, f) });
            }
        })?;
        r.ok_or(EFAULT)
    }

    /// The registration's length in bytes.
    pub(crate) fn len(&self) -> u64 {
        self.table.len as u64
    }
}

impl Drop for UmemOdp {
    fn drop(&mut self) {
        let p = self.odp.as_ptr();
        let t = &*self.table;
        // SAFETY: By the invariant the umem is live. Under the mutex no invalidation runs, so
        // the present pages are still mapped while their dirty marks are passed on.
        unsafe { bindings::rrxe_helper_odp_lock(p) };
        let n = t.entries.lock().len();
        for idx in 0..n {
            t.clear(idx);
        }
        // SAFETY: As above; the table is no longer reachable from the umem after this.
        unsafe {
            (*p).private = core::ptr::null_mut();
            bindings::rrxe_helper_odp_unlock(p);
            bindings::ib_umem_odp_release(p);
            // The release used the device (its DMA device); now it may go.
            bindings::rrxe_helper_ib_device_drop(self.ib.as_ptr());
        }
    }
}
