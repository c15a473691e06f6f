// SPDX-License-Identifier: GPL-2.0

//! Verbs objects that ib_core allocates (`size_ib_*`): the C structure at offset 0, then the
//! driver's data as a Rust tail (the `INIT_RDMA_OBJ_SIZE` pattern).
//!
//! ib_core allocates `size_ib_*` zeroed bytes, fills the common C fields, calls the driver's
//! create op (where the driver data is written in place), and frees the memory after the destroy
//! op (where the data is dropped). It refuses to destroy an object that others still use (a PD
//! with QPs, a CQ or SRQ with QPs), so references between objects stay valid.

use super::DeviceOps;
use crate::bindings;
use crate::sync::{
    Counted,
    Users, //
};
use core::marker::PhantomData;
use kernel::{
    prelude::*,
    types::Opaque, //
};

/// A kind of core-allocated object: its C structure and the driver data behind it.
pub(crate) trait ObjKind<T: DeviceOps> {
    /// The C structure (`struct ib_cq`, ...).
    type C;
    /// The driver's data.
    type Data: Send + Sync;
}

/// A core-allocated verbs object of kind `K` on a `Device<T>`.
///
/// # Invariants
///
/// Allocated by ib_core with `size_ib_* = Obj::<T, K>::SIZE`; `data` is initialised between a
/// successful create op and the destroy op.
#[repr(C)]
pub(crate) struct Obj<T: DeviceOps, K: ObjKind<T>> {
    ib: Opaque<K::C>,
    /// Data-path references ([`crate::sync::ObjRef`]), initialised with the data.
    users: Users,
    data: K::Data,
    _kind: PhantomData<fn() -> (T, K)>,
}

impl<T: DeviceOps, K: ObjKind<T>> Obj<T, K> {
    /// The C structure must come first: ib_core treats the allocation's start as the C object.
    const IB_AT_OFFSET_0: () = assert!(core::mem::offset_of!(Self, ib) == 0);

    /// The `size_ib_*` value for ib_core.
    pub(super) const SIZE: usize = {
        let () = Self::IB_AT_OFFSET_0;
        core::mem::size_of::<Self>()
    };

    /// The C object.
    pub(super) fn as_raw(&self) -> *mut K::C {
        self.ib.get()
    }

    /// Borrows a created object from its C pointer.
    ///
    /// # Safety
    ///
    /// `ib` is an object of kind `K` of a `Device<T>` whose create op succeeded and that is not
    /// destroyed during `'a`.
    pub(super) unsafe fn from_raw<'a>(ib: *mut K::C) -> &'a Self {
        // CAST: `ib` is at offset 0 of `Self`.
        // SAFETY: Guaranteed by the caller.
        unsafe { &*ib.cast::<Self>() }
    }

    /// Writes the driver data of a new object, and its references (the object's own).
    ///
    /// # Safety
    ///
    /// `ib` was allocated by ib_core for a `Device<T>` with [`Self::SIZE`] bytes and its data is
    /// not initialised.
    pub(super) unsafe fn init(ib: *mut K::C, data: K::Data) {
        // SAFETY: Guaranteed by the caller; a value is an initialiser that cannot fail.
        let Ok(()) = unsafe { Self::init_pinned(ib, data) };
    }

    /// Initialises the driver data of a new object in place with `data`, and its references
    /// (the object's own). On failure nothing is left to drop.
    ///
    /// # Safety
    ///
    /// As [`Self::init`].
    pub(super) unsafe fn init_pinned<E>(
        ib: *mut K::C,
        data: impl PinInit<K::Data, E>,
    ) -> Result<(), E> {
        let obj = ib.cast::<Self>();
        // SAFETY: Guaranteed by the caller: `users` is ours to initialise, in place (ib_core's
        // allocation never moves), and initialising it cannot fail.
        let Ok(()) = unsafe { Users::new().__pinned_init(&raw mut (*obj).users) };
        // SAFETY: As above, for `data`; a failed initialiser drops what it initialised.
        unsafe { data.__pinned_init(&raw mut (*obj).data) }
    }

    /// Waits until no data-path reference is left, then drops the driver data of an object
    /// being destroyed.
    ///
    /// # Safety
    ///
    /// `ib`'s data is initialised and no verbs call uses it any more (its destroy op).
    pub(super) unsafe fn drop_data(ib: *mut K::C) {
        // SAFETY: Guaranteed by the caller.
        unsafe {
            let obj = ib.cast::<Self>();
            (*obj).users.wait_unused();
            core::ptr::drop_in_place(&raw mut (*obj).data);
        }
    }
}

// SAFETY: The C part is shared with ib_core, which serialises its own accesses; the driver
// reads only fields fixed at creation. The driver data is `Send + Sync`.
unsafe impl<T: DeviceOps, K: ObjKind<T>> Send for Obj<T, K> {}
// SAFETY: As above.
unsafe impl<T: DeviceOps, K: ObjKind<T>> Sync for Obj<T, K> {}

// SAFETY: `drop_data`, the only way the object's data goes away before ib_core frees it, waits
// for `users` first.
unsafe impl<T: DeviceOps, K: ObjKind<T>> Counted for Obj<T, K> {
    fn users(&self) -> &Users {
        &self.users
    }
}

impl<T: DeviceOps, K: ObjKind<T>> core::ops::Deref for Obj<T, K> {
    type Target = K::Data;

    fn deref(&self) -> &K::Data {
        &self.data
    }
}

/// Completion queues (`struct ib_cq`).
pub(crate) struct CqKind;
impl<T: DeviceOps> ObjKind<T> for CqKind {
    type C = bindings::ib_cq;
    type Data = T::Cq;
}

/// Queue pairs (`struct ib_qp`).
pub(crate) struct QpKind;
impl<T: DeviceOps> ObjKind<T> for QpKind {
    type C = bindings::ib_qp;
    type Data = T::Qp;
}

/// Address handles (`struct ib_ah`).
pub(crate) struct AhKind;
impl<T: DeviceOps> ObjKind<T> for AhKind {
    type C = bindings::ib_ah;
    type Data = T::Ah;
}

/// Shared receive queues (`struct ib_srq`).
pub(crate) struct SrqKind;
impl<T: DeviceOps> ObjKind<T> for SrqKind {
    type C = bindings::ib_srq;
    type Data = T::Srq;
}

/// Memory windows (`struct ib_mw`).
pub(crate) struct MwKind;
impl<T: DeviceOps> ObjKind<T> for MwKind {
    type C = bindings::ib_mw;
    type Data = T::Mw;
}
