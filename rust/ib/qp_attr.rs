// SPDX-License-Identifier: GPL-2.0

//! The attributes of `modify_qp` and `query_qp` (`struct ib_qp_attr`, `enum ib_qp_attr_mask`,
//! `enum ib_qp_state`) as plain Rust values.
//!
//! The state machine and attribute rules are the driver's (`proto::qp_state`); this module only
//! converts between the C structures and Rust values, reading only the fields the attribute mask
//! names.

use super::{
    ah::AddressVector,
    mr::AccessFlags,
    qp::QpCap, //
};
use crate::{
    bindings,
    proto::attr_mask::AttrMask, //
};
use kernel::prelude::*;

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

// The driver checks a mask with proto's [`AttrMask`], whose bits are the kernel's
// `enum ib_qp_attr_mask`, bit by bit.
macro_rules! same_bits {
    ($($name:ident),* $(,)?) => {
        $(kernel::macros::paste! {
            const _: () =
                assert!(AttrMask::$name.bits() == bindings::[<ib_qp_attr_mask_IB_QP_ $name>]);
        })*
    };
}
same_bits!(
    STATE,
    CUR_STATE,
    EN_SQD_ASYNC_NOTIFY,
    ACCESS_FLAGS,
    PKEY_INDEX,
    PORT,
    QKEY,
    AV,
    PATH_MTU,
    TIMEOUT,
    RETRY_CNT,
    RNR_RETRY,
    RQ_PSN,
    MAX_QP_RD_ATOMIC,
    ALT_PATH,
    MIN_RNR_TIMER,
    SQ_PSN,
    MAX_DEST_RD_ATOMIC,
    PATH_MIG_STATE,
    CAP,
    DEST_QPN,
    RATE_LIMIT,
);
const _: () =
    assert!(AttrMask::STANDARD_BITS.bits() == bindings::ib_qp_attr_mask_IB_QP_ATTR_STANDARD_BITS);

impl QpAttrMask {
    /// The mask ib_core passed.
    fn from_raw(raw: u32) -> Self {
        Self(raw)
    }
}

// The state of a QP (`enum ib_qp_state`): proto's, whose numbering is the kernel's.
use crate::proto::qp_state::QpState;

// proto numbers the states as the kernel's `enum ib_qp_state`, value by value.
const _: () = {
    let kernel = [
        bindings::ib_qp_state_IB_QPS_RESET,
        bindings::ib_qp_state_IB_QPS_INIT,
        bindings::ib_qp_state_IB_QPS_RTR,
        bindings::ib_qp_state_IB_QPS_RTS,
        bindings::ib_qp_state_IB_QPS_SQD,
        bindings::ib_qp_state_IB_QPS_SQE,
        bindings::ib_qp_state_IB_QPS_ERR,
    ];
    assert!(kernel.len() == QpState::ALL.len());
    let mut i = 0;
    while i < kernel.len() {
        assert!(QpState::ALL[i].to_raw() == kernel[i]);
        i += 1;
    }
};

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
    /// The send rate limit in kbit/s (`IB_QP_RATE_LIMIT`), 0 for none.
    pub(crate) rate_limit: u32,
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
        if has(QpAttrFlag::RateLimit) {
            a.rate_limit = c.rate_limit;
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
        if has(QpAttrFlag::RateLimit) {
            self.rate_limit = a.rate_limit;
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
        c.rate_limit = self.rate_limit;
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
