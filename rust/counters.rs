// SPDX-License-Identifier: GPL-2.0

//! The port counters rrxe reports, with rxe's names (so `rdma statistic` output and scripts
//! written for rxe keep working). The packet pipeline adds its drop-reason counters here.

use crate::ib::StatDesc;
use kernel::sync::atomic::{
    Atomic,
    Relaxed, //
};

/// One counter; the discriminant is its index in [`DESCS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Counter {
    /// The port went down (`link_downed`).
    LinkDowned = 12,
}

/// Number of counters.
pub(crate) const COUNT: usize = 17;

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
        self.0[c as usize].fetch_add(1, Relaxed);
    }

    /// The value of counter `index`, 0 for an unknown index.
    pub(crate) fn get(&self, index: usize) -> u64 {
        self.0.get(index).map_or(0, |a| a.load(Relaxed))
    }
}
