// SPDX-License-Identifier: GPL-2.0

//! Memory regions (`struct ib_mr`), allocated by the driver with its data as a Rust tail, and
//! pinned user memory (`struct ib_umem`).

use super::DeviceOps;
use crate::bindings;
use core::ptr::NonNull;
use kernel::{
    prelude::*,
    types::Opaque, //
};

/// A memory region: the C `struct ib_mr` at offset 0, then the driver data.
///
/// # Invariants
///
/// Allocated as a `KBox` by [`Mr::into_raw`] for the `reg_user_mr`/`get_dma_mr` trampolines,
/// freed by `dereg_mr`.
#[repr(C)]
pub(crate) struct Mr<T: DeviceOps> {
    ib: Opaque<bindings::ib_mr>,
    data: T::Mr,
}

impl<T: DeviceOps> Mr<T> {
    /// Borrows a registered MR from its C pointer.
    ///
    /// # Safety
    ///
    /// `ib` came from [`Self::into_raw`] and is not freed during `'a`.
    pub(super) unsafe fn from_raw<'a>(ib: *mut bindings::ib_mr) -> &'a Self {
        // SAFETY: Guaranteed by the caller; `ib` is at offset 0.
        unsafe { &*ib.cast::<Self>() }
    }

    /// Boxes a new MR with keys `keys`; ib_core fills the rest of the C fields.
    pub(super) fn into_raw(data: T::Mr, keys: MrKeys) -> Result<*mut bindings::ib_mr> {
        let mr = KBox::new(
            Self {
                ib: Opaque::zeroed(),
                data,
            },
            GFP_KERNEL,
        )?;
        let raw = KBox::into_raw(mr);
        // SAFETY: `raw` is a valid, exclusively owned box; `ib` is at offset 0.
        unsafe {
            let ib = raw.cast::<bindings::ib_mr>();
            (*ib).lkey = keys.lkey;
            (*ib).rkey = keys.rkey;
            Ok(ib)
        }
    }

    /// Frees an MR created by [`Self::into_raw`].
    ///
    /// # Safety
    ///
    /// `ib` came from [`Self::into_raw`] and is not used afterwards.
    pub(super) unsafe fn free(ib: *mut bindings::ib_mr) {
        // SAFETY: Guaranteed by the caller.
        drop(unsafe { KBox::from_raw(ib.cast::<Self>()) });
    }
}

impl<T: DeviceOps> core::ops::Deref for Mr<T> {
    type Target = T::Mr;

    fn deref(&self) -> &T::Mr {
        &self.data
    }
}

/// The local and remote keys of an MR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MrKeys {
    /// Local key.
    pub(crate) lkey: u32,
    /// Remote key.
    pub(crate) rkey: u32,
}

/// User memory pinned for an MR (`ib_umem_get`), released on drop.
///
/// # Invariants
///
/// `umem` is a live umem from `ib_umem_get_va`, released once, on drop.
pub(crate) struct Umem {
    umem: NonNull<bindings::ib_umem>,
}

// SAFETY: A umem is plain pinned memory owned by this object.
unsafe impl Send for Umem {}
// SAFETY: `&Umem` only reads immutable fields.
unsafe impl Sync for Umem {}

impl Umem {
    /// Pins `len` bytes of the calling process's memory at `addr` with `IB_ACCESS_*` `access`.
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
        let addr = usize::try_from(addr).map_err(|_| EINVAL)?;
        let len = usize::try_from(len).map_err(|_| EINVAL)?;
        // SAFETY: Valid device; the core pins and accounts the pages.
        let umem = unsafe { bindings::rrxe_helper_umem_get(dev, addr, len, access) };
        let umem = kernel::error::from_err_ptr(umem)?;
        Ok(Self {
            umem: NonNull::new(umem).ok_or(ENOMEM)?,
        })
    }

    /// Checks a re-registration of this memory with `flags` and new `access` (the pages must
    /// be writable for write access: `EACCES`).
    pub(crate) fn check_rereg(&self, flags: u32, access: u32) -> Result {
        let flags = c_int::try_from(flags).map_err(|_| EINVAL)?;
        let access = c_int::try_from(access).map_err(|_| EINVAL)?;
        // SAFETY: By the invariant the umem is live.
        kernel::error::to_result(unsafe {
            bindings::ib_umem_check_rereg(self.umem.as_ptr(), flags, access)
        })
    }

    /// The length in bytes.
    pub(crate) fn len(&self) -> u64 {
        // SAFETY: By the invariant the umem is live; `length` is immutable after creation.
        let len = unsafe { self.umem.as_ref().length };
        u64::try_from(len).unwrap_or(u64::MAX)
    }
}

impl Drop for Umem {
    fn drop(&mut self) {
        // SAFETY: By the invariant the umem is live and released only here.
        unsafe { bindings::ib_umem_release(self.umem.as_ptr()) };
    }
}
