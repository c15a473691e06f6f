// SPDX-License-Identifier: GPL-2.0

//! The performance management agent (`process_mad`): ClassPortInfo, PortCounters and
//! PortCountersExt of the PerfMgt class (IBA 16.1.3), answered from the driver's counters, as
//! rxe does. ib_core reads them for `/sys/class/infiniband/*/ports/1/counters/` (the class
//! port info says the extended counters exist, so it shows the 64-bit ones); a PerfMgt request
//! arriving on QP1 is answered the same way. Which MADs are answered, and how, is
//! `proto::mad::reply_for`: never a response, a trap or a report, so two agents cannot answer
//! each other forever. Every MAD not answered (every other class, the CM's MADs among them, and
//! the responses to a user's umad request) is left to ib_core's agents.
//!
//! C headers: [`include/rdma/ib_mad.h`](srctree/include/rdma/ib_mad.h),
//! [`include/rdma/ib_pma.h`](srctree/include/rdma/ib_pma.h).

use super::{
    ops::Adapter,
    DeviceOps, //
};
use crate::bindings;
pub(crate) use crate::proto::mad::PmaCounters;
use crate::proto::mad::{
    encode,
    method,
    reply_for,
    MadReply, //
};
use kernel::prelude::*;

/// `IB_MAD_RESULT_*`.
const RESULT_FAILURE: c_int = bindings::ib_mad_result_IB_MAD_RESULT_FAILURE as c_int;
const RESULT_SUCCESS: c_int = bindings::ib_mad_result_IB_MAD_RESULT_SUCCESS as c_int;
const RESULT_REPLY: c_int = bindings::ib_mad_result_IB_MAD_RESULT_REPLY as c_int;

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
            return RESULT_FAILURE;
        }
        let reply = reply_for(
            hdr.mgmt_class,
            hdr.class_version,
            hdr.method,
            u16::from_be(hdr.attr_id),
        );
        if reply == MadReply::Pass {
            // Success without a reply: ib_core hands the MAD to its agents (a response to the
            // agent whose request it answers), or drops it.
            return RESULT_SUCCESS;
        }
        // SAFETY: `out_mad_size` is valid or NULL.
        if let Some(&size) = unsafe { out_mad_size.as_ref() } {
            if size < core::mem::size_of::<bindings::ib_mad>() {
                return RESULT_FAILURE;
            }
        }
        let mut out = bindings::ib_mad {
            mad_hdr: hdr,
            ..pin_init::zeroed()
        };
        out.mad_hdr.method = method::GET_RESP;
        match reply {
            MadReply::Attr(attr) => {
                // SAFETY: ib_core passes one of our devices.
                let dev = unsafe { Self::dev(ib) };
                encode(attr, &T::pma_counters(dev), &mut out.data);
                out.mad_hdr.status = 0;
            }
            MadReply::Status(status) => out.mad_hdr.status = status.raw().to_be(),
            MadReply::Pass => return RESULT_SUCCESS,
        }
        // SAFETY: `out_mad` is a whole, exclusive IB MAD for this call.
        unsafe { out_mad.write(out) };
        RESULT_SUCCESS | RESULT_REPLY
    }
}
