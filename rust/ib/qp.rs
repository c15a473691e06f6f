// SPDX-License-Identifier: GPL-2.0

//! Queue pairs (`struct ib_qp`) with the driver's data as a Rust tail, and the attributes of
//! create, modify and query as plain Rust values.
//!
//! The state machine and attribute rules are the driver's (`proto::qp_state`); this module only
//! converts between the C structures and Rust values, reading only the fields the attribute mask
//! names.

use super::{
    ah::AddressVector,
    cq::CqRef,
    mr::AccessFlags,
    object::{
        Obj,
        QpKind, //
    },
    DeviceOps, //
};
use crate::bindings;
use kernel::prelude::*;

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

    fn write_to(&self, c: &mut bindings::ib_qp_cap) {
        c.max_send_wr = self.max_send_wr;
        c.max_recv_wr = self.max_recv_wr;
        c.max_send_sge = self.max_send_sge;
        c.max_recv_sge = self.max_recv_sge;
        c.max_inline_data = self.max_inline_data;
    }
}

kernel::impl_flags!(
    /// The attributes a `modify_qp` names (`enum ib_qp_attr_mask`). Bits without a
    /// [`QpAttrFlag`] are kept, so the driver can refuse what it does not know.
    #[derive(Debug, Clone, Default, Copy, PartialEq, Eq)]
    pub(crate) struct QpAttrMask(u32);

    /// One attribute of a [`QpAttrMask`].
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) enum QpAttrFlag {
        /// `IB_QP_STATE`.
        State = bindings::ib_qp_attr_mask_IB_QP_STATE,
        /// `IB_QP_CUR_STATE`.
        CurState = bindings::ib_qp_attr_mask_IB_QP_CUR_STATE,
        /// `IB_QP_EN_SQD_ASYNC_NOTIFY`.
        EnSqdAsyncNotify = bindings::ib_qp_attr_mask_IB_QP_EN_SQD_ASYNC_NOTIFY,
        /// `IB_QP_ACCESS_FLAGS`.
        AccessFlags = bindings::ib_qp_attr_mask_IB_QP_ACCESS_FLAGS,
        /// `IB_QP_PKEY_INDEX`.
        PkeyIndex = bindings::ib_qp_attr_mask_IB_QP_PKEY_INDEX,
        /// `IB_QP_PORT`.
        Port = bindings::ib_qp_attr_mask_IB_QP_PORT,
        /// `IB_QP_QKEY`.
        Qkey = bindings::ib_qp_attr_mask_IB_QP_QKEY,
        /// `IB_QP_AV`.
        Av = bindings::ib_qp_attr_mask_IB_QP_AV,
        /// `IB_QP_PATH_MTU`.
        PathMtu = bindings::ib_qp_attr_mask_IB_QP_PATH_MTU,
        /// `IB_QP_TIMEOUT`.
        Timeout = bindings::ib_qp_attr_mask_IB_QP_TIMEOUT,
        /// `IB_QP_RETRY_CNT`.
        RetryCnt = bindings::ib_qp_attr_mask_IB_QP_RETRY_CNT,
        /// `IB_QP_RNR_RETRY`.
        RnrRetry = bindings::ib_qp_attr_mask_IB_QP_RNR_RETRY,
        /// `IB_QP_RQ_PSN`.
        RqPsn = bindings::ib_qp_attr_mask_IB_QP_RQ_PSN,
        /// `IB_QP_MAX_QP_RD_ATOMIC`.
        MaxQpRdAtomic = bindings::ib_qp_attr_mask_IB_QP_MAX_QP_RD_ATOMIC,
        /// `IB_QP_ALT_PATH`.
        AltPath = bindings::ib_qp_attr_mask_IB_QP_ALT_PATH,
        /// `IB_QP_MIN_RNR_TIMER`.
        MinRnrTimer = bindings::ib_qp_attr_mask_IB_QP_MIN_RNR_TIMER,
        /// `IB_QP_SQ_PSN`.
        SqPsn = bindings::ib_qp_attr_mask_IB_QP_SQ_PSN,
        /// `IB_QP_MAX_DEST_RD_ATOMIC`.
        MaxDestRdAtomic = bindings::ib_qp_attr_mask_IB_QP_MAX_DEST_RD_ATOMIC,
        /// `IB_QP_PATH_MIG_STATE`.
        PathMigState = bindings::ib_qp_attr_mask_IB_QP_PATH_MIG_STATE,
        /// `IB_QP_CAP`.
        Cap = bindings::ib_qp_attr_mask_IB_QP_CAP,
        /// `IB_QP_DEST_QPN`.
        DestQpn = bindings::ib_qp_attr_mask_IB_QP_DEST_QPN,
        /// `IB_QP_RATE_LIMIT`.
        RateLimit = bindings::ib_qp_attr_mask_IB_QP_RATE_LIMIT,
    }
);

impl QpAttrMask {
    /// The mask ib_core passed.
    fn from_raw(raw: u32) -> Self {
        Self(raw)
    }
}

/// The transport service of a QP (`enum ib_qp_type`), for the types a RoCE device can have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QpType {
    /// QP0 (`IB_QPT_SMI`), which RoCE has not.
    Smi,
    /// QP1 (`IB_QPT_GSI`), the UD QP of management datagrams.
    Gsi,
    /// Reliable connected (`IB_QPT_RC`).
    Rc,
    /// Unreliable connected (`IB_QPT_UC`).
    Uc,
    /// Unreliable datagram (`IB_QPT_UD`).
    Ud,
}

impl QpType {
    /// The type of `enum ib_qp_type` value `raw`; `None` for raw packet, XRC and driver types.
    fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            bindings::ib_qp_type_IB_QPT_SMI => Some(Self::Smi),
            bindings::ib_qp_type_IB_QPT_GSI => Some(Self::Gsi),
            bindings::ib_qp_type_IB_QPT_RC => Some(Self::Rc),
            bindings::ib_qp_type_IB_QPT_UC => Some(Self::Uc),
            bindings::ib_qp_type_IB_QPT_UD => Some(Self::Ud),
            _ => None,
        }
    }
}

/// The state of a QP (`enum ib_qp_state`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum QpState {
    /// `IB_QPS_RESET`: the state of a new QP.
    #[default]
    Reset,
    /// `IB_QPS_INIT`.
    Init,
    /// `IB_QPS_RTR`: ready to receive.
    Rtr,
    /// `IB_QPS_RTS`: ready to send.
    Rts,
    /// `IB_QPS_SQD`: send queue drained (or draining).
    Sqd,
    /// `IB_QPS_SQE`: send queue error (unreliable QPs).
    Sqe,
    /// `IB_QPS_ERR`.
    Err,
}

impl QpState {
    /// The state of `enum ib_qp_state` value `raw`, if it is one.
    fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            bindings::ib_qp_state_IB_QPS_RESET => Some(Self::Reset),
            bindings::ib_qp_state_IB_QPS_INIT => Some(Self::Init),
            bindings::ib_qp_state_IB_QPS_RTR => Some(Self::Rtr),
            bindings::ib_qp_state_IB_QPS_RTS => Some(Self::Rts),
            bindings::ib_qp_state_IB_QPS_SQD => Some(Self::Sqd),
            bindings::ib_qp_state_IB_QPS_SQE => Some(Self::Sqe),
            bindings::ib_qp_state_IB_QPS_ERR => Some(Self::Err),
            _ => None,
        }
    }

    /// The `enum ib_qp_state` value.
    fn to_raw(self) -> u32 {
        match self {
            Self::Reset => bindings::ib_qp_state_IB_QPS_RESET,
            Self::Init => bindings::ib_qp_state_IB_QPS_INIT,
            Self::Rtr => bindings::ib_qp_state_IB_QPS_RTR,
            Self::Rts => bindings::ib_qp_state_IB_QPS_RTS,
            Self::Sqd => bindings::ib_qp_state_IB_QPS_SQD,
            Self::Sqe => bindings::ib_qp_state_IB_QPS_SQE,
            Self::Err => bindings::ib_qp_state_IB_QPS_ERR,
        }
    }
}

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

/// QP attributes (`struct ib_qp_attr`): the ones a modify sets (named by its mask) or a query
/// reports.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct QpAttr {
    /// Next state (modify) or current state (query).
    pub(crate) qp_state: QpState,
    /// The state the caller believes the QP is in.
    pub(crate) cur_qp_state: QpState,
    /// Path MTU, raw `enum ib_mtu`.
    pub(crate) path_mtu: u32,
    /// UD Q_Key.
    pub(crate) qkey: u32,
    /// Expected PSN of the next request received.
    pub(crate) rq_psn: u32,
    /// PSN of the next request sent.
    pub(crate) sq_psn: u32,
    /// Remote QP number (RC/UC).
    pub(crate) dest_qp_num: u32,
    /// `IB_ACCESS_REMOTE_*` bits.
    pub(crate) qp_access_flags: AccessFlags,
    /// Capacities (query only).
    pub(crate) cap: QpCap,
    /// Primary address vector.
    pub(crate) av: AddressVector,
    /// P_Key table index.
    pub(crate) pkey_index: u16,
    /// Raise `IB_EVENT_SQ_DRAINED` when entering SQD.
    pub(crate) en_sqd_async_notify: bool,
    /// Outstanding RDMA READ/atomic requests as initiator.
    pub(crate) max_rd_atomic: u8,
    /// Outstanding RDMA READ/atomic requests as responder.
    pub(crate) max_dest_rd_atomic: u8,
    /// RNR NAK timer code sent to requesters.
    pub(crate) min_rnr_timer: u8,
    /// Port number.
    pub(crate) port_num: u32,
    /// Local ACK timeout code.
    pub(crate) timeout: u8,
    /// Retries on timeout.
    pub(crate) retry_cnt: u8,
    /// Retries on RNR NAK (7: infinite).
    pub(crate) rnr_retry: u8,
    /// SQ drain in progress (query only).
    pub(crate) sq_draining: bool,
}

impl QpAttr {
    /// Reads the fields of `c` that `mask` names.
    fn from_c(c: &bindings::ib_qp_attr, mask: QpAttrMask) -> Result<Self> {
        let mut a = Self::default();
        let has = |m| mask.contains(m);
        if has(QpAttrFlag::State) {
            a.qp_state = QpState::from_raw(c.qp_state).ok_or(EINVAL)?;
        }
        if has(QpAttrFlag::CurState) {
            a.cur_qp_state = QpState::from_raw(c.cur_qp_state).ok_or(EINVAL)?;
        }
        if has(QpAttrFlag::PathMtu) {
            a.path_mtu = c.path_mtu;
        }
        if has(QpAttrFlag::Qkey) {
            a.qkey = c.qkey;
        }
        if has(QpAttrFlag::RqPsn) {
            a.rq_psn = c.rq_psn;
        }
        if has(QpAttrFlag::SqPsn) {
            a.sq_psn = c.sq_psn;
        }
        if has(QpAttrFlag::DestQpn) {
            a.dest_qp_num = c.dest_qp_num;
        }
        if has(QpAttrFlag::AccessFlags) {
            a.qp_access_flags =
                AccessFlags::from_raw(u32::try_from(c.qp_access_flags).map_err(|_| EINVAL)?);
        }
        if has(QpAttrFlag::Av) {
            a.av = AddressVector::from_c(&c.ah_attr)?;
        }
        if has(QpAttrFlag::PkeyIndex) {
            a.pkey_index = c.pkey_index;
        }
        if has(QpAttrFlag::EnSqdAsyncNotify) {
            a.en_sqd_async_notify = c.en_sqd_async_notify != 0;
        }
        if has(QpAttrFlag::MaxQpRdAtomic) {
            a.max_rd_atomic = c.max_rd_atomic;
        }
        if has(QpAttrFlag::MaxDestRdAtomic) {
            a.max_dest_rd_atomic = c.max_dest_rd_atomic;
        }
        if has(QpAttrFlag::MinRnrTimer) {
            a.min_rnr_timer = c.min_rnr_timer;
        }
        if has(QpAttrFlag::Port) {
            a.port_num = c.port_num;
        }
        if has(QpAttrFlag::Timeout) {
            a.timeout = c.timeout;
        }
        if has(QpAttrFlag::RetryCnt) {
            a.retry_cnt = c.retry_cnt;
        }
        if has(QpAttrFlag::RnrRetry) {
            a.rnr_retry = c.rnr_retry;
        }
        Ok(a)
    }

    /// Copies the fields `mask` names from `a` (a modify that passed its checks).
    pub(crate) fn apply(&mut self, a: &QpAttr, mask: QpAttrMask) {
        let has = |m| mask.contains(m);
        if has(QpAttrFlag::PathMtu) {
            self.path_mtu = a.path_mtu;
        }
        if has(QpAttrFlag::Qkey) {
            self.qkey = a.qkey;
        }
        if has(QpAttrFlag::RqPsn) {
            self.rq_psn = a.rq_psn;
        }
        if has(QpAttrFlag::SqPsn) {
            self.sq_psn = a.sq_psn;
        }
        if has(QpAttrFlag::DestQpn) {
            self.dest_qp_num = a.dest_qp_num;
        }
        if has(QpAttrFlag::AccessFlags) {
            self.qp_access_flags = a.qp_access_flags;
        }
        if has(QpAttrFlag::Av) {
            self.av = a.av;
        }
        if has(QpAttrFlag::PkeyIndex) {
            self.pkey_index = a.pkey_index;
        }
        if has(QpAttrFlag::EnSqdAsyncNotify) {
            self.en_sqd_async_notify = a.en_sqd_async_notify;
        }
        if has(QpAttrFlag::MaxQpRdAtomic) {
            self.max_rd_atomic = a.max_rd_atomic;
        }
        if has(QpAttrFlag::MaxDestRdAtomic) {
            self.max_dest_rd_atomic = a.max_dest_rd_atomic;
        }
        if has(QpAttrFlag::MinRnrTimer) {
            self.min_rnr_timer = a.min_rnr_timer;
        }
        if has(QpAttrFlag::Port) {
            self.port_num = a.port_num;
        }
        if has(QpAttrFlag::Timeout) {
            self.timeout = a.timeout;
        }
        if has(QpAttrFlag::RetryCnt) {
            self.retry_cnt = a.retry_cnt;
        }
        if has(QpAttrFlag::RnrRetry) {
            self.rnr_retry = a.rnr_retry;
        }
    }

    /// Writes a full query result.
    fn write_to(&self, c: &mut bindings::ib_qp_attr) {
        c.qp_state = self.qp_state.to_raw();
        c.cur_qp_state = self.qp_state.to_raw();
        c.path_mtu = self.path_mtu;
        c.path_mig_state = bindings::ib_mig_state_IB_MIG_MIGRATED;
        c.qkey = self.qkey;
        c.rq_psn = self.rq_psn;
        c.sq_psn = self.sq_psn;
        c.dest_qp_num = self.dest_qp_num;
        c.qp_access_flags = i32::try_from(self.qp_access_flags.raw()).unwrap_or(0);
        self.cap.write_to(&mut c.cap);
        self.av.write_to(&mut c.ah_attr, self.port_num);
        c.pkey_index = self.pkey_index;
        c.en_sqd_async_notify = u8::from(self.en_sqd_async_notify);
        c.sq_draining = u8::from(self.sq_draining);
        c.max_rd_atomic = self.max_rd_atomic;
        c.max_dest_rd_atomic = self.max_dest_rd_atomic;
        c.min_rnr_timer = self.min_rnr_timer;
        c.port_num = self.port_num;
        c.timeout = self.timeout;
        c.retry_cnt = self.retry_cnt;
        c.rnr_retry = self.rnr_retry;
    }
}

/// What `query_qp` reports.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QpQuery {
    /// Current attributes.
    pub(crate) attr: QpAttr,
    /// The creation attributes reported back (capacities and signalling).
    pub(crate) init_cap: QpCap,
    /// Every send WR generates a completion.
    pub(crate) sq_sig_all: bool,
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

/// The mask of a `modify_qp`, for the trampolines in `ops.rs`.
pub(super) fn attr_mask_from_c(raw: u32) -> QpAttrMask {
    QpAttrMask::from_raw(raw)
}

/// Converts the C view for the trampolines in `ops.rs`.
pub(super) fn attr_from_c(c: &bindings::ib_qp_attr, mask: QpAttrMask) -> Result<QpAttr> {
    QpAttr::from_c(c, mask)
}

/// Writes a query result for the trampolines in `ops.rs`.
pub(super) fn write_query(
    q: &QpQuery,
    attr: &mut bindings::ib_qp_attr,
    init: &mut bindings::ib_qp_init_attr,
) {
    q.attr.write_to(attr);
    q.init_cap.write_to(&mut init.cap);
    q.init_cap.write_to(&mut attr.cap);
    init.sq_sig_type = if q.sq_sig_all {
        bindings::ib_sig_type_IB_SIGNAL_ALL_WR
    } else {
        bindings::ib_sig_type_IB_SIGNAL_REQ_WR
    };
}

/// Writes the rounded capacities back to the creation attributes (copied to user space by the
/// core).
pub(super) fn write_caps(cap: &QpCap, init: &mut bindings::ib_qp_init_attr) {
    cap.write_to(&mut init.cap);
}
