// SPDX-License-Identifier: GPL-2.0

//! Queue pairs: creation with rxe's capability rounding and mmap'ed send/receive rings, and the
//! IBA state machine of `modify_qp` (`proto::qp_state`), enforced for user and kernel callers
//! alike, leaving the QP unchanged on any error.
//!
//! Lock: `inner` (a spinlock) holds the state and attributes; modify, query and, later, the
//! data path take it briefly and never sleep under it.

use crate::{
    cq::RrxeCq,
    ib::QpEvent,
    proto::{
        cqe::{
            self,
            WcOpcode, //
        },
        wqe,
    },
};
use crate::{
    device::RrxeDevice,
    ib::{
        CqRef,
        Device,
        MmapHandle,
        Qp,
        QpAttr,
        QpCap,
        QpInit,
        QpQuery,
        RecvWrChain,
        SendWrChain,
        Udata, //
    },
    index::PoolIndex,
    kernel_ext::eopnotsupp,
    limits,
    proto::{
        qp_state::{
            self,
            AttrMask,
            QpAttrError,
            QpState,
            QpStateError,
            QpType, //
        },
        ring::{
            self,
            RingGeometry, //
        },
    },
    queue::{
        ring_errno,
        KernelConsumedRing, //
    },
};
use crate::{
    new_spinlock_irq,
    sync::SpinLockIrq, //
};
use kernel::{
    prelude::*,
    sync::{
        atomic::{
            Atomic,
            Relaxed, //
        },
        Arc,
    },
};

/// State and attributes, under the QP lock.
struct QpInner {
    state: QpState,
    attr: QpAttr,
}

/// One of the QP's rings and, for user QPs, its published mmap entry.
struct QueueRing {
    ring: KernelConsumedRing,
    _mmap: Option<MmapHandle>,
}

/// The driver data of a queue pair (the `rxe_qp` analogue).
pub(crate) struct RrxeQp {
    /// The QP number, returned to the device's pool when the QP is destroyed.
    qpn: Qpn,
    qp_type: QpType,
    /// Granted capacities.
    cap: QpCap,
    sq_sig_all: bool,
    inner: Pin<KBox<SpinLockIrq<QpInner>>>,
    /// The send ring; its lock serialises doorbells and flushes.
    sq: Pin<KBox<SpinLockIrq<QueueRing>>>,
    /// The receive ring, `None` with an SRQ.
    rq: Option<Pin<KBox<SpinLockIrq<QueueRing>>>>,
    send_cq: Option<CqRef<RrxeDevice>>,
    recv_cq: Option<CqRef<RrxeDevice>>,
}

/// The QP number of the GSI QP (QP1).
const GSI_QPN: u32 = 1;

/// A QP's number: from the device's pool, or the one GSI QP's fixed QP1.
enum Qpn {
    /// Returned to the pool when the QP is destroyed.
    Pooled(PoolIndex),
    /// Released when the GSI QP is destroyed.
    Gsi {
        /// Holds the device's GSI slot.
        _claim: GsiClaim,
    },
}

/// The device's one GSI QP slot, taken while a GSI QP exists.
pub(crate) struct GsiClaim(Arc<Atomic<bool>>);

impl GsiClaim {
    /// Takes the slot; `EBUSY` if the device already has a GSI QP.
    fn take(slot: &Arc<Atomic<bool>>) -> Result<Self> {
        if slot.xchg(true, Relaxed) {
            return Err(EBUSY);
        }
        Ok(Self(slot.clone()))
    }
}

impl Drop for GsiClaim {
    fn drop(&mut self) {
        self.0.store(false, Relaxed);
    }
}

/// The largest receive WQE: 40 bytes and 32 SGEs of 16.
pub(crate) const MAX_RECV_SLOT: usize = 40 + 32 * 16;

/// Why a modify failed, for the kernel log, then `EINVAL`.
fn state_errno(qpn: u32, e: QpStateError) -> Error {
    pr_debug!("qp {}: modify refused: {:?}\n", qpn, e);
    EINVAL
}

fn attr_errno(qpn: u32, e: QpAttrError) -> Error {
    pr_debug!("qp {}: bad attribute: {:?}\n", qpn, e);
    EINVAL
}

/// Allocates a ring and publishes it to user space when there is a user.
fn new_ring(geo: RingGeometry, udata: Option<&mut Udata<'_>>) -> Result<(QueueRing, [u8; 16])> {
    let ring = KernelConsumedRing::new(geo)?;
    let (mmap, info) = match udata {
        Some(u) => {
            let h = u.publish(ring.buf().clone())?;
            let info = h.info().to_bytes();
            (Some(h), info)
        }
        None => (None, [0; 16]),
    };
    Ok((QueueRing { ring, _mmap: mmap }, info))
}

impl RrxeQp {
    /// Creates a QP: checks the type and capabilities, rounds them as rxe does, allocates the
    /// rings and, for user QPs, answers with `struct rxe_create_qp_resp` (RQ then SQ `mminfo`).
    pub(crate) fn create(
        dev: &Device<RrxeDevice>,
        init: &mut QpInit<RrxeDevice>,
        mut udata: Option<&mut Udata<'_>>,
    ) -> Result<Self> {
        let qp_type = match init.qp_type {
            Some(t @ (QpType::Rc | QpType::Uc | QpType::Ud)) => t,
            // QP1, for the MAD layer (ib_mad creates it for each port).
            Some(QpType::Gsi) if udata.is_none() => QpType::Gsi,
            // SMI (QP0) does not exist on RoCE.
            Some(QpType::Gsi) | Some(QpType::Smi) | None => return Err(eopnotsupp()),
        };
        if init.create_flags != 0 {
            return Err(eopnotsupp());
        }
        if let Some(u) = udata.as_deref() {
            // librxe sends no driver data with create_qp.
            if u.inlen() != 0 {
                return Err(EINVAL);
            }
        }
        let cap = init.cap;
        if cap.max_send_wr > limits::MAX_QP_WR
            || (!init.has_srq
                && (cap.max_recv_wr > limits::MAX_QP_WR || cap.max_recv_sge > limits::MAX_SGE))
        {
            return Err(EINVAL);
        }
        let send =
            ring::round_send_caps(cap.max_send_sge, cap.max_inline_data).map_err(ring_errno)?;
        let sq_geo =
            RingGeometry::new_allow_empty(cap.max_send_wr, send.wqe_size, limits::MAX_QP_WR)
                .map_err(ring_errno)?;
        let (sq, sq_info) = new_ring(sq_geo, udata.as_deref_mut())?;
        let mut granted = QpCap {
            max_send_wr: sq_geo.capacity(),
            max_send_sge: send.max_sge,
            max_inline_data: send.max_inline,
            ..QpCap::default()
        };
        let (rq, rq_info) = if init.has_srq {
            (None, [0; 16])
        } else {
            let size = ring::recv_wqe_size(cap.max_recv_sge).ok_or(EINVAL)?;
            let rq_geo = RingGeometry::new_allow_empty(cap.max_recv_wr, size, limits::MAX_QP_WR)
                .map_err(ring_errno)?;
            granted.max_recv_wr = rq_geo.capacity();
            granted.max_recv_sge = cap.max_recv_sge;
            let (rq, info) = new_ring(rq_geo, udata.as_deref_mut())?;
            (Some(rq), info)
        };
        if let Some(u) = udata {
            let mut resp = [0u8; 32];
            resp[..16].copy_from_slice(&rq_info);
            resp[16..].copy_from_slice(&sq_info);
            u.respond(&resp)?;
        }
        let qpn = if qp_type == QpType::Gsi {
            Qpn::Gsi {
                _claim: GsiClaim::take(dev.gsi_claim())?,
            }
        } else {
            Qpn::Pooled(PoolIndex::alloc(dev.qpn_pool())?)
        };
        init.cap = granted;
        let attr = QpAttr {
            port_num: 1,
            cap: granted,
            ..QpAttr::default()
        };
        Ok(Self {
            qpn,
            qp_type,
            cap: granted,
            sq_sig_all: init.sq_sig_all,
            inner: KBox::pin_init(
                new_spinlock_irq!(
                    QpInner {
                        state: QpState::Reset,
                        attr
                    },
                    "rrxe_qp"
                ),
                GFP_KERNEL,
            )?,
            sq: KBox::pin_init(new_spinlock_irq!(sq, "rrxe_sq"), GFP_KERNEL)?,
            rq: match rq {
                Some(rq) => Some(KBox::pin_init(
                    new_spinlock_irq!(rq, "rrxe_rq"),
                    GFP_KERNEL,
                )?),
                None => None,
            },
            send_cq: init.send_cq.take(),
            recv_cq: init.recv_cq.take(),
        })
    }

    /// Whether this is a UD QP.
    pub(crate) fn is_ud(&self) -> bool {
        self.qp_type == QpType::Ud
    }

    /// The QP number.
    pub(crate) fn qpn(&self) -> u32 {
        match &self.qpn {
            Qpn::Pooled(i) => i.get(),
            Qpn::Gsi { .. } => GSI_QPN,
        }
    }

    /// Checks the values of the attributes in `mask` (beyond what the state table checks).
    fn check_values(&self, a: &QpAttr, mask: AttrMask) -> Result {
        let qpn = self.qpn();
        let bad = |e| attr_errno(qpn, e);
        if mask.contains(AttrMask::PORT) && a.port_num != 1 {
            return Err(EINVAL);
        }
        if mask.contains(AttrMask::PKEY_INDEX) && a.pkey_index != 0 {
            return Err(EINVAL);
        }
        if mask.contains(AttrMask::PATH_MTU) {
            qp_state::check_path_mtu(a.path_mtu, crate::ib::Mtu::Mtu4096.to_raw()).map_err(bad)?;
        }
        if mask.contains(AttrMask::TIMEOUT) {
            qp_state::check_timeout(a.timeout).map_err(bad)?;
        }
        if mask.contains(AttrMask::RETRY_CNT) {
            qp_state::check_retry_cnt(a.retry_cnt).map_err(bad)?;
        }
        if mask.contains(AttrMask::RNR_RETRY) {
            qp_state::check_rnr_retry(a.rnr_retry).map_err(bad)?;
        }
        if mask.contains(AttrMask::MIN_RNR_TIMER) {
            qp_state::check_min_rnr_timer(a.min_rnr_timer).map_err(bad)?;
        }
        if mask.contains(AttrMask::MAX_QP_RD_ATOMIC) {
            qp_state::rd_atomic_depth(a.max_rd_atomic.into(), limits::MAX_QP_RD_ATOM)
                .map_err(bad)?;
        }
        if mask.contains(AttrMask::MAX_DEST_RD_ATOMIC) {
            qp_state::rd_atomic_depth(a.max_dest_rd_atomic.into(), limits::MAX_QP_RD_ATOM)
                .map_err(bad)?;
        }
        if mask.contains(AttrMask::DEST_QPN) && a.dest_qp_num > 0xff_ffff {
            return Err(EINVAL);
        }
        if mask.contains(AttrMask::AV) && u32::from(a.av.sgid_index) >= limits::GID_TABLE_LEN {
            return Err(EINVAL);
        }
        Ok(())
    }

    /// Modify QP: resolves and checks the transition and the attribute values, then applies
    /// them; on any error nothing changes.
    pub(crate) fn modify(qp: &Qp<RrxeDevice>, a: &QpAttr, mask: AttrMask) -> Result {
        let qpn = qp.qpn();
        if !mask.unsupported().is_empty() {
            return Err(eopnotsupp());
        }
        qp.check_values(a, mask)?;
        let mut inner = qp.inner.lock();
        let (cur, next) = qp_state::resolve_states(inner.state, mask, a.cur_qp_state, a.qp_state)
            .map_err(|e| state_errno(qpn, e))?;
        qp_state::check_transition(cur, next, qp.qp_type, mask).map_err(|e| state_errno(qpn, e))?;
        qp_state::check_sq_drain(cur, next, mask, inner.attr.sq_draining)
            .map_err(|e| state_errno(qpn, e))?;
        inner.attr.apply(a, mask);
        // PSNs are 24-bit on the wire.
        inner.attr.sq_psn &= 0xff_ffff;
        inner.attr.rq_psn &= 0xff_ffff;
        inner.state = next;
        inner.attr.qp_state = next.to_raw();
        drop(inner);
        if next == QpState::Err && cur != QpState::Err {
            Self::flush(qp);
        }
        Ok(())
    }

    /// The current state.
    fn state(&self) -> QpState {
        self.inner.lock().state
    }

    /// Moves the QP to ERR on its own (a bad work request): flushes both queues and reports
    /// `IB_EVENT_QP_FATAL`.
    fn fatal(qp: &Qp<RrxeDevice>) {
        {
            let mut inner = qp.inner.lock();
            if inner.state == QpState::Err {
                return;
            }
            inner.state = QpState::Err;
            inner.attr.qp_state = QpState::Err.to_raw();
        }
        Self::flush(qp);
        qp.async_event(QpEvent::Fatal);
    }

    /// Completes every posted WQE of both queues with `IB_WC_WR_FLUSH_ERR`; an SRQ-attached QP
    /// reports `IB_EVENT_QP_LAST_WQE_REACHED` (it takes no more receives from the SRQ). Called
    /// once per transition to ERR.
    fn flush(qp: &Qp<RrxeDevice>) {
        Self::flush_queues(qp);
        if qp.rq.is_none() {
            qp.async_event(QpEvent::LastWqeReached);
        }
    }

    fn flush_queues(qp: &Qp<RrxeDevice>) {
        let qpn = qp.qpn();
        let mut slot = [0u8; 8];
        if let Some(cq) = &qp.send_cq {
            let mut sq = qp.sq.lock();
            while let Ok(true) = sq.ring.peek(&mut slot) {
                let cqe = cqe::flush_cqe(u64::from_le_bytes(slot), qpn, None);
                // A full CQ loses the completion, as on hardware (the CQ overran).
                let _ = RrxeCq::push(cq, &cqe, qp.handle(), false);
                if sq.ring.pop().is_err() {
                    break;
                }
            }
        }
        if let (Some(cq), Some(rq)) = (&qp.recv_cq, &qp.rq) {
            let mut rq = rq.lock();
            while let Ok(true) = rq.ring.peek(&mut slot) {
                let cqe = cqe::flush_cqe(u64::from_le_bytes(slot), qpn, Some(WcOpcode::Recv));
                let _ = RrxeCq::push(cq, &cqe, qp.handle(), false);
                if rq.ring.pop().is_err() {
                    break;
                }
            }
        }
    }

    /// Kernel send work requests. Below RTS they fail (`EINVAL`); in ERR/SQE each completes with
    /// `IB_WC_WR_FLUSH_ERR` (what `ib_drain_sq` waits for). Sending needs the packet pipeline,
    /// which is not there yet (`EOPNOTSUPP`).
    pub(crate) fn post_send(qp: &Qp<RrxeDevice>, wrs: &mut SendWrChain<'_>) -> Result {
        match qp.state() {
            QpState::Reset | QpState::Init | QpState::Rtr => Err(EINVAL),
            QpState::Err | QpState::Sqe => {
                for wr in wrs {
                    let wr = wr?;
                    if let Some(cq) = &qp.send_cq {
                        let cqe = cqe::flush_cqe(wr.wr_id, qp.qpn(), None);
                        RrxeCq::push(cq, &cqe, qp.handle(), false)?;
                    }
                }
                Ok(())
            }
            QpState::Rts | QpState::Sqd => {
                if wrs.next().is_some() {
                    return Err(eopnotsupp());
                }
                Ok(())
            }
        }
    }

    /// Kernel receive work requests: written to the receive ring in librxe's WQE format (the
    /// responder reads both the same way). In ERR each completes with `IB_WC_WR_FLUSH_ERR` at
    /// once (what `ib_drain_rq` waits for).
    pub(crate) fn post_recv(qp: &Qp<RrxeDevice>, wrs: &mut RecvWrChain<'_>) -> Result {
        let Some(rq) = &qp.rq else {
            // Receives of an SRQ-attached QP go to the SRQ.
            return Err(EINVAL);
        };
        let state = qp.state();
        if state == QpState::Reset {
            return Err(EINVAL);
        }
        for wr in wrs {
            let wr = wr?;
            if state == QpState::Err {
                if let Some(cq) = &qp.recv_cq {
                    let cqe = cqe::flush_cqe(wr.wr_id, qp.qpn(), Some(WcOpcode::Recv));
                    RrxeCq::push(cq, &cqe, qp.handle(), false)?;
                }
                continue;
            }
            let mut slot = [0u8; MAX_RECV_SLOT];
            wqe::encode_recv_wqe(&mut slot, wr.wr_id, wr.sges.as_slice(), qp.cap.max_recv_sge)
                .map_err(|_| EINVAL)?;
            rq.lock().ring.push_local(&slot)?;
        }
        Ok(())
    }

    /// The send doorbell of a user QP. Below RTS it fails (`EINVAL`, as rxe); in ERR/SQE it
    /// flushes. In RTS/SQD every new WQE is copied out of the ring and validated; a malformed
    /// one completes with an error and moves the QP to ERR. Valid WQEs stay queued until the
    /// packet pipeline can send them (`EOPNOTSUPP`).
    pub(crate) fn doorbell(qp: &Qp<RrxeDevice>) -> Result {
        match qp.state() {
            QpState::Reset | QpState::Init | QpState::Rtr => return Err(EINVAL),
            QpState::Err | QpState::Sqe => {
                Self::flush_queues(qp);
                return Ok(());
            }
            QpState::Rts | QpState::Sqd => {}
        }
        // The largest send slot: a 720-byte WQE rounded up to a power of two.
        let mut buf = [0u8; 1024];
        let mut sq = qp.sq.lock();
        if !sq.ring.peek(&mut buf)? {
            return Ok(());
        }
        // Parse exactly one slot: nothing beyond it may be read as part of the WQE.
        let slot = buf.get(..sq.ring.elem_size()).ok_or(EINVAL)?;
        match wqe::parse_send_wqe(
            slot,
            qp.qp_type,
            qp.cap.max_send_sge,
            qp.cap.max_inline_data,
        ) {
            Ok(_) => Err(eopnotsupp()),
            Err(e) => {
                pr_debug!("qp {}: bad send WQE: {:?}\n", qp.qpn(), e);
                let wr_id = wqe::peek_wr_id(slot).unwrap_or(0);
                let mut cqe = cqe::flush_cqe(wr_id, qp.qpn(), None);
                cqe.status = e.wc_status().to_raw();
                sq.ring.pop()?;
                drop(sq);
                if let Some(cq) = &qp.send_cq {
                    let _ = RrxeCq::push(cq, &cqe, qp.handle(), false);
                }
                Self::fatal(qp);
                Ok(())
            }
        }
    }

    /// Query QP.
    pub(crate) fn query(qp: &Qp<RrxeDevice>) -> QpQuery {
        let inner = qp.inner.lock();
        let mut attr = inner.attr;
        attr.qp_state = inner.state.to_raw();
        attr.cap = qp.cap;
        QpQuery {
            attr,
            init_cap: qp.cap,
            sq_sig_all: qp.sq_sig_all,
        }
    }
}
