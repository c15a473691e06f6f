// SPDX-License-Identifier: GPL-2.0

//! The completion queue trampolines of [`Adapter`].

use super::*;

impl<T: DeviceOps> Adapter<T> {
    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn create_cq(
        ibcq: *mut bindings::ib_cq,
        attr: *const bindings::ib_cq_init_attr,
        attrs: *mut bindings::uverbs_attr_bundle,
    ) -> c_int {
        from_result(|| {
            // SAFETY: The core passes a valid attribute structure.
            let attr = unsafe { &*attr };
            let attr = CqAttr {
                cqe: attr.cqe,
                flags: attr.flags,
            };
            // SAFETY: `attrs` is NULL for kernel callers, else a live bundle.
            let mut udata = unsafe { Udata::from_raw(bindings::rrxe_helper_bundle_udata(attrs)) };
            // SAFETY: The core set `device` to one of our devices.
            let dev = unsafe { Self::dev((*ibcq).device) };
            let data = T::create_cq(dev, &attr, udata.as_mut())?;
            // SAFETY: The core allocated `size_ib_cq` bytes for a `Cq<T>`; `data` is unset.
            unsafe { Cq::<T>::init_pinned(ibcq, data)? };
            // SAFETY: Created just now.
            let cqe = T::cq_capacity(unsafe { Cq::<T>::from_raw(ibcq) });
            // SAFETY: The CQ is ours and not visible to anyone else yet.
            unsafe { (*ibcq).cqe = i32::try_from(cqe).unwrap_or(i32::MAX) };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn destroy_cq(
        ibcq: *mut bindings::ib_cq,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: `create_cq` succeeded for this CQ and this is its last op.
        unsafe { Cq::<T>::drop_data(ibcq) };
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn resize_user_cq(
        ibcq: *mut bindings::ib_cq,
        cqe: c_uint,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            // SAFETY: A user command's udata, inside its bundle.
            let mut udata = unsafe { Udata::from_raw(udata) }.ok_or(EINVAL)?;
            // SAFETY: A created CQ of ours.
            let cq = unsafe { Cq::<T>::from_raw(ibcq) };
            T::resize_cq(cq, cqe, &mut udata)?;
            let cqe = T::cq_capacity(cq);
            // SAFETY: The core serialises resize with other verbs on this CQ object.
            unsafe { (*ibcq).cqe = i32::try_from(cqe).unwrap_or(i32::MAX) };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn req_notify_cq(
        ibcq: *mut bindings::ib_cq,
        flags: bindings::ib_cq_notify_flags,
    ) -> c_int {
        // SAFETY: A created CQ of ours.
        let cq = unsafe { Cq::from_raw(ibcq) };
        c_int::from(T::req_notify_cq(cq, NotifyFlags::from_raw(flags)))
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn poll_cq(
        ibcq: *mut bindings::ib_cq,
        num: c_int,
        wc: *mut bindings::ib_wc,
    ) -> c_int {
        // SAFETY: A created CQ of ours.
        let cq = unsafe { Cq::<T>::from_raw(ibcq) };
        let room = usize::try_from(num).unwrap_or(0);
        // SAFETY: `wc` has room for `num` completions, the consumer's until this returns.
        let mut out = unsafe { WcOut::new(wc, room) };
        T::poll_cq(cq, &mut out);
        let done = out.written();
        c_int::try_from(done).unwrap_or(c_int::MAX)
    }

    /// # Safety
    ///
    /// Called by ib_core's resource dump with its message and a CQ of ours.
    pub(super) unsafe extern "C" fn fill_res_cq_entry(
        msg: *mut bindings::sk_buff,
        ibcq: *mut bindings::ib_cq,
    ) -> c_int {
        // SAFETY: A created CQ of ours (the dump holds it; destroy drains the dump first).
        let cq = unsafe { Cq::<T>::from_raw(ibcq) };
        // SAFETY: `msg` is the entry being filled, during this call.
        from_result(|| unsafe { ResEntry::fill(msg, |e| T::fill_res_cq(cq, e)) }.map(|()| 0))
    }
}
