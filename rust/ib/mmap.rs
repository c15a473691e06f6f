// SPDX-License-Identifier: GPL-2.0

//! Queue rings shared with user space through `mmap` on the uverbs file
//! (`struct rdma_user_mmap_entry`).
//!
//! Protocol (what librxe expects): the create/resize response carries `{offset, size}`; the
//! provider maps exactly that, once. Each entry is mappable once; a second `mmap` of the offset,
//! a wrong offset or a wrong size fails with `EINVAL`. The ring stays valid while mapped, also
//! after the object is destroyed, and is freed at `munmap` (the mapping holds the pages).

use crate::{
    bindings,
    mm::UserBuf, //
};
use core::ptr::NonNull;
use kernel::{
    prelude::*,
    sync::{
        atomic::{
            Atomic,
            Relaxed, //
        },
        Arc,
    },
    types::Opaque,
};

/// Where user space finds a ring: the `struct mminfo` of `rdma_user_rxe.h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MmapInfo {
    /// The `mmap` offset on the uverbs file.
    pub(crate) offset: u64,
    /// The length to map, page aligned.
    pub(crate) size: u32,
}

impl MmapInfo {
    /// Size of `struct mminfo`.
    pub(crate) const LEN: usize = 16;

    /// The `struct mminfo` bytes (native endian, as the uABI is).
    pub(crate) fn to_bytes(self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[..8].copy_from_slice(&self.offset.to_ne_bytes());
        b[8..12].copy_from_slice(&self.size.to_ne_bytes());
        b
    }
}

// The encoder above must agree with the kernel's uABI header.
const _: () = {
    assert!(core::mem::size_of::<bindings::mminfo>() == MmapInfo::LEN);
    assert!(core::mem::offset_of!(bindings::mminfo, offset) == 0);
    assert!(core::mem::offset_of!(bindings::mminfo, size) == 8);
};

/// An mmap entry: the C entry first (the core hands it back to `mmap_free`), then the ring.
///
/// # Invariants
///
/// Allocated by [`MmapEntry::insert`] as a `KBox`, inserted in a user context's mmap table;
/// freed by `mmap_free` after the last reference is gone.
#[repr(C)]
pub(super) struct MmapEntry {
    entry: Opaque<bindings::rdma_user_mmap_entry>,
    buf: Arc<UserBuf>,
    mapped: Atomic<bool>,
}

impl MmapEntry {
    /// Inserts `buf` into `uctx`'s mmap table.
    ///
    /// # Safety
    ///
    /// `uctx` is a live user context.
    pub(super) unsafe fn insert(
        uctx: *mut bindings::ib_ucontext,
        buf: Arc<UserBuf>,
    ) -> Result<MmapHandle> {
        let len = buf.len();
        let e = KBox::new(
            Self {
                entry: Opaque::zeroed(),
                buf,
                mapped: Atomic::new(false),
            },
            GFP_KERNEL,
        )?;
        let raw = KBox::into_raw(e);
        // SAFETY: `raw` is a valid, zeroed entry at offset 0 of the box; `uctx` is live.
        let ret = unsafe { bindings::rdma_user_mmap_entry_insert(uctx, raw.cast(), len) };
        if ret != 0 {
            // SAFETY: Not inserted: we still own the box.
            drop(unsafe { KBox::from_raw(raw) });
            return Err(Error::from_errno(ret));
        }
        // SAFETY: Inserted entries have a valid page offset.
        let pgoff = unsafe { (*raw.cast::<bindings::rdma_user_mmap_entry>()).start_pgoff };
        let offset = u64::try_from(pgoff).map_err(|_| EINVAL)? << kernel::page::PAGE_SHIFT;
        let pages = len.div_ceil(kernel::page::PAGE_SIZE);
        let size = u32::try_from(pages * kernel::page::PAGE_SIZE).map_err(|_| EINVAL)?;
        // INVARIANT: The entry is inserted; the handle removes it once.
        Ok(MmapHandle {
            entry: NonNull::new(raw).ok_or(EINVAL)?,
            info: MmapInfo { offset, size },
        })
    }

    /// Serves `mmap` on the uverbs file of `uctx`.
    ///
    /// # Safety
    ///
    /// `uctx` and `vma` are the valid arguments of the `mmap` op.
    pub(super) unsafe fn mmap(
        uctx: *mut bindings::ib_ucontext,
        vma: *mut bindings::vm_area_struct,
    ) -> Result {
        // SAFETY: Valid arguments; returns a referenced entry matching offset and size, or NULL.
        let e = unsafe { bindings::rdma_user_mmap_entry_get(uctx, vma) };
        if e.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: All entries of our contexts are `MmapEntry`s (entry at offset 0), alive while
        // we hold the reference.
        let this = unsafe { &*e.cast::<Self>() };
        let ret = if this.mapped.xchg(true, Relaxed) {
            Err(EINVAL)
        } else {
            // SAFETY: `vma` is being set up by this mmap call.
            unsafe { this.buf.remap(vma) }
        };
        // SAFETY: Drops the reference `rdma_user_mmap_entry_get` took.
        unsafe { bindings::rdma_user_mmap_entry_put(e) };
        ret
    }

    /// Frees an entry once ib_core dropped its last reference.
    ///
    /// # Safety
    ///
    /// `e` is an entry created by [`Self::insert`], no longer referenced.
    pub(super) unsafe fn free(e: *mut bindings::rdma_user_mmap_entry) {
        // SAFETY: By the invariant the entry is our box, and this is the last use.
        drop(unsafe { KBox::from_raw(e.cast::<Self>()) });
    }
}

/// A published ring: removes its mmap entry when dropped (the object was destroyed).
///
/// # Invariants
///
/// `entry` is inserted and not yet removed.
pub(crate) struct MmapHandle {
    entry: NonNull<MmapEntry>,
    info: MmapInfo,
}

// SAFETY: The entry is only removed through the handle, once; ib_core locks its table.
unsafe impl Send for MmapHandle {}
// SAFETY: `&MmapHandle` only reads `info`.
unsafe impl Sync for MmapHandle {}

impl MmapHandle {
    /// Where user space maps the ring.
    pub(crate) fn info(&self) -> MmapInfo {
        self.info
    }
}

impl Drop for MmapHandle {
    fn drop(&mut self) {
        // SAFETY: By the invariant the entry is inserted; removal drops the table's reference and
        // `mmap_free` frees it once no mapping call holds one.
        unsafe { bindings::rdma_user_mmap_entry_remove(self.entry.as_ptr().cast()) };
    }
}
