// SPDX-License-Identifier: GPL-2.0

//! Memory regions (`struct ib_mr`), allocated by the driver with its data as a Rust tail,
//! pinned user memory (`struct ib_umem`), and memory windows (`struct ib_mw`).

use super::{
    object::{
        MwKind,
        Obj, //
    },
    DeviceOps, //
};
use crate::sync::{
    Counted,
    Users, //
};
use crate::{
    bindings,
    mm::PinnedPages, //
};
use core::ptr::NonNull;
use kernel::{
    alloc::KVVec,
    prelude::*,
    types::Opaque, //
};

kernel::impl_flags!(
    /// Access rights (`enum ib_access_flags`) of an MR, an MW or a QP's remote access, as the
    /// caller asked for them. Bits without an [`Access`] are kept, so the driver can refuse what
    /// it does not know ([`AccessFlags::outside`]).
    ///
    /// # Examples
    ///
    /// ```ignore
    /// const WINDOW: AccessFlags = AccessFlags::of(&[Access::RemoteRead, Access::RemoteWrite]);
    /// if req.outside(WINDOW.with(AccessFlags::OPTIONAL)) {
    ///     return Err(EINVAL); // a right (or an unknown bit) a window cannot have
    /// }
    /// if writes && !mr.access().contains(Access::LocalWrite) { /* ... */ }
    /// ```
    #[derive(Debug, Clone, Default, Copy, PartialEq, Eq)]
    pub(crate) struct AccessFlags(u32);

    /// One access right.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) enum Access {
        /// `IB_ACCESS_LOCAL_WRITE`.
        LocalWrite = bindings::ib_access_flags_IB_ACCESS_LOCAL_WRITE,
        /// `IB_ACCESS_REMOTE_WRITE`.
        RemoteWrite = bindings::ib_access_flags_IB_ACCESS_REMOTE_WRITE,
        /// `IB_ACCESS_REMOTE_READ`.
        RemoteRead = bindings::ib_access_flags_IB_ACCESS_REMOTE_READ,
        /// `IB_ACCESS_REMOTE_ATOMIC`.
        RemoteAtomic = bindings::ib_access_flags_IB_ACCESS_REMOTE_ATOMIC,
        /// `IB_ACCESS_MW_BIND`.
        MwBind = bindings::ib_access_flags_IB_ACCESS_MW_BIND,
        /// `IB_ZERO_BASED`.
        ZeroBased = bindings::ib_access_flags_IB_ZERO_BASED,
        /// `IB_ACCESS_ON_DEMAND`.
        OnDemand = bindings::ib_access_flags_IB_ACCESS_ON_DEMAND,
        /// `IB_ACCESS_HUGETLB`.
        HugeTlb = bindings::ib_access_flags_IB_ACCESS_HUGETLB,
        /// `IB_ACCESS_FLUSH_GLOBAL`.
        FlushGlobal = bindings::ib_access_flags_IB_ACCESS_FLUSH_GLOBAL,
        /// `IB_ACCESS_FLUSH_PERSISTENT`.
        FlushPersistent = bindings::ib_access_flags_IB_ACCESS_FLUSH_PERSISTENT,
    }
);

impl AccessFlags {
    /// `IB_ACCESS_OPTIONAL`: the range of bits a device may ignore.
    pub(crate) const OPTIONAL: Self = Self(bindings::ib_access_flags_IB_ACCESS_OPTIONAL);

    /// The rights of raw `enum ib_access_flags` bits (from the C API, or a WQE user space wrote).
    pub(crate) const fn from_raw(raw: u32) -> Self {
        Self(raw)
    }

    /// The raw bits.
    pub(crate) const fn raw(self) -> u32 {
        self.0
    }

    /// The set of `rights`, in a constant.
    pub(crate) const fn of(rights: &[Access]) -> Self {
        let mut bits = 0;
        let mut i = 0;
        while i < rights.len() {
            bits |= rights[i] as u32;
            i += 1;
        }
        Self(bits)
    }

    /// The union, in a constant.
    pub(crate) const fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether any bit (a known right or not) lies outside `allowed`.
    pub(crate) const fn outside(self, allowed: Self) -> bool {
        self.0 & !allowed.0 != 0
    }

    /// Whether no bit is set.
    pub(crate) const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// A memory region: the C `struct ib_mr` at offset 0, then the driver data.
///
/// # Invariants
///
/// Allocated as a `KBox` by [`Mr::into_raw`] for the `reg_user_mr`/`get_dma_mr` trampolines,
/// freed by `dereg_mr`.
#[repr(C)]
#[pin_data]
pub(crate) struct Mr<T: DeviceOps> {
    ib: Opaque<bindings::ib_mr>,
    /// Data-path references ([`crate::sync::ObjRef`]).
    #[pin]
    users: Users,
    data: T::Mr,
}

// SAFETY: The C part is only read through the accessors below (fields the core sets before the
// MR is used); the driver data is `Send + Sync`.
unsafe impl<T: DeviceOps> Send for Mr<T> {}
// SAFETY: As above.
unsafe impl<T: DeviceOps> Sync for Mr<T> {}

// SAFETY: `free` waits for `users` before dropping the MR.
unsafe impl<T: DeviceOps> Counted for Mr<T> {
    fn users(&self) -> &Users {
        &self.users
    }
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
        let mr = KBox::pin_init(
            pin_init!(Self {
                ib: Opaque::zeroed(),
                users <- Users::new(),
                data,
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: The MR is not moved: ib_core holds the pointer until `free` frees the box in
        // place.
        let raw = KBox::into_raw(unsafe { Pin::into_inner_unchecked(mr) });
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
        let mr = unsafe { KBox::from_raw(ib.cast::<Self>()) };
        mr.users.wait_unused();
        drop(mr);
    }

    /// The identity of the MR's protection domain (compared with a QP's).
    pub(crate) fn pd_id(&self) -> usize {
        // SAFETY: `pd` is set by the core after registration and changes only under
        // re-registration; a racy read yields some PD's address, used only for comparison.
        unsafe { (*self.ib.get()).pd as usize }
    }

    /// The layout `map_mr_sg` gave a fast-registration MR: first address, length and page
    /// size (`ib_sg_to_pages` sets them before the registration is posted).
    pub(crate) fn frwr_layout(&self) -> (u64, u64, u32) {
        // SAFETY: Plain fields of the registered MR, written by the core in process context
        // before the consumer posts the registration that reads them.
        unsafe {
            let ib = &*self.ib.get();
            (ib.iova, ib.length, ib.page_size)
        }
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
    /// The pinned pages, for the data path.
    pages: PinnedPages,
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
        let umem = NonNull::new(kernel::error::from_err_ptr(umem)?).ok_or(ENOMEM)?;
        // SAFETY: `umem` is live; on failure it is released here.
        match unsafe { Self::page_list(umem) } {
            Ok(pages) => Ok(Self { umem, pages }),
            Err(e) => {
                // SAFETY: Not yet owned by anything else.
                unsafe { bindings::ib_umem_release(umem.as_ptr()) };
                Err(e)
            }
        }
    }

    /// Collects the pages of a live umem.
    ///
    /// # Safety
    ///
    /// `umem` is live; the result must not outlive it.
    unsafe fn page_list(umem: NonNull<bindings::ib_umem>) -> Result<PinnedPages> {
        // SAFETY: `umem` is live.
        let (n, off, len) = unsafe {
            (
                bindings::rrxe_helper_umem_num_pages(umem.as_ptr()),
                bindings::rrxe_helper_umem_offset(umem.as_ptr()) as usize,
                umem.as_ref().length,
            )
        };
        let mut pages = KVVec::with_capacity(n, GFP_KERNEL)?;
        pages.resize(n, 0usize, GFP_KERNEL)?;
        // SAFETY: `pages` has room for `n` page pointers (`usize`-sized).
        let got = unsafe {
            bindings::rrxe_helper_umem_pages(umem.as_ptr(), pages.as_mut_ptr().cast(), n)
        };
        if got != n {
            return Err(EFAULT);
        }
        // SAFETY: The umem pins its pages until released; the caller keeps the result no
        // longer than the umem.
        unsafe { PinnedPages::new(pages, off, len) }
    }

    /// The pinned memory, byte 0 being the registered start address.
    pub(crate) fn pages(&self) -> &PinnedPages {
        &self.pages
    }

    /// Checks a re-registration of this memory with `flags` and new `access` (the pages must
    /// be writable for write access: `EACCES`).
    pub(crate) fn check_rereg(&self, flags: u32, access: AccessFlags) -> Result {
        let flags = c_int::try_from(flags).map_err(|_| EINVAL)?;
        let access = c_int::try_from(access.raw()).map_err(|_| EINVAL)?;
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

/// A memory window: the C `struct ib_mw` at offset 0, then the driver data.
pub(crate) type Mw<T> = Obj<T, MwKind>;

/// Memory window types (`enum ib_mw_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MwType {
    /// Type 1: bound with the bind verb, lives on the PD.
    Type1,
    /// Type 2: bound with a BIND_MW work request to a QP.
    Type2,
}

impl MwType {
    pub(super) fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            bindings::ib_mw_type_IB_MW_TYPE_1 => Some(Self::Type1),
            bindings::ib_mw_type_IB_MW_TYPE_2 => Some(Self::Type2),
            _ => None,
        }
    }
}
