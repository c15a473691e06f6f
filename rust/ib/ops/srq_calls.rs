// SPDX-License-Identifier: GPL-2.0

//! The address handle and shared receive queue trampolines of [`Adapter`].

use super::*;

impl<T: DeviceOps> Adapter<T> {
    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn create_ah(
        ibah: *mut bindings::ib_ah,
        init: *mut bindings::rdma_ah_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            // SAFETY: The core passes valid attributes with a resolved source GID.
            let av = ah::av_from_c(unsafe { &*(*init).ah_attr })?;
            // SAFETY: NULL for kernel callers, else the udata of a user command.
            let mut udata = unsafe { Udata::from_raw(udata) };
            // SAFETY: The core set `device` to one of our devices.
            let dev = unsafe { Self::dev((*ibah).device) };
            // SAFETY: Valid attributes for this call.
            let flags = unsafe { (*init).flags };
            let may_sleep = flags & bindings::rdma_create_ah_flags_RDMA_CREATE_AH_SLEEPABLE != 0;
            // SAFETY: The core sets the AH's PD before calling us.
            let pd = unsafe { (*ibah).pd } as usize;
            let data = T::create_ah(dev, &av, pd, udata.as_mut(), may_sleep)?;
            // SAFETY: The core allocated `size_ib_ah` bytes for an `Ah<T>`; `data` is unset.
            unsafe { Ah::<T>::init(ibah, data) };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn query_ah(
        ibah: *mut bindings::ib_ah,
        attr: *mut bindings::rdma_ah_attr,
    ) -> c_int {
        // SAFETY: A created AH of ours.
        let av = T::ah_av(unsafe { Ah::<T>::from_raw(ibah) });
        // SAFETY: A valid output for this call.
        ah::av_write(&av, unsafe { &mut *attr }, 1);
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn destroy_ah(ibah: *mut bindings::ib_ah, _flags: u32) -> c_int {
        // SAFETY: `create_ah` succeeded for this AH and this is its last op.
        unsafe { Ah::<T>::drop_data(ibah) };
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn create_srq(
        ibsrq: *mut bindings::ib_srq,
        init: *mut bindings::ib_srq_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            // SAFETY: The core passes valid, exclusive creation attributes.
            let init = unsafe { &mut *init };
            if init.srq_type != bindings::ib_srq_type_IB_SRQT_BASIC {
                return Err(eopnotsupp());
            }
            let mut attr = SrqAttr::from_c(&init.attr);
            // SAFETY: NULL for kernel callers, else the udata of a user command.
            let mut udata = unsafe { Udata::from_raw(udata) };
            // SAFETY: The core set `device` to one of our devices.
            let dev = unsafe { Self::dev((*ibsrq).device) };
            let data = T::create_srq(dev, &mut attr, udata.as_mut())?;
            // SAFETY: The core allocated `size_ib_srq` bytes for an `Srq<T>`; `data` is unset.
            unsafe { Srq::<T>::init_pinned(ibsrq, data)? };
            attr.write_to(&mut init.attr);
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn modify_srq(
        ibsrq: *mut bindings::ib_srq,
        attr: *mut bindings::ib_srq_attr,
        mask: bindings::ib_srq_attr_mask,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            let mask = SrqMask::from_raw(mask).ok_or(EINVAL)?;
            // SAFETY: Valid attributes for this call.
            let attr = SrqAttr::from_c(unsafe { &*attr });
            // SAFETY: NULL for kernel callers, else the udata of a user command.
            let mut udata = unsafe { Udata::from_raw(udata) };
            // SAFETY: A created SRQ of ours.
            T::modify_srq(unsafe { Srq::from_raw(ibsrq) }, &attr, mask, udata.as_mut())?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn query_srq(
        ibsrq: *mut bindings::ib_srq,
        attr: *mut bindings::ib_srq_attr,
    ) -> c_int {
        // SAFETY: A created SRQ of ours.
        let a = T::query_srq(unsafe { Srq::from_raw(ibsrq) });
        // SAFETY: A valid output for this call.
        a.write_to(unsafe { &mut *attr });
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn destroy_srq(
        ibsrq: *mut bindings::ib_srq,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: `create_srq` succeeded for this SRQ and this is its last op.
        unsafe {
            T::srq_destroying(Srq::from_raw(ibsrq));
            Srq::<T>::drop_data(ibsrq);
        }
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn post_srq_recv(
        ibsrq: *mut bindings::ib_srq,
        wr: *const bindings::ib_recv_wr,
        bad_wr: *mut *const bindings::ib_recv_wr,
    ) -> c_int {
        // SAFETY: A created SRQ of ours; `uobject` is set once, for user SRQs, before any post.
        if unsafe { !(*ibsrq).uobject.is_null() } {
            // SAFETY: `bad_wr` is writable for this call.
            return unsafe { refuse_user_chain(wr, bad_wr) };
        }
        // SAFETY: A created SRQ of ours.
        let srq = unsafe { Srq::<T>::from_raw(ibsrq) };
        // SAFETY: The caller's chain is valid and `bad_wr` writable for this call.
        unsafe { post_chain(wr, bad_wr, |chain| T::post_srq_recv(srq, chain)) }
    }

    /// # Safety
    ///
    /// Called by ib_core's resource dump with its message and an SRQ of ours.
    pub(super) unsafe extern "C" fn fill_res_srq_entry(
        msg: *mut bindings::sk_buff,
        ibsrq: *mut bindings::ib_srq,
    ) -> c_int {
        // SAFETY: A created SRQ of ours (the dump holds it; destroy drains the dump first).
        let srq = unsafe { Srq::<T>::from_raw(ibsrq) };
        // SAFETY: `msg` is the entry being filled, during this call.
        from_result(|| unsafe { ResEntry::fill(msg, |e| T::fill_res_srq(srq, e)) }.map(|()| 0))
    }
}
