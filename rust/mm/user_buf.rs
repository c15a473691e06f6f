// SPDX-License-Identifier: GPL-2.0

//! A kernel buffer that user space may map and write at any time.

use crate::bindings;
use core::{
    ptr::NonNull,
    sync::atomic::{
        AtomicU32,
        Ordering, //
    },
};
use kernel::{
    page::PAGE_SIZE,
    prelude::*, //
};

/// The largest buffer allocated physically contiguous (16 KiB, an order-2 allocation, which the
/// page allocator rarely fails): a queue of a few dozen entries, most of them. Larger ones, and
/// small ones when no contiguous pages are free, are pages mapped together (`vmap`).
const CONTIGUOUS_MAX: usize = 4 * PAGE_SIZE;

/// A zeroed, page-aligned buffer that user space may map, charged to the memory cgroup of the
/// process that made it.
///
/// User space can write any byte at any time, so the buffer's contents are untrusted and change
/// under the kernel's feet: every access is bounds-checked here, indices are atomics with
/// acquire/release ordering (the protocol of the rxe rings), and bulk reads copy into private
/// memory before the caller looks at them.
///
/// A small buffer is physically contiguous pages in the kernel's direct map (no `vmap` to set
/// up and tear down, as io_uring's rings), a large one order-0 pages mapped together like
/// `vmalloc_user`'s. Either way its pages are order-0 pages with their own references: pages
/// stay alive while user space maps them (the mapping holds page references), so dropping the
/// buffer while it is mapped is safe: the memory is freed at `munmap`.
///
/// # Invariants
///
/// `ptr` points to `len` zeroed-at-allocation bytes, page aligned: if `pages` is null, from
/// `alloc_pages_exact` (direct-mapped order-0 pages), otherwise from
/// `rrxe_helper_vmalloc_user`, whose page array is `pages`. Freed on drop.
pub(crate) struct UserBuf {
    ptr: NonNull<u8>,
    len: usize,
    pages: *mut *mut bindings::page,
}

// SAFETY: The buffer is plain memory; all accesses are atomic or copies.
unsafe impl Send for UserBuf {}
// SAFETY: As above: shared access only uses atomics and copies, never references into it.
unsafe impl Sync for UserBuf {}

impl UserBuf {
    /// Allocates `len` zeroed bytes (rounded up to pages by the allocator).
    pub(crate) fn new(len: usize) -> Result<Self> {
        if len == 0 {
            return Err(EINVAL);
        }
        if len <= CONTIGUOUS_MAX {
            // SAFETY: Any size is valid; the pages come split into order-0 pages, each with its
            // reference.
            let ptr = unsafe { bindings::rrxe_helper_alloc_user_pages_exact(len) };
            if let Some(ptr) = NonNull::new(ptr.cast::<u8>()) {
                // Zeroed here, all the pages user space can map and no more (the allocator's
                // `__GFP_ZERO` would clear the whole power-of-two block, a 12 KiB ring's 16).
                // SAFETY: `alloc_pages_exact` returned the pages of `len` bytes rounded up.
                unsafe { core::ptr::write_bytes(ptr.as_ptr(), 0, len.next_multiple_of(PAGE_SIZE)) };
                // INVARIANT: Freshly allocated and zeroed, direct-mapped; no page array.
                return Ok(Self {
                    ptr,
                    len,
                    pages: core::ptr::null_mut(),
                });
            }
        }
        let mut pages = core::ptr::null_mut();
        // SAFETY: Any size is valid; `pages` is written on success only.
        let ptr = unsafe { bindings::rrxe_helper_vmalloc_user(len, &mut pages) };
        let ptr = NonNull::new(ptr.cast::<u8>()).ok_or(ENOMEM)?;
        // INVARIANT: Freshly allocated and zeroed, with its page array.
        Ok(Self { ptr, len, pages })
    }

    /// The size in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// An aligned `u32` at `off`, or `None` when out of bounds or misaligned.
    fn atomic_u32(&self, off: usize) -> Option<&AtomicU32> {
        if off % 4 != 0 || off.checked_add(4)? > self.len {
            return None;
        }
        // SAFETY: In bounds and aligned (the buffer is page aligned); `AtomicU32` has the layout
        // of `u32` and every bit pattern is valid, and user writes are atomic word stores.
        Some(unsafe { &*self.ptr.as_ptr().add(off).cast::<AtomicU32>() })
    }

    /// Loads the `u32` at `off` with acquire ordering (an index the other side publishes).
    pub(crate) fn load_acquire(&self, off: usize) -> Result<u32> {
        Ok(self.atomic_u32(off).ok_or(EINVAL)?.load(Ordering::Acquire))
    }

    /// Stores `v` at `off` with release ordering (publishing an index after writing data).
    pub(crate) fn store_release(&self, off: usize, v: u32) -> Result {
        self.atomic_u32(off)
            .ok_or(EINVAL)?
            .store(v, Ordering::Release);
        Ok(())
    }

    /// Plain store of a header word the kernel owns (set before user space maps the buffer).
    pub(crate) fn store(&self, off: usize, v: u32) -> Result {
        self.atomic_u32(off)
            .ok_or(EINVAL)?
            .store(v, Ordering::Relaxed);
        Ok(())
    }

    /// Copies `dst.len()` bytes at `off` out of the buffer (a snapshot: user space may be writing).
    pub(crate) fn read(&self, off: usize, dst: &mut [u8]) -> Result {
        let end = off.checked_add(dst.len()).ok_or(EINVAL)?;
        if end > self.len {
            return Err(EINVAL);
        }
        // SAFETY: The source range is in bounds; `dst` is private memory that cannot overlap
        // the buffer. Concurrent user writes only make the snapshot's bytes arbitrary, which
        // callers treat as untrusted input.
        unsafe {
            core::ptr::copy_nonoverlapping(self.ptr.as_ptr().add(off), dst.as_mut_ptr(), dst.len())
        };
        Ok(())
    }

    /// Copies `src` into the buffer at `off`.
    pub(crate) fn write(&self, off: usize, src: &[u8]) -> Result {
        let end = off.checked_add(src.len()).ok_or(EINVAL)?;
        if end > self.len {
            return Err(EINVAL);
        }
        // SAFETY: The destination range is in bounds and `src` cannot overlap it.
        unsafe {
            core::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.as_ptr().add(off), src.len())
        };
        Ok(())
    }

    /// Maps the buffer into `vma`, from its start; the VMA may not be larger than the buffer's
    /// pages.
    ///
    /// # Safety
    ///
    /// `vma` is a valid VMA of the calling process being set up by an `mmap` handler (its
    /// `mmap_lock` held for writing).
    pub(crate) unsafe fn remap(&self, vma: *mut bindings::vm_area_struct) -> Result {
        if !self.pages.is_null() {
            // SAFETY: By the invariant the buffer is a `VM_USERMAP` mapping; the caller passes a
            // valid VMA. `remap_vmalloc_range` checks the VMA size against the allocation.
            return kernel::error::to_result(unsafe {
                bindings::remap_vmalloc_range(vma, self.ptr.as_ptr().cast(), 0)
            });
        }
        // SAFETY: The caller passes a valid VMA.
        let (start, len) = unsafe {
            (
                bindings::rrxe_helper_vma_start(vma),
                bindings::rrxe_helper_vma_len(vma),
            )
        };
        if len > self.len.next_multiple_of(PAGE_SIZE) {
            return Err(EINVAL);
        }
        for off in (0..len).step_by(PAGE_SIZE) {
            let va = self.ptr.as_ptr().wrapping_add(off) as usize;
            // SAFETY: `va` is a direct-map address inside the buffer (`off` is below its pages'
            // end); the helper checks it anyway and returns null if it is not.
            let page = unsafe { bindings::rrxe_helper_virt_to_page(va) };
            if page.is_null() {
                return Err(EINVAL);
            }
            // SAFETY: `page` is an order-0 page of this buffer (by the invariant, with its own
            // reference, which the mapping takes another of), `start + off` lies in the VMA, and
            // the caller holds the `mmap_lock` for writing as an `mmap` handler does.
            kernel::error::to_result(unsafe { bindings::vm_insert_page(vma, start + off, page) })?;
        }
        // SAFETY: The caller passes a valid VMA being set up.
        unsafe { bindings::rrxe_helper_vma_set_dontexpand_dontdump(vma) };
        Ok(())
    }
}

impl Drop for UserBuf {
    fn drop(&mut self) {
        if self.pages.is_null() {
            // SAFETY: By the invariant `ptr` and `len` came from `alloc_pages_exact`, freed once,
            // here (pages user space still maps live on: the mapping holds their references).
            unsafe { bindings::free_pages_exact(self.ptr.as_ptr().cast(), self.len) };
            return;
        }
        // SAFETY: By the invariant `ptr`, `pages` and `len` came from the allocating helper
        // and are freed once, here.
        unsafe { bindings::rrxe_helper_vfree_user(self.ptr.as_ptr().cast(), self.pages, self.len) };
    }
}
