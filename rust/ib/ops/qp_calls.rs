// SPDX-License-Identifier: GPL-2.0

//! The queue pair trampolines of [`Adapter`].

use super::*;

impl<T: DeviceOps> Adapter<T> {
    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn create_qp(
        ibqp: *mut bindings::ib_qp,
        init: *mut bindings::ib_qp_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            // SAFETY: The core passes valid, exclusive creation attributes.
            let init = unsafe { &mut *init };
            // SAFETY: These are `create_qp` attributes for one of our devices.
            let mut qi = unsafe { qp::init_from_c::<T>(init) };
            // SAFETY: NULL for kernel callers, else the udata of a user command.
            let mut udata = unsafe { Udata::from_raw(udata) };
            // SAFETY: The core set `device` to one of our devices.
            let dev = unsafe { Self::dev((*ibqp).device) };
            let data = T::create_qp(dev, &mut qi, Caller::new(udata.as_mut()))?;
            // SAFETY: The core allocated `size_ib_qp` bytes for a `Qp<T>`; `data` is unset.
            unsafe { Qp::<T>::init_pinned(ibqp, data)? };
            // SAFETY: Created just now.
            let qp = unsafe { Qp::<T>::from_raw(ibqp) };
            qp::write_caps(&qi.cap, init);
            // SAFETY: The QP is ours and not visible to anyone else yet.
            unsafe { (*ibqp).qp_num = T::qp_num(qp) };
            T::qp_created(qp);
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn modify_qp(
        ibqp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        mask: c_int,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            let mask = qp_attr::attr_mask_from_c(u32::try_from(mask).map_err(|_| EINVAL)?);
            // SAFETY: The core passes valid attributes for this call.
            let a = qp_attr::attr_from_c(unsafe { &*attr }, mask)?;
            // SAFETY: A created QP of ours.
            T::modify_qp(unsafe { Qp::from_raw(ibqp) }, &a, mask)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn query_qp(
        ibqp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        _mask: c_int,
        init: *mut bindings::ib_qp_init_attr,
    ) -> c_int {
        // SAFETY: A created QP of ours.
        let q = T::query_qp(unsafe { Qp::from_raw(ibqp) });
        // SAFETY: The core passes valid, exclusive output structures. uverbs allocates them
        // with `kmalloc` and copies them out: every byte is written (zeroed, then what rrxe
        // reports), so no fields rrxe has no value for (the alternate path, the static rate)
        // carry old heap contents to user space. All-zero is valid for both (NULL pointers).
        unsafe {
            core::ptr::write_bytes(attr, 0, 1);
            core::ptr::write_bytes(init, 0, 1);
            qp_attr::write_query(&q, &mut *attr, &mut *init);
            (*init).send_cq = (*ibqp).send_cq;
            (*init).recv_cq = (*ibqp).recv_cq;
            (*init).srq = (*ibqp).srq;
            (*init).qp_type = (*ibqp).qp_type;
        }
        0
    }

    /// # Safety
    ///
    /// Called by ib_core's resource dump with its message and a QP of ours.
    pub(super) unsafe extern "C" fn fill_res_qp_entry(
        msg: *mut bindings::sk_buff,
        ibqp: *mut bindings::ib_qp,
    ) -> c_int {
        // SAFETY: A created QP of ours (the dump holds a reference to it).
        let qp = unsafe { Qp::from_raw(ibqp) };
        // SAFETY: `msg` is the entry being filled, during this call.
        from_result(|| unsafe { ResEntry::fill(msg, |e| T::fill_res_qp(qp, e)) }.map(|()| 0))
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn destroy_qp(
        ibqp: *mut bindings::ib_qp,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: `create_qp` succeeded for this QP and this is its last op.
        unsafe {
            T::qp_destroying(Qp::from_raw(ibqp));
            Qp::<T>::drop_data(ibqp);
        }
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn post_send(
        ibqp: *mut bindings::ib_qp,
        wr: *const bindings::ib_send_wr,
        bad_wr: *mut *const bindings::ib_send_wr,
    ) -> c_int {
        // SAFETY: A created QP of ours.
        let qp = unsafe { Qp::<T>::from_raw(ibqp) };
        if wr.is_null() {
            // The user doorbell (librxe's zero-WR POST_SEND write()).
            if !T::HAS_DOORBELL {
                return EINVAL.to_errno();
            }
            return from_result(|| T::doorbell(qp).map(|()| 0));
        }
        // SAFETY: The QP is created; `uobject` is set once, for user QPs, before any post.
        if unsafe { !(*ibqp).uobject.is_null() } {
            // SAFETY: `bad_wr` is writable for this call.
            return unsafe { refuse_user_chain(wr, bad_wr) };
        }
        // SAFETY: The QP is created; its type is fixed.
        let ty = unsafe { (*ibqp).qp_type };
        let ud = ty == bindings::ib_qp_type_IB_QPT_UD || ty == bindings::ib_qp_type_IB_QPT_GSI;
        // SAFETY: The caller's chain is valid and `bad_wr` writable for this call; it was posted
        // to this QP of a `Device<T>`.
        unsafe {
            post_chain(wr, bad_wr, |chain| {
                T::post_send(qp, &mut SendWrChain::new(chain, ud))
            })
        }
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn post_recv(
        ibqp: *mut bindings::ib_qp,
        wr: *const bindings::ib_recv_wr,
        bad_wr: *mut *const bindings::ib_recv_wr,
    ) -> c_int {
        // SAFETY: A created QP of ours.
        let qp = unsafe { Qp::<T>::from_raw(ibqp) };
        // SAFETY: The QP is created; `uobject` is set once, for user QPs, before any post.
        if unsafe { !(*ibqp).uobject.is_null() } {
            // SAFETY: `bad_wr` is writable for this call.
            return unsafe { refuse_user_chain(wr, bad_wr) };
        }
        // SAFETY: The caller's chain is valid and `bad_wr` writable for this call.
        unsafe { post_chain(wr, bad_wr, |chain| T::post_recv(qp, chain)) }
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn attach_mcast(
        ibqp: *mut bindings::ib_qp,
        gid: *mut bindings::ib_gid,
        _lid: u16,
    ) -> c_int {
        // SAFETY: A created QP of ours, alive for this call.
        let qp = unsafe { Qp::from_raw(ibqp) };
        // SAFETY: The core passes a valid GID.
        let gid = unsafe { (*gid).raw };
        from_result(|| T::attach_mcast(qp, gid).map(|()| 0))
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn detach_mcast(
        ibqp: *mut bindings::ib_qp,
        gid: *mut bindings::ib_gid,
        _lid: u16,
    ) -> c_int {
        // SAFETY: A created QP of ours, alive for this call.
        let qp = unsafe { Qp::from_raw(ibqp) };
        // SAFETY: The core passes a valid GID.
        let gid = unsafe { (*gid).raw };
        from_result(|| T::detach_mcast(qp, gid).map(|()| 0))
    }
}
