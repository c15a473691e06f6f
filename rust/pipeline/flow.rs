// SPDX-License-Identifier: GPL-2.0

//! A QP's transmit flow: the packets it handed to the network stack and not yet released, the
//! CPU it sent them from, and when it may send again.
//!
//! Two rules keep a QP's packets in order and bounded:
//!
//! - **One CPU at a time.** A veth (and the loopback netdev) queues a packet on the backlog of
//!   the CPU that sends it, and each CPU drains its own; a NIC with several queues picks one by
//!   the sending CPU. A QP whose runs move between CPUs would let its later packets overtake
//!   earlier ones still queued on the first CPU, and each overtaking costs the receiver a
//!   sequence NAK and the sender a go-back-N of everything in flight. So a QP sends from
//!   another CPU only once none of its packets is left in the stack.
//! - **A bounded number in flight** ([`MAX_IN_FLIGHT`], as C rxe does): a QP that fills the
//!   device's queue faster than the wire drains it waits instead of having its packets dropped
//!   by the queueing discipline and sent again.
//!
//! A run that may not send does nothing and records that it waits; the release of the buffer
//! that lifts the block runs the QP again (its deferred kick, on the releasing CPU).
//!
//! A buffer is released before it has arrived: on a veth, `ip_rcv` orphans it and only later
//! in the same softirq does the receiver queue it for its QP. So the release that would empty
//! the flow does not count at once: it leaves the buffer counted and asks for [`TxFlow::drained`]
//! from BH work on the releasing CPU, which runs after that CPU's receive softirq; until then a
//! run on another CPU waits.

use kernel::sync::atomic::{
    Acquire,
    Atomic,
    Full,
    Relaxed, //
};

/// Buffers (packets, or trains of them) a QP may have in the stack before it waits.
pub(crate) const MAX_IN_FLIGHT: u32 = 64;

/// A waiting QP runs again when its buffers in flight are down to this many.
const RESUME_AT: u32 = 16;

/// What a release asks of its caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Release {
    /// Nothing.
    Counted,
    /// Run the QP: it waited and may send now.
    Resume,
    /// The flow's last buffer: call [`TxFlow::drained`] from BH work on this CPU.
    Last,
}

/// The transmit state of one QP.
pub(crate) struct TxFlow {
    /// Buffers sent and not yet released.
    in_flight: Atomic<u32>,
    /// The CPU the QP last sent from.
    cpu: Atomic<u32>,
    /// A run found it may not send and waits for a release.
    waiting: Atomic<bool>,
}

impl TxFlow {
    /// Nothing in flight.
    pub(crate) const fn new() -> Self {
        Self {
            in_flight: Atomic::new(0),
            cpu: Atomic::new(0),
            waiting: Atomic::new(false),
        }
    }

    /// Whether a QP with `n` buffers in flight, last sent from `last`, may send from `cpu`.
    fn may_send(n: u32, last: u32, cpu: u32) -> bool {
        n == 0 || (cpu == last && n < MAX_IN_FLIGHT)
    }

    /// Whether the QP's run on `cpu` (which stays there: softirqs are disabled) may send. If
    /// not, the QP waits: a later release runs it again. The one who runs the QP calls this.
    pub(crate) fn may_send_on(&self, cpu: u32) -> bool {
        let last = self.cpu.load(Relaxed);
        if Self::may_send(self.in_flight.load(Acquire), last, cpu) {
            self.cpu.store(cpu, Relaxed);
            return true;
        }
        // Announce the wait, then look again: a release between the two either sees the
        // announcement (and runs the QP) or is seen here.
        self.waiting.xchg(true, Full);
        if Self::may_send(self.in_flight.load(Acquire), last, cpu) {
            self.waiting.store(false, Relaxed);
            self.cpu.store(cpu, Relaxed);
            return true;
        }
        false
    }

    /// A buffer is handed to the stack.
    pub(crate) fn sent(&self) {
        self.in_flight.fetch_add(1, Relaxed);
    }

    /// A buffer was released. Any context.
    pub(crate) fn released(&self) -> Release {
        let mut n = self.in_flight.load(Relaxed);
        let left = loop {
            if n <= 1 {
                // The last one: it stays counted until `drained`.
                return Release::Last;
            }
            match self.in_flight.cmpxchg(n, n - 1, Full) {
                Ok(_) => break n - 1,
                Err(now) => n = now,
            }
        };
        if self.resume(left) {
            Release::Resume
        } else {
            Release::Counted
        }
    }

    /// The BH work a [`Release::Last`] asked for: uncounts that buffer. `true` when the QP
    /// waited and may send now (the caller runs it).
    pub(crate) fn drained(&self) -> bool {
        let left = self.in_flight.fetch_sub(1, Full).saturating_sub(1);
        self.resume(left)
    }

    /// Whether a waiting QP runs again with `left` buffers in flight (once per wait).
    fn resume(&self, left: u32) -> bool {
        left <= RESUME_AT && self.waiting.load(Relaxed) && self.waiting.xchg(false, Full)
    }

    /// Buffers in flight, for reports.
    pub(crate) fn in_flight(&self) -> u32 {
        self.in_flight.load(Relaxed)
    }

    /// Whether a run waits for a release, for reports.
    pub(crate) fn is_waiting(&self) -> bool {
        self.waiting.load(Relaxed)
    }
}

#[kernel::prelude::kunit_tests(rrxe_pipeline_flow)]
mod tests {
    use super::*;

    #[test]
    fn another_cpu_waits_until_the_last_buffer_is_drained() {
        let f = TxFlow::new();
        assert!(f.may_send_on(1));
        f.sent();
        f.sent();
        // The same CPU goes on; another waits.
        assert!(f.may_send_on(1));
        assert!(!f.may_send_on(0));
        assert!(f.is_waiting());
        // The first release runs the QP again (below the resume mark): still one in flight.
        assert_eq!(f.released(), Release::Resume);
        assert!(!f.may_send_on(0));
        // The last stays counted until drained; the same CPU may still send meanwhile.
        assert_eq!(f.released(), Release::Last);
        assert_eq!(f.in_flight(), 1);
        assert!(!f.may_send_on(0));
        assert!(f.drained());
        assert_eq!(f.in_flight(), 0);
        assert!(f.may_send_on(0));
        assert!(!f.is_waiting());
    }

    #[test]
    fn a_full_flow_waits_until_it_drained_to_the_resume_mark() {
        let f = TxFlow::new();
        for _ in 0..MAX_IN_FLIGHT {
            f.sent();
        }
        assert!(!f.may_send_on(0));
        // Releases above the mark do not run the QP; the one reaching it does, once.
        for _ in RESUME_AT + 1..MAX_IN_FLIGHT {
            assert_eq!(f.released(), Release::Counted);
        }
        assert_eq!(f.released(), Release::Resume);
        assert_eq!(f.released(), Release::Counted);
        assert!(f.may_send_on(0));
    }

    #[test]
    fn a_buffer_sent_before_the_drain_keeps_the_count_right() {
        let f = TxFlow::new();
        f.sent();
        assert_eq!(f.released(), Release::Last);
        f.sent();
        assert_eq!(f.released(), Release::Counted);
        assert!(!f.drained());
        assert_eq!(f.in_flight(), 0);
    }
}
