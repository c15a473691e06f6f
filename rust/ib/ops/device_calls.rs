// SPDX-License-Identifier: GPL-2.0

//! The device, port, user context, PD, mmap and counter trampolines of [`Adapter`].

use super::*;

impl<T: DeviceOps> Adapter<T> {
    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn query_device(
        ib: *mut bindings::ib_device,
        attr: *mut bindings::ib_device_attr,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            // SAFETY: `udata` is NULL for kernel callers or a valid udata for user ones.
            if let Some(u) = unsafe { udata.as_ref() } {
                // rxe defines no driver data for this command.
                if u.inlen != 0 || u.outlen != 0 {
                    return Err(EINVAL);
                }
            }
            // SAFETY: ib_core passes one of our devices.
            let dev = unsafe { Self::dev(ib) };
            // SAFETY: `attr` is a valid, exclusive output structure for this call.
            T::device_attr(dev).write_to(unsafe { &mut *attr });
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn query_port(
        ib: *mut bindings::ib_device,
        port: u32,
        attr: *mut bindings::ib_port_attr,
    ) -> c_int {
        from_result(|| {
            // SAFETY: ib_core passes one of our devices.
            let dev = unsafe { Self::dev(ib) };
            let pa = T::port_attr(dev, port)?;
            // SAFETY: `attr` is a valid, zeroed, exclusive output structure for this call.
            let c = unsafe { &mut *attr };
            pa.write_to(c);
            // Speed and width follow the Ethernet link, as the core computes them.
            // SAFETY: Valid device, port and output fields.
            let ret = unsafe {
                bindings::ib_get_eth_speed(ib, port, &mut c.active_speed, &mut c.active_width)
            };
            if ret != 0 {
                // No link speed (a virtual netdev): report the slowest valid pair.
                c.active_speed = bindings::ib_port_speed_IB_SPEED_SDR as u16;
                c.active_width = bindings::ib_port_width_IB_WIDTH_1X as u8;
            }
            Ok(0)
        })
    }

    /// `ib_modify_device`: the node description (written through
    /// `/sys/class/infiniband/*/node_desc`) and the system image GUID, as rxe allows.
    ///
    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn modify_device(
        ib: *mut bindings::ib_device,
        mask: c_int,
        attr: *mut bindings::ib_device_modify,
    ) -> c_int {
        from_result(|| {
            let guid = bindings::ib_device_modify_flags_IB_DEVICE_MODIFY_SYS_IMAGE_GUID as c_int;
            let desc = bindings::ib_device_modify_flags_IB_DEVICE_MODIFY_NODE_DESC as c_int;
            if mask & !(guid | desc) != 0 {
                return Err(eopnotsupp());
            }
            // SAFETY: ib_core passes one of our devices.
            let dev = unsafe { Self::dev(ib) };
            // SAFETY: `attr` is valid for this call; copied before use.
            let attr = unsafe { attr.read() };
            if mask & guid != 0 {
                // The caller's host-order GUID; the attribute is stored big-endian.
                T::set_sys_image_guid(dev, attr.sys_image_guid.to_be());
            }
            if mask & desc != 0 {
                dev.set_node_desc(&attr.node_desc);
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn get_port_immutable(
        ib: *mut bindings::ib_device,
        port: u32,
        imm: *mut bindings::ib_port_immutable,
    ) -> c_int {
        from_result(|| {
            // SAFETY: ib_core passes one of our devices.
            let dev = unsafe { Self::dev(ib) };
            let pa = T::port_attr(dev, port)?;
            // SAFETY: `imm` is a valid, exclusive output structure for this call.
            let imm = unsafe { &mut *imm };
            // RoCEv2 only: the core then creates RoCE v2 GIDs from the netdev's addresses.
            imm.core_cap_flags = bindings::RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
            imm.pkey_tbl_len = pa.pkey_tbl_len.into();
            imm.gid_tbl_len = i32::try_from(pa.gid_tbl_len).map_err(|_| EINVAL)?;
            imm.max_mad_size = bindings::IB_MGMT_MAD_SIZE;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn get_link_layer(
        _ib: *mut bindings::ib_device,
        _port: u32,
    ) -> bindings::rdma_link_layer {
        bindings::rdma_link_layer_IB_LINK_LAYER_ETHERNET
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn query_pkey(
        _ib: *mut bindings::ib_device,
        _port: u32,
        index: u16,
        pkey: *mut u16,
    ) -> c_int {
        from_result(|| {
            // RoCE has one P_Key, the default full-membership key.
            if index != 0 {
                return Err(EINVAL);
            }
            // SAFETY: `pkey` is a valid output for this call.
            unsafe { *pkey = 0xffff };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn alloc_ucontext(
        _uctx: *mut bindings::ib_ucontext,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // The core allocated and zeroed the context; rxe's carries no driver state yet.
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn dealloc_ucontext(_uctx: *mut bindings::ib_ucontext) {}

    /// The device goes away (deleted, or moved to another network namespace) while `uctx` is
    /// open: ib_core has destroyed its objects without waiting for the process. Nothing is left
    /// to do: a context carries no driver state, and what its process mapped ([`MmapEntry`]) are
    /// pages it holds references to, with no `vm_ops` of this module, so they outlive the
    /// device and the module safely. Having the op lets ib_core disassociate instead of
    /// waiting for every process, and move the device between namespaces (`rdma dev set`).
    ///
    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn disassociate_ucontext(_uctx: *mut bindings::ib_ucontext) {}

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn alloc_pd(
        _pd: *mut bindings::ib_pd,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // A PD is only a handle: the core allocated it and tracks its users.
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn dealloc_pd(
        _pd: *mut bindings::ib_pd,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn mmap(
        uctx: *mut bindings::ib_ucontext,
        vma: *mut bindings::vm_area_struct,
    ) -> c_int {
        // SAFETY: The core passes a live context and the VMA being created.
        from_result(|| unsafe { MmapEntry::mmap(uctx, vma) }.map(|()| 0))
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn mmap_free(entry: *mut bindings::rdma_user_mmap_entry) {
        // SAFETY: The core calls this once, after the last reference to our entry is gone.
        unsafe { MmapEntry::free(entry) };
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn alloc_hw_port_stats(
        _ib: *mut bindings::ib_device,
        _port: u32,
    ) -> *mut bindings::rdma_hw_stats {
        counters::alloc_port_stats(T::counter_descs())
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn get_hw_stats(
        ib: *mut bindings::ib_device,
        stats: *mut bindings::rdma_hw_stats,
        _port: u32,
        _index: c_int,
    ) -> c_int {
        // SAFETY: One of our devices.
        let dev = unsafe { Self::dev(ib) };
        // SAFETY: The set we allocated, locked by the core for this call.
        unsafe { counters::fill(stats, |out| T::port_counters(dev, out)) }
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    pub(super) unsafe extern "C" fn dealloc_driver(ib: *mut bindings::ib_device) {
        // SAFETY: Called exactly once, after the last op, from `ib_dealloc_device` on one of our
        // devices: `data` is initialised and nothing uses it any more.
        unsafe { core::ptr::drop_in_place(Device::<T>::data_ptr(ib)) };
    }
}
