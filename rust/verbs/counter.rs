// SPDX-License-Identifier: GPL-2.0

//! Where counts live, and per-QP counters (`rdma statistic qp`, `Documentation/rrxe.rst`).
//!
//! Each QP counts what it does in its own set ([`QpCounts`]): the data path touches only its
//! QP's lines, never one set shared by every CPU. The device keeps what belongs to no QP
//! (drops before a QP is found, link changes) and what QPs counted before they were destroyed.
//! The port's values are the device's plus those of the QPs bound to no per-QP counter; a
//! counter's are its QPs' plus what QPs counted while bound to it before they left it
//! ([`RrxeCounter`]). ib_core shows the port as its values plus every counter's, so each event
//! is shown once.
//!
//! A QP's counts move (value by value, each at once) when it is bound, unbound or destroyed; a
//! reader at that moment may see an event in neither place or both, as a counter read beside
//! the hardware's would.

use crate::{
    counters::{
        self,
        Counter,
        Counters,
        DropReason,
        SumCache, //
    },
    device::RrxeDevice,
    ib::{
        self,
        Device,
        PmaCounters,
        Qp, //
    },
    kernel_ext::now_ns,
};
use kernel::{
    prelude::*,
    sync::{
        atomic::{
            Atomic,
            Relaxed, //
        },
        Arc,
    },
};

/// A QP's counts of the port counters, and the per-QP counter it is bound to.
pub(crate) struct QpCounts {
    counts: Counters,
    /// The id of the per-QP counter the QP is bound to; 0: none (its counts are the port's).
    counter: Atomic<u32>,
    /// The device's own set, which a destroyed QP's counts join.
    device: Arc<Counters>,
}

impl QpCounts {
    /// Zero counts of a new QP of a device whose own set is `device`.
    pub(crate) fn new(device: Arc<Counters>) -> Self {
        Self {
            counts: Counters::new(),
            counter: Atomic::new(0),
            device,
        }
    }

    /// Adds one to `c`.
    pub(crate) fn inc(&self, c: Counter) {
        self.counts.inc(c);
    }

    /// Counts a packet of the QP dropped for `r`.
    pub(crate) fn drop_packet(&self, r: DropReason) {
        self.counts.drop_packet(r);
    }

    /// Counts a packet sent, `len` octets from its IP header to its ICRC: every packet (requests,
    /// ACKs, READ responses, CNPs), as rxe counts them and IBA's PortXmitData means.
    pub(crate) fn packet_sent(&self, len: usize) {
        self.packets_sent(1, len);
    }

    /// Counts a packet received for the QP, `len` octets from its IP header to its ICRC.
    pub(crate) fn packet_received(&self, len: usize) {
        self.packets_received(1, len);
    }

    /// Counts `n` packets of `bytes` octets in all sent.
    pub(crate) fn packets_sent(&self, n: u32, bytes: usize) {
        self.counts.add(Counter::SentPkts, u64::from(n));
        self.counts.add(Counter::SentBytes, bytes as u64);
    }

    /// Counts `n` packets of `bytes` octets in all received.
    pub(crate) fn packets_received(&self, n: u32, bytes: usize) {
        self.counts.add(Counter::RcvdPkts, u64::from(n));
        self.counts.add(Counter::RcvdBytes, bytes as u64);
    }

    /// The QP is being destroyed: its counts join the device's while it can still be found
    /// (what it counts after, in its last runs, follows when it is dropped).
    pub(crate) fn retire(&self) {
        self.counts.move_to(&self.device, None);
    }
}

impl Drop for QpCounts {
    fn drop(&mut self) {
        self.retire();
    }
}

/// A per-QP counter's data: what QPs counted while bound to it, once they left it, and its
/// values as last summed (ib_core asks each counter once per port counter it shows).
pub(crate) struct RrxeCounter {
    left: Counters,
    summed: SumCache,
}

impl RrxeCounter {
    /// A new counter's data.
    pub(crate) fn new() -> Self {
        Self {
            left: Counters::new(),
            summed: SumCache::new(),
        }
    }

    /// Binds `qp` (`bind_counter`): what it counted so far stays the port's. Returns the
    /// counter's id (a new one for a new counter).
    pub(crate) fn bind(c: &ib::Counter<RrxeDevice>, qp: &Qp<RrxeDevice>) -> Result<u32> {
        let dev = c.device();
        let id = match c.id() {
            0 => dev.counter_ids().alloc(GFP_KERNEL)?,
            id => id,
        };
        let counts = qp.counts();
        counts.counter.store(id, Relaxed);
        counts.counts.move_to(&counts.device, None);
        c.data().summed.forget();
        Ok(id)
    }

    /// Unbinds `qp` (`unbind_counter`): what it counted while bound stays the counter's (and
    /// is known to the device, for the performance management agent's totals).
    pub(crate) fn unbind(c: &ib::Counter<RrxeDevice>, qp: &Qp<RrxeDevice>) {
        let counts = qp.counts();
        counts
            .counts
            .move_to(&c.data().left, Some(c.device().counted_elsewhere()));
        counts.counter.store(0, Relaxed);
        c.data().summed.forget();
    }

    /// The counter's values (`counter_values`; ib_core holds the counter's lock, as for bind
    /// and unbind): summed again when the last sum is older than [`counters::SUM_LIFESPAN_NS`] or a QP
    /// was bound or unbound since.
    pub(crate) fn values(c: &ib::Counter<RrxeDevice>, out: &mut [u64]) {
        let me = c.data();
        me.summed.add_to(out, now_ns(), |sum| {
            me.left.add_to(sum);
            let id = c.id();
            c.device().for_each_qp(|qp| {
                let counts = qp.counts();
                if counts.counter.load(Relaxed) == id {
                    counts.counts.add_to(sum);
                }
            });
        });
    }

    /// The counter is gone (`dealloc_counter`): its id goes back to the device.
    pub(crate) fn dealloc(c: &ib::Counter<RrxeDevice>) {
        if c.id() != 0 {
            c.device().counter_ids().free(c.id());
        }
    }
}

/// The port's own values (`port_counters`): the device's and those of its QPs bound to no
/// per-QP counter.
pub(crate) fn port_values(dev: &Device<RrxeDevice>, out: &mut [u64]) {
    dev.counters().add_to(out);
    dev.for_each_qp(|qp| {
        let counts = qp.counts();
        if counts.counter.load(Relaxed) == 0 {
            counts.counts.add_to(out);
        }
    });
}

/// The port's totals for the performance management agent: everything, whichever counter
/// shows it, summed at most once per [`counters::SUM_LIFESPAN_NS`] (a PerfMgt MAD may come from the
/// wire: no walk over the QPs per packet). Must not sleep.
pub(crate) fn pma(dev: &Device<RrxeDevice>) -> PmaCounters {
    let mut all = [0u64; counters::COUNT];
    dev.pma_sum().add_to(&mut all, now_ns(), |sum| {
        dev.counters().add_to(sum);
        dev.counted_elsewhere().add_to(sum);
        dev.for_each_qp(|qp| qp.counts().counts.add_to(sum));
    });
    counters::pma(&all)
}
