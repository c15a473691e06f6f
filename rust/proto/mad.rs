// SPDX-License-Identifier: GPL-2.0

//! The performance management agent's rules: which MADs it answers and how (IBA Vol 1 13.4,
//! 16.1), and the attributes it answers with.
//!
//! A MAD is a request or a response. The agent answers only requests of the PerfMgt class that
//! expect a response: a Get of ClassPortInfo, PortCounters or PortCountersExt with the
//! attribute, any other Get or Set with the status of what is missing (IBA 13.4.7). It never
//! answers a response (method bit 7: GetResp and the others), a Trap, a TrapRepress, a Report
//! or a Send: answering those is what lets two agents answer each other forever. Such a MAD is
//! left to ib_core, which hands a response to the agent whose request it answers.
//!
//! Set of PortCounters (clearing the counters, IBA 16.1.3.5) is not implemented: the counters
//! are the device's, which other readers share, and no Set of this agent's attributes is. A Set
//! is answered with "method/attribute combination not supported" (0x000c), the status IBA
//! 13.4.7 gives for a method the class defines but the attribute does not support here.
//!
//! Every raw value mirrors `include/rdma/ib_mad.h` and `include/rdma/ib_pma.h`.

/// The PerfMgt class (`IB_MGMT_CLASS_PERF_MGMT`).
pub(crate) const CLASS_PERF_MGMT: u8 = 0x04;
/// The only PerfMgt class version (`class_version` of the MAD header).
pub(crate) const CLASS_VERSION: u8 = 1;

/// The method values this agent tells apart (IBA 13.4.5, table 105).
pub(crate) mod method {
    /// `IB_MGMT_METHOD_GET`.
    pub(crate) const GET: u8 = 0x01;
    /// `IB_MGMT_METHOD_SET`.
    pub(crate) const SET: u8 = 0x02;
    /// `IB_MGMT_METHOD_SEND`: a datagram that asks for no response.
    pub(crate) const SEND: u8 = 0x03;
    /// `IB_MGMT_METHOD_TRAP`: sent by an agent, answered (if at all) by a TrapRepress.
    pub(crate) const TRAP: u8 = 0x05;
    /// `IB_MGMT_METHOD_REPORT`: sent by a class manager to a subscriber.
    pub(crate) const REPORT: u8 = 0x06;
    /// `IB_MGMT_METHOD_TRAP_REPRESS`: a manager's answer to a Trap.
    pub(crate) const TRAP_REPRESS: u8 = 0x07;
    /// `IB_MGMT_METHOD_RESP`: the bit every response method has (GetResp, ReportResp, ...).
    pub(crate) const RESPONSE: u8 = 0x80;
    /// `IB_MGMT_METHOD_GET_RESP`: the method of every answer of this agent.
    pub(crate) const GET_RESP: u8 = 0x81;
}

/// The PerfMgt attributes the agent answers a Get of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PmaAttr {
    /// `IB_PMA_CLASS_PORT_INFO`.
    ClassPortInfo,
    /// `IB_PMA_PORT_COUNTERS`.
    PortCounters,
    /// `IB_PMA_PORT_COUNTERS_EXT`.
    PortCountersExt,
}

impl PmaAttr {
    /// The attribute whose `attr_id` (host order) is `raw`, or `None` for one the agent lacks.
    pub(crate) const fn from_raw(raw: u16) -> Option<Self> {
        match raw {
            0x0001 => Some(Self::ClassPortInfo),
            0x0012 => Some(Self::PortCounters),
            0x001d => Some(Self::PortCountersExt),
            _ => None,
        }
    }
}

/// The status of an answer that carries no attribute (IBA 13.4.7, table 106).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MadStatus {
    /// The class version is not supported (`IB_MGMT_MAD_STATUS_BAD_VERSION`).
    BadVersion,
    /// The method is not supported (`IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD`).
    UnsupportedMethod,
    /// The method/attribute combination is not supported
    /// (`IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB`).
    UnsupportedMethodAttr,
}

impl MadStatus {
    /// The value of the MAD header's `status` field (host order).
    pub(crate) const fn raw(self) -> u16 {
        match self {
            Self::BadVersion => 0x0004,
            Self::UnsupportedMethod => 0x0008,
            Self::UnsupportedMethodAttr => 0x000c,
        }
    }
}

/// What the agent does with a MAD that arrived (see [`reply_for`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MadReply {
    /// Leave it to ib_core, unanswered: not a PerfMgt MAD, or one that must not be answered.
    Pass,
    /// Answer with a GetResp carrying the attribute, status 0.
    Attr(PmaAttr),
    /// Answer with a GetResp carrying only this status.
    Status(MadStatus),
}

/// What to do with a MAD of class `class`, class version `class_version`, method `method` and
/// attribute `attr_id` (host order), whoever sent it.
pub(crate) const fn reply_for(class: u8, class_version: u8, method: u8, attr_id: u16) -> MadReply {
    if class != CLASS_PERF_MGMT {
        return MadReply::Pass;
    }
    // Only requests that expect a response are answered.
    if method & method::RESPONSE != 0 {
        return MadReply::Pass;
    }
    match method {
        method::SEND | method::TRAP | method::REPORT | method::TRAP_REPRESS => {
            return MadReply::Pass;
        }
        _ => {}
    }
    if class_version != CLASS_VERSION {
        return MadReply::Status(MadStatus::BadVersion);
    }
    match (method, PmaAttr::from_raw(attr_id)) {
        (method::GET, Some(attr)) => MadReply::Attr(attr),
        (method::GET | method::SET, _) => MadReply::Status(MadStatus::UnsupportedMethodAttr),
        _ => MadReply::Status(MadStatus::UnsupportedMethod),
    }
}

/// What the agent reports, from the driver's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PmaCounters {
    /// Bytes sent (RoCE headers and payload, as rxe counts them).
    pub(crate) xmit_bytes: u64,
    /// Bytes received.
    pub(crate) rcv_bytes: u64,
    /// Packets sent.
    pub(crate) xmit_packets: u64,
    /// Packets received.
    pub(crate) rcv_packets: u64,
    /// Times the port went down.
    pub(crate) link_downed: u64,
}

/// `IB_PMA_CLASS_CAP_EXT_WIDTH`: PortCountersExt is supported.
const CAP_EXT_WIDTH: u16 = 1 << 9;
/// Where the attribute starts in the MAD's data (after the 40 reserved bytes of the PerfMgt
/// class header).
const ATTR_OFFSET: usize = 40;

/// Writes `v` at `data[at..]`, if it fits.
fn put(data: &mut [u8], at: usize, v: &[u8]) {
    if let Some(d) = data.get_mut(at..at + v.len()) {
        d.copy_from_slice(v);
    }
}

/// Counters of PortCounters are 8, 16 or 32 bits wide and stop at all ones (IBA 16.1.3.5).
fn sat32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// Encodes `attr` for port 1 into `data`, the MAD's data (after the common MAD header), zeroed.
pub(crate) fn encode(attr: PmaAttr, c: &PmaCounters, data: &mut [u8]) {
    let a = ATTR_OFFSET;
    match attr {
        PmaAttr::ClassPortInfo => {
            // BaseVersion, ClassVersion, CapabilityMask.
            put(data, a, &[1, CLASS_VERSION]);
            put(data, a + 2, &CAP_EXT_WIDTH.to_be_bytes());
        }
        PmaAttr::PortCounters => {
            put(data, a + 1, &[1]); // PortSelect
            put(
                data,
                a + 7,
                &[u8::try_from(c.link_downed).unwrap_or(u8::MAX)],
            );
            // Data in units of four octets.
            put(data, a + 24, &sat32(c.xmit_bytes >> 2).to_be_bytes());
            put(data, a + 28, &sat32(c.rcv_bytes >> 2).to_be_bytes());
            put(data, a + 32, &sat32(c.xmit_packets).to_be_bytes());
            put(data, a + 36, &sat32(c.rcv_packets).to_be_bytes());
        }
        PmaAttr::PortCountersExt => {
            put(data, a + 1, &[1]); // PortSelect
            put(data, a + 8, &(c.xmit_bytes >> 2).to_be_bytes());
            put(data, a + 16, &(c.rcv_bytes >> 2).to_be_bytes());
            put(data, a + 24, &c.xmit_packets.to_be_bytes());
            put(data, a + 32, &c.rcv_packets.to_be_bytes());
        }
    }
}
