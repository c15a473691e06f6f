// SPDX-License-Identifier: GPL-2.0

//! `modify_qp` and the moves to ERR: the IBA state machine (`proto::qp_state`) with the
//! attribute checks, applied whole or not at all; the pipeline set up for the new state; and
//! the flush of both queues when the QP enters ERR (by `modify_qp` or on its own).

use super::{
    attr_errno,
    state_errno,
    QueueRing,
    RrxeQp, //
};
use crate::{
    device::RrxeDevice,
    ib::{
        Cq,
        Qp,
        QpAttr,
        QpAttrMask,
        QpEvent, //
    },
    kernel_ext::eopnotsupp,
    limits,
    pipeline::{
        self,
        state::Resources, //
    },
    proto::{
        attr_mask::AttrMask,
        cqe::{
            self,
            WcOpcode, //
        },
        qp_attr,
        qp_state::{
            self,
            QpState, //
        },
    },
    sync::SpinLockIrq,
    verbs::cq::{
        Pushed,
        RrxeCq, //
    },
};
use kernel::prelude::*;

/// The WQEs a flush completes per hold of a ring's lock (interrupts off): a bound on how long
/// they stay off, however deep the ring.
const FLUSH_CHUNK: u32 = 64;

impl RrxeQp {
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
            qp_attr::check_path_mtu(a.path_mtu, crate::ib::Mtu::Mtu4096.to_raw()).map_err(bad)?;
        }
        if mask.contains(AttrMask::TIMEOUT) {
            qp_attr::check_timeout(a.timeout).map_err(bad)?;
        }
        if mask.contains(AttrMask::RETRY_CNT) {
            qp_attr::check_retry_cnt(a.retry_cnt).map_err(bad)?;
        }
        if mask.contains(AttrMask::RNR_RETRY) {
            qp_attr::check_rnr_retry(a.rnr_retry).map_err(bad)?;
        }
        if mask.contains(AttrMask::MIN_RNR_TIMER) {
            qp_attr::check_min_rnr_timer(a.min_rnr_timer).map_err(bad)?;
        }
        if mask.contains(AttrMask::MAX_QP_RD_ATOMIC) {
            qp_attr::rd_atomic_depth(a.max_rd_atomic.into(), limits::MAX_QP_RD_ATOM)
                .map_err(bad)?;
        }
        if mask.contains(AttrMask::MAX_DEST_RD_ATOMIC) {
            qp_attr::rd_atomic_depth(a.max_dest_rd_atomic.into(), limits::MAX_QP_RD_ATOM)
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
    pub(crate) fn modify(qp: &Qp<RrxeDevice>, a: &QpAttr, attrs: QpAttrMask) -> Result {
        let qpn = qp.qpn();
        let mask = AttrMask::from_bits(attrs.into());
        if !mask.unsupported().is_empty() {
            return Err(eopnotsupp());
        }
        qp.check_values(a, mask)?;
        // The responder's READ/atomic resources, allocated before any lock is taken.
        let resources = if mask.contains(AttrMask::MAX_DEST_RD_ATOMIC) {
            let depth =
                qp_attr::rd_atomic_depth(a.max_dest_rd_atomic.into(), limits::MAX_QP_RD_ATOM)
                    .map_err(|e| attr_errno(qpn, e))?;
            Some(Resources::with_depth(depth)?)
        } else {
            None
        };
        if mask.contains(AttrMask::AV) {
            qp.pipe.prepare_path(qp.device(), &a.av)?;
        }
        let mut inner = qp.inner.lock();
        let claimed = mask.contains(AttrMask::CUR_STATE).then_some(a.cur_qp_state);
        let asked = mask.contains(AttrMask::STATE).then_some(a.qp_state);
        let (cur, next) =
            qp_state::resolve(inner.state, claimed, asked).map_err(|e| state_errno(qpn, e))?;
        qp_state::check_transition(cur, next, qp.qp_type, mask).map_err(|e| state_errno(qpn, e))?;
        qp_state::check_sq_drain(cur, next, mask, inner.attr.sq_draining)
            .map_err(|e| state_errno(qpn, e))?;
        inner.attr.apply(a, attrs);
        // PSNs are 24-bit on the wire.
        inner.attr.sq_psn &= 0xff_ffff;
        inner.attr.rq_psn &= 0xff_ffff;
        if next != cur {
            inner.epoch = inner.epoch.wrapping_add(1);
        }
        inner.state = next;
        let applied = inner.attr;
        drop(inner);
        if let Some(r) = resources {
            qp.pipe.replace_resources(r);
        }
        qp.pipe.transition(cur, next, &applied);
        if next == QpState::Err && cur != QpState::Err {
            Self::flush(qp);
        }
        Ok(())
    }

    /// The current state.
    pub(super) fn state(&self) -> QpState {
        self.inner.lock().state
    }

    /// Moves the QP to ERR on its own (a bad work request): flushes both queues and reports
    /// `IB_EVENT_QP_FATAL`.
    fn fatal(qp: &Qp<RrxeDevice>, epoch: u32) {
        let attr = {
            let mut inner = qp.inner.lock();
            if inner.state == QpState::Err || inner.epoch != epoch {
                return;
            }
            inner.epoch = inner.epoch.wrapping_add(1);
            let cur = inner.state;
            inner.state = QpState::Err;
            (cur, inner.attr)
        };
        qp.pipe.transition(attr.0, QpState::Err, &attr.1);
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

    /// Flushes what both rings hold now ([`Self::flush_ring`]), and the receive WQEs the
    /// responder took from the ring (or SRQ) and has not completed.
    pub(super) fn flush_queues(qp: &Qp<RrxeDevice>) {
        if let Some(cq) = &qp.send_cq {
            Self::flush_ring(qp, &qp.sq, cq, None);
        }
        if let Some(cq) = &qp.recv_cq {
            // Receive WQEs already taken from the ring (or SRQ): a message in progress, or one
            // the direct path took. Flushed first: they were posted first.
            for wr_id in qp.pipe.take_recv_wqes().into_iter().flatten() {
                let cqe = cqe::flush_cqe(wr_id, qp.qpn(), Some(WcOpcode::Recv));
                pipeline::after_push(qp, RrxeCq::push(cq, &cqe, qp.handle(), false));
            }
            if let Some(rq) = &qp.rq {
                Self::flush_ring(qp, rq, cq, Some(WcOpcode::Recv));
            }
        }
    }

    /// Completes the WQEs `ring` holds now with `IB_WC_WR_FLUSH_ERR` (receive completions with
    /// `opcode` `Recv`), in order, [`FLUSH_CHUNK`] at a time under the ring's lock, which
    /// disables interrupts and is dropped between chunks. The completions are written under it
    /// too: two flushes of one ring (two doorbells) must not write a later chunk's before an
    /// earlier one's. At most the ring's capacity in all, so a user who keeps moving its
    /// producer index cannot keep this running; later WQEs are flushed by the next doorbell. A
    /// completion the CQ does not take (it overran) is lost, as are those after it: the CQ is
    /// in error; the WQEs are consumed all the same.
    fn flush_ring(
        qp: &Qp<RrxeDevice>,
        ring: &SpinLockIrq<QueueRing>,
        cq: &Cq<RrxeDevice>,
        opcode: Option<WcOpcode>,
    ) {
        let qpn = qp.qpn();
        let mut slot = [0u8; 8];
        let mut pushed = Pushed::Written;
        let mut left = ring.lock().ring.capacity();
        while left > 0 {
            let chunk = left.min(FLUSH_CHUNK);
            let mut done = 0;
            let mut r = ring.lock();
            while done < chunk && matches!(r.ring.peek(&mut slot), Ok(true)) {
                if pushed == Pushed::Written {
                    let cqe = cqe::flush_cqe(u64::from_le_bytes(slot), qpn, opcode);
                    pushed = RrxeCq::push(cq, &cqe, qp.handle(), false);
                }
                if r.ring.pop().is_err() {
                    break;
                }
                done += 1;
            }
            drop(r);
            if done < chunk {
                break;
            }
            left -= chunk;
        }
        pipeline::after_push(qp, pushed);
    }

    /// The pipeline found an error that ends the QP (a failed WQE or a fatal NAK).
    /// Only under the state the pass found it in (`epoch`, from its snapshot): a consumer
    /// that polled the failed WQE's completion may have reset and reconnected the QP since,
    /// and the failure must not move the new connection to ERR.
    pub(crate) fn pipeline_fatal(qp: &Qp<RrxeDevice>, epoch: u32) {
        Self::fatal(qp, epoch);
    }
}
