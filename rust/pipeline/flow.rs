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
//! A run that may not send sends nothing (it handles what it received and holds the replies:
//! [`super::pass::receive_pass`]) and records that it waits; the release of the buffer that
//! lifts the block runs the QP again (its deferred kick).
//!
//! A buffer that a veth or the loopback device carries back into this host is released before
//! it has arrived: `ip_rcv` orphans it and only later in the same softirq does the receiver
//! queue it for its QP. So the release that would empty the flow does not count at once: the
//! buffer stays counted, *parked* on the releasing CPU, until [`TxFlow::drained`] runs there
//! after that CPU's receive softirq. The drain is lazy: the QP's own runs on that CPU (the one
//! it sends from, on a veth) need none, as they come after the softirq, and go on; a run on
//! another CPU queues the drain on the parking CPU and waits for it. A buffer released
//! otherwise (sent by a device, or dropped) has left and counts at once.

use crate::sync::{
    ObjRef,
    WorkKind,
    WorkTarget, //
};
use crate::{
    device::RrxeDevice,
    ib::Qp,
    net::{
        TxOwner,
        TxSocket, //
    },
};
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
    /// The flow's last buffer, parked on this CPU while a run waits: queue the drain here
    /// ([`TxFlow::drained`]).
    Drain,
}

/// Whether a run may send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Clearance {
    /// Yes.
    Open,
    /// No: a later release or drain runs the QP again.
    Wait,
    /// No, and the flow's last buffer is parked on the CPU given: queue its drain there.
    WaitDrainOn(u32),
}

/// No buffer is parked.
const NOT_PARKED: u32 = 0;

/// What of a QP is in the stack ([`TxFlow::quiet`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Quiet {
    /// Nothing.
    Empty,
    /// Only its last buffer, parked on this CPU.
    ParkedOn(u32),
    /// Buffers still on their way.
    Busy,
}

/// The transmit state of one QP.
pub(crate) struct TxFlow {
    /// Buffers sent and not yet released, and the parked one.
    in_flight: Atomic<u32>,
    /// The CPU the QP last sent from.
    cpu: Atomic<u32>,
    /// A run found it may not send and waits for a release.
    waiting: Atomic<bool>,
    /// The CPU (plus one) the parked buffer waits to be drained on, or [`NOT_PARKED`].
    parked: Atomic<u32>,
}

impl TxFlow {
    /// Nothing in flight.
    pub(crate) const fn new() -> Self {
        Self {
            in_flight: Atomic::new(0),
            cpu: Atomic::new(0),
            waiting: Atomic::new(false),
            parked: Atomic::new(NOT_PARKED),
        }
    }

    /// Whether a QP with `n` buffers in flight, last sent from `last`, may send from `cpu`.
    fn may_send(n: u32, last: u32, cpu: u32) -> bool {
        n == 0 || (cpu == last && n < MAX_IN_FLIGHT)
    }

    /// Whether the QP's run on `cpu` (which stays there: softirqs are disabled) may send. If
    /// not, the QP waits: a later release or drain runs it again. The one who runs the QP
    /// calls this.
    pub(crate) fn may_send_on(&self, cpu: u32) -> Clearance {
        let last = self.cpu.load(Relaxed);
        if self.claim(last, cpu) {
            return Clearance::Open;
        }
        // The parked buffer's softirq on this CPU is over (this run comes after it, or runs
        // inside the delivery of that very buffer, which is queued by then): drain it here.
        if self.take_parked_on(cpu) {
            self.in_flight.fetch_sub(1, Full);
            if self.claim(last, cpu) {
                return Clearance::Open;
            }
        }
        // Announce the wait, then look again: a release between the two either sees the
        // announcement (and runs the QP, or drains) or is seen here.
        self.waiting.xchg(true, Full);
        if self.claim(last, cpu) {
            self.waiting.store(false, Relaxed);
            return Clearance::Open;
        }
        match self.take_parked() {
            Some(c) => Clearance::WaitDrainOn(c),
            None => Clearance::Wait,
        }
    }

    /// Makes `cpu` the flow's CPU if the QP, last sent from `last`, may send from it now.
    fn claim(&self, last: u32, cpu: u32) -> bool {
        let ok = Self::may_send(self.in_flight.load(Acquire), last, cpu);
        if ok {
            self.cpu.store(cpu, Relaxed);
        }
        ok
    }

    /// A buffer is handed to the stack.
    pub(crate) fn sent(&self) {
        self.in_flight.fetch_add(1, Relaxed);
    }

    /// A buffer was released on `cpu`; `received`: on its way into this host (see the module
    /// documentation). Any context.
    pub(crate) fn released(&self, received: bool, cpu: u32) -> Release {
        let mut n = self.in_flight.load(Relaxed);
        let left = loop {
            if n <= 1 && received {
                return self.park(cpu);
            }
            match self.in_flight.cmpxchg(n, n.saturating_sub(1), Full) {
                Ok(_) => break n.saturating_sub(1),
                Err(now) => n = now,
            }
        };
        if self.resume(left) {
            Release::Resume
        } else {
            Release::Counted
        }
    }

    /// Parks the flow's last buffer on `cpu` (it stays counted); if a run waits, it is drained
    /// at once.
    fn park(&self, cpu: u32) -> Release {
        self.parked.xchg(cpu.saturating_add(1), Full);
        if self.waiting.load(Acquire) && self.take_parked().is_some() {
            return Release::Drain;
        }
        Release::Counted
    }

    /// Takes the parked buffer's drain (whoever takes it queues it, once).
    fn take_parked(&self) -> Option<u32> {
        match self.parked.xchg(NOT_PARKED, Full) {
            NOT_PARKED => None,
            c => Some(c - 1),
        }
    }

    /// Takes the parked buffer's drain if it is parked on `cpu`.
    fn take_parked_on(&self, cpu: u32) -> bool {
        let mine = cpu.saturating_add(1);
        self.parked.load(Relaxed) == mine && self.parked.cmpxchg(mine, NOT_PARKED, Full).is_ok()
    }

    /// The drain of the parked buffer ([`Clearance::WaitDrainOn`], [`Release::Drain`]), on the CPU
    /// that parked it: uncounts it. `true` when the QP waited and may send now (the caller
    /// runs it).
    pub(crate) fn drained(&self) -> bool {
        let left = self.in_flight.fetch_sub(1, Full).saturating_sub(1);
        self.resume(left)
    }

    /// Whether a waiting QP runs again with `left` buffers in flight (once per wait).
    fn resume(&self, left: u32) -> bool {
        left <= RESUME_AT && self.waiting.load(Relaxed) && self.waiting.xchg(false, Full)
    }

    /// How much of the QP is in the stack, read once: nothing, only its last buffer parked (the
    /// other end has it, or is taking it in that CPU's softirq; a run on that CPU drains it, a
    /// run elsewhere queues the drain there and waits for it), or more.
    pub(crate) fn quiet(&self) -> Quiet {
        match self.in_flight.load(Acquire) {
            0 => Quiet::Empty,
            1 => match self.parked.load(Relaxed) {
                NOT_PARKED => Quiet::Busy,
                c => Quiet::ParkedOn(c - 1),
            },
            _ => Quiet::Busy,
        }
    }

    /// The CPU the QP's buffers still in the stack were sent from, if any are: the one CPU it
    /// may send from without waiting for them.
    pub(crate) fn sending_cpu(&self) -> Option<u32> {
        (self.in_flight.load(Acquire) > 0).then(|| self.cpu.load(Relaxed))
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

impl TxOwner for Qp<RrxeDevice> {
    fn tx_socket(&self) -> Option<&TxSocket<Self>> {
        self.pipe().socket.as_ref()
    }

    fn tx_released(this: &ObjRef<Self>, received: bool) {
        let cpu = kernel::cpu::CpuId::current().as_u32();
        match this.pipe().flow.released(received, cpu) {
            Release::Counted => (),
            Release::Resume => this.pipe().defer(this),
            Release::Drain => this.pipe().drain.queue(this),
        }
    }
}

/// The BH work that uncounts a QP's parked packet, on the CPU that parked it (see the module
/// documentation).
pub(crate) struct FlowDrain;

impl WorkKind for FlowDrain {
    const SLEEPS: bool = false;
}

impl WorkTarget<FlowDrain> for Qp<RrxeDevice> {
    fn work_run(this: ObjRef<Self>) {
        if this.pipe().flow.drained() {
            this.pipe().defer(&this);
        }
    }
}

#[kernel::prelude::kunit_tests(rrxe_pipeline_flow)]
mod tests {
    use super::*;

    #[test]
    fn a_received_last_buffer_is_parked_until_another_cpu_needs_it_drained() {
        let f = TxFlow::new();
        assert_eq!(f.may_send_on(1), Clearance::Open);
        f.sent();
        f.sent();
        // The same CPU goes on; another waits.
        assert_eq!(f.may_send_on(1), Clearance::Open);
        assert_eq!(f.may_send_on(0), Clearance::Wait);
        assert!(f.is_waiting());
        // The first release runs the QP again (below the resume mark): still one in flight.
        assert_eq!(f.released(true, 1), Release::Resume);
        assert_eq!(f.may_send_on(0), Clearance::Wait);
        // The last one, received, is parked on its CPU; a run waits, so it is drained at once.
        assert_eq!(f.released(true, 1), Release::Drain);
        assert_eq!(f.in_flight(), 1);
        assert!(f.drained());
        assert_eq!(f.in_flight(), 0);
        assert_eq!(f.may_send_on(0), Clearance::Open);
        assert!(!f.is_waiting());
    }

    #[test]
    fn a_parked_buffer_needs_no_drain_on_its_cpu_and_a_remote_one_elsewhere() {
        let f = TxFlow::new();
        assert_eq!(f.may_send_on(1), Clearance::Open);
        f.sent();
        // Nobody waits: parked, no work queued.
        assert_eq!(f.released(true, 1), Release::Counted);
        assert_eq!(f.in_flight(), 1);
        // The QP's next run on that CPU goes on (and drains nothing while it need not).
        assert_eq!(f.may_send_on(1), Clearance::Open);
        assert_eq!(f.in_flight(), 1);
        // A run on another CPU queues the drain on the parking CPU, once, and waits.
        assert_eq!(f.may_send_on(0), Clearance::WaitDrainOn(1));
        assert_eq!(f.may_send_on(0), Clearance::Wait);
        assert!(f.drained());
        assert_eq!(f.may_send_on(0), Clearance::Open);
    }

    #[test]
    fn a_run_on_the_parking_cpu_drains_inline() {
        let f = TxFlow::new();
        assert_eq!(f.may_send_on(0), Clearance::Open);
        f.sent();
        // Received on CPU 1 (another CPU's receive path): parked there.
        assert_eq!(f.released(true, 1), Release::Counted);
        // A run on CPU 1 comes after that softirq: it drains the buffer itself.
        assert_eq!(f.may_send_on(1), Clearance::Open);
        assert_eq!(f.in_flight(), 0);
    }

    #[test]
    fn a_buffer_that_left_counts_at_once() {
        let f = TxFlow::new();
        assert_eq!(f.may_send_on(1), Clearance::Open);
        f.sent();
        assert_eq!(f.may_send_on(0), Clearance::Wait);
        // Sent by a device (or dropped): nothing to drain, the waiting run goes.
        assert_eq!(f.released(false, 1), Release::Resume);
        assert_eq!(f.in_flight(), 0);
        assert_eq!(f.may_send_on(0), Clearance::Open);
    }

    #[test]
    fn a_buffer_sent_while_one_is_parked_keeps_the_count_right() {
        let f = TxFlow::new();
        assert_eq!(f.may_send_on(1), Clearance::Open);
        f.sent();
        assert_eq!(f.released(true, 1), Release::Counted);
        f.sent();
        assert_eq!(f.released(true, 1), Release::Counted);
        // One left: the parked one.
        assert_eq!(f.in_flight(), 1);
        assert_eq!(f.may_send_on(0), Clearance::WaitDrainOn(1));
        assert!(f.drained());
        assert_eq!(f.in_flight(), 0);
    }

    #[test]
    fn a_full_flow_waits_until_it_drained_to_the_resume_mark() {
        let f = TxFlow::new();
        for _ in 0..MAX_IN_FLIGHT {
            f.sent();
        }
        assert_eq!(f.may_send_on(0), Clearance::Wait);
        // Releases above the mark do not run the QP; the one reaching it does, once.
        for _ in RESUME_AT + 1..MAX_IN_FLIGHT {
            assert_eq!(f.released(true, 0), Release::Counted);
        }
        assert_eq!(f.released(true, 0), Release::Resume);
        assert_eq!(f.released(true, 0), Release::Counted);
        assert_eq!(f.may_send_on(0), Clearance::Open);
    }
}
