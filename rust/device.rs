// SPDX-License-Identifier: GPL-2.0

//! The rrxe device: the driver data of each RDMA device, bound to one netdev.

use crate::net::{
    NetDevice,
    NetDeviceRef, //
};
use crate::{
    ah::{
        AhEntry,
        RrxeAh, //
    },
    counters::{
        self,
        Counter,
        Counters, //
    },
    cq::RrxeCq,
    ib::{
        self,
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
        ObjRef,
        PhysState,
        PmaCounters,
        PortAttr,
        PortState,
        Prefetch,
        PrefetchRange,
        Qp,
        QpAttr,
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
        Wc, //
    },
    index::IndexPool,
    limits,
    mcast::McastTable,
    mm::KernelConsumer,
    mr::RrxeMr,
    mw::{
        MwState,
        MwTable,
        RrxeMw, //
    },
    pipeline::{
        DropReason,
        Tunnels, //
    },
    proto::attr_mask::AttrMask,
    qp::RrxeQp,
    srq::RrxeSrq,
    table::SparseTable,
};
use kernel::{
    prelude::*,
    sync::atomic::{
        Atomic,
        Relaxed, //
    },
    sync::Arc,
};

/// The driver data of an rrxe RDMA device (the `rxe_dev` analogue).
///
/// Lifetime: owned by ib_core from registration until `dealloc_driver`, see [`ib::Device`].
pub(crate) struct RrxeDevice {
    /// System image GUID: the EUI-64 of the netdev's MAC at creation, until `modify_device`
    /// sets another.
    guid: Atomic<u64>,
    /// Whether port 1 was last reported active; netdev events only report real changes.
    port_active: Atomic<bool>,
    /// QP numbers.
    qpns: Arc<IndexPool>,
    /// MR indices.
    mrs: Arc<IndexPool>,
    /// MW indices (above the MR indices).
    mws: Arc<IndexPool>,
    /// SRQ numbers.
    srqs: Arc<IndexPool>,
    /// AH numbers (`ah_num`).
    ahs: Arc<IndexPool>,
    /// Multicast groups.
    mcast: Pin<KBox<McastTable>>,
    /// Port counters.
    counters: Counters,
    /// Whether the GSI QP (QP1) exists.
    gsi: Arc<Atomic<bool>>,
    /// QPs by number, for received packets.
    qp_table: Pin<KBox<SparseTable<ObjRef<Qp<RrxeDevice>>>>>,
    /// MRs by index (key >> 8), for the data path.
    mr_table: Pin<KBox<SparseTable<ObjRef<Mr<RrxeDevice>>>>>,
    /// Memory windows by index (rkey >> 8), for the data path.
    mw_table: Arc<MwTable>,
    /// Address vectors by `ah_num`, for UD sends.
    ah_table: Arc<SparseTable<AhEntry>>,
    /// The UDP port 4791 sockets of this device's network namespace (shared by its devices).
    tunnels: Tunnels,
    /// The bound netdev, held for the device's life: the data path uses it without the core's
    /// netdev lock (which is not interrupt-safe).
    ndev: NetDeviceRef,
}

impl RrxeDevice {
    /// The data of a new device on a netdev with MAC-derived `guid` and link state `running`.
    pub(crate) fn new(
        guid: u64,
        running: bool,
        tunnels: Tunnels,
        ndev: NetDeviceRef,
    ) -> impl PinInit<Self, Error> {
        try_init!(Self {
            guid: Atomic::new(guid),
            port_active: Atomic::new(running),
            qpns: Arc::pin_init(
                IndexPool::new_spread(limits::MIN_QP_INDEX, limits::MAX_QP_INDEX)?,
                GFP_KERNEL
            )?,
            mrs: Arc::pin_init(IndexPool::new_spread(1, limits::MAX_MR_INDEX)?, GFP_KERNEL)?,
            mws: Arc::pin_init(
                IndexPool::new(limits::MAX_MR_INDEX + 1, limits::MAX_QP_INDEX),
                GFP_KERNEL
            )?,
            srqs: Arc::pin_init(
                IndexPool::new(limits::MIN_SRQ_INDEX, limits::MAX_SRQ_INDEX),
                GFP_KERNEL
            )?,
            ahs: Arc::pin_init(IndexPool::new(1, limits::MAX_AH), GFP_KERNEL)?,
            mcast: KBox::pin_init(McastTable::new(), GFP_KERNEL)?,
            counters: Counters::new(),
            gsi: Arc::new(Atomic::new(false), GFP_KERNEL)?,
            qp_table: KBox::pin_init(SparseTable::new(limits::MAX_QP_INDEX), GFP_KERNEL)?,
            mr_table: KBox::pin_init(SparseTable::new(limits::MAX_MR_INDEX), GFP_KERNEL)?,
            mw_table: Arc::pin_init(SparseTable::new(limits::MAX_QP_INDEX), GFP_KERNEL)?,
            ah_table: Arc::pin_init(SparseTable::new(limits::MAX_AH), GFP_KERNEL)?,
            tunnels,
            ndev,
        }? Error)
    }

    /// The GSI QP slot.
    pub(crate) fn gsi_claim(&self) -> &Arc<Atomic<bool>> {
        &self.gsi
    }

    /// The pool of MW indices.
    pub(crate) fn mw_pool(&self) -> &Arc<IndexPool> {
        &self.mws
    }

    /// The pool of SRQ numbers.
    pub(crate) fn srq_pool(&self) -> &Arc<IndexPool> {
        &self.srqs
    }

    /// The pool of AH numbers.
    pub(crate) fn ah_pool(&self) -> &Arc<IndexPool> {
        &self.ahs
    }

    /// The pool of MR indices.
    pub(crate) fn mr_pool(&self) -> &Arc<IndexPool> {
        &self.mrs
    }

    /// The pool of QP numbers.
    pub(crate) fn qpn_pool(&self) -> &Arc<IndexPool> {
        &self.qpns
    }

    /// Copies the QPNs attached to multicast group `gid` into `out`; returns how many.
    pub(crate) fn mcast_members(&self, gid: &[u8; 16], out: &mut [u32]) -> usize {
        self.mcast.members(gid, out)
    }

    /// The bound netdev (any context).
    pub(crate) fn netdev(&self) -> &NetDevice {
        &self.ndev
    }

    /// The device's share of its namespace's UDP tunnel sockets.
    pub(crate) fn tunnels(&self) -> &Tunnels {
        &self.tunnels
    }

    /// The QP with number `qpn`.
    pub(crate) fn lookup_qp(&self, qpn: u32) -> Option<ObjRef<Qp<RrxeDevice>>> {
        self.qp_table.get(qpn)
    }

    /// The MR with key `key` in protection domain `pd`.
    pub(crate) fn lookup_mr(&self, key: u32, pd: usize) -> Option<ObjRef<Mr<RrxeDevice>>> {
        let mr = self.mr_table.get(key >> 8)?;
        (mr.lkey() == key && mr.pd_id() == pd).then_some(mr)
    }

    /// The MW table (shared with the MWs, which remove themselves).
    pub(crate) fn mw_table(&self) -> &Arc<MwTable> {
        &self.mw_table
    }

    /// The memory window an rkey names, if it names one (MW indices lie above MR indices).
    pub(crate) fn lookup_mw(&self, rkey: u32) -> Option<Arc<MwState>> {
        let index = rkey >> 8;
        if index <= limits::MAX_MR_INDEX {
            return None;
        }
        self.mw_table.get(index)
    }

    /// The AH table (shared with the AHs, which remove themselves).
    pub(crate) fn ah_table(&self) -> &Arc<SparseTable<AhEntry>> {
        &self.ah_table
    }

    /// The address vector of AH `num`, for a UD send of a QP in protection domain `pd`: `None`
    /// for an AH of another PD (another process's, or a kernel consumer's), as for no AH.
    pub(crate) fn ah_av(&self, num: u32, pd: usize) -> Option<AddressVector> {
        self.ah_table.get(num).filter(|e| e.pd == pd).map(|e| e.av)
    }

    /// Adds one to counter `c`.
    pub(crate) fn count(&self, c: Counter) {
        self.counters.inc(c);
    }

    /// Counts a dropped packet.
    pub(crate) fn count_drop(&self, r: DropReason) {
        self.counters.drop_packet(r);
    }

    /// Counts `bytes` of payload sent.
    pub(crate) fn count_sent(&self, bytes: u32) {
        self.counters.add(Counter::SentBytes, u64::from(bytes));
    }

    /// Counts a message of `npkts` packets and `bytes` bytes delivered directly (loopback).
    pub(crate) fn count_direct(&self, npkts: u32, bytes: u32) {
        let n = u64::from(npkts);
        self.counters.add(Counter::SentPkts, n);
        self.counters.add(Counter::RcvdPkts, n);
        self.counters.add(Counter::SentBytes, u64::from(bytes));
        self.counters.add(Counter::RcvdBytes, u64::from(bytes));
    }

    /// Counts a packet handed to the network or to loopback.
    pub(crate) fn count_sent_pkt(&self) {
        self.counters.inc(Counter::SentPkts);
    }

    /// Counts a packet accepted for a QP.
    pub(crate) fn count_rcvd_pkt(&self) {
        self.counters.inc(Counter::RcvdPkts);
    }

    /// Counts `bytes` of payload received into memory.
    pub(crate) fn count_recv(&self, bytes: usize) {
        self.counters.add(Counter::RcvdBytes, bytes as u64);
    }

    /// Counts a packet the network refused.
    pub(crate) fn count_send_err(&self) {
        self.counters.inc(Counter::SendErr);
    }

    /// Counts a PSN sequence error NAK received.
    pub(crate) fn count_seq_err(&self) {
        self.counters.inc(Counter::RcvdSeqErr);
    }

    /// Counts an RNR NAK received.
    pub(crate) fn count_rnr_received(&self) {
        self.counters.inc(Counter::RcvdRnrErr);
    }

    /// Counts an RNR NAK sent.
    pub(crate) fn count_rnr_sent(&self) {
        self.counters.inc(Counter::SendRnrErr);
    }

    /// Counts a retransmission timeout.
    pub(crate) fn count_retry(&self) {
        self.counters.inc(Counter::CompleterRetryErr);
    }

    /// Counts a duplicate request.
    pub(crate) fn count_duplicate(&self) {
        self.counters.inc(Counter::DuplicateRequest);
    }

    /// Counts an out-of-sequence request.
    pub(crate) fn count_out_of_seq(&self) {
        self.counters.inc(Counter::OutOfSeqRequest);
    }

    /// Records the port state; returns whether it changed (a change to down counts as
    /// `link_downed`).
    pub(crate) fn set_port_active(&self, active: bool) -> bool {
        let changed = self.port_active.xchg(active, Relaxed) != active;
        if changed && !active {
            self.counters.inc(Counter::LinkDowned);
        }
        changed
    }
}

#[vtable]
impl ib::DeviceOps for RrxeDevice {
    const NODE_DESC: &'static CStr = c"rrxe";

    fn device_attr(dev: &Device<Self>) -> DeviceAttr {
        limits::device_attr(dev.guid.load(Relaxed))
    }

    fn set_sys_image_guid(dev: &Device<Self>, guid: u64) {
        dev.guid.store(guid, Relaxed);
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
            port_cap_flags: ib::ROCE_PORT_CAP_FLAGS,
            max_msg_sz: limits::MAX_MSG_SIZE,
        })
    }

    fn counter_descs() -> &'static [StatDesc] {
        &counters::DESCS
    }

    fn counter(dev: &Device<Self>, index: usize) -> u64 {
        dev.counters.get(index)
    }

    fn pma_counters(dev: &Device<Self>) -> PmaCounters {
        dev.counters.pma()
    }

    type Cq = RrxeCq;

    fn create_cq(
        dev: &Device<Self>,
        attr: &CqAttr,
        udata: Option<&mut Udata<'_>>,
    ) -> Result<RrxeCq> {
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

    fn poll_cq(cq: &Cq<Self>, wc: &mut [Wc]) -> usize {
        RrxeCq::poll(cq, wc)
    }

    type Mr = RrxeMr;

    fn reg_user_mr(
        dev: &Device<Self>,
        umem: Umem,
        iova: u64,
        access: u32,
    ) -> Result<(RrxeMr, MrKeys)> {
        RrxeMr::user(dev, umem, iova, access)
    }

    fn rereg_user_mr(mr: &Mr<Self>, flags: u32, access: u32) -> Result {
        RrxeMr::rereg(mr, flags, access)
    }

    fn reg_odp_mr(
        dev: &Device<Self>,
        odp: UmemOdp,
        iova: u64,
        access: u32,
    ) -> Result<(RrxeMr, MrKeys)> {
        RrxeMr::on_demand(dev, odp, iova, access)
    }

    fn advise_mr(
        dev: &Device<Self>,
        pd: usize,
        advice: Prefetch,
        ranges: &[PrefetchRange],
    ) -> Result {
        for r in ranges {
            let mr = dev.lookup_mr(r.lkey, pd).ok_or(EINVAL)?;
            mr.prefetch(r.addr, u64::from(r.length), advice)?;
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
        access: u32,
        kernel: KernelConsumer,
    ) -> Result<(RrxeMr, MrKeys)> {
        RrxeMr::dma(dev, access, kernel)
    }

    fn mr_created(dev: &Device<Self>, mr: &Mr<Self>) {
        // Without a table entry the MR is never found: its keys fail with access errors.
        let _ = dev.mr_table.insert(mr.index(), ObjRef::new(mr), GFP_KERNEL);
    }

    fn mr_destroying(dev: &Device<Self>, mr: &Mr<Self>) -> Result {
        // Bound windows keep the region (IBA o10-36). A bind racing this check may still
        // land; its window then names a dead key and every access through it fails.
        if mr.binds().load(Relaxed) != 0 {
            return Err(EBUSY);
        }
        drop(dev.mr_table.remove(mr.index()));
        Ok(())
    }

    fn qp_created(qp: &Qp<Self>) {
        let _ = qp
            .device()
            .qp_table
            .insert(qp.qpn(), ObjRef::new(qp), GFP_KERNEL);
    }

    fn qp_destroying(qp: &Qp<Self>) {
        drop(qp.device().qp_table.remove(qp.qpn()));
        // Closed, not just cancelled: a pass still running elsewhere cannot re-arm them.
        qp.pipe().timer.close();
        qp.pipe().kicker.close();
        qp.pipe().odp.close();
    }

    type Qp = RrxeQp;

    fn create_qp(
        dev: &Device<Self>,
        init: &mut QpInit<Self>,
        caller: Caller<'_, '_>,
    ) -> Result<RrxeQp> {
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

    fn modify_qp(qp: &Qp<Self>, attr: &QpAttr, mask: AttrMask) -> Result {
        RrxeQp::modify(qp, attr, mask)
    }

    fn query_qp(qp: &Qp<Self>) -> QpQuery {
        RrxeQp::query(qp)
    }

    fn fill_res_qp(qp: &Qp<Self>, entry: &mut ResEntry) -> Result {
        crate::pipeline::report(qp, entry)
    }

    fn attach_mcast(qp: &Qp<Self>, gid: [u8; 16]) -> Result {
        if !qp.is_ud() {
            return Err(EINVAL);
        }
        qp.device().mcast.attach(&gid, qp.qpn())
    }

    fn detach_mcast(qp: &Qp<Self>, gid: [u8; 16]) -> Result {
        qp.device().mcast.detach(&gid, qp.qpn())
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
    ) -> Result<RrxeSrq> {
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
