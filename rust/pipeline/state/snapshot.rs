// SPDX-License-Identifier: GPL-2.0

//! The attributes of a QP that one pass of its pipeline reads: copied once per pass under
//! the QP's lock ([`crate::verbs::qp::RrxeQp::snapshot`]).

use crate::ib::{
    AccessFlags,
    AddressVector, //
};

/// The QP attributes the data path reads, copied once per pass under the QP lock.
#[derive(Clone, Copy)]
pub(crate) struct Snapshot {
    pub(crate) state: crate::proto::qp_state::QpState,
    /// The QP's state changes so far ([`crate::verbs::qp::RrxeQp::pipeline_fatal`]).
    pub(crate) epoch: u32,
    pub(crate) qp_type: crate::proto::qp_state::QpType,
    pub(crate) qpn: u32,
    /// Path MTU in bytes (connected QPs).
    pub(crate) mtu: u32,
    pub(crate) dest_qpn: u32,
    pub(crate) av: AddressVector,
    pub(crate) qkey: u32,
    /// `IB_ACCESS_REMOTE_*` rights of the QP.
    pub(crate) access: AccessFlags,
    pub(crate) timeout: u8,
    pub(crate) min_rnr_timer: u8,
    pub(crate) max_rd_atomic: u8,
    /// Protection domain identity.
    pub(crate) pd: usize,
    pub(crate) sq_sig_all: bool,
    /// A kernel consumer's QP (its ring may hold fast registrations).
    pub(crate) kernel: bool,
    /// The UDP source port of this QP's packets (RoCEv2 entropy).
    pub(crate) src_port: u16,
    /// The QP reacts to congestion: a connected QP of a device whose reaction points are on
    /// (`rp_enable`); its packets are ECN-capable (`av.traffic_class` says so).
    pub(crate) congestion: bool,
    /// The rate its user limits the QP to: its static rate or `IB_QP_RATE_LIMIT`.
    pub(crate) limit: Option<crate::proto::rate::Kbps>,
}

impl Snapshot {
    /// Whether what the QP sends goes through its pacer (congestion control or a user's
    /// limit) and so leaves as packets, each one accounted for.
    pub(crate) fn paced(&self) -> bool {
        self.congestion || self.limit.is_some()
    }
}
