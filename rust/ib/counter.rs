// SPDX-License-Identifier: GPL-2.0

//! Per-QP counters (`struct rdma_counter`, `rdma statistic qp`): counter sets ib_core
//! allocates when a user binds QPs to one by hand or in auto mode, with the driver's data as a
//! Rust tail. Each shows the port's counters (the same descriptors, so the core can fold a
//! finished counter's values back into the port's history), counted over the QPs bound to it;
//! while bound, a QP's counts leave the port's own values, which the core shows as their sum
//! with every counter's.
//!
//! ib_core allocates `size_rdma_counter` zeroed bytes, calls `counter_init` (where the driver
//! data is written) and `counter_alloc_stats`, then binds the first QP; on a failure of either
//! of the last two it frees the memory *without* `counter_dealloc`. So the driver data must need
//! no drop ([`Counter::NO_DROP`]), and a failed bind must undo what it did itself.

use super::{
    Device,
    DeviceOps,
    Qp, //
};
use crate::bindings;
use core::marker::PhantomData;
use kernel::types::Opaque;

/// A per-QP counter set: the C `struct rdma_counter` at offset 0, then the driver data.
///
/// # Invariants
///
/// Allocated by ib_core with `size_rdma_counter = Counter::<T>::SIZE`; `data` is initialised
/// from `counter_init` until ib_core frees the allocation.
#[repr(C)]
pub(crate) struct Counter<T: DeviceOps> {
    ib: Opaque<bindings::rdma_counter>,
    data: T::Counter,
    _driver: PhantomData<fn() -> T>,
}

impl<T: DeviceOps> Counter<T> {
    /// ib_core frees the allocation without `counter_dealloc` when `counter_alloc_stats` or the
    /// first bind fails: data that needs dropping would leak.
    const NO_DROP: () = assert!(!core::mem::needs_drop::<T::Counter>());

    /// The C structure comes first: ib_core treats the allocation's start as the counter.
    const IB_AT_OFFSET_0: () = assert!(core::mem::offset_of!(Self, ib) == 0);

    /// The `size_rdma_counter` value for ib_core.
    pub(super) const SIZE: usize = {
        let () = Self::NO_DROP;
        let () = Self::IB_AT_OFFSET_0;
        core::mem::size_of::<Self>()
    };

    /// Writes the driver data of a new counter (`counter_init`).
    ///
    /// # Safety
    ///
    /// `ib` was allocated by ib_core for a `Device<T>` with [`Self::SIZE`] bytes and its data is
    /// not initialised.
    pub(super) unsafe fn init(ib: *mut bindings::rdma_counter, data: T::Counter) {
        // SAFETY: Guaranteed by the caller: the tail is ours to write, in place.
        unsafe { (&raw mut (*ib.cast::<Self>()).data).write(data) };
    }

    /// Borrows an initialised counter from its C pointer.
    ///
    /// # Safety
    ///
    /// `ib` is a counter of a `Device<T>` whose `counter_init` ran and that ib_core does not
    /// free during `'a`.
    pub(super) unsafe fn from_raw<'a>(ib: *mut bindings::rdma_counter) -> &'a Self {
        // CAST: `ib` is at offset 0 of `Self`.
        // SAFETY: Guaranteed by the caller.
        unsafe { &*ib.cast::<Self>() }
    }

    /// The C structure.
    pub(super) fn as_raw(&self) -> *mut bindings::rdma_counter {
        self.ib.get()
    }

    /// The driver data.
    pub(crate) fn data(&self) -> &T::Counter {
        &self.data
    }

    /// The counter's id (`rdma statistic` shows it as `cntn`), 0 before its first bind gave it
    /// one.
    pub(crate) fn id(&self) -> u32 {
        // SAFETY: `id` is written only by the bind op, which ib_core serialises with the other
        // counter ops under the counter's lock.
        unsafe { (*self.as_raw()).id }
    }

    /// The device of this counter.
    pub(crate) fn device(&self) -> &Device<T> {
        // SAFETY: `device` is set by the core before `counter_init`; the device outlives its
        // counters.
        unsafe { Device::from_raw((*self.as_raw()).device) }
    }

    /// Binds `qp` (the bind op): `T::bind_counter`, then the counter's id and the QP's link to
    /// it, which the unbind op follows.
    pub(super) fn bind(&self, qp: &Qp<T>) -> kernel::error::Result {
        let id = T::bind_counter(self, qp)?;
        // SAFETY: The core holds the counter's lock: nothing else writes `id`. `qp->counter` is
        // the driver's to set in this op (the core reads it to unbind).
        unsafe {
            (*self.as_raw()).id = id;
            (*qp.as_raw()).counter = self.as_raw();
        }
        Ok(())
    }
}

impl<T: DeviceOps> Qp<T> {
    /// The per-QP counter `qp` is bound to, as the bind op linked it.
    pub(super) fn counter(&self) -> Option<&Counter<T>> {
        // SAFETY: `counter` is set by our bind op to one of our counters and cleared by our
        // unbind op; the core keeps a counter alive while QPs are bound to it.
        let c = unsafe { (*self.as_raw()).counter };
        // SAFETY: Non-null: a counter of ours, as above.
        (!c.is_null()).then(|| unsafe { Counter::from_raw(c) })
    }

    /// Clears the QP's link to its counter (the unbind op, after `T::unbind_counter`).
    pub(super) fn clear_counter(&self) {
        // SAFETY: The core serialises binds and unbinds of a QP under its counter's lock.
        unsafe { (*self.as_raw()).counter = core::ptr::null_mut() };
    }
}
