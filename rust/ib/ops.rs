// SPDX-License-Identifier: GPL-2.0

//! The driver's side of `struct ib_device_ops`: a [`DeviceOps`] trait and the C trampolines that
//! call it, collected into a `const` table.

use super::{
    ah::{
        self,
        AddressVector, //
        Ah,
    },
    counter::Counter,
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
        Access,
        AccessFlags,
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
        QpInit, //
    },
    qp_attr::{
        self,
        QpAttr,
        QpAttrMask,
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
        WcOut,
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
    build_error,
    error::{
        from_result,
        VTABLE_DEFAULT_ERROR, //
    },
    prelude::*, //
};

mod counter_calls;
mod cq_calls;
mod device_calls;
mod mr_calls;
mod qp_calls;
mod srq_calls;
mod table;

pub(in crate::ib) use table::Adapter;

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
///
/// The ops of optional features have no default: a driver that leaves out one of these groups
/// leaves its ops `NULL` in the table (`HAS_*`), and ib_core reports the feature missing:
/// `set_sys_image_guid` (`modify_device`), `counter_descs` and `port_counters` (hardware
/// counters), `bind_counter` to `dealloc_counter` (per-QP counters, which need the former),
/// `pma_counters` (`process_mad`), `resize_cq`, `rereg_user_mr`, `advise_mr`, `alloc_mr` and
/// the `map_mr_*` (fast registration), `attach_mcast` and `detach_mcast`, `create_ah` and
/// `ah_av` (AHs), `create_srq` to `post_srq_recv` (SRQs), `alloc_mw` (MWs), and `doorbell`
/// (the provider's user send doorbell).
///
/// # Examples
///
/// The shape of a driver (rrxe's is `RrxeDevice`, in `rust/verbs.rs`): the provider it serves,
/// its objects' data as associated types, and the ops each object's own code implements.
///
/// ```ignore
/// #[vtable]
/// impl ib::DeviceOps for MyDevice {
///     const NODE_DESC: &'static CStr = c"mydev";
///     const DRIVER_ID: ib::DriverId = ib::DriverId::Rxe;
///     const UVERBS_ABI_VER: u32 = 2;
///     const WRITE_CMDS: &'static [ib::WriteCmd] = &[];
///
///     type Cq = MyCq;
///     type Qp = MyQp;
///     // ...
///
///     fn create_qp(dev: &Device<Self>, init: &mut QpInit<Self>, caller: Caller<'_, '_>)
///         -> Result<impl PinInit<MyQp, Error>> {
///         MyQp::new(dev, init, caller)
///     }
///     // No create_srq: the SRQ ops stay NULL and ib_core reports no SRQ support.
/// }
/// ```
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
    fn set_sys_image_guid(_dev: &Device<Self>, _guid: u64) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// The attributes of port `port` (always 1: one port per device).
    fn port_attr(dev: &Device<Self>, port: u32) -> Result<PortAttr>;

    /// The port's hardware counters, in the order of [`Self::port_counters`]' values.
    fn counter_descs() -> &'static [StatDesc] {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// The port's own counter values, in the order of [`Self::counter_descs`] (`out` has one
    /// slot per descriptor): without what QPs counted while bound to a per-QP counter, which
    /// the core adds from the counters.
    fn port_counters(_dev: &Device<Self>, _out: &mut [u64]) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// The driver data of a per-QP counter ([`Counter`]): it must need no drop.
    type Counter: Send + Sync;

    /// A new per-QP counter's data (`counter_init`, before its first bind).
    fn counter_new() -> Self::Counter {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Binds `qp` to `counter`: from now on its counts are the counter's. Returns the
    /// counter's id: its own, or for a new one (id 0) an id the driver allocated, unique on the
    /// device until [`Self::dealloc_counter`]. On error nothing changed. Process context.
    fn bind_counter(_counter: &Counter<Self>, _qp: &Qp<Self>) -> Result<u32> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Unbinds `qp` from `counter`: what it counted while bound stays the counter's, what it
    /// counts next the port's.
    fn unbind_counter(_counter: &Counter<Self>, _qp: &Qp<Self>) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// The per-QP counter's values, in the order of [`Self::counter_descs`].
    fn counter_values(_counter: &Counter<Self>, _out: &mut [u64]) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// No QP is bound to the counter any more and the core took its values into the port's
    /// history: the driver releases its id.
    fn dealloc_counter(_counter: &Counter<Self>) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// What the performance management agent reports (`process_mad`: PortCounters,
    /// PortCountersExt). Must not sleep.
    fn pma_counters(_dev: &Device<Self>) -> PmaCounters {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// The driver data of a completion queue, dropped when the CQ is destroyed.
    type Cq: Send + Sync;

    /// Creates a CQ of at least `attr.cqe` entries; `udata` is `None` for kernel consumers.
    /// Returns the initialiser of its data, which the caller runs in place in the CQ object.
    fn create_cq(
        dev: &Device<Self>,
        attr: &CqAttr,
        udata: Option<&mut Udata<'_>>,
    ) -> Result<impl PinInit<Self::Cq, Error>>;

    /// The number of completions `cq` holds (reported as `ib_cq.cqe`).
    fn cq_capacity(cq: &Self::Cq) -> u32;

    /// Resizes a user CQ to at least `cqe` entries, keeping its unread completions.
    fn resize_cq(_cq: &Cq<Self>, _cqe: u32, _udata: &mut Udata<'_>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Arms the CQ. Returns whether completions are already waiting, for
    /// `IB_CQ_REPORT_MISSED_EVENTS`. May be called in atomic context: must not sleep.
    fn req_notify_cq(cq: &Cq<Self>, flags: NotifyFlags) -> bool;

    /// Moves completions of a kernel CQ into `out` until it is full or the CQ empty. Any
    /// context: must not sleep.
    fn poll_cq(cq: &Cq<Self>, out: &mut WcOut<'_>);

    /// The driver data of a memory region, dropped when the MR is deregistered.
    type Mr: Send + Sync;

    /// Registers pinned user memory `umem`, addressed from `iova`, with `IB_ACCESS_*` rights.
    fn reg_user_mr(
        dev: &Device<Self>,
        umem: Umem,
        iova: u64,
        access: AccessFlags,
    ) -> Result<(Self::Mr, MrKeys)>;

    /// Re-registers an MR in place (`IB_MR_REREG_PD` and/or `IB_MR_REREG_ACCESS` in `flags`;
    /// ib_core moves the PD). New translations are not supported.
    fn rereg_user_mr(_mr: &Mr<Self>, _flags: u32, _access: AccessFlags) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Registers user memory for on-demand paging (`IB_ACCESS_ON_DEMAND`: not pinned, faulted
    /// in as the data path needs it), addressed from `iova`, with `IB_ACCESS_*` rights.
    fn reg_odp_mr(
        dev: &Device<Self>,
        odp: UmemOdp,
        iova: u64,
        access: AccessFlags,
    ) -> Result<(Self::Mr, MrKeys)>;

    /// `ibv_advise_mr`: makes the pages of `ranges` (keys of on-demand-paging MRs of protection
    /// domain `pd`) present. Process context: may sleep.
    fn advise_mr(
        _dev: &Device<Self>,
        _pd: usize,
        _advice: Prefetch,
        _ranges: &[PrefetchRange],
    ) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// A fast-registration MR (`IB_MR_TYPE_MEM_REG`) for up to `max_num_sg` pages; only kernel
    /// consumers allocate them (their pages are kernel addresses).
    fn alloc_mr(
        _dev: &Device<Self>,
        _max_num_sg: u32,
        _kernel: KernelConsumer,
    ) -> Result<(Self::Mr, MrKeys)> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Starts mapping a new page list into a fast-registration MR (`map_mr_sg`).
    fn map_mr_begin(_mr: &Mr<Self>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Appends one page to the page list being mapped. Must not sleep.
    fn map_mr_page(_mr: &Mr<Self>, _addr: u64) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

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
        access: AccessFlags,
        kernel: KernelConsumer,
    ) -> Result<(Self::Mr, MrKeys)>;

    /// The driver data of a queue pair, dropped when the QP is destroyed.
    type Qp: Send + Sync;

    /// Creates a QP; rounds `init.cap` up to what it grants (reported to the caller). Returns
    /// the initialiser of its data, which the caller runs in place in the QP object (so its
    /// locks and timers can be embedded).
    fn create_qp(
        dev: &Device<Self>,
        init: &mut QpInit<Self>,
        caller: Caller<'_, '_>,
    ) -> Result<impl PinInit<Self::Qp, Error>>;

    /// Called once the QP is created (its data in place), before any other op on it: the
    /// driver may take [`crate::sync::ObjRef`]s to it from here on.
    fn qp_created(_qp: &Qp<Self>) {}

    /// Called first when the QP is destroyed: the driver drops the references it holds, stops
    /// its timers and work; `destroy_qp` then waits for the rest and drops the data.
    fn qp_destroying(_qp: &Qp<Self>) {}

    /// Called first when the SRQ is destroyed, as [`Self::qp_destroying`].
    fn srq_destroying(_srq: &Srq<Self>) {}

    /// The send doorbell of a user QP: process the WQEs user space added to the send ring.
    /// Rung by a `POST_SEND` with no work requests, as the rxe provider does; a driver whose
    /// provider rings no such doorbell leaves it out, and such a `POST_SEND` fails (`EINVAL`).
    fn doorbell(_qp: &Qp<Self>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

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
    /// Called only for a reader with `CAP_NET_ADMIN` (a [`ResEntry`] exists only for one).
    /// Process context; must not sleep (the dump holds the resource table's lock).
    fn fill_res_qp(_qp: &Qp<Self>, _entry: &mut ResEntry) -> Result {
        Ok(())
    }

    /// As [`Self::fill_res_qp`], for a CQ (`rdma -dd res show cq`).
    fn fill_res_cq(_cq: &Cq<Self>, _entry: &mut ResEntry) -> Result {
        Ok(())
    }

    /// As [`Self::fill_res_qp`], for an MR (`rdma -dd res show mr`).
    fn fill_res_mr(_mr: &Mr<Self>, _entry: &mut ResEntry) -> Result {
        Ok(())
    }

    /// As [`Self::fill_res_qp`], for an SRQ (`rdma -dd res show srq`).
    fn fill_res_srq(_srq: &Srq<Self>, _entry: &mut ResEntry) -> Result {
        Ok(())
    }

    /// Attaches a UD QP to the multicast group `gid`.
    fn attach_mcast(_qp: &Qp<Self>, _gid: [u8; 16]) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Detaches a QP from the multicast group `gid`.
    fn detach_mcast(_qp: &Qp<Self>, _gid: [u8; 16]) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// The driver data of an address handle.
    type Ah: Send + Sync;

    /// Creates an address handle for `av` in the protection domain with identity `pd` (as
    /// [`Mr::pd_id`]); `udata` is `None` for kernel callers, which may call in atomic context
    /// (`may_sleep` false: no sleeping allocation).
    fn create_ah(
        _dev: &Device<Self>,
        _av: &AddressVector,
        _pd: usize,
        _udata: Option<&mut Udata<'_>>,
        _may_sleep: bool,
    ) -> Result<Self::Ah> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// The address vector of an address handle.
    fn ah_av(_ah: &Self::Ah) -> AddressVector {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// The driver data of a shared receive queue.
    type Srq: Send + Sync;

    /// Creates a basic SRQ; rounds `attr` up to what it grants. Returns the initialiser of its
    /// data, which the caller runs in place in the SRQ object.
    fn create_srq(
        _dev: &Device<Self>,
        _attr: &mut SrqAttr,
        _udata: Option<&mut Udata<'_>>,
    ) -> Result<impl PinInit<Self::Srq, Error>> {
        build_error!(VTABLE_DEFAULT_ERROR);
        #[expect(
            unreachable_code,
            reason = "never reached, but the return type needs an initialiser"
        )]
        // SAFETY: The initialiser fails without touching the slot.
        Ok(unsafe { pin_init::pin_init_from_closure(|_| Err(EINVAL)) })
    }

    /// Resizes the SRQ and/or arms its limit.
    fn modify_srq(
        _srq: &Srq<Self>,
        _attr: &SrqAttr,
        _mask: SrqMask,
        _udata: Option<&mut Udata<'_>>,
    ) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// The current attributes.
    fn query_srq(_srq: &Srq<Self>) -> SrqAttr {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Posts kernel receive work requests to an SRQ. Any context: must not sleep. Only called
    /// for kernel SRQs, as [`Self::post_send`].
    fn post_srq_recv(_srq: &Srq<Self>, _wrs: &mut RecvWrChain<'_>) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// The driver data of a memory window.
    type Mw: Send + Sync;

    /// Allocates a memory window in the protection domain with identity `pd` (as
    /// [`Mr::pd_id`]); returns its data and initial rkey.
    fn alloc_mw(_dev: &Device<Self>, _mw_type: MwType, _pd: usize) -> Result<(Self::Mw, u32)> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
}
