// SPDX-License-Identifier: GPL-2.0

//! The rrxe device: the driver data of each RDMA device, bound to one netdev: its tables of
//! objects, its counters, its netdev and its share of the namespace's UDP sockets. The verbs
//! the RDMA core calls on it are in [`crate::verbs`].

use crate::net::{
    NetDevice,
    NetDeviceRef,
    NetnsTunnel, //
};
use crate::sync::ObjRef;
use crate::{
    counters::{
        Counter,
        Counters,
        DropReason, //
        SumCache,
    },
    ib::{
        AddressVector,
        Mr,
        Qp, //
    },
    index::IndexPool,
    kernel_ext::DebugfsU32s,
    limits,
    mcast::McastTable,
    proto::{
        dcqcn::{
            CcParam,
            CcParams, //
        },
        path_rtt,
    },
    table::SparseTable,
    verbs::ah::AhEntry,
    verbs::mr::KeyedMr,
    verbs::mw::{
        MwState,
        MwTable, //
    },
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
/// Lifetime: owned by ib_core from registration until `dealloc_driver`, see [`crate::ib::Device`].
/// Initialised in place in the device's allocation, and never moved: its tables are embedded.
#[pin_data]
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
    #[pin]
    mcast: McastTable,
    /// The counts of no QP, and those of destroyed QPs (`verbs/counter.rs`).
    counters: Arc<Counters>,
    /// What QPs counted while bound to a per-QP counter, once they left it: the performance
    /// management agent's totals include it.
    counted_elsewhere: Counters,
    /// The performance management agent's last totals ([`crate::verbs::counter::pma`]).
    pma_sum: SumCache,
    /// Per-QP counter ids.
    counter_ids: Arc<IndexPool>,
    /// Whether the GSI QP (QP1) exists.
    gsi: Arc<Atomic<bool>>,
    /// The received packets the device's responders keep past gaps, shared by their QPs
    /// ([`crate::pipeline::ReorderBudget`]).
    reorder: Arc<Atomic<u32>>,
    /// QPs by number, for received packets.
    #[pin]
    qp_table: SparseTable<ObjRef<Qp<RrxeDevice>>>,
    /// MRs by index (key >> 8), for the data path.
    #[pin]
    mr_table: SparseTable<ObjRef<Mr<RrxeDevice>>>,
    /// Memory windows by index (rkey >> 8), for the data path.
    mw_table: Arc<MwTable>,
    /// Address vectors by `ah_num`, for UD sends.
    ah_table: Arc<SparseTable<AhEntry>>,
    /// The UDP port 4791 sockets of this device's network namespace (shared by its devices).
    tunnels: NetnsTunnel,
    /// The bound netdev, held for the device's life: the data path uses it without the core's
    /// netdev lock (which is not interrupt-safe).
    ndev: NetDeviceRef,
    /// Congestion control settings (`Documentation/congestion.rst`), in
    /// `/sys/kernel/debug/rrxe/DEV/cc_params` as mlx5 has them.
    cc: DebugfsU32s<{ CcParam::COUNT }>,
    /// The shortest round trip its RC QPs measured to each destination ([`path_rtt`]).
    path_rtt: [Atomic<u64>; path_rtt::SLOTS],
    /// When the next rate-limited report may go to the kernel log ([`Self::may_report`]).
    report_at: Atomic<u64>,
}

/// At most one rate-limited report per device in this long.
const REPORT_INTERVAL_NS: u64 = 5_000_000_000;

impl RrxeDevice {
    /// The data of a new device `name` on a netdev with MAC-derived `guid` and link state
    /// `running`.
    pub(crate) fn new(
        name: &CStr,
        guid: u64,
        running: bool,
        tunnels: NetnsTunnel,
        ndev: NetDeviceRef,
    ) -> impl PinInit<Self, Error> {
        let cc = DebugfsU32s::new(
            name,
            c"cc_params",
            &CcParam::ALL.map(CcParam::name),
            CcParam::ALL.map(CcParam::default),
        );
        try_pin_init!(Self {
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
            mcast <- McastTable::new(),
            counters: Arc::new(Counters::new(), GFP_KERNEL)?,
            counted_elsewhere: Counters::new(),
            pma_sum: SumCache::new(),
            counter_ids: Arc::pin_init(IndexPool::new(1, limits::MAX_QP_INDEX), GFP_KERNEL)?,
            gsi: Arc::new(Atomic::new(false), GFP_KERNEL)?,
            reorder: Arc::new(Atomic::new(0), GFP_KERNEL)?,
            qp_table <- SparseTable::new(limits::MAX_QP_INDEX),
            mr_table <- SparseTable::new(limits::MAX_MR_INDEX),
            mw_table: Arc::pin_init(SparseTable::new(limits::MAX_QP_INDEX), GFP_KERNEL)?,
            ah_table: Arc::pin_init(SparseTable::new(limits::MAX_AH), GFP_KERNEL)?,
            tunnels,
            ndev,
            cc: cc?,
            path_rtt: core::array::from_fn(|_| Atomic::new(0)),
            report_at: Atomic::new(0),
        }? Error)
    }

    /// The GSI QP slot.
    pub(crate) fn gsi_claim(&self) -> &Arc<Atomic<bool>> {
        &self.gsi
    }

    /// How many received packets the device's responders keep past gaps.
    pub(crate) fn reorder_held(&self) -> &Arc<Atomic<u32>> {
        &self.reorder
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

    /// Whether `av` leads back to this device (its destination MAC is the netdev's): packets
    /// to it go to the receiving QP directly, never through the network stack.
    pub(crate) fn is_local(&self, av: &AddressVector) -> bool {
        self.ndev.mac() == av.dmac
    }

    /// The device's share of its namespace's UDP tunnel sockets.
    pub(crate) fn tunnels(&self) -> &NetnsTunnel {
        &self.tunnels
    }

    /// The system image GUID `query_device` reports.
    pub(crate) fn guid(&self) -> u64 {
        self.guid.load(Relaxed)
    }

    /// Sets the system image GUID (`modify_device`).
    pub(crate) fn set_guid(&self, guid: u64) {
        self.guid.store(guid, Relaxed);
    }

    /// The device's own counts: of no QP, and of destroyed QPs.
    pub(crate) fn counters(&self) -> &Arc<Counters> {
        &self.counters
    }

    /// What QPs counted while bound to a per-QP counter, once they left it.
    pub(crate) fn counted_elsewhere(&self) -> &Counters {
        &self.counted_elsewhere
    }

    /// The performance management agent's last totals.
    pub(crate) fn pma_sum(&self) -> &SumCache {
        &self.pma_sum
    }

    /// The pool of per-QP counter ids.
    pub(crate) fn counter_ids(&self) -> &IndexPool {
        &self.counter_ids
    }

    /// Calls `f` with each QP that received packets can reach, with interrupts on.
    pub(crate) fn for_each_qp(&self, f: impl FnMut(&ObjRef<Qp<RrxeDevice>>)) {
        self.qp_table.for_each(f);
    }

    /// The multicast groups the device's UD QPs are attached to.
    pub(crate) fn mcast(&self) -> &McastTable {
        &self.mcast
    }

    /// Makes a new QP reachable by its number (by received packets); without the entry (no
    /// memory) it never is.
    pub(crate) fn publish_qp(&self, qp: &Qp<RrxeDevice>) {
        let _ = self.qp_table.insert(qp.qpn(), ObjRef::new(qp), GFP_KERNEL);
    }

    /// A QP being destroyed is no longer reachable by its number.
    pub(crate) fn withdraw_qp(&self, qpn: u32) {
        drop(self.qp_table.remove(qpn));
    }

    /// Makes a new MR reachable by its keys; without the entry (no memory) its keys fail with
    /// access errors.
    pub(crate) fn publish_mr(&self, mr: &Mr<RrxeDevice>) {
        let _ = self
            .mr_table
            .insert(mr.index(), ObjRef::new(mr), GFP_KERNEL);
    }

    /// An MR being deregistered is no longer reachable by its keys.
    pub(crate) fn withdraw_mr(&self, index: u32) {
        drop(self.mr_table.remove(index));
    }

    /// The QP with number `qpn`.
    pub(crate) fn lookup_qp(&self, qpn: u32) -> Option<ObjRef<Qp<RrxeDevice>>> {
        self.qp_table.get(qpn)
    }

    /// The MR with key `key` in protection domain `pd`, with the key that found it: its memory
    /// is reached only under that key ([`KeyedMr`]).
    pub(crate) fn lookup_mr(&self, key: u32, pd: usize) -> Option<KeyedMr> {
        self.lookup_mr_index(key >> 8, pd)
            .filter(|mr| mr.key() == key)
            .map(|mr| KeyedMr::new(mr, key))
    }

    /// The MR of index `index` (its key without the low byte) in protection domain `pd`,
    /// whatever its key: a fast registration gives it a new one.
    pub(crate) fn lookup_mr_index(&self, index: u32, pd: usize) -> Option<ObjRef<Mr<RrxeDevice>>> {
        let mr = self.mr_table.get(index)?;
        (mr.pd_id() == pd).then_some(mr)
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

    /// One congestion control setting, within its range.
    pub(crate) fn cc_param(&self, p: CcParam) -> u32 {
        self.cc.get(p.index()).min(p.max())
    }

    /// The congestion control settings of the moment, each within its range.
    pub(crate) fn cc_params(&self) -> CcParams {
        CcParams::clamped(|i| self.cc.get(i))
    }

    /// The shortest round trip the device's QPs measured to `dgid`, if it is known.
    pub(crate) fn path_min_rtt_ns(&self, dgid: &[u8; 16]) -> Option<u64> {
        let (slot, tag) = path_rtt::slot_and_tag(dgid);
        path_rtt::unpack(self.path_rtt[slot].load(Relaxed), tag)
    }

    /// A QP measured `min_ns` as the shortest round trip to `dgid`: kept if it is shorter than
    /// what the device knew. A lost race with another QP tries again with what that one wrote.
    pub(crate) fn path_rtt_sampled(&self, dgid: &[u8; 16], min_ns: u64) {
        let (slot, tag) = path_rtt::slot_and_tag(dgid);
        let word = &self.path_rtt[slot];
        let mut old = word.load(Relaxed);
        while let Some(new) = path_rtt::merged(old, tag, min_ns) {
            match word.cmpxchg(old, new, Relaxed) {
                Ok(_) => return,
                Err(now) => old = now,
            }
        }
    }

    /// Whether a rate-limited report may go to the kernel log at `now` (ns): one per five
    /// seconds per device; the first one at once.
    pub(crate) fn may_report(&self, now: u64) -> bool {
        let at = self.report_at.load(Relaxed);
        now >= at
            && self
                .report_at
                .cmpxchg(at, now.saturating_add(REPORT_INTERVAL_NS), Relaxed)
                .is_ok()
    }

    /// Counts a received packet of `len` bytes (IP header through ICRC) that is no one QP's: a
    /// multicast packet, counted once however many QPs get it.
    pub(crate) fn count_received(&self, len: usize) {
        self.counters.inc(Counter::RcvdPkts);
        self.counters.add(Counter::RcvdBytes, len as u64);
    }

    /// Counts a dropped packet that reached no QP.
    pub(crate) fn count_drop(&self, r: DropReason) {
        self.counters.drop_packet(r);
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
