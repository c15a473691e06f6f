// SPDX-License-Identifier: GPL-2.0

//! The per-QP counter trampolines of [`Adapter`] (`rdma statistic qp`): ib_core calls them
//! under the counter's lock (`counter_init` and `counter_alloc_stats` before anyone else can
//! see the counter).

use super::*;

impl<T: DeviceOps> Adapter<T> {
    /// # Safety
    ///
    /// Called by ib_core with a counter it allocated with `size_rdma_counter` for one of our
    /// devices.
    pub(super) unsafe extern "C" fn counter_init(counter: *mut bindings::rdma_counter) {
        // SAFETY: A fresh allocation of ours, its tail not yet written.
        unsafe { Counter::<T>::init(counter, T::counter_new()) };
    }

    /// # Safety
    ///
    /// Called by ib_core with a counter after `counter_init`.
    pub(super) unsafe extern "C" fn counter_alloc_stats(
        _counter: *mut bindings::rdma_counter,
    ) -> *mut bindings::rdma_hw_stats {
        // The port's descriptors: the core adds a counter's values to the port's by index.
        counters::alloc_port_stats(T::counter_descs())
    }

    /// # Safety
    ///
    /// Called by ib_core with an initialised counter and a created QP of ours, under the
    /// counter's lock.
    pub(super) unsafe extern "C" fn counter_bind_qp(
        counter: *mut bindings::rdma_counter,
        ibqp: *mut bindings::ib_qp,
        _port: u32,
    ) -> c_int {
        // SAFETY: Guaranteed by the caller; the core holds references to both for the call.
        let (counter, qp) = unsafe { (Counter::<T>::from_raw(counter), Qp::<T>::from_raw(ibqp)) };
        from_result(|| counter.bind(qp).map(|()| 0))
    }

    /// # Safety
    ///
    /// Called by ib_core with a created QP of ours, under its counter's lock.
    pub(super) unsafe extern "C" fn counter_unbind_qp(
        ibqp: *mut bindings::ib_qp,
        _port: u32,
    ) -> c_int {
        // SAFETY: Guaranteed by the caller.
        let qp = unsafe { Qp::<T>::from_raw(ibqp) };
        let Some(counter) = qp.counter() else {
            return EINVAL.to_errno();
        };
        T::unbind_counter(counter, qp);
        qp.clear_counter();
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with an initialised counter whose stats it allocated with
    /// `counter_alloc_stats`, under the counter's lock.
    pub(super) unsafe extern "C" fn counter_update_stats(
        counter: *mut bindings::rdma_counter,
    ) -> c_int {
        // SAFETY: Guaranteed by the caller.
        let c = unsafe { Counter::<T>::from_raw(counter) };
        // SAFETY: The set `counter_alloc_stats` allocated, under the counter's lock.
        let n = unsafe { counters::fill((*counter).stats, |out| T::counter_values(c, out)) };
        if n < 0 {
            return EINVAL.to_errno();
        }
        0
    }

    /// # Safety
    ///
    /// Called by ib_core once for a counter whose first bind succeeded, after its last unbind;
    /// the core frees it next.
    pub(super) unsafe extern "C" fn counter_dealloc(counter: *mut bindings::rdma_counter) -> c_int {
        // SAFETY: Guaranteed by the caller.
        T::dealloc_counter(unsafe { Counter::<T>::from_raw(counter) });
        0
    }
}
