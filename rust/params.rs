// SPDX-License-Identifier: GPL-2.0

//! The module parameters (declared in the crate root's `module!`), read where they apply. Every
//! read takes the value of the moment: the parameters are read-only after load
//! (`/sys/module/rrxe/parameters`).

/// Whether FLUSH requests carry C rxe's ICRC rather than the IBA's (module parameter
/// `rxe_flush_icrc`; see `proto::icrc::rxe_flush_icrc_ipv4`).
pub(crate) fn rxe_flush_icrc() -> bool {
    *crate::module_parameters::rxe_flush_icrc.value() != 0
}

/// Whether `rdma link add ... type rxe` creates rrxe devices (module parameter `rxe_link`).
pub(crate) fn rxe_link() -> bool {
    *crate::module_parameters::rxe_link.value() != 0
}

/// Whether a QP's packet work runs on its home CPU (module parameter `qp_cpu` 1 or 2).
pub(crate) fn qp_home_cpu() -> bool {
    *crate::module_parameters::qp_cpu.value() != 0
}

/// Whether an idle QP's run stays where its event happens (module parameter `qp_cpu` 1).
pub(crate) fn qp_idle_runs_here() -> bool {
    *crate::module_parameters::qp_cpu.value() == 1
}

/// Whether a run asked for by a received packet or a kernel consumer's post starts at once,
/// or from the QP's deferred kick, after the softirq or the caller's section that asked
/// (module parameters `rx_batch` and `post_batch`). A deferred run handles all that reached
/// the QP meanwhile: the packets of the whole receive poll, answered with one ACK, or all the
/// consumer's posts, sent one after the other; so a NIC is notified once for them.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Batch {
    /// Always at once.
    Never,
    /// Always deferred.
    Always,
    /// At once when the QP is idle (a ping-pong's packet or post is answered without a
    /// detour), deferred when it is busy.
    WhenBusy,
}

/// When a received packet's QP runs (module parameter `rx_batch`).
pub(crate) fn rx_batch() -> Batch {
    batch(*crate::module_parameters::rx_batch.value())
}

/// When a kernel consumer's post runs its QP (module parameter `post_batch`).
pub(crate) fn post_batch() -> Batch {
    batch(*crate::module_parameters::post_batch.value())
}

fn batch(v: u8) -> Batch {
    match v {
        0 => Batch::Never,
        1 => Batch::Always,
        _ => Batch::WhenBusy,
    }
}

/// Whether a QP's runs follow the transmit flow rules (bit 0 of module parameter `tx_flow`).
pub(crate) fn tx_flow_rules() -> bool {
    *crate::module_parameters::tx_flow.value() & 1 != 0
}

/// Whether a QP's run keeps softirqs disabled (bit 1 of module parameter `tx_flow`).
pub(crate) fn tx_flow_bh_off() -> bool {
    *crate::module_parameters::tx_flow.value() & 2 != 0
}

/// Whether RC QPs recover selectively (bit 0 of module parameter `recovery`): the responder
/// keeps requests past a gap, the requester probes a peer that keeps them.
pub(crate) fn selective_recovery() -> bool {
    *crate::module_parameters::recovery.value() & 1 != 0
}

/// Whether an idle RC requester probes for lost tail packets (bit 1 of module parameter
/// `recovery`).
pub(crate) fn tail_probes() -> bool {
    *crate::module_parameters::recovery.value() & 2 != 0
}

/// Whether runs of packets leave as UDP GSO trains (module parameter `gso`).
pub(crate) fn gso() -> bool {
    *crate::module_parameters::gso.value() != 0
}

/// Where a CQ's completion handler runs (module parameter `cq_notify`).
pub(crate) fn cq_notify_on() -> crate::ib::NotifyOn {
    match *crate::module_parameters::cq_notify.value() {
        1 => crate::ib::NotifyOn::Here,
        _ => crate::ib::NotifyOn::Idle,
    }
}
