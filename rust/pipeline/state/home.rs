// SPDX-License-Identifier: GPL-2.0

//! Where a QP's runs go: its home CPU, and the exceptions that keep a run where its event
//! happens (module parameter `qp_cpu`, `Documentation/pipeline.rst`, home CPUs).

use super::QpPipe;
use crate::sync::ObjRef;
use crate::{
    device::RrxeDevice,
    ib::Qp,
    kernel_ext,
    pipeline::flow::Quiet,
    proto::opcode::{
        OpKind,
        OpcodeInfo, //
    },
};
use kernel::sync::atomic::Relaxed;

impl QpPipe {
    /// The CPU a run that would start on `cpu` belongs on, when that is another (online) one
    /// (module parameter `qp_cpu`):
    ///
    /// - a QP with packets still in the stack that this CPU sent stays: from any other CPU it
    ///   could send only once they are released ([`super::super::flow`]), which on a NIC is
    ///   its transmit completion, and a sender that posts and destroys its QP at once would
    ///   lose what waited (mckey's sender did);
    /// - an idle QP (nothing in the stack but the buffer parked on `cpu`, at most one packet
    ///   received: a doorbell or a packet of a ping-pong) runs where its event happens: handing
    ///   it over would cost a wakeup of another CPU on every hop of a round trip;
    /// - so does a QP whose one received packet asks only for an ACK (a SEND or WRITE request)
    ///   while nothing of it is in the stack but its last buffer parked on another CPU: it
    ///   handles the packet at once (the data reaches the application) and the ACK waits for
    ///   that buffer's drain, as it would at home. A packet whose answer is data (a READ or
    ///   atomic request) or that lets the requester send (an ACK) goes home instead, where
    ///   the answer can leave without that wait;
    /// - any other goes to its home: the QPs of a device, dealt round the CPUs, keep every CPU
    ///   busy.
    ///
    /// `qp_cpu` 2 sends every run home.
    pub(in crate::pipeline) fn away_from_home(&self, cpu: u32) -> Option<u32> {
        if !crate::params::qp_home_cpu() {
            return None;
        }
        // Every rule sends a run either nowhere or to the home, where it always runs: no run is
        // handed back and forth.
        let stays = crate::params::qp_idle_runs_here()
            && (self.flow.sending_cpu() == Some(cpu)
                || match self.flow.quiet() {
                    Quiet::Empty => self.inbox.len() <= 1,
                    Quiet::ParkedOn(c) if c == cpu => self.inbox.len() <= 1,
                    Quiet::ParkedOn(_) => self.inbox.len() == 1 && self.ack_only.load(Relaxed),
                    Quiet::Busy => false,
                });
        let to = if stays { cpu } else { self.home };
        (to != cpu && kernel_ext::cpu_online(to)).then_some(to)
    }

    /// Whether the QP is idle: nothing of it in the network stack but its last buffer parked
    /// (already received here, its release counted late), and at most one received packet
    /// waiting: a ping-pong's QP at every hop.
    pub(in crate::pipeline) fn idle(&self) -> bool {
        match self.flow.quiet() {
            Quiet::Empty | Quiet::ParkedOn(_) => self.inbox.len() <= 1,
            Quiet::Busy => false,
        }
    }

    /// A packet of opcode `info` was queued to the QP's inbox: notes whether it asks only for
    /// an ACK, for [`Self::away_from_home`]. A hint: the placement it informs never decides
    /// what is sent or in which order ([`super::super::flow`] does).
    pub(in crate::pipeline) fn arrived(&self, info: &OpcodeInfo) {
        let ack_only = info.is_request && matches!(info.kind, OpKind::Send | OpKind::Write);
        if self.ack_only.load(Relaxed) != ack_only {
            self.ack_only.store(ack_only, Relaxed);
        }
    }

    /// Queues the QP's deferred run on `cpu`.
    pub(in crate::pipeline) fn defer_on(&self, qp: &ObjRef<Qp<RrxeDevice>>, cpu: u32) {
        self.kicker.queue_on(qp, cpu);
    }

    /// The QP's home CPU, for reports.
    pub(crate) fn home_cpu(&self) -> u32 {
        self.home
    }

    /// Queues the QP's deferred run: on its home CPU (module parameter `qp_cpu`), where it
    /// always runs, or on this CPU (`qp_cpu` 0).
    pub(in crate::pipeline) fn defer(&self, qp: &ObjRef<Qp<RrxeDevice>>) {
        if !crate::params::qp_home_cpu() {
            self.kicker.queue(qp);
            return;
        }
        self.kicker.queue_on(qp, self.home);
    }
}
