// SPDX-License-Identifier: GPL-2.0

//! The port counters rrxe reports, with rxe's names (so `rdma statistic` output and scripts
//! written for rxe keep working), then rrxe's own: one per reason the packet pipeline drops a
//! packet for ([`DropReason`]), the on-demand-paging and flow counters, and the congestion
//! control counters with mlx5's names.

use crate::ib::{
    PmaCounters,
    StatDesc, //
};
use kernel::prelude::*;
use kernel::sync::atomic::{
    Atomic,
    Relaxed, //
};

/// Why a received packet was dropped (each has a hardware counter, `drop_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DropReason {
    /// Bad IP/UDP/BTH framing, lengths or headers.
    Malformed,
    /// The ICRC does not match.
    BadIcrc,
    /// No QP with the destination QP number.
    UnknownQp,
    /// The QP's state does not accept packets.
    QpState,
    /// The opcode does not belong to the QP's transport.
    OpcodeForQpType,
    /// The opcode breaks the message sequence (missing first or last packet).
    OpcodeSequence,
    /// The PSN is ahead of the expected one (a gap).
    PsnOutOfWindow,
    /// A duplicate request with nothing to replay.
    Duplicate,
    /// The Q_Key does not match the UD QP's.
    BadQkey,
    /// The payload does not fit the buffer or the announced length.
    LengthError,
    /// The rkey is unknown or lacks the access right.
    BadRkey,
    /// No receive WQE was posted (RNR).
    NoReceiveWqe,
    /// A response for nothing outstanding.
    StaleResponse,
    /// A multicast packet for a group no QP of the device is attached to.
    Multicast,
    /// The receive WQE the packet needed is malformed: it completes in error and the QP moves
    /// to ERR.
    BadRecvWqe,
    /// The QP's inbox is full: packets arrive faster than the QP runs (a flood).
    InboxFull,
    /// An RC or UC packet whose IP source or destination is not that of the connection (the
    /// QP's address vector): an off-path sender that guessed or learned the QPN.
    AddressMismatch,
    /// A READ or atomic request to a QP whose `max_dest_rd_atomic` is 0 (it keeps no
    /// responder resources): an invalid request.
    NoResponderResources,
    /// An ACK, NAK, READ response or atomic ACK for a PSN the QP never sent: forged, or from
    /// a broken peer. It changes nothing.
    ResponseUnsent,
    /// A READ response whose payload or position does not fit its place in the READ.
    ResponseLength,
}

impl DropReason {
    /// The reason's name, as its counter (`drop_<name>`) and the tracepoint report it.
    pub(crate) fn name(self) -> &'static CStr {
        match self {
            Self::Malformed => c"malformed",
            Self::BadIcrc => c"bad_icrc",
            Self::UnknownQp => c"unknown_qp",
            Self::QpState => c"qp_state",
            Self::OpcodeForQpType => c"opcode_for_qp_type",
            Self::OpcodeSequence => c"opcode_sequence",
            Self::PsnOutOfWindow => c"psn_out_of_window",
            Self::Duplicate => c"duplicate",
            Self::BadQkey => c"bad_qkey",
            Self::LengthError => c"length_error",
            Self::BadRkey => c"bad_rkey",
            Self::NoReceiveWqe => c"no_receive_wqe",
            Self::StaleResponse => c"stale_response",
            Self::Multicast => c"multicast",
            Self::BadRecvWqe => c"bad_recv_wqe",
            Self::InboxFull => c"inbox_full",
            Self::AddressMismatch => c"address_mismatch",
            Self::NoResponderResources => c"no_responder_resources",
            Self::ResponseUnsent => c"response_unsent",
            Self::ResponseLength => c"response_length",
        }
    }
}

/// One counter; the discriminant is its index in [`DESCS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Counter {
    SentPkts = 0,
    RcvdPkts = 1,
    DuplicateRequest = 2,
    OutOfSeqRequest = 3,
    RcvdRnrErr = 4,
    SendRnrErr = 5,
    RcvdSeqErr = 6,
    /// A response or acknowledgement handed to the completer (`ack_deferred`, as rxe counts
    /// it: its completer runs deferred on every one).
    AckDeferred = 7,
    RetryExceededErr = 8,
    RetryRnrExceededErr = 9,
    CompleterRetryErr = 10,
    SendErr = 11,
    /// The port went down (`link_downed`).
    LinkDowned = 12,
    RdmaSends = 13,
    RdmaRecvs = 14,
    SentBytes = 15,
    RcvdBytes = 16,
    /// A page fault of an on-demand-paging MR resolved for the data path.
    OdpFaults = FIRST_DROP as isize + DROPS as isize,
    /// A page fault of an on-demand-paging MR that failed (the access then fails).
    OdpFaultErrors = FIRST_DROP as isize + DROPS as isize + 1,
    /// A QP's run waited for its packets in the network stack: sent from another CPU and not
    /// yet received there, or too many in flight (`pipeline/flow.rs`).
    TxFlowWait = FIRST_DROP as isize + DROPS as isize + 2,
    /// A message executed by the direct loopback path (`pipeline/direct.rs`): copied once
    /// between two QPs of the device, no packets.
    DirectMsgs = FIRST_DROP as isize + DROPS as isize + 3,
    /// A received RoCE packet carried a CE mark (mlx5's `np_ecn_marked_roce_packets`).
    NpEcnMarkedRocePackets = FIRST_DROP as isize + DROPS as isize + 4,
    /// A CNP sent for CE-marked packets (`np_cnp_sent`).
    NpCnpSent = FIRST_DROP as isize + DROPS as isize + 5,
    /// A CNP a QP's reaction point acted on (`rp_cnp_handled`).
    RpCnpHandled = FIRST_DROP as isize + DROPS as isize + 6,
    /// A CNP received and ignored: reaction points off, or a QP that has none (`rp_cnp_ignored`).
    RpCnpIgnored = FIRST_DROP as isize + DROPS as isize + 7,
    /// A rate-limited QP's run stopped to wait for its next burst (`rp_pace_waits`).
    RpPaceWaits = FIRST_DROP as isize + DROPS as isize + 8,
    /// An RC request that arrived past a gap, kept for its turn instead of dropped
    /// (`ooo_kept`, `pipeline/responder/reorder.rs`).
    OooKept = FIRST_DROP as isize + DROPS as isize + 9,
    /// A kept request executed once the gap before it filled (`ooo_executed`).
    OooExecuted = FIRST_DROP as isize + DROPS as isize + 10,
    /// A requester with nothing more to send probed for lost tail packets or ACKs
    /// (`tail_probes`, `pipeline/requester/tail.rs`).
    TailProbes = FIRST_DROP as isize + DROPS as isize + 11,
    /// A READ response that arrived past a gap, placed at once (`read_placed`,
    /// `pipeline/completer/read_gaps.rs`).
    ReadPlaced = FIRST_DROP as isize + DROPS as isize + 12,
    /// A request asking again for a missing run of a READ's responses (`read_asked`).
    ReadAsked = FIRST_DROP as isize + DROPS as isize + 13,
    /// A packet sent again alone while what followed it stays sent: a sequence NAK named it,
    /// or a tail probe (`resent_alone`, `pipeline/requester/alone.rs`).
    ResentAlone = FIRST_DROP as isize + DROPS as isize + 14,
    /// An RC QP ran out of transport retries without a single answer from its peer since it
    /// moved to RTS (`peer_silent`): its packets reach no QP there (reported in the kernel log).
    PeerSilent = FIRST_DROP as isize + DROPS as isize + 15,
}

/// The first of the drop counters (rrxe's own, after rxe's 17), in [`DropReason`] order.
const FIRST_DROP: usize = 17;

/// The counter of a drop reason.
pub(crate) fn drop_index(r: DropReason) -> usize {
    FIRST_DROP
        + match r {
            DropReason::Malformed => 0,
            DropReason::BadIcrc => 1,
            DropReason::UnknownQp => 2,
            DropReason::QpState => 3,
            DropReason::OpcodeForQpType => 4,
            DropReason::OpcodeSequence => 5,
            DropReason::PsnOutOfWindow => 6,
            DropReason::Duplicate => 7,
            DropReason::BadQkey => 8,
            DropReason::LengthError => 9,
            DropReason::BadRkey => 10,
            DropReason::NoReceiveWqe => 11,
            DropReason::StaleResponse => 12,
            DropReason::Multicast => 13,
            DropReason::BadRecvWqe => 14,
            DropReason::InboxFull => 15,
            DropReason::AddressMismatch => 16,
            DropReason::NoResponderResources => 17,
            DropReason::ResponseUnsent => 18,
            DropReason::ResponseLength => 19,
        }
}

/// Number of drop counters.
const DROPS: usize = 20;

/// Number of counters.
pub(crate) const COUNT: usize = FIRST_DROP + DROPS + 16;

/// The names, in index order (rxe's `rxe_counter_descs`).
pub(crate) static DESCS: [StatDesc; COUNT] = [
    StatDesc::new(c"sent_pkts"),
    StatDesc::new(c"rcvd_pkts"),
    StatDesc::new(c"duplicate_request"),
    StatDesc::new(c"out_of_seq_request"),
    StatDesc::new(c"rcvd_rnr_err"),
    StatDesc::new(c"send_rnr_err"),
    StatDesc::new(c"rcvd_seq_err"),
    StatDesc::new(c"ack_deferred"),
    StatDesc::new(c"retry_exceeded_err"),
    StatDesc::new(c"retry_rnr_exceeded_err"),
    StatDesc::new(c"completer_retry_err"),
    StatDesc::new(c"send_err"),
    StatDesc::new(c"link_downed"),
    StatDesc::new(c"rdma_sends"),
    StatDesc::new(c"rdma_recvs"),
    StatDesc::new(c"sent_bytes"),
    StatDesc::new(c"rcvd_bytes"),
    StatDesc::new(c"drop_malformed"),
    StatDesc::new(c"drop_bad_icrc"),
    StatDesc::new(c"drop_unknown_qp"),
    StatDesc::new(c"drop_qp_state"),
    StatDesc::new(c"drop_opcode_for_qp_type"),
    StatDesc::new(c"drop_opcode_sequence"),
    StatDesc::new(c"drop_psn_out_of_window"),
    StatDesc::new(c"drop_duplicate"),
    StatDesc::new(c"drop_bad_qkey"),
    StatDesc::new(c"drop_length_error"),
    StatDesc::new(c"drop_bad_rkey"),
    StatDesc::new(c"drop_no_receive_wqe"),
    StatDesc::new(c"drop_stale_response"),
    StatDesc::new(c"drop_multicast"),
    StatDesc::new(c"drop_bad_recv_wqe"),
    StatDesc::new(c"drop_inbox_full"),
    StatDesc::new(c"drop_address_mismatch"),
    StatDesc::new(c"drop_no_responder_resources"),
    StatDesc::new(c"drop_response_unsent"),
    StatDesc::new(c"drop_response_length"),
    StatDesc::new(c"odp_faults"),
    StatDesc::new(c"odp_fault_errors"),
    StatDesc::new(c"tx_flow_wait"),
    StatDesc::new(c"direct_msgs"),
    StatDesc::new(c"np_ecn_marked_roce_packets"),
    StatDesc::new(c"np_cnp_sent"),
    StatDesc::new(c"rp_cnp_handled"),
    StatDesc::new(c"rp_cnp_ignored"),
    StatDesc::new(c"rp_pace_waits"),
    StatDesc::new(c"ooo_kept"),
    StatDesc::new(c"ooo_executed"),
    StatDesc::new(c"tail_probes"),
    StatDesc::new(c"read_placed"),
    StatDesc::new(c"read_asked"),
    StatDesc::new(c"resent_alone"),
    StatDesc::new(c"peer_silent"),
];

/// A device's counter values.
pub(crate) struct Counters([Atomic<u64>; COUNT]);

impl Counters {
    /// All zero.
    pub(crate) fn new() -> Self {
        Self([const { Atomic::new(0) }; COUNT])
    }

    /// Adds one to `c`.
    pub(crate) fn inc(&self, c: Counter) {
        self.add(c, 1);
    }

    /// Adds `n` to `c`.
    pub(crate) fn add(&self, c: Counter, n: u64) {
        if let Some(a) = self.0.get(c as usize) {
            a.fetch_add(n, Relaxed);
        }
    }

    /// Counts a dropped packet.
    pub(crate) fn drop_packet(&self, r: DropReason) {
        if let Some(a) = self.0.get(drop_index(r)) {
            a.fetch_add(1, Relaxed);
        }
    }

    /// Adds each value to its slot of `out` (index order).
    pub(crate) fn add_to(&self, out: &mut [u64]) {
        for (o, a) in out.iter_mut().zip(&self.0) {
            *o = o.wrapping_add(a.load(Relaxed));
        }
    }

    /// Moves every value to `to` (and adds it to `also`, when given): each is taken at once, so
    /// an event counted meanwhile lands in one place, never in both or neither.
    pub(crate) fn move_to(&self, to: &Counters, also: Option<&Counters>) {
        let mut also = also.map(|b| b.0.iter());
        for (a, t) in self.0.iter().zip(&to.0) {
            let b = also.as_mut().and_then(Iterator::next);
            let v = a.xchg(0, Relaxed);
            if v != 0 {
                t.fetch_add(v, Relaxed);
                if let Some(b) = b {
                    b.fetch_add(v, Relaxed);
                }
            }
        }
    }
}

/// A sum of counter sets, kept for [`SUM_LIFESPAN_NS`]: sums walk a device's QPs, and their
/// askers (a per-QP counter asked once per port counter shown, a PerfMgt MAD from the wire)
/// must not make every ask a walk. One asker sums at a time; the others take the last sum.
pub(crate) struct SumCache {
    values: Counters,
    /// When `values` were summed (0: never, or forgotten).
    at_ns: Atomic<u64>,
    summing: Atomic<bool>,
}

/// How long a sum answers again.
pub(crate) const SUM_LIFESPAN_NS: u64 = 10_000_000;

impl SumCache {
    /// No sum yet.
    pub(crate) fn new() -> Self {
        Self {
            values: Counters::new(),
            at_ns: Atomic::new(0),
            summing: Atomic::new(false),
        }
    }

    /// Forgets the sum: what it summed moved.
    pub(crate) fn forget(&self) {
        self.at_ns.store(0, Relaxed);
    }

    /// Adds the sum to `out` (index order): the last one if younger than [`SUM_LIFESPAN_NS`] at
    /// `now` (ns) or another asker is summing, else one `sum` makes now.
    pub(crate) fn add_to(&self, out: &mut [u64], now: u64, sum: impl FnOnce(&mut [u64; COUNT])) {
        let at = self.at_ns.load(Relaxed);
        if at != 0 && now.saturating_sub(at) < SUM_LIFESPAN_NS {
            self.values.add_to(out);
            return;
        }
        let mine = !self.summing.xchg(true, Relaxed);
        if !mine && at != 0 {
            self.values.add_to(out);
            return;
        }
        let mut v = [0u64; COUNT];
        sum(&mut v);
        if mine {
            for (a, &x) in self.values.0.iter().zip(&v) {
                a.store(x, Relaxed);
            }
            self.at_ns.store(now.max(1), Relaxed);
            self.summing.store(false, Relaxed);
        }
        for (o, x) in out.iter_mut().zip(v) {
            *o = o.wrapping_add(x);
        }
    }
}

/// What the performance management agent reports (rxe's choice of counters), from a set of
/// values in index order.
pub(crate) fn pma(values: &[u64; COUNT]) -> PmaCounters {
    let get = |c: Counter| values[c as usize];
    PmaCounters {
        xmit_bytes: get(Counter::SentBytes),
        rcv_bytes: get(Counter::RcvdBytes),
        xmit_packets: get(Counter::SentPkts),
        rcv_packets: get(Counter::RcvdPkts),
        link_downed: get(Counter::LinkDowned),
    }
}

#[kernel::prelude::kunit_tests(rrxe_counters)]
mod tests {
    use super::*;

    fn values(c: &Counters) -> [u64; COUNT] {
        let mut v = [0; COUNT];
        c.add_to(&mut v);
        v
    }

    #[test]
    fn a_move_leaves_nothing_behind_and_keeps_every_count_once() {
        let (qp, port, also) = (Counters::new(), Counters::new(), Counters::new());
        qp.add(Counter::SentPkts, 5);
        qp.drop_packet(DropReason::BadRkey);
        port.add(Counter::SentPkts, 2);
        qp.move_to(&port, Some(&also));
        assert_eq!(values(&qp), [0; COUNT]);
        let p = values(&port);
        assert_eq!(p[Counter::SentPkts as usize], 7);
        assert_eq!(p[drop_index(DropReason::BadRkey)], 1);
        assert_eq!(values(&also)[Counter::SentPkts as usize], 5);
        assert_eq!(p.iter().sum::<u64>(), 8);
    }

    #[test]
    fn sums_add_to_what_is_there() {
        let c = Counters::new();
        c.inc(Counter::RcvdPkts);
        let mut v = [0; COUNT];
        v[Counter::RcvdPkts as usize] = 3;
        c.add_to(&mut v);
        c.add_to(&mut v);
        assert_eq!(v[Counter::RcvdPkts as usize], 5);
    }

    #[test]
    fn a_sum_answers_again_until_it_is_old_or_forgotten() {
        let cache = SumCache::new();
        let mut sums = 0;
        let mut ask = |now: u64| {
            let mut out = [0u64; COUNT];
            cache.add_to(&mut out, now, |v| {
                sums += 1;
                v[0] = now;
            });
            out[0]
        };
        assert_eq!(ask(1000), 1000);
        assert_eq!(ask(1000 + SUM_LIFESPAN_NS - 1), 1000);
        assert_eq!(ask(1000 + SUM_LIFESPAN_NS), 1000 + SUM_LIFESPAN_NS);
        assert_eq!(sums, 2);
        cache.forget();
        let mut out = [0u64; COUNT];
        cache.add_to(&mut out, 5, |v| v[0] = 7);
        assert_eq!(out[0], 7);
    }
}
