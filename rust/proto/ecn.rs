// SPDX-License-Identifier: GPL-2.0

//! Explicit congestion notification (RFC 3168) in RoCEv2 packets: the two low bits of the IPv4
//! TOS byte or of the IPv6 traffic class. A sender that reacts to congestion marks its packets
//! ECN-capable (ECT(0)); a switch whose queue builds up rewrites ECT to CE (congestion
//! experienced) instead of dropping; the receiver answers a CE mark with a congestion
//! notification packet ([`super::cnp`]) to the sending QP.
//!
//! The traffic class of a QP's address vector carries the DSCP in its six high bits and may set
//! the ECN bits itself: a user who asks for a codepoint gets it; one who leaves them 0
//! (Not-ECT) gets ECT(0) when the device's ECN marking is on ([`outgoing_tclass`]).

/// The ECN field of a traffic class.
pub(crate) const ECN_MASK: u8 = 0x03;

/// An ECN codepoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ecn {
    /// Not ECN-capable transport: a congested switch drops the packet.
    NotEct,
    /// ECN-capable transport, codepoint 1 (L4S).
    Ect1,
    /// ECN-capable transport, codepoint 0: what RoCE NICs send.
    Ect0,
    /// Congestion experienced: a switch marked the packet.
    Ce,
}

impl Ecn {
    /// The codepoint of a traffic class (or IPv4 TOS byte).
    pub(crate) const fn of_tclass(tclass: u8) -> Self {
        match tclass & ECN_MASK {
            0 => Self::NotEct,
            1 => Self::Ect1,
            2 => Self::Ect0,
            _ => Self::Ce,
        }
    }

    /// The codepoint's two bits.
    pub(crate) const fn bits(self) -> u8 {
        match self {
            Self::NotEct => 0,
            Self::Ect1 => 1,
            Self::Ect0 => 2,
            Self::Ce => 3,
        }
    }
}

/// The traffic class a packet leaves with: the address vector's, made ECT(0) when `mark` (the
/// device's ECN marking is on) and the user left the ECN bits Not-ECT.
pub(crate) const fn outgoing_tclass(tclass: u8, mark: bool) -> u8 {
    if mark && tclass & ECN_MASK == 0 {
        tclass | Ecn::Ect0.bits()
    } else {
        tclass
    }
}

/// The priority (`skb->priority`: the egress qdisc's band, a VLAN's PCP through its egress
/// map) of a packet with traffic class `tclass`: its DSCP's class selector, the three high
/// bits (DSCP 26, RoCE's usual, is priority 3; the CNPs' DSCP 48 is 6), as RoCE NICs map
/// DSCP to priority by default.
pub(crate) const fn priority_of_tclass(tclass: u8) -> u32 {
    (tclass >> 5) as u32
}

/// The traffic class of a received packet from the 40-byte GRH area the receive path keeps:
/// an IPv4 header sits in its last 20 bytes (TOS at byte 21), an IPv6 header fills it (traffic
/// class across bytes 0 and 1). `None` for an area that holds neither.
pub(crate) fn tclass_of_grh(grh: &[u8; 40]) -> Option<u8> {
    if grh[20] >> 4 == 4 {
        Some(grh[21])
    } else if grh[0] >> 4 == 6 {
        Some((grh[0] << 4) | (grh[1] >> 4))
    } else {
        None
    }
}

/// Whether a received packet carries a CE mark (its GRH area as [`tclass_of_grh`] reads it).
pub(crate) fn is_ce(grh: &[u8; 40]) -> bool {
    tclass_of_grh(grh).is_some_and(|t| Ecn::of_tclass(t) == Ecn::Ce)
}
