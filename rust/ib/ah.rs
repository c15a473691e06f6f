// SPDX-License-Identifier: GPL-2.0

//! Address handles (`struct ib_ah`) and the RoCE address vector (`struct rdma_ah_attr`) that
//! AHs and connected QPs carry.

use super::object::{
    AhKind,
    Obj, //
};
use crate::bindings;
use kernel::prelude::*;

/// An address handle: the C `struct ib_ah` at offset 0, then the driver data.
pub(crate) type Ah<T> = Obj<T, AhKind>;

/// Whether an address vector's GID is IPv4-mapped (RoCEv2 over IPv4) or IPv6.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum NetworkType {
    /// RoCEv2 over IPv4.
    #[default]
    Ipv4,
    /// RoCEv2 over IPv6.
    Ipv6,
}

/// Where packets of a connected QP go: the RoCE address vector of `ah_attr`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AddressVector {
    /// Destination GID.
    pub(crate) dgid: [u8; 16],
    /// Source GID (the value of the GID table entry at `sgid_index`).
    pub(crate) sgid: [u8; 16],
    /// Source GID table index.
    pub(crate) sgid_index: u8,
    /// IPv6 flow label.
    pub(crate) flow_label: u32,
    /// IP TTL / hop limit.
    pub(crate) hop_limit: u8,
    /// IP traffic class (DSCP and ECN).
    pub(crate) traffic_class: u8,
    /// Service level.
    pub(crate) sl: u8,
    /// The static rate, a raw `enum ib_rate` code as the user gave it
    /// ([`crate::proto::rate`]).
    pub(crate) static_rate: u8,
    /// Destination MAC, resolved by the core.
    pub(crate) dmac: [u8; 6],
    /// IPv4 or IPv6, from the source GID.
    pub(crate) network: NetworkType,
}

impl AddressVector {
    /// Reads a RoCE `rdma_ah_attr`. Fails without a GRH or a resolved source GID.
    pub(super) fn from_c(c: &bindings::rdma_ah_attr) -> Result<Self> {
        if u32::from(c.ah_flags) & bindings::ib_ah_flags_IB_AH_GRH == 0 {
            return Err(EINVAL);
        }
        let grh = &c.grh;
        // SAFETY: For RoCE the core resolved `sgid_attr` (a held GID entry) before calling the
        // driver; it is valid for the duration of the call.
        let sattr = unsafe { grh.sgid_attr.as_ref() }.ok_or(EINVAL)?;
        // SAFETY: Both are plain 16-byte unions.
        let (dgid, sgid) = unsafe { (grh.dgid.raw, sattr.gid.raw) };
        let v4_mapped = sgid[..10].iter().all(|&b| b == 0) && sgid[10] == 0xff && sgid[11] == 0xff;
        Ok(Self {
            dgid,
            sgid,
            sgid_index: grh.sgid_index,
            flow_label: grh.flow_label,
            hop_limit: grh.hop_limit,
            traffic_class: grh.traffic_class,
            sl: c.sl,
            static_rate: c.static_rate,
            // SAFETY: RoCE attributes use the `roce` member.
            dmac: unsafe { c.__bindgen_anon_1.roce.dmac },
            network: if v4_mapped {
                NetworkType::Ipv4
            } else {
                NetworkType::Ipv6
            },
        })
    }

    pub(super) fn write_to(&self, c: &mut bindings::rdma_ah_attr, port: u32) {
        c.type_ = bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_ROCE;
        c.ah_flags = bindings::ib_ah_flags_IB_AH_GRH as u8;
        c.port_num = port;
        c.sl = self.sl;
        c.static_rate = self.static_rate;
        c.grh.dgid.raw = self.dgid;
        c.grh.flow_label = self.flow_label;
        c.grh.sgid_index = self.sgid_index;
        c.grh.hop_limit = self.hop_limit;
        c.grh.traffic_class = self.traffic_class;
        c.__bindgen_anon_1.roce.dmac = self.dmac;
    }
}

/// Reads a RoCE address vector, for the AH trampolines in `ops.rs`.
pub(super) fn av_from_c(c: &bindings::rdma_ah_attr) -> Result<AddressVector> {
    AddressVector::from_c(c)
}

/// Writes an address vector, for the AH trampolines in `ops.rs`.
pub(super) fn av_write(av: &AddressVector, c: &mut bindings::rdma_ah_attr, port: u32) {
    av.write_to(c, port);
}
