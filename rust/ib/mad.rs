// SPDX-License-Identifier: GPL-2.0

//! The performance management agent (`process_mad`): ClassPortInfo, PortCounters and
//! PortCountersExt of the PerfMgt class (IBA 16.1.3), answered from the driver's counters, as
//! rxe does. ib_core reads them for `/sys/class/infiniband/*/ports/1/counters/` (the class
//! port info says the extended counters exist, so it shows the 64-bit ones); a PerfMgt GET
//! arriving on QP1 is answered the same way. Every other class is left to ib_core's agents
//! (the CM's MADs go there).
//!
//! C headers: [`include/rdma/ib_mad.h`](srctree/include/rdma/ib_mad.h),
//! [`include/rdma/ib_pma.h`](srctree/include/rdma/ib_pma.h).

use super::{
    ops::Adapter,
    DeviceOps, //
};
use crate::bindings;
use kernel::prelude::*;

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

/// `IB_MGMT_CLASS_PERF_MGMT`.
const CLASS_PERF_MGMT: u8 = 0x04;
/// `IB_MGMT_METHOD_GET`, `IB_MGMT_METHOD_GET_RESP`.
const METHOD_GET: u8 = 0x01;
const METHOD_GET_RESP: u8 = 0x81;
/// `IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD`, `..._METHOD_ATTRIB`.
const STATUS_UNSUPPORTED_METHOD: u16 = 0x0008;
const STATUS_UNSUPPORTED_ATTRIB: u16 = 0x000c;
/// PerfMgt attributes (`IB_PMA_CLASS_PORT_INFO`, `IB_PMA_PORT_COUNTERS`,
/// `IB_PMA_PORT_COUNTERS_EXT`).
const ATTR_CLASS_PORT_INFO: u16 = 0x0001;
const ATTR_PORT_COUNTERS: u16 = 0x0012;
const ATTR_PORT_COUNTERS_EXT: u16 = 0x001d;
/// `IB_PMA_CLASS_CAP_EXT_WIDTH`: PortCountersExt is supported.
const CAP_EXT_WIDTH: u16 = 1 << 9;
/// Where the attribute starts in the MAD's data (after the 40 reserved bytes of the PerfMgt
/// class header).
const ATTR_OFFSET: usize = 40;

/// `IB_MAD_RESULT_*`.
const RESULT_SUCCESS: c_int = bindings::ib_mad_result_IB_MAD_RESULT_SUCCESS as c_int;
const RESULT_REPLY: c_int = bindings::ib_mad_result_IB_MAD_RESULT_REPLY as c_int;

/// Writes `v` big-endian at `data[at..]`.
fn put(data: &mut [u8], at: usize, v: &[u8]) {
    if let Some(d) = data.get_mut(at..at + v.len()) {
        d.copy_from_slice(v);
    }
}

/// Counters of PortCounters are 8, 16 or 32 bits wide and stop at all ones (IBA 16.1.3.5).
fn sat32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// Encodes attribute `attr` of the PerfMgt class into `data` (the MAD's data, zeroed), for
/// port 1. `false` for an attribute the agent does not have.
pub(super) fn encode(attr: u16, c: &PmaCounters, data: &mut [u8]) -> bool {
    let a = ATTR_OFFSET;
    match attr {
        ATTR_CLASS_PORT_INFO => {
            // BaseVersion, ClassVersion, CapabilityMask.
            put(data, a, &[1, 1]);
            put(data, a + 2, &CAP_EXT_WIDTH.to_be_bytes());
        }
        ATTR_PORT_COUNTERS => {
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
        ATTR_PORT_COUNTERS_EXT => {
            put(data, a + 1, &[1]); // PortSelect
            put(data, a + 8, &(c.xmit_bytes >> 2).to_be_bytes());
            put(data, a + 16, &(c.rcv_bytes >> 2).to_be_bytes());
            put(data, a + 24, &c.xmit_packets.to_be_bytes());
            put(data, a + 32, &c.rcv_packets.to_be_bytes());
        }
        _ => return false,
    }
    true
}

impl<T: DeviceOps> Adapter<T> {
    /// # Safety
    ///
    /// Called by ib_core with valid arguments, for a device created by
    /// [`super::Device::register`]: `in_mad` and `out_mad` are whole IB MADs (the caller sizes
    /// the response by the port's `max_mad_size`, which is `IB_MGMT_MAD_SIZE`).
    pub(super) unsafe extern "C" fn process_mad(
        ib: *mut bindings::ib_device,
        _flags: c_int,
        port: u32,
        _in_wc: *const bindings::ib_wc,
        _in_grh: *const bindings::ib_grh,
        in_mad: *const bindings::ib_mad,
        out_mad: *mut bindings::ib_mad,
        out_mad_size: *mut usize,
        _out_mad_pkey_index: *mut u16,
    ) -> c_int {
        // MADs arrive from the wire: only fixed header fields are read, copied first.
        // SAFETY: `in_mad` is a valid MAD for this call.
        let hdr = unsafe { (*in_mad).mad_hdr };
        if port != 1 {
            return 0;
        }
        if hdr.mgmt_class != CLASS_PERF_MGMT {
            // Not ours: the core hands it to its agents.
            return RESULT_SUCCESS;
        }
        // SAFETY: `out_mad_size` is valid or NULL.
        if let Some(&size) = unsafe { out_mad_size.as_ref() } {
            if size < core::mem::size_of::<bindings::ib_mad>() {
                return 0;
            }
        }
        // SAFETY: ib_core passes one of our devices.
        let dev = unsafe { Self::dev(ib) };
        let mut out = bindings::ib_mad {
            mad_hdr: hdr,
            ..pin_init::zeroed()
        };
        out.mad_hdr.method = METHOD_GET_RESP;
        let status = if hdr.method != METHOD_GET {
            STATUS_UNSUPPORTED_METHOD
        } else if !encode(
            u16::from_be(hdr.attr_id),
            &T::pma_counters(dev),
            &mut out.data,
        ) {
            STATUS_UNSUPPORTED_ATTRIB
        } else {
            0
        };
        out.mad_hdr.status = status.to_be();
        // SAFETY: `out_mad` is a whole, exclusive IB MAD for this call.
        unsafe { out_mad.write(out) };
        RESULT_SUCCESS | RESULT_REPLY
    }
}

#[kernel::prelude::kunit_tests(rrxe_ib_mad)]
mod tests {
    use super::*;

    fn be64(d: &[u8], at: usize) -> u64 {
        u64::from_be_bytes(d[at..at + 8].try_into().unwrap())
    }

    fn be32(d: &[u8], at: usize) -> u32 {
        u32::from_be_bytes(d[at..at + 4].try_into().unwrap())
    }

    const C: PmaCounters = PmaCounters {
        xmit_bytes: 4000,
        rcv_bytes: 8000,
        xmit_packets: 7,
        rcv_packets: 9,
        link_downed: 300,
    };

    #[test]
    fn class_port_info_announces_the_extended_counters() {
        let mut d = [0u8; 232];
        assert!(encode(ATTR_CLASS_PORT_INFO, &C, &mut d));
        assert_eq!(&d[40..44], &[1, 1, 0x02, 0x00]);
    }

    #[test]
    fn port_counters_saturate_and_count_data_in_four_octets() {
        let mut d = [0u8; 232];
        assert!(encode(ATTR_PORT_COUNTERS, &C, &mut d));
        assert_eq!(d[40 + 7], 255);
        assert_eq!(be32(&d, 40 + 24), 1000);
        assert_eq!(be32(&d, 40 + 28), 2000);
        assert_eq!(be32(&d, 40 + 32), 7);
        assert_eq!(be32(&d, 40 + 36), 9);
        let big = PmaCounters {
            xmit_packets: 1 << 40,
            ..C
        };
        assert!(encode(ATTR_PORT_COUNTERS, &big, &mut d));
        assert_eq!(be32(&d, 40 + 32), u32::MAX);
    }

    #[test]
    fn port_counters_ext_are_64_bit() {
        let mut d = [0u8; 232];
        let c = PmaCounters {
            xmit_packets: 1 << 40,
            ..C
        };
        assert!(encode(ATTR_PORT_COUNTERS_EXT, &c, &mut d));
        assert_eq!(be64(&d, 40 + 8), 1000);
        assert_eq!(be64(&d, 40 + 16), 2000);
        assert_eq!(be64(&d, 40 + 24), 1 << 40);
        assert_eq!(be64(&d, 40 + 32), 9);
    }

    #[test]
    fn other_attributes_are_refused() {
        let mut d = [0u8; 232];
        assert!(!encode(0x0016, &C, &mut d));
        assert!(d.iter().all(|&b| b == 0));
    }
}
