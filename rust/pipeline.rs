// SPDX-License-Identifier: GPL-2.0

//! The RoCEv2 packet pipeline: requester, responder and completer of each QP, packet input and
//! output, and the run-or-defer engine that drives them.
//!
//! Everything a QP does with packets runs in one context at a time ([`gate`]), and while the QP
//! is busy on one CPU, its home (QPs are dealt round the online CPUs as they are created):
//! whichever of a doorbell, a received packet, a timer or the deferred kick asks first runs
//! the QP's pass inline if it is on the home CPU, the QP is idle, or this CPU sent its packets
//! still in the stack, or hands the run to the deferred kick on the home CPU; the others only
//! leave a note. A pass ([`pass`]) handles the QP's inbox (responder for requests, completer
//! for responses), then lets the requester send, then retires finished WQEs. Packets are built
//! under the QP's spinlocks but sent after they are released (the IP output path must not run
//! with interrupts disabled), in batches of up to [`OUTBOX`].
//!
//! Work is bounded per context: a run makes at most [`PASSES_PER_RUN`] passes; a packet for a
//! QP of the same device lists that QP in [`Kicks`] instead of running it inline (no recursion
//! through chains of QPs), and the outermost kick runs the list, [`RUNS_PER_KICK`] runs at most.
//! What is left goes to the QPs' deferred kicks (a work item on the BH workqueue of the QP's
//! home CPU, or of this CPU for a busy QP whose run belongs here: [`Batch`]).

mod completer;
mod congestion;
mod crc;
mod direct;
mod flow;
mod gate;
mod mem;
mod odp;
mod pass;
mod recv;
mod report;
mod requester;
mod responder;
mod rkey;
mod sinks;
pub(crate) mod state;
mod tunnel;
mod xmit;

use crate::sync::{
    ObjRef,
    TimerTarget,
    WorkTarget, //
};
use crate::{
    counters::Counter,
    device::RrxeDevice,
    ib::{
        AddressVector,
        Device,
        Qp, //
    },
    kernel_ext::{
        trace_drop,
        BhDisabled, //
    },
    net::SkBuff,
    params::Batch,
    proto::{
        hdr::Bth,
        qp_attr::local_ack_timeout_ns, //
    },
    verbs::cq::Pushed,
};
use kernel::{
    prelude::*,
    sync::atomic::Relaxed, //
};

pub(crate) use crate::counters::DropReason;
pub(crate) use recv::Receiver;
pub(crate) use report::report;
pub(crate) use tunnel::open_tunnel;

/// Packets built per batch before they are sent.
pub(crate) const OUTBOX: usize = 16;

/// Counts a dropped packet that reached no QP and traces it (`rrxe:rrxe_drop`) with what is
/// known of its BTH.
pub(crate) fn drop_packet(dev: &Device<RrxeDevice>, reason: DropReason, bth: Option<&Bth>) {
    dev.count_drop(reason);
    trace_dropped(dev, reason, bth);
}

/// Counts a dropped packet of `qp` and traces it, as [`drop_packet`].
pub(crate) fn drop_qp_packet(qp: &Qp<RrxeDevice>, reason: DropReason, bth: Option<&Bth>) {
    qp.counts().drop_packet(reason);
    trace_dropped(qp.device(), reason, bth);
}

fn trace_dropped(dev: &Device<RrxeDevice>, reason: DropReason, bth: Option<&Bth>) {
    let (qpn, psn, op) = bth.map_or((0, 0, 0), |b| (b.dest_qpn, b.psn.value(), b.opcode.0));
    trace_drop(dev.name(), qpn, psn, op, reason.name());
}

/// A packet ready to send: `skb` holds BTH through ICRC.
pub(crate) struct TxItem {
    pub(crate) skb: SkBuff,
    pub(crate) av: AddressVector,
    pub(crate) src_port: u16,
}

/// The packets of one batch.
pub(crate) struct Outbox {
    items: KVec<TxItem>,
    /// Packets sent through this batch buffer so far (over the run it serves).
    sent: u32,
}

impl Outbox {
    fn new() -> Result<Self> {
        Ok(Self {
            items: KVec::with_capacity(OUTBOX, GFP_ATOMIC)?,
            sent: 0,
        })
    }

    /// Whether the batch is empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Whether the batch is full.
    pub(crate) fn is_full(&self) -> bool {
        self.items.len() >= OUTBOX
    }

    /// Adds a packet (dropped if the batch is full: callers check [`Self::is_full`]).
    pub(crate) fn push(&mut self, item: TxItem) {
        let _ = self.items.push_within_capacity(item);
    }

    /// Moves the batch's packets to the end of `held`, which gets room for a batch first if it
    /// has none; returns how many did not fit (dropped: no memory for the room).
    pub(crate) fn hold_into(&mut self, held: &mut KVec<TxItem>) -> usize {
        if held.is_empty() && held.capacity() < OUTBOX {
            if let Ok(room) = KVec::with_capacity(OUTBOX, GFP_ATOMIC) {
                *held = room;
            }
        }
        let mut dropped = 0;
        for item in self.items.drain_all() {
            if held.push_within_capacity(item).is_err() {
                dropped += 1;
            }
        }
        dropped
    }

    /// Drops the batch's packets unsent.
    pub(crate) fn discard(&mut self) {
        self.items.clear();
    }

    /// Moves the packets of `held` to the end of the batch (dropped if it is full).
    pub(crate) fn take_from(&mut self, held: &mut KVec<TxItem>) {
        for item in held.drain_all() {
            self.push(item);
        }
    }

    fn send_all(&mut self, qp: &Qp<RrxeDevice>, kicks: &mut Kicks) {
        self.sent = self.sent.saturating_add(self.items.len() as u32);
        xmit::send_batch(qp, &mut self.items, kicks);
    }
}

/// The retransmission timeout in microseconds for the QP attribute `timeout` after `retries`
/// retransmissions without progress, or `None` when the timer is disabled. At least 2 ms
/// (emulated machines are slow), doubled with every retry up to 64 times the base: the IBA
/// timeout is a minimum, and backing off lets RC ride out a stalled link (a paused VM, a
/// congested emulated wire) within `retry_cnt` retries instead of failing in half a second.
pub(crate) fn timeout_us(timeout: u8, retries: u8) -> Option<u64> {
    let ns = local_ack_timeout_ns(timeout).ok()??;
    Some((ns / 1000).max(2000) << retries.min(6))
}

/// The passes one run may make before it hands the rest to the deferred kick: a bound on the
/// time one context (often a softirq, or a packet flood's receive path) spends on one QP.
const PASSES_PER_RUN: u32 = 1024;

/// The packets one run may send before it hands the rest to the deferred kick. A run in a
/// softirq (receive, or the deferred kick itself) cannot let the receiver run: on a veth, or
/// to another QP of this device, its packets wait in a bounded queue (a CPU's backlog of
/// `netdev_max_backlog`, 1000 by default; a QP's inbox) until it returns, and a READ response
/// of thousands of packets in one go loses all but the first thousand. The BH workqueue runs a
/// work item that queues itself again up to ten times before other softirqs run: 64 packets a
/// run keeps that under the default backlog.
const PACKETS_PER_RUN: u32 = 64;

/// The runs one kick makes (its QP's and those of the QPs its packets reached on this device)
/// before it leaves the rest to their deferred kicks.
const RUNS_PER_KICK: u32 = 64;

/// The QPs of this device that packets delivered during a run must run next. Delivery never
/// runs the destination inline (a chain of QPs sending to each other would recurse without
/// bound); the outermost kick runs them one after the other, and what does not fit (or exceeds
/// [`RUNS_PER_KICK`]) goes to the QPs' deferred kicks.
pub(crate) struct Kicks {
    qps: [Option<ObjRef<Qp<RrxeDevice>>>; 16],
    n: usize,
}

impl Kicks {
    /// None yet.
    pub(crate) fn new() -> Self {
        Self {
            qps: [const { None }; 16],
            n: 0,
        }
    }

    /// Asks for a run of `qp`.
    pub(crate) fn push(&mut self, qp: ObjRef<Qp<RrxeDevice>>) {
        let listed = self.qps[..self.n]
            .iter()
            .flatten()
            .any(|q| core::ptr::eq::<Qp<RrxeDevice>>(&**q, &*qp));
        if listed {
            return;
        }
        match self.qps.get_mut(self.n) {
            Some(slot) => {
                *slot = Some(qp);
                self.n += 1;
            }
            None => qp.pipe().defer(&qp),
        }
    }

    fn pop(&mut self) -> Option<ObjRef<Qp<RrxeDevice>>> {
        self.n = self.n.checked_sub(1)?;
        self.qps.get_mut(self.n)?.take()
    }

    /// Leaves the listed QPs to their deferred kicks.
    pub(crate) fn defer_all(&mut self) {
        while let Some(qp) = self.pop() {
            qp.pipe().defer(&qp);
        }
    }

    /// Runs the listed QPs as [`Self::run_all`] does, or leaves them to their deferred kicks
    /// as `batch` says ([`Batch`]).
    pub(crate) fn run_or_batch(&mut self, batch: Batch) {
        if batch == Batch::Never {
            return self.run_all();
        }
        let cpu = crate::kernel_ext::this_cpu();
        let mut runs = 0;
        while let Some(qp) = self.pop() {
            if runs < RUNS_PER_KICK && runs_now(batch, &qp) {
                runs += 1;
                run(&qp, self, Placed::Anywhere);
            } else {
                defer_placed(&qp, cpu);
            }
        }
    }

    /// Runs the listed QPs (and those their runs list), [`RUNS_PER_KICK`] at most.
    pub(crate) fn run_all(&mut self) {
        let mut runs = 0;
        while let Some(qp) = self.pop() {
            if runs >= RUNS_PER_KICK {
                qp.pipe().defer(&qp);
                continue;
            }
            runs += 1;
            run(&qp, self, Placed::Anywhere);
        }
    }
}

/// Runs the QP's packet work now (and then that of the QPs on this device its packets reach),
/// or makes the context running it go once more, or hands it to the QP's home CPU.
pub(crate) fn kick(qp: &Qp<RrxeDevice>) {
    kick_placed(qp, Placed::Anywhere);
}

fn kick_placed(qp: &Qp<RrxeDevice>, placed: Placed) {
    let mut kicks = Kicks::new();
    run(qp, &mut kicks, placed);
    kicks.run_all();
}

/// Where a run starts.
#[derive(Clone, Copy)]
enum Placed {
    /// Where its event happened: it may belong on another CPU.
    Anywhere,
    /// The QP's deferred kick, queued where the QP's runs belong. It runs where the workqueue
    /// ran it: a work item queued from its own run (or while it runs) on one CPU to another
    /// stays on the first (the workqueue does not run one item on two CPUs at once), so a
    /// deferred run that handed itself over again would go round on that CPU for ever.
    Deferred,
}

/// One run of the QP's work. A run that uses up [`PASSES_PER_RUN`] or [`PACKETS_PER_RUN`] (or
/// cannot get its batch buffer) arms the deferred kick and stops, so a long READ response or
/// send continues instead of stalling until the next event, and no flood of requests keeps one
/// context looping. A run of a busy QP that starts away from its home CPU only queues the
/// deferred kick there ([`state::QpPipe::away_from_home`]). The run stays on one CPU with softirqs disabled (the packets it queues on this CPU's backlog
/// are received when it ends), and sends nothing while its packets sent from another CPU are
/// still in the stack ([`flow`]): it handles what it received and holds the replies
/// ([`pass::receive_pass`]).
fn run(qp: &Qp<RrxeDevice>, kicks: &mut Kicks, placed: Placed) {
    let bh = crate::params::tx_flow_bh_off().then(BhDisabled::new);
    let gate = &qp.pipe().gate;
    if !gate.enter() {
        return;
    }
    let cpu = bh
        .as_ref()
        .map_or_else(crate::kernel_ext::this_cpu, |b| b.cpu());
    let away = match placed {
        Placed::Anywhere => qp.pipe().away_from_home(cpu),
        Placed::Deferred => None,
    };
    if let Some(to) = away {
        // The run belongs on another CPU: hand it over (idle first, as below).
        gate.hand_over();
        qp.pipe().defer_on(&ObjRef::new(qp), to);
        return;
    }
    let rules = crate::params::tx_flow_rules();
    // One batch buffer for all passes of this run (emptied by each pass).
    let mut out = Outbox::new().ok();
    let mut passes = 0u32;
    loop {
        let mut spent = out.is_none();
        let clearance = if rules {
            qp.pipe().flow.may_send_on(cpu)
        } else {
            flow::Clearance::Open
        };
        if clearance != flow::Clearance::Open {
            // The release or drain that lifts the wait runs the QP again.
            qp.counts().inc(Counter::TxFlowWait);
            if let flow::Clearance::WaitDrainOn(parked) = clearance {
                qp.pipe().drain.queue_on(&ObjRef::new(qp), parked);
            }
            if let Some(out) = out.as_mut() {
                pass::receive_pass(qp, out);
            }
            passes += 1;
            spent = passes >= PASSES_PER_RUN;
        } else if let Some(out) = out.as_mut() {
            while passes < PASSES_PER_RUN && out.sent < PACKETS_PER_RUN {
                passes += 1;
                if !pass::pass(qp, out, kicks) {
                    break;
                }
            }
            spent = passes >= PASSES_PER_RUN || out.sent >= PACKETS_PER_RUN;
        }
        if spent {
            // Idle first, then queued: a deferred run that starts at once (an interrupt on
            // this CPU runs the BH workqueue as soon as the queueing unlocks) must find the
            // gate open, or it would only leave a request that the hand-over then erases.
            gate.hand_over();
            qp.pipe().defer(&ObjRef::new(qp));
            break;
        }
        if gate.leave() {
            break;
        }
    }
}

/// The retransmission/RNR timer.
impl TimerTarget for Qp<RrxeDevice> {
    fn timer_fired(this: ObjRef<Self>, id: u32) {
        if id == state::TIMER_RETRANSMIT {
            this.pipe().send.lock().timer_fired = true;
        } else if id == state::TIMER_PACE
            && !congestion::pace_due(&this)
            && !requester::tail::tail_probe_due(&this)
        {
            // Armed for a tail probe that an answer made needless, or that is not due yet
            // (re-armed for it): the QP has nothing to do.
            return;
        }
        kick(&this);
    }
}

impl WorkTarget for Qp<RrxeDevice> {
    fn work_run(this: ObjRef<Self>) {
        kick_placed(&this, Placed::Deferred);
    }
}

/// Acts on what became of a completion of `qp` ([`crate::verbs::cq::RrxeCq::push`]): one its
/// CQ did not take (the CQ overran and is in error) moves the QP to ERR with
/// `IB_EVENT_QP_FATAL` (IBA: a work queue that completes to a CQ in error has a local
/// catastrophic error) in its next pass, which the deferred kick runs soon: the caller may hold
/// the QP's locks, be another QP's pass, or be one of the consumer's verb calls. A QP already
/// in ERR stays there.
pub(crate) fn after_push(qp: &Qp<RrxeDevice>, pushed: Pushed) {
    if pushed == Pushed::Lost {
        qp.pipe().cq_overrun.store(true, Relaxed);
        qp.pipe().defer(&ObjRef::new(qp));
    }
}

/// After a kernel consumer's post: runs the QP's work now, or from its deferred kick when this
/// context may not send packets (interrupts disabled: a consumer posting under an irqsave
/// lock) or the QP is busy ([`Batch`], module parameter `post_batch`).
pub(crate) fn kick_or_defer(qp: &Qp<RrxeDevice>) {
    if crate::kernel_ext::irqs_disabled() {
        qp.pipe().defer(&ObjRef::new(qp));
    } else if runs_now(crate::params::post_batch(), qp) {
        kick(qp);
    } else {
        defer_placed(&ObjRef::new(qp), crate::kernel_ext::this_cpu());
    }
}

/// Whether a run `batch` governs starts at once for `qp` ([`Batch`]).
fn runs_now(batch: Batch, qp: &Qp<RrxeDevice>) -> bool {
    match batch {
        Batch::Never => true,
        Batch::Always => false,
        Batch::WhenBusy => qp.pipe().idle(),
    }
}

/// Queues the QP's deferred kick where a run starting on `cpu` belongs: there unless
/// [`state::QpPipe::away_from_home`] says otherwise.
fn defer_placed(qp: &ObjRef<Qp<RrxeDevice>>, cpu: u32) {
    let to = qp.pipe().away_from_home(cpu).unwrap_or(cpu);
    qp.pipe().defer_on(qp, to);
}
