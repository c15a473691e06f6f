// SPDX-License-Identifier: GPL-2.0

//! The verbs of an rrxe device: the `ib_device_ops` the RDMA core calls, each handing over to
//! the verbs object it concerns, whose files are beside this one: [`ah`], [`cq`], [`mr`],
//! [`mw`], [`qp`], [`srq`], and per-QP [`counter`]s. Nothing here holds state.

pub(crate) mod ah;
pub(crate) mod counter;
pub(crate) mod cq;
pub(crate) mod mr;
pub(crate) mod mw;
pub(crate) mod qp;
pub(crate) mod srq;

use crate::device::RrxeDevice;
use crate::{
    counters,
    ib::{
        self,
        AccessFlags,
        AddressVector,
        Caller,
        Cq,
        CqAttr,
        Device,
        DeviceAttr,
        Mr,
        MrKeys,
        Mtu,
        MwType,
        NotifyFlags,
        PhysState,
        PmaCounters,
        PortAttr,
        PortState,
        Prefetch,
        PrefetchRange,
        Qp,
        QpAttr,
        QpAttrMask,
        QpInit,
        QpQuery,
        RecvWrChain,
        ResEntry,
        SendWrChain,
        Srq,
        SrqAttr,
        SrqMask,
        StatDesc,
        Udata,
        Umem,
        UmemOdp,
        WcOut, //
    },
    kernel_ext::{
        cond_resched,
        fatal_signal_pending, //
    },
    limits,
    mm::KernelConsumer,
    verbs::ah::RrxeAh,
    verbs::counter::RrxeCounter,
    verbs::cq::RrxeCq,
    verbs::mr::RrxeMr,
    verbs::mw::RrxeMw,
    verbs::qp::RrxeQp,
    verbs::srq::RrxeSrq,
};
use kernel::{
    prelude::*,
    sync::atomic::Relaxed, //
};

#[vtable]
impl ib::DeviceOps for RrxeDevice {
    const NODE_DESC: &'static CStr = c"rrxe";
    // The stock rdma-core rxe provider drives rrxe devices unmodified: rxe's driver id and
    // uverbs ABI, and the two write() commands librxe rings its send doorbell and arms CQs with.
    const DRIVER_ID: ib::DriverId = ib::DriverId::Rxe;
    const UVERBS_ABI_VER: u32 = 2;
    const WRITE_CMDS: &'static [ib::WriteCmd] =
        &[ib::WriteCmd::PostSend, ib::WriteCmd::ReqNotifyCq];

    fn device_attr(dev: &Device<Self>) -> DeviceAttr {
        limits::device_attr(dev.guid())
    }

    fn set_sys_image_guid(dev: &Device<Self>, guid: u64) {
        dev.set_guid(guid);
    }

    fn port_attr(dev: &Device<Self>, port: u32) -> Result<PortAttr> {
        if port != 1 {
            return Err(EINVAL);
        }
        // A device whose netdev is gone (being unregistered) reports a disabled port.
        let (running, phys_state, mtu) = dev
            .with_netdev(|nd| (nd.is_running(), PhysState::of_netdev(nd), nd.mtu()))
            .unwrap_or((false, PhysState::Disabled, 0));
        Ok(PortAttr {
            state: if running {
                PortState::Active
            } else {
                PortState::Down
            },
            phys_state,
            // VL0 only, as rxe.
            max_vl_num: 1,
            max_mtu: Mtu::Mtu4096,
            active_mtu: limits::active_mtu(mtu),
            gid_tbl_len: limits::GID_TABLE_LEN,
            pkey_tbl_len: 1,
            port_cap_flags: ib::PORT_CM_SUP,
            max_msg_sz: crate::proto::abi::MAX_MSG_SIZE,
        })
    }

    fn counter_descs() -> &'static [StatDesc] {
        &counters::DESCS
    }

    fn port_counters(dev: &Device<Self>, out: &mut [u64]) {
        counter::port_values(dev, out);
    }

    type Counter = RrxeCounter;

    fn counter_new() -> RrxeCounter {
        RrxeCounter::new()
    }

    fn bind_counter(c: &ib::Counter<Self>, qp: &Qp<Self>) -> Result<u32> {
        RrxeCounter::bind(c, qp)
    }

    fn unbind_counter(c: &ib::Counter<Self>, qp: &Qp<Self>) {
        RrxeCounter::unbind(c, qp);
    }

    fn counter_values(c: &ib::Counter<Self>, out: &mut [u64]) {
        RrxeCounter::values(c, out);
    }

    fn dealloc_counter(c: &ib::Counter<Self>) {
        RrxeCounter::dealloc(c);
    }

    fn pma_counters(dev: &Device<Self>) -> PmaCounters {
        counter::pma(dev)
    }

    type Cq = RrxeCq;

    fn create_cq(
        dev: &Device<Self>,
        attr: &CqAttr,
        udata: Option<&mut Udata<'_>>,
    ) -> Result<impl PinInit<RrxeCq, Error>> {
        RrxeCq::create(dev, attr, udata)
    }

    fn cq_capacity(cq: &RrxeCq) -> u32 {
        cq.capacity()
    }

    fn resize_cq(cq: &Cq<Self>, cqe: u32, udata: &mut Udata<'_>) -> Result {
        RrxeCq::resize(cq, cqe, udata)
    }

    fn req_notify_cq(cq: &Cq<Self>, flags: NotifyFlags) -> bool {
        RrxeCq::req_notify(cq, flags)
    }

    fn poll_cq(cq: &Cq<Self>, out: &mut WcOut<'_>) {
        RrxeCq::poll(cq, out)
    }

    type Mr = RrxeMr;

    fn reg_user_mr(
        dev: &Device<Self>,
        umem: Umem,
        iova: u64,
        access: AccessFlags,
    ) -> Result<(RrxeMr, MrKeys)> {
        RrxeMr::user(dev, umem, iova, access)
    }

    fn rereg_user_mr(mr: &Mr<Self>, flags: u32, access: AccessFlags) -> Result {
        RrxeMr::rereg(mr, flags, access)
    }

    fn reg_odp_mr(
        dev: &Device<Self>,
        odp: UmemOdp,
        iova: u64,
        access: AccessFlags,
    ) -> Result<(RrxeMr, MrKeys)> {
        RrxeMr::on_demand(dev, odp, iova, access)
    }

    fn advise_mr(
        dev: &Device<Self>,
        pd: usize,
        advice: Prefetch,
        ranges: &[PrefetchRange],
    ) -> Result {
        // Up to 4 095 ranges of up to 4 GiB each: each range reschedules and checks for a
        // fatal signal between its pieces ([`RrxeMr::prefetch`]), and so does this loop between
        // ranges (empty ones included).
        for r in ranges {
            if fatal_signal_pending() {
                return Err(EINTR);
            }
            let mr = dev.lookup_mr(r.lkey, pd).ok_or(EINVAL)?;
            mr.prefetch(r.addr, u64::from(r.length), advice)?;
            drop(mr);
            cond_resched();
        }
        Ok(())
    }

    fn alloc_mr(
        dev: &Device<Self>,
        max_num_sg: u32,
        kernel: KernelConsumer,
    ) -> Result<(RrxeMr, MrKeys)> {
        RrxeMr::fast_reg(dev, max_num_sg, kernel)
    }

    fn map_mr_begin(mr: &Mr<Self>) -> Result {
        RrxeMr::map_begin(mr)
    }

    fn map_mr_page(mr: &Mr<Self>, addr: u64) -> Result {
        RrxeMr::map_page(mr, addr)
    }

    fn get_dma_mr(
        dev: &Device<Self>,
        access: AccessFlags,
        kernel: KernelConsumer,
    ) -> Result<(RrxeMr, MrKeys)> {
        RrxeMr::dma(dev, access, kernel)
    }

    fn mr_created(dev: &Device<Self>, mr: &Mr<Self>) {
        dev.publish_mr(mr);
    }

    fn mr_destroying(dev: &Device<Self>, mr: &Mr<Self>) -> Result {
        // Bound windows keep the region (IBA o10-36). A bind racing this check may still
        // land; its window then names a dead key and every access through it fails.
        if mr.binds().load(Relaxed) != 0 {
            return Err(EBUSY);
        }
        dev.withdraw_mr(mr.index());
        Ok(())
    }

    fn qp_created(qp: &Qp<Self>) {
        qp.device().publish_qp(qp);
    }

    fn qp_destroying(qp: &Qp<Self>) {
        qp.counts().retire();
        qp.device().withdraw_qp(qp.qpn());
        qp.pipe().close();
    }

    type Qp = RrxeQp;

    fn create_qp(
        dev: &Device<Self>,
        init: &mut QpInit<Self>,
        caller: Caller<'_, '_>,
    ) -> Result<impl PinInit<RrxeQp, Error>> {
        RrxeQp::create(dev, init, caller)
    }

    fn doorbell(qp: &Qp<Self>) -> Result {
        RrxeQp::doorbell(qp)
    }

    fn post_send(qp: &Qp<Self>, wrs: &mut SendWrChain<'_, '_, Self>) -> Result {
        RrxeQp::post_send(qp, wrs)
    }

    fn post_recv(qp: &Qp<Self>, wrs: &mut RecvWrChain<'_>) -> Result {
        RrxeQp::post_recv(qp, wrs)
    }

    fn qp_num(qp: &RrxeQp) -> u32 {
        qp.qpn()
    }

    fn modify_qp(qp: &Qp<Self>, attr: &QpAttr, mask: QpAttrMask) -> Result {
        RrxeQp::modify(qp, attr, mask)
    }

    fn query_qp(qp: &Qp<Self>) -> QpQuery {
        RrxeQp::query(qp)
    }

    fn fill_res_qp(qp: &Qp<Self>, entry: &mut ResEntry) -> Result {
        crate::pipeline::report(qp, &RrxeQp::snapshot(qp), entry)
    }

    fn fill_res_cq(cq: &Cq<Self>, entry: &mut ResEntry) -> Result {
        RrxeCq::report(cq, entry)
    }

    fn fill_res_mr(mr: &Mr<Self>, entry: &mut ResEntry) -> Result {
        mr.report(entry)
    }

    fn fill_res_srq(srq: &Srq<Self>, entry: &mut ResEntry) -> Result {
        RrxeSrq::report(srq, entry)
    }

    fn attach_mcast(qp: &Qp<Self>, gid: [u8; 16]) -> Result {
        if !qp.is_ud() {
            return Err(EINVAL);
        }
        qp.device().mcast().attach(&gid, qp.qpn())
    }

    fn detach_mcast(qp: &Qp<Self>, gid: [u8; 16]) -> Result {
        qp.device().mcast().detach(&gid, qp.qpn())
    }

    type Ah = RrxeAh;

    fn create_ah(
        dev: &Device<Self>,
        av: &AddressVector,
        pd: usize,
        udata: Option<&mut Udata<'_>>,
        may_sleep: bool,
    ) -> Result<RrxeAh> {
        RrxeAh::create(dev, av, pd, udata, may_sleep)
    }

    fn ah_av(ah: &RrxeAh) -> AddressVector {
        ah.av()
    }

    type Srq = RrxeSrq;

    fn create_srq(
        dev: &Device<Self>,
        attr: &mut SrqAttr,
        udata: Option<&mut Udata<'_>>,
    ) -> Result<impl PinInit<RrxeSrq, Error>> {
        RrxeSrq::create(dev, attr, udata)
    }

    fn modify_srq(
        srq: &Srq<Self>,
        attr: &SrqAttr,
        mask: SrqMask,
        udata: Option<&mut Udata<'_>>,
    ) -> Result {
        RrxeSrq::modify(srq, attr, mask, udata)
    }

    fn srq_destroying(srq: &Srq<Self>) {
        RrxeSrq::destroying(srq);
    }

    fn query_srq(srq: &Srq<Self>) -> SrqAttr {
        RrxeSrq::query(srq)
    }

    fn post_srq_recv(srq: &Srq<Self>, wrs: &mut RecvWrChain<'_>) -> Result {
        RrxeSrq::post_recv(srq, wrs)
    }

    type Mw = RrxeMw;

    fn alloc_mw(dev: &Device<Self>, mw_type: MwType, pd: usize) -> Result<(RrxeMw, u32)> {
        RrxeMw::alloc(dev, mw_type, pd)
    }
}
