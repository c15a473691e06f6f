// SPDX-License-Identifier: GPL-2.0

//! The driver's side of `struct ib_device_ops`: a [`DeviceOps`] trait and the C trampolines that
//! call it, collected into a `const` table.

use super::{
    attr::PORT_CM_SUP,
    counters::{
        self,
        StatDesc, //
    },
    cq::{
        Cq,
        CqAttr,
        NotifyFlags, //
    },
    device::DRIVER_ID,
    mmap::MmapEntry,
    mr::{
        Mr,
        MrKeys,
        Umem, //
    },
    qp::{
        self,
        AddressVector,
        Qp,
        QpAttr,
        QpInit,
        QpQuery, //
    },
    srq::{
        Ah,
        Mw,
        MwType,
        Srq,
        SrqAttr,
        SrqMask, //
    },
    udata::Udata,
    wr::{
        RecvWrChain,
        SendWrChain,
        Wc,
        WrChain, //
    },
    Device,
    DeviceAttr,
    PortAttr, //
};
use crate::{
    bindings,
    kernel_ext::eopnotsupp,
    proto::qp_state::AttrMask, //
};
use core::marker::PhantomData;
use kernel::{
    error::from_result,
    prelude::*, //
};

/// Runs a post verb over a work request chain; on failure reports the request the driver was
/// working on as `bad_wr`.
///
/// # Safety
///
/// `wr` is a valid chain and `bad_wr` a valid output, both for the duration of the call.
unsafe fn post_chain<W>(
    wr: *const W,
    bad_wr: *mut *const W,
    post: impl FnOnce(&mut WrChain<'_, W>) -> Result,
) -> c_int {
    // SAFETY: Guaranteed by the caller.
    let mut chain = unsafe { WrChain::new(wr) };
    let r = post(&mut chain);
    if r.is_err() {
        // SAFETY: Guaranteed by the caller.
        unsafe { *bad_wr = chain.current() };
    }
    from_result(|| r.map(|()| 0))
}

/// An RDMA device driver: the data behind each [`Device`] and its verbs.
///
/// Callbacks run in process context and may sleep unless documented otherwise
/// (`Documentation/infiniband/core_locking.rst`).
#[vtable]
pub(crate) trait DeviceOps: Sized + Send + Sync {
    /// The node description (`/sys/class/infiniband/*/node_desc`).
    const NODE_DESC: &'static CStr;

    /// The device attributes. Also read once by the core at registration.
    fn device_attr(dev: &Device<Self>) -> DeviceAttr;

    /// The attributes of port `port` (always 1: one port per device).
    fn port_attr(dev: &Device<Self>, port: u32) -> Result<PortAttr>;

    /// The port's hardware counters, in the order of [`Self::counter`]'s indices.
    fn counter_descs() -> &'static [StatDesc];

    /// The value of counter `index` (an index into [`Self::counter_descs`]).
    fn counter(dev: &Device<Self>, index: usize) -> u64;

    /// The driver data of a completion queue, dropped when the CQ is destroyed.
    type Cq: Send + Sync;

    /// Creates a CQ of at least `attr.cqe` entries; `udata` is `None` for kernel consumers.
    fn create_cq(
        dev: &Device<Self>,
        attr: &CqAttr,
        udata: Option<&mut Udata<'_>>,
    ) -> Result<Self::Cq>;

    /// The number of completions `cq` holds (reported as `ib_cq.cqe`).
    fn cq_capacity(cq: &Self::Cq) -> u32;

    /// Resizes a user CQ to at least `cqe` entries, keeping its unread completions.
    fn resize_cq(cq: &Cq<Self>, cqe: u32, udata: &mut Udata<'_>) -> Result;

    /// Arms the CQ. Returns whether completions are already waiting, for
    /// `IB_CQ_REPORT_MISSED_EVENTS`. May be called in atomic context: must not sleep.
    fn req_notify_cq(cq: &Cq<Self>, flags: NotifyFlags) -> bool;

    /// Moves up to `wc.len()` completions of a kernel CQ into `wc`; returns how many. Any
    /// context: must not sleep.
    fn poll_cq(cq: &Cq<Self>, wc: &mut [Wc]) -> usize;

    /// The driver data of a memory region, dropped when the MR is deregistered.
    type Mr: Send + Sync;

    /// Registers pinned user memory `umem`, addressed from `iova`, with `IB_ACCESS_*` rights.
    fn reg_user_mr(
        dev: &Device<Self>,
        umem: Umem,
        iova: u64,
        access: u32,
    ) -> Result<(Self::Mr, MrKeys)>;

    /// Re-registers an MR in place (`IB_MR_REREG_PD` and/or `IB_MR_REREG_ACCESS` in `flags`;
    /// ib_core moves the PD). New translations are not supported.
    fn rereg_user_mr(mr: &Mr<Self>, flags: u32, access: u32) -> Result;

    /// A fast-registration MR (`IB_MR_TYPE_MEM_REG`) for up to `max_num_sg` pages.
    fn alloc_mr(dev: &Device<Self>, max_num_sg: u32) -> Result<(Self::Mr, MrKeys)>;

    /// Starts mapping a new page list into a fast-registration MR (`map_mr_sg`).
    fn map_mr_begin(mr: &Mr<Self>) -> Result;

    /// Appends one page to the page list being mapped. Must not sleep.
    fn map_mr_page(mr: &Mr<Self>, addr: u64) -> Result;

    /// The DMA MR of a kernel PD (all of memory, virtual DMA).
    fn get_dma_mr(dev: &Device<Self>, access: u32) -> Result<(Self::Mr, MrKeys)>;

    /// The driver data of a queue pair, dropped when the QP is destroyed.
    type Qp: Send + Sync;

    /// Creates a QP; rounds `init.cap` up to what it grants (reported to the caller).
    fn create_qp(
        dev: &Device<Self>,
        init: &mut QpInit<Self>,
        udata: Option<&mut Udata<'_>>,
    ) -> Result<Self::Qp>;

    /// The send doorbell of a user QP: process the WQEs user space added to the send ring.
    fn doorbell(qp: &Qp<Self>) -> Result;

    /// Posts kernel send work requests. Any context: must not sleep. On error the request the
    /// chain last yielded is reported as `bad_wr`.
    fn post_send(qp: &Qp<Self>, wrs: &mut SendWrChain<'_>) -> Result;

    /// Posts kernel receive work requests. Any context: must not sleep.
    fn post_recv(qp: &Qp<Self>, wrs: &mut RecvWrChain<'_>) -> Result;

    /// The QP number of `qp`.
    fn qp_num(qp: &Self::Qp) -> u32;

    /// Applies the attributes `mask` names; the QP is unchanged on failure.
    fn modify_qp(qp: &Qp<Self>, attr: &QpAttr, mask: AttrMask) -> Result;

    /// The current attributes.
    fn query_qp(qp: &Qp<Self>) -> QpQuery;

    /// Attaches a UD QP to the multicast group `gid`.
    fn attach_mcast(qp: &Qp<Self>, gid: [u8; 16]) -> Result;

    /// Detaches a QP from the multicast group `gid`.
    fn detach_mcast(qp: &Qp<Self>, gid: [u8; 16]) -> Result;

    /// The driver data of an address handle.
    type Ah: Send + Sync;

    /// Creates an address handle for `av`; `udata` is `None` for kernel callers, which may call
    /// in atomic context (`may_sleep` false: no sleeping allocation).
    fn create_ah(
        dev: &Device<Self>,
        av: &AddressVector,
        udata: Option<&mut Udata<'_>>,
        may_sleep: bool,
    ) -> Result<Self::Ah>;

    /// The address vector of an address handle.
    fn ah_av(ah: &Self::Ah) -> AddressVector;

    /// The driver data of a shared receive queue.
    type Srq: Send + Sync;

    /// Creates a basic SRQ; rounds `attr` up to what it grants.
    fn create_srq(
        dev: &Device<Self>,
        attr: &mut SrqAttr,
        udata: Option<&mut Udata<'_>>,
    ) -> Result<Self::Srq>;

    /// Resizes the SRQ and/or arms its limit.
    fn modify_srq(
        srq: &Srq<Self>,
        attr: &SrqAttr,
        mask: SrqMask,
        udata: Option<&mut Udata<'_>>,
    ) -> Result;

    /// The current attributes.
    fn query_srq(srq: &Srq<Self>) -> SrqAttr;

    /// Posts kernel receive work requests to an SRQ. Any context: must not sleep.
    fn post_srq_recv(srq: &Srq<Self>, wrs: &mut RecvWrChain<'_>) -> Result;

    /// The driver data of a memory window.
    type Mw: Send + Sync;

    /// Allocates a memory window; returns its data and initial rkey.
    fn alloc_mw(dev: &Device<Self>, mw_type: MwType) -> Result<(Self::Mw, u32)>;
}

/// Builds the C ops table for `T` and holds its trampolines.
pub(super) struct Adapter<T: DeviceOps>(PhantomData<T>);

impl<T: DeviceOps> Adapter<T> {
    /// The ops table. `owner` is set at registration (`THIS_MODULE` is not a constant).
    pub(super) const OPS: bindings::ib_device_ops = bindings::ib_device_ops {
        driver_id: DRIVER_ID,
        uverbs_abi_ver: 2,
        query_device: Some(Self::query_device),
        query_port: Some(Self::query_port),
        get_port_immutable: Some(Self::get_port_immutable),
        get_link_layer: Some(Self::get_link_layer),
        query_pkey: Some(Self::query_pkey),
        alloc_ucontext: Some(Self::alloc_ucontext),
        dealloc_ucontext: Some(Self::dealloc_ucontext),
        alloc_pd: Some(Self::alloc_pd),
        dealloc_pd: Some(Self::dealloc_pd),
        dealloc_driver: Some(Self::dealloc_driver),
        alloc_hw_port_stats: Some(Self::alloc_hw_port_stats),
        get_hw_stats: Some(Self::get_hw_stats),
        mmap: Some(Self::mmap),
        mmap_free: Some(Self::mmap_free),
        create_cq: Some(Self::create_cq),
        destroy_cq: Some(Self::destroy_cq),
        resize_user_cq: Some(Self::resize_user_cq),
        req_notify_cq: Some(Self::req_notify_cq),
        create_qp: Some(Self::create_qp),
        modify_qp: Some(Self::modify_qp),
        query_qp: Some(Self::query_qp),
        post_send: Some(Self::post_send),
        post_recv: Some(Self::post_recv),
        post_srq_recv: Some(Self::post_srq_recv),
        poll_cq: Some(Self::poll_cq),
        reg_user_mr: Some(Self::reg_user_mr),
        get_dma_mr: Some(Self::get_dma_mr),
        dereg_mr: Some(Self::dereg_mr),
        rereg_user_mr: Some(Self::rereg_user_mr),
        alloc_mr: Some(Self::alloc_mr),
        map_mr_sg: Some(Self::map_mr_sg),
        attach_mcast: Some(Self::attach_mcast),
        detach_mcast: Some(Self::detach_mcast),
        create_ah: Some(Self::create_ah),
        create_user_ah: Some(Self::create_ah),
        query_ah: Some(Self::query_ah),
        destroy_ah: Some(Self::destroy_ah),
        create_srq: Some(Self::create_srq),
        modify_srq: Some(Self::modify_srq),
        query_srq: Some(Self::query_srq),
        destroy_srq: Some(Self::destroy_srq),
        alloc_mw: Some(Self::alloc_mw),
        dealloc_mw: Some(Self::dealloc_mw),
        size_ib_ah: Ah::<T>::SIZE,
        size_ib_srq: Srq::<T>::SIZE,
        size_ib_mw: Mw::<T>::SIZE,
        destroy_qp: Some(Self::destroy_qp),
        size_ib_ucontext: core::mem::size_of::<bindings::ib_ucontext>(),
        size_ib_pd: core::mem::size_of::<bindings::ib_pd>(),
        size_ib_qp: Qp::<T>::SIZE,
        size_ib_cq: Cq::<T>::SIZE,
        ..pin_init::zeroed()
    };

    /// # Safety
    ///
    /// `ib` is a live `Device<T>` (ib_core only calls ops of registered or registering devices).
    unsafe fn dev<'a>(ib: *mut bindings::ib_device) -> &'a Device<T> {
        // SAFETY: Guaranteed by the caller.
        unsafe { Device::from_raw(ib) }
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn query_device(
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
    unsafe extern "C" fn query_port(
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

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn get_port_immutable(
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
    unsafe extern "C" fn get_link_layer(
        _ib: *mut bindings::ib_device,
        _port: u32,
    ) -> bindings::rdma_link_layer {
        bindings::rdma_link_layer_IB_LINK_LAYER_ETHERNET
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn query_pkey(
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
    unsafe extern "C" fn alloc_ucontext(
        _uctx: *mut bindings::ib_ucontext,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // The core allocated and zeroed the context; rxe's carries no driver state yet.
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn dealloc_ucontext(_uctx: *mut bindings::ib_ucontext) {}

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn alloc_pd(
        _pd: *mut bindings::ib_pd,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // A PD is only a handle: the core allocated it and tracks its users.
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn dealloc_pd(
        _pd: *mut bindings::ib_pd,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn mmap(
        uctx: *mut bindings::ib_ucontext,
        vma: *mut bindings::vm_area_struct,
    ) -> c_int {
        // SAFETY: The core passes a live context and the VMA being created.
        from_result(|| unsafe { MmapEntry::mmap(uctx, vma) }.map(|()| 0))
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn mmap_free(entry: *mut bindings::rdma_user_mmap_entry) {
        // SAFETY: The core calls this once, after the last reference to our entry is gone.
        unsafe { MmapEntry::free(entry) };
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn create_cq(
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
            let cqe = T::cq_capacity(&data);
            // SAFETY: The core allocated `size_ib_cq` bytes for a `Cq<T>`; `data` is unset.
            unsafe {
                Cq::<T>::init(ibcq, data);
                (*ibcq).cqe = i32::try_from(cqe).unwrap_or(i32::MAX);
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn destroy_cq(
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
    unsafe extern "C" fn resize_user_cq(
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
    unsafe extern "C" fn req_notify_cq(
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
    unsafe extern "C" fn create_qp(
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
            let data = T::create_qp(dev, &mut qi, udata.as_mut())?;
            let qpn = T::qp_num(&data);
            qp::write_caps(&qi.cap, init);
            // SAFETY: The core allocated `size_ib_qp` bytes for a `Qp<T>`; `data` is unset.
            unsafe {
                Qp::<T>::init(ibqp, data);
                (*ibqp).qp_num = qpn;
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn modify_qp(
        ibqp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        mask: c_int,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            let mask = AttrMask::from_bits(u32::try_from(mask).map_err(|_| EINVAL)?);
            // SAFETY: The core passes valid attributes for this call.
            let a = qp::attr_from_c(unsafe { &*attr }, mask)?;
            // SAFETY: A created QP of ours.
            T::modify_qp(unsafe { Qp::from_raw(ibqp) }, &a, mask)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn query_qp(
        ibqp: *mut bindings::ib_qp,
        attr: *mut bindings::ib_qp_attr,
        _mask: c_int,
        init: *mut bindings::ib_qp_init_attr,
    ) -> c_int {
        // SAFETY: A created QP of ours.
        let q = T::query_qp(unsafe { Qp::from_raw(ibqp) });
        // SAFETY: The core passes valid, exclusive output structures.
        unsafe { qp::write_query(&q, &mut *attr, &mut *init) };
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn post_send(
        ibqp: *mut bindings::ib_qp,
        wr: *const bindings::ib_send_wr,
        bad_wr: *mut *const bindings::ib_send_wr,
    ) -> c_int {
        // SAFETY: A created QP of ours.
        let qp = unsafe { Qp::<T>::from_raw(ibqp) };
        if wr.is_null() {
            // The user doorbell (librxe's zero-WR POST_SEND write()).
            return from_result(|| T::doorbell(qp).map(|()| 0));
        }
        // SAFETY: The caller's chain is valid and `bad_wr` writable for this call.
        unsafe { post_chain(wr, bad_wr, |chain| T::post_send(qp, chain)) }
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn post_recv(
        ibqp: *mut bindings::ib_qp,
        wr: *const bindings::ib_recv_wr,
        bad_wr: *mut *const bindings::ib_recv_wr,
    ) -> c_int {
        // SAFETY: A created QP of ours.
        let qp = unsafe { Qp::<T>::from_raw(ibqp) };
        // SAFETY: The caller's chain is valid and `bad_wr` writable for this call.
        unsafe { post_chain(wr, bad_wr, |chain| T::post_recv(qp, chain)) }
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn post_srq_recv(
        ibsrq: *mut bindings::ib_srq,
        wr: *const bindings::ib_recv_wr,
        bad_wr: *mut *const bindings::ib_recv_wr,
    ) -> c_int {
        // SAFETY: A created SRQ of ours.
        let srq = unsafe { Srq::<T>::from_raw(ibsrq) };
        // SAFETY: The caller's chain is valid and `bad_wr` writable for this call.
        unsafe { post_chain(wr, bad_wr, |chain| T::post_srq_recv(srq, chain)) }
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn poll_cq(
        ibcq: *mut bindings::ib_cq,
        num: c_int,
        wc: *mut bindings::ib_wc,
    ) -> c_int {
        // SAFETY: A created CQ of ours.
        let cq = unsafe { Cq::<T>::from_raw(ibcq) };
        let want = usize::try_from(num).unwrap_or(0);
        let mut done = 0;
        while done < want {
            let mut tmp: [Wc; 16] = core::array::from_fn(|_| Wc::EMPTY);
            let n = T::poll_cq(cq, &mut tmp[..(want - done).min(16)]);
            for (i, w) in tmp.iter().take(n).enumerate() {
                // SAFETY: `wc` has room for `num` completions.
                w.write_to(unsafe { &mut *wc.add(done + i) });
            }
            done += n;
            if n < 16 {
                break;
            }
        }
        c_int::try_from(done).unwrap_or(c_int::MAX)
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    #[allow(clippy::too_many_arguments)] // The C signature.
    unsafe extern "C" fn reg_user_mr(
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
            // SAFETY: Registered device, process context of the registering process.
            let umem = unsafe { Umem::get(ib, start, length, access) }?;
            // SAFETY: One of our devices.
            let dev = unsafe { Self::dev(ib) };
            let (data, keys) =
                T::reg_user_mr(dev, umem, iova, u32::try_from(access).map_err(|_| EINVAL)?)?;
            Mr::<T>::into_raw(data, keys)
        })();
        r.unwrap_or_else(|e| e.to_ptr())
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    #[allow(clippy::too_many_arguments)] // The C signature.
    unsafe extern "C" fn rereg_user_mr(
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
            T::rereg_user_mr(mr, flags, u32::try_from(access).map_err(|_| EINVAL)?)
        })();
        // NULL: re-registered in place.
        r.map_or_else(|e| e.to_ptr(), |()| core::ptr::null_mut())
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn alloc_mr(
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
            let (data, keys) = T::alloc_mr(dev, max_num_sg)?;
            Mr::<T>::into_raw(data, keys)
        })();
        r.unwrap_or_else(|e| e.to_ptr())
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn map_mr_sg(
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
    unsafe extern "C" fn map_mr_page(mr: *mut bindings::ib_mr, addr: u64) -> c_int {
        // SAFETY: One of our MRs, alive for the enclosing `map_mr_sg` call.
        from_result(|| T::map_mr_page(unsafe { Mr::<T>::from_raw(mr) }, addr).map(|()| 0))
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn get_dma_mr(
        pd: *mut bindings::ib_pd,
        access: c_int,
    ) -> *mut bindings::ib_mr {
        let r = (|| {
            // SAFETY: A PD of one of our devices.
            let dev = unsafe { Self::dev((*pd).device) };
            let (data, keys) = T::get_dma_mr(dev, u32::try_from(access).map_err(|_| EINVAL)?)?;
            Mr::<T>::into_raw(data, keys)
        })();
        r.unwrap_or_else(|e| e.to_ptr())
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn dereg_mr(
        mr: *mut bindings::ib_mr,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: One of our MRs, not used after this call.
        unsafe { Mr::<T>::free(mr) };
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn attach_mcast(
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
    unsafe extern "C" fn detach_mcast(
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

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn create_ah(
        ibah: *mut bindings::ib_ah,
        init: *mut bindings::rdma_ah_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            // SAFETY: The core passes valid attributes with a resolved source GID.
            let av = qp::av_from_c(unsafe { &*(*init).ah_attr })?;
            // SAFETY: NULL for kernel callers, else the udata of a user command.
            let mut udata = unsafe { Udata::from_raw(udata) };
            // SAFETY: The core set `device` to one of our devices.
            let dev = unsafe { Self::dev((*ibah).device) };
            // SAFETY: Valid attributes for this call.
            let flags = unsafe { (*init).flags };
            let may_sleep = flags & bindings::rdma_create_ah_flags_RDMA_CREATE_AH_SLEEPABLE != 0;
            let data = T::create_ah(dev, &av, udata.as_mut(), may_sleep)?;
            // SAFETY: The core allocated `size_ib_ah` bytes for an `Ah<T>`; `data` is unset.
            unsafe { Ah::<T>::init(ibah, data) };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn query_ah(
        ibah: *mut bindings::ib_ah,
        attr: *mut bindings::rdma_ah_attr,
    ) -> c_int {
        // SAFETY: A created AH of ours.
        let av = T::ah_av(unsafe { Ah::<T>::from_raw(ibah) });
        // SAFETY: A valid output for this call.
        qp::av_write(&av, unsafe { &mut *attr }, 1);
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn destroy_ah(ibah: *mut bindings::ib_ah, _flags: u32) -> c_int {
        // SAFETY: `create_ah` succeeded for this AH and this is its last op.
        unsafe { Ah::<T>::drop_data(ibah) };
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn create_srq(
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
            attr.write_to(&mut init.attr);
            // SAFETY: The core allocated `size_ib_srq` bytes for an `Srq<T>`; `data` is unset.
            unsafe { Srq::<T>::init(ibsrq, data) };
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn modify_srq(
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
    unsafe extern "C" fn query_srq(
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
    unsafe extern "C" fn destroy_srq(
        ibsrq: *mut bindings::ib_srq,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: `create_srq` succeeded for this SRQ and this is its last op.
        unsafe { Srq::<T>::drop_data(ibsrq) };
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn alloc_mw(
        ibmw: *mut bindings::ib_mw,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            // SAFETY: The core set `device` and `type_` before calling.
            let (dev, ty) = unsafe { (Self::dev((*ibmw).device), (*ibmw).type_) };
            let ty = MwType::from_raw(ty).ok_or(EINVAL)?;
            let (data, rkey) = T::alloc_mw(dev, ty)?;
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
    unsafe extern "C" fn dealloc_mw(ibmw: *mut bindings::ib_mw) -> c_int {
        // SAFETY: `alloc_mw` succeeded for this MW and this is its last op.
        unsafe { Mw::<T>::drop_data(ibmw) };
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn destroy_qp(
        ibqp: *mut bindings::ib_qp,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: `create_qp` succeeded for this QP and this is its last op.
        unsafe { Qp::<T>::drop_data(ibqp) };
        0
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn alloc_hw_port_stats(
        _ib: *mut bindings::ib_device,
        _port: u32,
    ) -> *mut bindings::rdma_hw_stats {
        counters::alloc_port_stats(T::counter_descs())
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn get_hw_stats(
        ib: *mut bindings::ib_device,
        stats: *mut bindings::rdma_hw_stats,
        _port: u32,
        _index: c_int,
    ) -> c_int {
        // SAFETY: One of our devices.
        let dev = unsafe { Self::dev(ib) };
        let values = (0..T::counter_descs().len()).map(|i| T::counter(dev, i));
        // SAFETY: The set we allocated, locked by the core for this call.
        unsafe { counters::fill(stats, values) }
    }

    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by [`Device::register`].
    unsafe extern "C" fn dealloc_driver(ib: *mut bindings::ib_device) {
        // SAFETY: Called exactly once, after the last op, from `ib_dealloc_device` on one of our
        // devices: `data` is initialised and nothing uses it any more.
        unsafe { core::ptr::drop_in_place(Device::<T>::data_ptr(ib)) };
    }
}

/// The port capability flags every rrxe port reports.
pub(crate) const ROCE_PORT_CAP_FLAGS: u32 = PORT_CM_SUP;
