// SPDX-License-Identifier: GPL-2.0

//! The memory region and memory window trampolines of [`Adapter`].

use super::*;

impl<T: DeviceOps> Adapter<T> {
    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn reg_user_mr(
        pd: *mut bindings::ib_pd,
        start: u64,
        length: u64,
        iova: u64,
        access: c_int,
        dmah: *mut bindings::ib_dmah,
        _udata: *mut bindings::ib_udata,
    ) -> *mut bindings::ib_mr {
        let r = (|| {
            if !dmah.is_null() {
                return Err(eopnotsupp());
            }
            // SAFETY: A PD of one of our devices.
            let ib = unsafe { (*pd).device };
            // SAFETY: One of our devices.
            let dev = unsafe { Self::dev(ib) };
            let rights = AccessFlags::from_raw(u32::try_from(access).map_err(|_| EINVAL)?);
            let (data, keys) = if rights.contains(Access::OnDemand) {
                // SAFETY: Registered device, process context of the registering process.
                let odp = unsafe { UmemOdp::get(ib, start, length, access) }?;
                T::reg_odp_mr(dev, odp, iova, rights)?
            } else {
                // SAFETY: Registered device, process context of the registering process.
                let umem = unsafe { Umem::get(ib, start, length, access) }?;
                T::reg_user_mr(dev, umem, iova, rights)?
            };
            let mr = Mr::<T>::into_raw(data, keys)?;
            // SAFETY: Just created.
            T::mr_created(dev, unsafe { Mr::<T>::from_raw(mr) });
            Ok::<_, Error>(mr)
        })();
        r.unwrap_or_else(|e| e.to_ptr())
    }

    /// # Safety
    ///
    /// Called by ib_core (uverbs `ADVISE_MR`, process context) with valid arguments: `sg_list`
    /// holds `num_sge` entries copied from user space.
    pub(super) unsafe extern "C" fn advise_mr(
        pd: *mut bindings::ib_pd,
        advice: bindings::ib_uverbs_advise_mr_advice,
        flags: u32,
        sg_list: *mut bindings::ib_sge,
        num_sge: u32,
        _attrs: *mut bindings::uverbs_attr_bundle,
    ) -> c_int {
        let r = (|| {
            let advice = Prefetch::from_raw(advice).ok_or_else(eopnotsupp)?;
            if flags & !bindings::ib_uverbs_advise_mr_flag_IB_UVERBS_ADVISE_MR_FLAG_FLUSH != 0 {
                return Err(EINVAL);
            }
            let n = usize::try_from(num_sge).map_err(|_| EINVAL)?;
            if sg_list.is_null() || n == 0 {
                return Err(EINVAL);
            }
            let mut ranges = KVec::with_capacity(n, GFP_KERNEL | __GFP_NOWARN)?;
            for i in 0..n {
                // SAFETY: `sg_list` has `num_sge` entries, a kernel copy made by uverbs.
                let sge = unsafe { sg_list.add(i).read() };
                ranges.push(
                    PrefetchRange {
                        lkey: sge.lkey,
                        addr: sge.addr,
                        length: sge.length,
                    },
                    GFP_KERNEL,
                )?;
            }
            // SAFETY: A PD of one of our devices.
            let dev = unsafe { Self::dev((*pd).device) };
            // Asynchronous advice is best effort: it is carried out before the call returns
            // (allowed, as the flush flag only forbids returning earlier).
            T::advise_mr(dev, pd as usize, advice, &ranges)
        })();
        r.map_or_else(|e| e.to_errno(), |()| 0)
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn rereg_user_mr(
        mr: *mut bindings::ib_mr,
        flags: c_int,
        _start: u64,
        _length: u64,
        _iova: u64,
        access: c_int,
        _pd: *mut bindings::ib_pd,
        _udata: *mut bindings::ib_udata,
    ) -> *mut bindings::ib_mr {
        let r = (|| {
            let flags = u32::try_from(flags).map_err(|_| EINVAL)?;
            let supported = bindings::ib_mr_rereg_flags_IB_MR_REREG_PD
                | bindings::ib_mr_rereg_flags_IB_MR_REREG_ACCESS;
            if flags & !supported != 0 {
                return Err(eopnotsupp());
            }
            // SAFETY: One of our MRs, alive for this call.
            let mr = unsafe { Mr::<T>::from_raw(mr) };
            let access = AccessFlags::from_raw(u32::try_from(access).map_err(|_| EINVAL)?);
            T::rereg_user_mr(mr, flags, access)
        })();
        // NULL: re-registered in place.
        r.map_or_else(|e| e.to_ptr(), |()| core::ptr::null_mut())
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn alloc_mr(
        pd: *mut bindings::ib_pd,
        mr_type: bindings::ib_mr_type,
        max_num_sg: u32,
    ) -> *mut bindings::ib_mr {
        let r = (|| {
            if mr_type != bindings::ib_mr_type_IB_MR_TYPE_MEM_REG {
                return Err(eopnotsupp());
            }
            // SAFETY: A PD of one of our devices.
            let dev = unsafe { Self::dev((*pd).device) };
            // SAFETY: Only kernel consumers allocate MRs (uverbs has no command for it).
            let kernel = unsafe { KernelConsumer::new() };
            let (data, keys) = T::alloc_mr(dev, max_num_sg, kernel)?;
            let mr = Mr::<T>::into_raw(data, keys)?;
            // SAFETY: Just created.
            T::mr_created(dev, unsafe { Mr::<T>::from_raw(mr) });
            Ok::<_, Error>(mr)
        })();
        r.unwrap_or_else(|e| e.to_ptr())
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn map_mr_sg(
        mr: *mut bindings::ib_mr,
        sg: *mut bindings::scatterlist,
        sg_nents: c_int,
        sg_offset: *mut c_uint,
    ) -> c_int {
        // SAFETY: One of our MRs, alive for this call.
        if let Err(e) = T::map_mr_begin(unsafe { Mr::<T>::from_raw(mr) }) {
            return e.to_errno();
        }
        // SAFETY: Valid MR and scatterlist from the caller; the callback only appends pages.
        unsafe { bindings::ib_sg_to_pages(mr, sg, sg_nents, sg_offset, Some(Self::map_mr_page)) }
    }

    /// The `ib_sg_to_pages` callback: one page of the list being mapped.
    ///
    /// # Safety
    ///
    /// Called by `ib_sg_to_pages` on one of our MRs during `map_mr_sg`.
    pub(super) unsafe extern "C" fn map_mr_page(mr: *mut bindings::ib_mr, addr: u64) -> c_int {
        // SAFETY: One of our MRs, alive for the enclosing `map_mr_sg` call.
        from_result(|| T::map_mr_page(unsafe { Mr::<T>::from_raw(mr) }, addr).map(|()| 0))
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn get_dma_mr(
        pd: *mut bindings::ib_pd,
        access: c_int,
    ) -> *mut bindings::ib_mr {
        let r = (|| {
            // SAFETY: A PD of one of our devices.
            let dev = unsafe { Self::dev((*pd).device) };
            let access = AccessFlags::from_raw(u32::try_from(access).map_err(|_| EINVAL)?);
            // SAFETY: Only kernel consumers get a DMA MR (uverbs has no command for it).
            let kernel = unsafe { KernelConsumer::new() };
            let (data, keys) = T::get_dma_mr(dev, access, kernel)?;
            let mr = Mr::<T>::into_raw(data, keys)?;
            // SAFETY: Just created.
            T::mr_created(dev, unsafe { Mr::<T>::from_raw(mr) });
            Ok::<_, Error>(mr)
        })();
        r.unwrap_or_else(|e| e.to_ptr())
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn dereg_mr(
        mr: *mut bindings::ib_mr,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: One of our MRs. It is not used after this call unless the driver refuses
        // the deregistration, in which case it stays as it was.
        unsafe {
            if let Err(e) = T::mr_destroying(Self::dev((*mr).device), Mr::from_raw(mr)) {
                return e.to_errno();
            }
            Mr::<T>::free(mr);
        }
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn alloc_mw(
        ibmw: *mut bindings::ib_mw,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            // SAFETY: The core set `device`, `pd` and `type_` before calling.
            let (dev, ty, pd) = unsafe {
                (
                    Self::dev((*ibmw).device),
                    (*ibmw).type_,
                    (*ibmw).pd as usize,
                )
            };
            let ty = MwType::from_raw(ty).ok_or(EINVAL)?;
            let (data, rkey) = T::alloc_mw(dev, ty, pd)?;
            // SAFETY: The core allocated `size_ib_mw` bytes for an `Mw<T>`; `data` is unset.
            unsafe {
                Mw::<T>::init(ibmw, data);
                (*ibmw).rkey = rkey;
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn dealloc_mw(ibmw: *mut bindings::ib_mw) -> c_int {
        // SAFETY: `alloc_mw` succeeded for this MW and this is its last op.
        unsafe { Mw::<T>::drop_data(ibmw) };
        0
    }

    /// # Safety
    ///
    /// Called by ib_core's resource dump with its message and an MR of ours.
    pub(super) unsafe extern "C" fn fill_res_mr_entry(
        msg: *mut bindings::sk_buff,
        ibmr: *mut bindings::ib_mr,
    ) -> c_int {
        // SAFETY: A registered MR of ours (the dump holds it; deregistration waits for it).
        let mr = unsafe { Mr::<T>::from_raw(ibmr) };
        // SAFETY: `msg` is the entry being filled, during this call.
        from_result(|| unsafe { ResEntry::fill(msg, |e| T::fill_res_mr(mr, e)) }.map(|()| 0))
    }
}
