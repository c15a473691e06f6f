// SPDX-License-Identifier: GPL-2.0

//! The C ops table of a [`DeviceOps`] driver (`struct ib_device_ops`): one trampoline per op,
//! `NULL` for the optional features the driver leaves out (`HAS_*`). The trampolines are in the
//! `*_calls.rs` files beside this one.

use super::*;

/// Builds the C ops table for `T` and holds its trampolines.
pub(in crate::ib) struct Adapter<T: DeviceOps>(PhantomData<T>);

impl<T: DeviceOps> Adapter<T> {
    /// The ops table. `owner` is set at registration (`THIS_MODULE` is not a constant).
    pub(in crate::ib) const OPS: bindings::ib_device_ops = bindings::ib_device_ops {
        driver_id: T::DRIVER_ID.to_raw(),
        uverbs_abi_ver: T::UVERBS_ABI_VER,
        query_device: Some(Self::query_device),
        query_port: Some(Self::query_port),
        modify_device: if T::HAS_SET_SYS_IMAGE_GUID {
            Some(Self::modify_device)
        } else {
            None
        },
        process_mad: if T::HAS_PMA_COUNTERS {
            Some(Self::process_mad)
        } else {
            None
        },
        get_port_immutable: Some(Self::get_port_immutable),
        get_link_layer: Some(Self::get_link_layer),
        query_pkey: Some(Self::query_pkey),
        alloc_ucontext: Some(Self::alloc_ucontext),
        dealloc_ucontext: Some(Self::dealloc_ucontext),
        disassociate_ucontext: Some(Self::disassociate_ucontext),
        alloc_pd: Some(Self::alloc_pd),
        dealloc_pd: Some(Self::dealloc_pd),
        dealloc_driver: Some(Self::dealloc_driver),
        alloc_hw_port_stats: if T::HAS_COUNTER_DESCS {
            Some(Self::alloc_hw_port_stats)
        } else {
            None
        },
        get_hw_stats: if T::HAS_COUNTER_DESCS {
            Some(Self::get_hw_stats)
        } else {
            None
        },
        counter_init: if T::HAS_BIND_COUNTER && T::HAS_COUNTER_DESCS {
            Some(Self::counter_init)
        } else {
            None
        },
        counter_alloc_stats: if T::HAS_BIND_COUNTER && T::HAS_COUNTER_DESCS {
            Some(Self::counter_alloc_stats)
        } else {
            None
        },
        counter_bind_qp: if T::HAS_BIND_COUNTER && T::HAS_COUNTER_DESCS {
            Some(Self::counter_bind_qp)
        } else {
            None
        },
        counter_unbind_qp: if T::HAS_BIND_COUNTER && T::HAS_COUNTER_DESCS {
            Some(Self::counter_unbind_qp)
        } else {
            None
        },
        counter_update_stats: if T::HAS_BIND_COUNTER && T::HAS_COUNTER_DESCS {
            Some(Self::counter_update_stats)
        } else {
            None
        },
        counter_dealloc: if T::HAS_BIND_COUNTER && T::HAS_COUNTER_DESCS {
            Some(Self::counter_dealloc)
        } else {
            None
        },
        mmap: Some(Self::mmap),
        mmap_free: Some(Self::mmap_free),
        create_cq: Some(Self::create_cq),
        destroy_cq: Some(Self::destroy_cq),
        resize_user_cq: if T::HAS_RESIZE_CQ {
            Some(Self::resize_user_cq)
        } else {
            None
        },
        req_notify_cq: Some(Self::req_notify_cq),
        create_qp: Some(Self::create_qp),
        modify_qp: Some(Self::modify_qp),
        query_qp: Some(Self::query_qp),
        fill_res_qp_entry: Some(Self::fill_res_qp_entry),
        fill_res_cq_entry: Some(Self::fill_res_cq_entry),
        fill_res_mr_entry: Some(Self::fill_res_mr_entry),
        fill_res_srq_entry: if T::HAS_CREATE_SRQ {
            Some(Self::fill_res_srq_entry)
        } else {
            None
        },
        post_send: Some(Self::post_send),
        post_recv: Some(Self::post_recv),
        post_srq_recv: if T::HAS_CREATE_SRQ {
            Some(Self::post_srq_recv)
        } else {
            None
        },
        poll_cq: Some(Self::poll_cq),
        reg_user_mr: Some(Self::reg_user_mr),
        advise_mr: if T::HAS_ADVISE_MR {
            Some(Self::advise_mr)
        } else {
            None
        },
        get_dma_mr: Some(Self::get_dma_mr),
        dereg_mr: Some(Self::dereg_mr),
        rereg_user_mr: if T::HAS_REREG_USER_MR {
            Some(Self::rereg_user_mr)
        } else {
            None
        },
        alloc_mr: if T::HAS_ALLOC_MR {
            Some(Self::alloc_mr)
        } else {
            None
        },
        map_mr_sg: if T::HAS_ALLOC_MR {
            Some(Self::map_mr_sg)
        } else {
            None
        },
        attach_mcast: if T::HAS_ATTACH_MCAST {
            Some(Self::attach_mcast)
        } else {
            None
        },
        detach_mcast: if T::HAS_ATTACH_MCAST {
            Some(Self::detach_mcast)
        } else {
            None
        },
        create_ah: if T::HAS_CREATE_AH {
            Some(Self::create_ah)
        } else {
            None
        },
        create_user_ah: if T::HAS_CREATE_AH {
            Some(Self::create_ah)
        } else {
            None
        },
        query_ah: if T::HAS_CREATE_AH {
            Some(Self::query_ah)
        } else {
            None
        },
        destroy_ah: if T::HAS_CREATE_AH {
            Some(Self::destroy_ah)
        } else {
            None
        },
        create_srq: if T::HAS_CREATE_SRQ {
            Some(Self::create_srq)
        } else {
            None
        },
        modify_srq: if T::HAS_CREATE_SRQ {
            Some(Self::modify_srq)
        } else {
            None
        },
        query_srq: if T::HAS_CREATE_SRQ {
            Some(Self::query_srq)
        } else {
            None
        },
        destroy_srq: if T::HAS_CREATE_SRQ {
            Some(Self::destroy_srq)
        } else {
            None
        },
        alloc_mw: if T::HAS_ALLOC_MW {
            Some(Self::alloc_mw)
        } else {
            None
        },
        dealloc_mw: if T::HAS_ALLOC_MW {
            Some(Self::dealloc_mw)
        } else {
            None
        },
        size_ib_ah: Ah::<T>::SIZE,
        size_ib_srq: Srq::<T>::SIZE,
        size_ib_mw: Mw::<T>::SIZE,
        destroy_qp: Some(Self::destroy_qp),
        size_ib_ucontext: core::mem::size_of::<bindings::ib_ucontext>(),
        size_ib_pd: core::mem::size_of::<bindings::ib_pd>(),
        size_ib_qp: Qp::<T>::SIZE,
        size_ib_cq: Cq::<T>::SIZE,
        size_rdma_counter: Counter::<T>::SIZE,
        ..pin_init::zeroed()
    };

    /// # Safety
    ///
    /// `ib` is a live `Device<T>` (ib_core only calls ops of registered or registering devices).
    pub(in crate::ib) unsafe fn dev<'a>(ib: *mut bindings::ib_device) -> &'a Device<T> {
        // SAFETY: Guaranteed by the caller.
        unsafe { Device::from_raw(ib) }
    }
}
