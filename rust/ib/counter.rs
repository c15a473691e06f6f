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
use core::{
    marker::PhantomData,
    ptr,
    sync::atomic::{
        AtomicPtr,
        Ordering::{
            AcqRel,
            Acquire,
            Release, //
        },
    },
};
use kernel::{
    error::code::EINVAL,
    types::Opaque, //
};

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

    /// ib_core's allocation (`kzalloc`) is aligned to 8 bytes at least, not more.
    const ALIGN_8: () = assert!(core::mem::align_of::<Self>() <= 8);

    /// The `size_rdma_counter` value for ib_core.
    pub(super) const SIZE: usize = {
        let () = Self::NO_DROP;
        let () = Self::IB_AT_OFFSET_0;
        let () = Self::ALIGN_8;
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
        // SAFETY: `id` is written once, by the first bind op, before anyone but that op's
        // caller can see the counter; the ops that read it run after it.
        unsafe { (*self.as_raw()).id }
    }

    /// The device of this counter.
    pub(crate) fn device(&self) -> &Device<T> {
        // SAFETY: `device` is set by the core before `counter_init`; the device outlives its
        // counters.
        unsafe { Device::from_raw((*self.as_raw()).device) }
    }

    /// Binds `qp` (the bind op): claims the QP's link to a counter, then `T::bind_counter`,
    /// then a new counter's id. ib_core checks the link without a lock two binds of the QP to
    /// different counters share (each holds its own counter's): the claim lets one win.
    pub(super) fn bind(&self, qp: &Qp<T>) -> kernel::error::Result {
        let slot = qp.counter_slot();
        slot.compare_exchange(ptr::null_mut(), self.as_raw(), AcqRel, Acquire)
            .map_err(|_| EINVAL)?;
        let id = T::bind_counter(self, qp).inspect_err(|_| slot.store(ptr::null_mut(), Release))?;
        if self.id() == 0 {
            // SAFETY: A new counter (id 0): ib_core makes it visible to other readers only after
            // this first bind returns; it holds the counter's lock.
            unsafe { (*self.as_raw()).id = id };
        }
        Ok(())
    }
}

impl<T: DeviceOps> Qp<T> {
    /// The QP's link to its per-QP counter (`qp->counter`), which our bind and unbind ops
    /// set and ib_core reads.
    fn counter_slot(&self) -> &AtomicPtr<bindings::rdma_counter> {
        // SAFETY: `counter` is an aligned pointer field of the live QP; the driver only ever
        // accesses it atomically (ib_core reads it plainly, as it does mlx5's).
        unsafe { AtomicPtr::from_ptr(&raw mut (*self.as_raw()).counter) }
    }

    /// The per-QP counter `qp` is bound to, as the bind op linked it.
    pub(super) fn counter(&self) -> Option<&Counter<T>> {
        let c = self.counter_slot().load(Acquire);
        // SAFETY: Non-null, it is a counter of ours set by our bind op and cleared by our
        // unbind op: the core keeps a counter alive while QPs are bound to it.
        (!c.is_null()).then(|| unsafe { Counter::from_raw(c) })
    }

    /// Clears the QP's link to its counter (the unbind op, after `T::unbind_counter`).
    pub(super) fn clear_counter(&self) {
        self.counter_slot().store(ptr::null_mut(), Release);
    }
}
