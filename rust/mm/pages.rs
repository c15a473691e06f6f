// SPDX-License-Identifier: GPL-2.0

//! Byte access to memory the data path copies to and from: pages pinned by a user memory
//! region, and kernel virtual addresses of the direct map (the "virtual DMA" of kernel verbs
//! consumers). Every access is bounds-checked and goes through `kmap_local_page`; the memory
//! may change under us (user space writes it concurrently), so it is only ever accessed with
//! raw copies and atomics, never as Rust references.
//!
//! C header: [`include/linux/highmem.h`](srctree/include/linux/highmem.h).

use super::Fill;
use crate::bindings;
use core::sync::atomic::AtomicU64;
use kernel::{
    alloc::KVVec,
    page::PAGE_SIZE,
    prelude::*, //
};

/// Copies between the slice and `len` bytes of `page` at `off` (within the page).
///
/// # Safety
///
/// `page` is a valid page that stays allocated during the call; `off + len <= PAGE_SIZE`;
/// `buf` is valid for `len` bytes (written only when `out`).
pub(crate) unsafe fn copy_page(
    page: *mut bindings::page,
    off: usize,
    buf: *mut u8,
    len: usize,
    out: bool,
) {
    // SAFETY: Guaranteed by the caller; the mapping is local to this call.
    unsafe {
        let va = bindings::rrxe_helper_kmap_local(page).cast::<u8>().add(off);
        if out {
            core::ptr::copy_nonoverlapping(va, buf, len);
        } else {
            core::ptr::copy_nonoverlapping(buf, va, len);
        }
        bindings::rrxe_helper_kunmap_local(va.sub(off).cast());
    }
}

/// A byte range over pages pinned by their owner (a umem): `len` bytes starting `first_off`
/// bytes into the first page.
///
/// # Invariants
///
/// Every page stays pinned (allocated) as long as this object lives; `first_off < PAGE_SIZE`
/// and `first_off + len <= pages.len() * PAGE_SIZE`.
pub(crate) struct PinnedPages {
    pages: KVVec<usize>,
    first_off: usize,
    len: usize,
}

// SAFETY: Pages are plain memory; access is by copies.
unsafe impl Send for PinnedPages {}
// SAFETY: As above.
unsafe impl Sync for PinnedPages {}

impl PinnedPages {
    /// Wraps `pages`.
    ///
    /// # Safety
    ///
    /// The pages stay pinned for the life of the returned object.
    pub(crate) unsafe fn new(pages: KVVec<usize>, first_off: usize, len: usize) -> Result<Self> {
        let room = pages.len().checked_mul(PAGE_SIZE).ok_or(EINVAL)?;
        if first_off >= PAGE_SIZE || first_off.checked_add(len).is_none_or(|e| e > room) {
            return Err(EINVAL);
        }
        Ok(Self {
            pages,
            first_off,
            len,
        })
    }

    /// Copies between `buf` and `total` bytes at byte `off` of the range (`out`: into `buf`);
    /// `EFAULT`, and nothing copied, out of range.
    ///
    /// # Safety
    ///
    /// `buf` is valid for `total` bytes (written only when `out`).
    unsafe fn copy(&self, off: usize, buf: *mut u8, total: usize, out: bool) -> Result {
        if off.checked_add(total).is_none_or(|e| e > self.len) {
            return Err(EFAULT);
        }
        let mut pos = self.first_off + off;
        let mut done = 0;
        while done < total {
            let page = *self.pages.get(pos / PAGE_SIZE).ok_or(EFAULT)?;
            let in_page = pos % PAGE_SIZE;
            let n = (PAGE_SIZE - in_page).min(total - done);
            // SAFETY: By the invariant the page is pinned; `in_page + n <= PAGE_SIZE`; `buf`
            // has `n` bytes at `done` (`done + n <= total`), written only when `out`.
            unsafe { copy_page(page as *mut bindings::page, in_page, buf.add(done), n, out) };
            pos += n;
            done += n;
        }
        Ok(())
    }

    /// Appends `n` bytes at byte `off` of the range to `dst`; `EFAULT` out of range.
    pub(crate) fn read(&self, off: usize, n: usize, dst: &mut Fill<'_>) -> Result {
        // SAFETY: `copy` writes only the `n` bytes it is given, all of them when it succeeds.
        unsafe { dst.append(n, |buf| self.copy(off, buf, n, true)) }
    }

    /// Copies `src` to byte `off` of the range; `EFAULT` out of range.
    pub(crate) fn write(&self, off: usize, src: &[u8]) -> Result {
        // SAFETY: `src` has `src.len()` bytes, only read (`out` is false).
        unsafe { self.copy(off, src.as_ptr().cast_mut(), src.len(), false) }
    }

    /// Runs `f` on the 8-byte-aligned 64-bit word at byte `off` of the range, atomically with
    /// respect to other atomics on it (`EINVAL` if misaligned, `EFAULT` out of range).
    pub(crate) fn atomic_u64<R>(&self, off: usize, f: impl FnOnce(&AtomicU64) -> R) -> Result<R> {
        if off.checked_add(8).is_none_or(|e| e > self.len) {
            return Err(EFAULT);
        }
        let pos = self.first_off + off;
        if pos % 8 != 0 {
            return Err(EINVAL);
        }
        let page = *self.pages.get(pos / PAGE_SIZE).ok_or(EFAULT)?;
        // SAFETY: By the invariant the page is pinned; an aligned word never crosses a page.
        Ok(unsafe { page_atomic_u64(page as *mut bindings::page, pos % PAGE_SIZE, f) })
    }
}

/// Runs `f` on the 64-bit word at byte `off` of `page`.
///
/// # Safety
///
/// `page` is a valid page that stays allocated during the call; `off` is 8-byte aligned and
/// `off + 8 <= PAGE_SIZE`.
pub(crate) unsafe fn page_atomic_u64<R>(
    page: *mut bindings::page,
    off: usize,
    f: impl FnOnce(&AtomicU64) -> R,
) -> R {
    // SAFETY: Guaranteed by the caller; the mapping lives until `kunmap_local` below and the
    // reference does not escape `f`.
    unsafe {
        let base = bindings::rrxe_helper_kmap_local(page).cast::<u8>();
        let r = f(AtomicU64::from_ptr(base.add(off).cast::<u64>()));
        bindings::rrxe_helper_kunmap_local(base.cast());
        r
    }
}

/// The page of kernel virtual address `addr`, if it is in the direct map: only with the proof
/// that a kernel verbs consumer posted the address.
fn direct_map_page(_: &KernelConsumer, addr: usize) -> Result<*mut bindings::page> {
    // SAFETY: Only computes the page of an address after checking it is in the direct map.
    let page = unsafe { bindings::rrxe_helper_virt_to_page(addr as c_ulong) };
    if page.is_null() {
        return Err(EFAULT);
    }
    Ok(page)
}

/// Proof that the addresses being handled were posted by a kernel verbs consumer: a QP or MR
/// created without user data (no `udata`), or a fast-registration or DMA MR (which only kernel
/// consumers can make). It is the only way to [`kernel_read`], [`kernel_write`] or
/// [`kernel_atomic_u64`] an address, or to make a [`Span::Kernel`].
///
/// Only the abstraction layer can make one ([`KernelConsumer::new`] is `unsafe`, and the driver
/// denies `unsafe_code`); it is neither `Clone` nor `Copy`, so each kernel object holds its own.
/// Nothing a user process creates holds one, so no address a user (or a remote peer through a
/// user QP) supplies can ever reach kernel virtual memory.
pub(crate) struct KernelConsumer(());

impl KernelConsumer {
    /// The proof for one object.
    ///
    /// # Safety
    ///
    /// The object the proof is stored in was created by a kernel verbs consumer (ib_core passed
    /// no `udata`, or the verb exists only for kernel consumers), so every virtual address its
    /// work requests name is kernel memory that consumer owns and keeps allocated until the
    /// work completes (the verbs contract).
    pub(crate) unsafe fn new() -> Self {
        Self(())
    }
}

/// Copies between `buf` and kernel virtual memory at `addr`, page by page, each page checked
/// to be in the direct map (`out`: into `buf`).
///
/// # Safety
///
/// `buf` is valid for `total` bytes (written only when `out`).
unsafe fn kernel_copy(
    k: &KernelConsumer,
    addr: u64,
    buf: *mut u8,
    total: usize,
    out: bool,
) -> Result {
    let addr = usize::try_from(addr).map_err(|_| EFAULT)?;
    addr.checked_add(total).ok_or(EFAULT)?;
    let mut done = 0;
    while done < total {
        let a = addr + done;
        let in_page = a % PAGE_SIZE;
        let n = (PAGE_SIZE - in_page).min(total - done);
        let page = direct_map_page(k, a)?;
        // SAFETY: `page` is a direct-map page; the caller holds a `KernelConsumer`, so the
        // address was posted by a kernel verbs consumer, which keeps the memory allocated until
        // its work request completes (the verbs contract). `buf` has `total` bytes (the
        // caller's guarantee), so `n` at `done`.
        unsafe { copy_page(page, in_page, buf.add(done), n, out) };
        done += n;
    }
    Ok(())
}

/// Appends `n` bytes of kernel memory a kernel verbs consumer posted (an SGE of its DMA MR or
/// a fast-reg page), at kernel virtual address `addr`, to `dst`; `EFAULT` outside the direct
/// map.
pub(crate) fn kernel_read(k: &KernelConsumer, addr: u64, n: usize, dst: &mut Fill<'_>) -> Result {
    // SAFETY: `kernel_copy` writes only the `n` bytes it is given, all of them when it
    // succeeds.
    unsafe { dst.append(n, |buf| kernel_copy(k, addr, buf, n, true)) }
}

/// Writes kernel memory a kernel verbs consumer posted, as [`kernel_read`].
pub(crate) fn kernel_write(k: &KernelConsumer, addr: u64, src: &[u8]) -> Result {
    // SAFETY: `src` has `src.len()` bytes, only read (`out` is false).
    unsafe { kernel_copy(k, addr, src.as_ptr().cast_mut(), src.len(), false) }
}

/// Runs `f` on the aligned 64-bit word at kernel virtual address `addr`, as [`kernel_read`].
pub(crate) fn kernel_atomic_u64<R>(
    k: &KernelConsumer,
    addr: u64,
    f: impl FnOnce(&AtomicU64) -> R,
) -> Result<R> {
    let a = usize::try_from(addr).map_err(|_| EFAULT)?;
    if a % 8 != 0 {
        return Err(EINVAL);
    }
    let page = direct_map_page(k, a)?;
    // SAFETY: As in `kernel_copy`; an aligned word stays in its page; the reference does not
    // escape `f`.
    unsafe {
        let base = bindings::rrxe_helper_kmap_local(page).cast::<u8>();
        let word = AtomicU64::from_ptr(base.add(a % PAGE_SIZE).cast::<u64>());
        let r = f(word);
        bindings::rrxe_helper_kunmap_local(base.cast());
        Ok(r)
    }
}

/// One side of a direct memory-to-memory copy.
#[derive(Clone, Copy)]
pub(crate) enum Span<'a> {
    /// Bytes from `off` of pinned pages.
    Pinned(&'a PinnedPages, usize),
    /// Kernel virtual memory of the direct map from this address (posted by a kernel verbs
    /// consumer, as for [`kernel_read`]).
    Kernel(&'a KernelConsumer, u64),
}

impl Span<'_> {
    /// The span from byte `n` of this one on.
    pub(crate) fn skip(self, n: usize) -> Result<Self> {
        Ok(match self {
            Span::Pinned(p, off) => Span::Pinned(p, off.checked_add(n).ok_or(EFAULT)?),
            Span::Kernel(k, addr) => Span::Kernel(k, addr.checked_add(n as u64).ok_or(EFAULT)?),
        })
    }

    /// The page and offset in it of byte `at` of the span.
    fn page_at(&self, at: usize) -> Result<(*mut bindings::page, usize)> {
        match *self {
            Span::Pinned(p, off) => {
                let o = off.checked_add(at).ok_or(EFAULT)?;
                if o >= p.len {
                    return Err(EFAULT);
                }
                let pos = p.first_off + o;
                let page = *p.pages.get(pos / PAGE_SIZE).ok_or(EFAULT)?;
                Ok((page as *mut bindings::page, pos % PAGE_SIZE))
            }
            Span::Kernel(k, addr) => {
                let a = usize::try_from(addr)
                    .ok()
                    .and_then(|a| a.checked_add(at))
                    .ok_or(EFAULT)?;
                Ok((direct_map_page(k, a)?, a % PAGE_SIZE))
            }
        }
    }

    /// Checks that `len` bytes of the span exist.
    fn check(&self, len: usize) -> Result {
        match *self {
            Span::Pinned(p, off) => {
                if off.checked_add(len).is_none_or(|e| e > p.len) {
                    return Err(EFAULT);
                }
                Ok(())
            }
            Span::Kernel(_, addr) => {
                usize::try_from(addr)
                    .ok()
                    .and_then(|a| a.checked_add(len))
                    .ok_or(EFAULT)?;
                Ok(())
            }
        }
    }
}

/// Copies `len` bytes from `src` to `dst` directly, page by page (one copy, no bounce buffer).
pub(crate) fn copy_span(dst: Span<'_>, src: Span<'_>, len: usize) -> Result {
    dst.check(len)?;
    src.check(len)?;
    let mut done = 0;
    while done < len {
        let (sp, so) = src.page_at(done)?;
        let (dp, dof) = dst.page_at(done)?;
        let n = (PAGE_SIZE - so).min(PAGE_SIZE - dof).min(len - done);
        // SAFETY: Both pages are valid for the call (pinned by their owner's invariant, or
        // direct-map pages of a kernel consumer's posted buffer); each range stays inside its
        // page; the mappings are local to this block and released in reverse order.
        unsafe {
            let s = bindings::rrxe_helper_kmap_local(sp).cast::<u8>();
            let d = bindings::rrxe_helper_kmap_local(dp).cast::<u8>();
            core::ptr::copy(s.add(so), d.add(dof), n);
            bindings::rrxe_helper_kunmap_local(d.cast());
            bindings::rrxe_helper_kunmap_local(s.cast());
        }
        done += n;
    }
    Ok(())
}
