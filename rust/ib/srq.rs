// SPDX-License-Identifier: GPL-2.0

//! Shared receive queues (`struct ib_srq`): the C views of their attributes, and the limit
//! event.

use super::object::{
    Obj,
    SrqKind, //
};
use crate::bindings;

/// A shared receive queue: the C `struct ib_srq` at offset 0, then the driver data.
pub(crate) type Srq<T> = Obj<T, SrqKind>;

impl<T: super::DeviceOps> Obj<T, SrqKind> {
    /// Reports `IB_EVENT_SRQ_LIMIT_REACHED` to the SRQ's consumer: calls its event handler.
    /// Not with a lock held the handler may need, nor from inside one of the consumer's verb
    /// calls: the driver raises it from a work item.
    pub(crate) fn limit_event(&self) {
        let srq = self.as_raw();
        let mut ev = bindings::ib_event {
            event: bindings::ib_event_type_IB_EVENT_SRQ_LIMIT_REACHED,
            ..Default::default()
        };
        // SAFETY: The SRQ is created: `device`, `event_handler` and `srq_context` are set by
        // the core and stay valid until it is destroyed.
        unsafe {
            ev.device = (*srq).device;
            ev.element.srq = srq;
            if let Some(handler) = (*srq).event_handler {
                handler(&mut ev, (*srq).srq_context);
            }
        }
    }
}

/// SRQ attributes (`struct ib_srq_attr`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SrqAttr {
    /// Receive work requests.
    pub(crate) max_wr: u32,
    /// Scatter/gather entries per WR.
    pub(crate) max_sge: u32,
    /// Raise the limit event when fewer WRs than this remain (0: disarmed).
    pub(crate) srq_limit: u32,
}

impl SrqAttr {
    pub(super) fn from_c(c: &bindings::ib_srq_attr) -> Self {
        Self {
            max_wr: c.max_wr,
            max_sge: c.max_sge,
            srq_limit: c.srq_limit,
        }
    }

    pub(super) fn write_to(&self, c: &mut bindings::ib_srq_attr) {
        c.max_wr = self.max_wr;
        c.max_sge = self.max_sge;
        c.srq_limit = self.srq_limit;
    }
}

/// Which attributes a modify SRQ sets (`enum ib_srq_attr_mask`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SrqMask {
    /// `IB_SRQ_MAX_WR`: resize.
    pub(crate) max_wr: bool,
    /// `IB_SRQ_LIMIT`: arm the limit event.
    pub(crate) limit: bool,
}

impl SrqMask {
    /// From the raw mask; `None` if it has unknown bits.
    pub(super) fn from_raw(raw: u32) -> Option<Self> {
        let max_wr = bindings::ib_srq_attr_mask_IB_SRQ_MAX_WR;
        let limit = bindings::ib_srq_attr_mask_IB_SRQ_LIMIT;
        if raw & !(max_wr | limit) != 0 {
            return None;
        }
        Some(Self {
            max_wr: raw & max_wr != 0,
            limit: raw & limit != 0,
        })
    }
}
