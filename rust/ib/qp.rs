// SPDX-License-Identifier: GPL-2.0

//! Queue pairs (`struct ib_qp`) with the driver's data as a Rust tail, and the attributes of
//! create as plain Rust values (those of modify and query are in [`super::qp_attr`]).

use super::{
    cq::CqRef,
    object::{
        Obj,
        QpKind, //
    },
    DeviceOps, //
};
use crate::bindings;

/// A queue pair: the C `struct ib_qp` at offset 0, then the driver data.
pub(crate) type Qp<T> = Obj<T, QpKind>;

impl<T: DeviceOps> Obj<T, QpKind> {
    /// The handle kernel completions of this QP carry.
    pub(crate) fn handle(&self) -> super::QpHandle {
        super::QpHandle::new(self.as_raw())
    }

    /// The identity of the QP's protection domain (compared with an MR's).
    pub(crate) fn pd_id(&self) -> usize {
        // SAFETY: `pd` is set by the core before `create_qp` and never changes.
        unsafe { (*self.as_raw()).pd as usize }
    }

    /// The device of this QP.
    pub(crate) fn device(&self) -> &super::Device<T> {
        // SAFETY: `device` is set by the core before `create_qp` and the device outlives its
        // QPs.
        unsafe { super::Device::from_raw((*self.as_raw()).device) }
    }

    /// Reports an asynchronous event on this QP to its consumer (the async event file for user
    /// QPs). Process or softirq context.
    pub(crate) fn async_event(&self, event: QpEvent) {
        let qp = self.as_raw();
        let mut ev = bindings::ib_event {
            device: core::ptr::null_mut(),
            event: match event {
                QpEvent::Fatal => bindings::ib_event_type_IB_EVENT_QP_FATAL,
                QpEvent::LastWqeReached => bindings::ib_event_type_IB_EVENT_QP_LAST_WQE_REACHED,
            },
            ..Default::default()
        };
        // SAFETY: The QP is created: `device`, `event_handler` and `qp_context` are set by the
        // core and stay valid until it is destroyed.
        unsafe {
            ev.device = (*qp).device;
            ev.element.qp = qp;
            if let Some(handler) = (*qp).event_handler {
                handler(&mut ev, (*qp).qp_context);
            }
        }
    }
}

/// Asynchronous QP events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QpEvent {
    /// The QP went to the error state on its own (a bad work request, a transport error).
    Fatal,
    /// An SRQ-attached QP in error will consume no more receive WQEs (IBA 10.3.1).
    LastWqeReached,
}

/// Work request and scatter/gather capacities (`struct ib_qp_cap`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct QpCap {
    /// Send work requests.
    pub(crate) max_send_wr: u32,
    /// Receive work requests.
    pub(crate) max_recv_wr: u32,
    /// Scatter/gather entries per send WR.
    pub(crate) max_send_sge: u32,
    /// Scatter/gather entries per receive WR.
    pub(crate) max_recv_sge: u32,
    /// Inline data bytes per send WR.
    pub(crate) max_inline_data: u32,
}

impl QpCap {
    fn from_c(c: &bindings::ib_qp_cap) -> Self {
        Self {
            max_send_wr: c.max_send_wr,
            max_recv_wr: c.max_recv_wr,
            max_send_sge: c.max_send_sge,
            max_recv_sge: c.max_recv_sge,
            max_inline_data: c.max_inline_data,
        }
    }

    pub(super) fn write_to(&self, c: &mut bindings::ib_qp_cap) {
        c.max_send_wr = self.max_send_wr;
        c.max_recv_wr = self.max_recv_wr;
        c.max_send_sge = self.max_send_sge;
        c.max_recv_sge = self.max_recv_sge;
        c.max_inline_data = self.max_inline_data;
    }
}

// The transport service of a QP (`enum ib_qp_type`), for the types a RoCE device can have:
// proto's, whose numbering is the kernel's.
use crate::proto::qp_state::QpType;

// proto numbers the types it knows as the kernel's `enum ib_qp_type`, value by value.
const _: () = {
    let kernel = [
        bindings::ib_qp_type_IB_QPT_SMI,
        bindings::ib_qp_type_IB_QPT_GSI,
        bindings::ib_qp_type_IB_QPT_RC,
        bindings::ib_qp_type_IB_QPT_UC,
        bindings::ib_qp_type_IB_QPT_UD,
    ];
    assert!(kernel.len() == QpType::ALL.len());
    let mut i = 0;
    while i < kernel.len() {
        assert!(QpType::ALL[i].to_raw() == kernel[i]);
        i += 1;
    }
};

/// The attributes of `ibv_create_qp`/`ib_create_qp`.
pub(crate) struct QpInit<T: DeviceOps> {
    /// Transport service; `None` for types rrxe does not know.
    pub(crate) qp_type: Option<QpType>,
    /// Requested capacities; the driver rounds them up and they are reported back.
    pub(crate) cap: QpCap,
    /// Every send WR generates a completion (`IB_SIGNAL_ALL_WR`).
    pub(crate) sq_sig_all: bool,
    /// Receives come from a shared receive queue.
    pub(crate) has_srq: bool,
    /// The shared receive queue (ib_core keeps it until the QP is destroyed).
    pub(crate) srq: Option<crate::sync::ObjRef<super::Srq<T>>>,
    /// `IB_QP_CREATE_*` flags; rrxe supports none.
    pub(crate) create_flags: u32,
    /// Completion queue of the send queue.
    pub(crate) send_cq: Option<CqRef<T>>,
    /// Completion queue of the receive queue.
    pub(crate) recv_cq: Option<CqRef<T>>,
}

impl<T: DeviceOps> QpInit<T> {
    /// # Safety
    ///
    /// `c` are the creation attributes ib_core passes to `create_qp` of a `Device<T>`.
    unsafe fn from_c(c: &bindings::ib_qp_init_attr) -> Self {
        Self {
            // SAFETY: The core validated the CQs (same device) and counts the QP as their user.
            send_cq: unsafe { CqRef::new(c.send_cq) },
            // SAFETY: As above.
            recv_cq: unsafe { CqRef::new(c.recv_cq) },
            qp_type: QpType::from_raw(c.qp_type),
            cap: QpCap::from_c(&c.cap),
            sq_sig_all: c.sq_sig_type == bindings::ib_sig_type_IB_SIGNAL_ALL_WR,
            has_srq: !c.srq.is_null(),
            // SAFETY: A non-NULL SRQ is a created SRQ of this device that the core keeps (it
            // counts the QP as a user) at least until the QP is destroyed.
            srq: (!c.srq.is_null())
                .then(|| crate::sync::ObjRef::new(unsafe { super::Srq::<T>::from_raw(c.srq) })),
            create_flags: c.create_flags,
        }
    }
}

/// Converts the C view for the trampolines in `ops.rs`.
///
/// # Safety
///
/// `c` are the creation attributes ib_core passes to `create_qp` of a `Device<T>`.
pub(super) unsafe fn init_from_c<T: DeviceOps>(c: &bindings::ib_qp_init_attr) -> QpInit<T> {
    // SAFETY: Guaranteed by the caller.
    unsafe { QpInit::from_c(c) }
}

/// Writes the rounded capacities back to the creation attributes (copied to user space by the
/// core).
pub(super) fn write_caps(cap: &QpCap, init: &mut bindings::ib_qp_init_attr) {
    cap.write_to(&mut init.cap);
}
