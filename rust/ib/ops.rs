// SPDX-License-Identifier: GPL-2.0

//! The driver's side of `struct ib_device_ops`: a [`DeviceOps`] trait and the C trampolines that
//! call it, collected into a `const` table.

use super::{
    ah::{
        self,
        AddressVector, //
        Ah,
    },
    counters::{
        self,
        StatDesc, //
    },
    cq::{
        Cq,
        CqAttr,
        NotifyFlags, //
    },
    device::{
        DriverId,
        WriteCmd, //
    },
    mad::PmaCounters,
    mmap::MmapEntry,
    mr::{
        Mr,
        MrKeys,
        Mw,
        MwType,
        Umem, //
    },
    odp::{
        Prefetch,
        PrefetchRange,
        UmemOdp, //
    },
    qp::{
        self,
        Qp,
        QpAttr,
        QpAttrMask,
        QpInit,
        QpQuery, //
    },
    res::ResEntry,
    srq::{
        Srq,
        SrqAttr,
        SrqMask, //
    },
    udata::{
        Caller,
        Udata, //
    },
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
    mm::KernelConsumer, //
};
use core::marker::PhantomData;
use kernel::{
    error::from_result,
    prelude::*, //
};

mod cq_calls;
mod device_calls;
mod mr_calls;
mod qp_calls;
mod srq_calls;

/// Runs a post verb over a work request chain; on failure reports the request the driver was
/// working on as `bad_wr`.
///
/// # Safety
///
/// `wr` is a valid chain and `bad_wr` a valid output, both for the duration of the call.
pub(super) unsafe fn post_chain<W>(
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

/// Refuses a work-request chain posted to a user object (a uverbs `POST_SEND`, `POST_RECV` or
/// `POST_SRQ_RECV` with work requests, which ib_core builds from user input). User QPs and SRQs
/// post through their mapped rings; the addresses of such a chain are user input that the
/// kernel-consumer path would treat as kernel addresses. The whole chain is reported bad.
///
/// # Safety
///
/// `bad_wr` is writable for this call.
pub(super) unsafe fn refuse_user_chain<W>(wr: *const W, bad_wr: *mut *const W) -> c_int {
    // SAFETY: Guaranteed by the caller.
    unsafe { *bad_wr = wr };
    EINVAL.to_errno()
}

/// An RDMA device driver: the data behind each [`Device`] and its verbs.
///
/// Callbacks run in process context and may sleep unless documented otherwise
/// (`Documentation/infiniband/core_locking.rst`).
#[vtable]
pub(crate) trait DeviceOps: Sized + Send + Sync {
    /// The node description (`/sys/class/infiniband/*/node_desc`).
    const NODE_DESC: &'static CStr;

    /// The user-space provider that binds to the devices.
    const DRIVER_ID: DriverId;

    /// The uverbs ABI version that provider speaks.
    const UVERBS_ABI_VER: u32;

    /// The legacy `write()` commands that provider uses beyond ib_core's default set.
    const WRITE_CMDS: &'static [WriteCmd];

    /// The device attributes. Also read once by the core at registration.
    fn device_attr(dev: &Device<Self>) -> DeviceAttr;

    /// Sets the system image GUID `query_device` reports (`modify_device`), in the byte order
    /// of [`DeviceAttr::sys_image_guid`].
    fn set_sys_image_guid(dev: &Device<Self>, guid: u64);

    /// The attributes of port `port` (always 1: one port per device).
    fn port_attr(dev: &Device<Self>, port: u32) -> Result<PortAttr>;

    /// The port's hardware counters, in the order of [`Self::counter`]'s indices.
    fn counter_descs() -> &'static [StatDesc];

    /// The value of counter `index` (an index into [`Self::counter_descs`]).
    fn counter(dev: &Device<Self>, index: usize) -> u64;

    /// What the performance management agent reports (`process_mad`: PortCounters,
    /// PortCountersExt). Must not sleep.
    fn pma_counters(dev: &Device<Self>) -> PmaCounters;

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

    /// Registers user memory for on-demand paging (`IB_ACCESS_ON_DEMAND`: not pinned, faulted
    /// in as the data path needs it), addressed from `iova`, with `IB_ACCESS_*` rights.
    fn reg_odp_mr(
        dev: &Device<Self>,
        odp: UmemOdp,
        iova: u64,
        access: u32,
    ) -> Result<(Self::Mr, MrKeys)>;

    /// `ibv_advise_mr`: makes the pages of `ranges` (keys of on-demand-paging MRs of protection
    /// domain `pd`) present. Process context: may sleep.
    fn advise_mr(
        dev: &Device<Self>,
        pd: usize,
        advice: Prefetch,
        ranges: &[PrefetchRange],
    ) -> Result;

    /// A fast-registration MR (`IB_MR_TYPE_MEM_REG`) for up to `max_num_sg` pages; only kernel
    /// consumers allocate them (their pages are kernel addresses).
    fn alloc_mr(
        dev: &Device<Self>,
        max_num_sg: u32,
        kernel: KernelConsumer,
    ) -> Result<(Self::Mr, MrKeys)>;

    /// Starts mapping a new page list into a fast-registration MR (`map_mr_sg`).
    fn map_mr_begin(mr: &Mr<Self>) -> Result;

    /// Appends one page to the page list being mapped. Must not sleep.
    fn map_mr_page(mr: &Mr<Self>, addr: u64) -> Result;

    /// Called once the MR exists, as [`Self::qp_created`].
    fn mr_created(_dev: &Device<Self>, _mr: &Mr<Self>) {}

    /// Called first when the MR is deregistered, as [`Self::qp_destroying`]. An error refuses
    /// the deregistration: the MR stays registered and the error goes back to the caller.
    fn mr_destroying(_dev: &Device<Self>, _mr: &Mr<Self>) -> Result {
        Ok(())
    }

    /// The DMA MR of a kernel PD (all of memory, virtual DMA).
    fn get_dma_mr(
        dev: &Device<Self>,
        access: u32,
        kernel: KernelConsumer,
    ) -> Result<(Self::Mr, MrKeys)>;

    /// The driver data of a queue pair, dropped when the QP is destroyed.
    type Qp: Send + Sync;

    /// Creates a QP; rounds `init.cap` up to what it grants (reported to the caller).
    fn create_qp(
        dev: &Device<Self>,
        init: &mut QpInit<Self>,
        caller: Caller<'_, '_>,
    ) -> Result<Self::Qp>;

    /// Called once the QP is created (its data in place), before any other op on it: the
    /// driver may take [`crate::sync::ObjRef`]s to it from here on.
    fn qp_created(_qp: &Qp<Self>) {}

    /// Called first when the QP is destroyed: the driver drops the references it holds, stops
    /// its timers and work; `destroy_qp` then waits for the rest and drops the data.
    fn qp_destroying(_qp: &Qp<Self>) {}

    /// Called first when the SRQ is destroyed, as [`Self::qp_destroying`].
    fn srq_destroying(_srq: &Srq<Self>) {}

    /// The send doorbell of a user QP: process the WQEs user space added to the send ring.
    fn doorbell(qp: &Qp<Self>) -> Result;

    /// Posts kernel send work requests. Any context: must not sleep. On error the request the
    /// chain last yielded is reported as `bad_wr`. Only called for kernel QPs: a chain posted to
    /// a user QP (a uverbs `POST_SEND` with work requests) is refused before it gets here.
    fn post_send(qp: &Qp<Self>, wrs: &mut SendWrChain<'_, '_, Self>) -> Result;

    /// Posts kernel receive work requests. Any context: must not sleep. Only called for kernel
    /// QPs, as [`Self::post_send`].
    fn post_recv(qp: &Qp<Self>, wrs: &mut RecvWrChain<'_>) -> Result;

    /// The QP number of `qp`.
    fn qp_num(qp: &Self::Qp) -> u32;

    /// Applies the attributes `mask` names; the QP is unchanged on failure.
    fn modify_qp(qp: &Qp<Self>, attr: &QpAttr, mask: QpAttrMask) -> Result;

    /// The current attributes.
    fn query_qp(qp: &Qp<Self>) -> QpQuery;

    /// Adds the driver's own state of `qp` to its `rdma res show` entry (shown with `-dd`).
    /// Process context; must not sleep (the dump holds the resource table's lock).
    fn fill_res_qp(_qp: &Qp<Self>, _entry: &mut ResEntry) -> Result {
        Ok(())
    }

    /// Attaches a UD QP to the multicast group `gid`.
    fn attach_mcast(qp: &Qp<Self>, gid: [u8; 16]) -> Result;

    /// Detaches a QP from the multicast group `gid`.
    fn detach_mcast(qp: &Qp<Self>, gid: [u8; 16]) -> Result;

    /// The driver data of an address handle.
    type Ah: Send + Sync;

    /// Creates an address handle for `av` in the protection domain with identity `pd` (as
    /// [`Mr::pd_id`]); `udata` is `None` for kernel callers, which may call in atomic context
    /// (`may_sleep` false: no sleeping allocation).
    fn create_ah(
        dev: &Device<Self>,
        av: &AddressVector,
        pd: usize,
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

    /// Posts kernel receive work requests to an SRQ. Any context: must not sleep. Only called
    /// for kernel SRQs, as [`Self::post_send`].
    fn post_srq_recv(srq: &Srq<Self>, wrs: &mut RecvWrChain<'_>) -> Result;

    /// The driver data of a memory window.
    type Mw: Send + Sync;

    /// Allocates a memory window in the protection domain with identity `pd` (as
    /// [`Mr::pd_id`]); returns its data and initial rkey.
    fn alloc_mw(dev: &Device<Self>, mw_type: MwType, pd: usize) -> Result<(Self::Mw, u32)>;
}

/// Builds the C ops table for `T` and holds its trampolines.
pub(super) struct Adapter<T: DeviceOps>(PhantomData<T>);

impl<T: DeviceOps> Adapter<T> {
    /// The ops table. `owner` is set at registration (`THIS_MODULE` is not a constant).
    pub(super) const OPS: bindings::ib_device_ops = bindings::ib_device_ops {
        driver_id: T::DRIVER_ID.to_raw(),
        uverbs_abi_ver: T::UVERBS_ABI_VER,
        query_device: Some(Self::query_device),
        query_port: Some(Self::query_port),
        modify_device: Some(Self::modify_device),
        process_mad: Some(Self::process_mad),
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
        fill_res_qp_entry: Some(Self::fill_res_qp_entry),
        post_send: Some(Self::post_send),
        post_recv: Some(Self::post_recv),
        post_srq_recv: Some(Self::post_srq_recv),
        poll_cq: Some(Self::poll_cq),
        reg_user_mr: Some(Self::reg_user_mr),
        advise_mr: Some(Self::advise_mr),
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
    pub(super) unsafe fn dev<'a>(ib: *mut bindings::ib_device) -> &'a Device<T> {
        // SAFETY: Guaranteed by the caller.
        unsafe { Device::from_raw(ib) }
    }
}
