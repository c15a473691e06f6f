// SPDX-License-Identifier: GPL-2.0

//! Posting work: kernel consumers' send and receive work requests, encoded into the same ring
//! formats user space writes, and the send doorbell of user QPs. None of these sleeps, and none
//! calls a completion handler inline (flush completions are pushed to the CQ, whose handler
//! runs from the CQ's own deferred context).

use super::RrxeQp;
use crate::{
    device::RrxeDevice,
    ib::{
        self,
        Qp,
        RecvWrChain,
        SendWr,
        SendWrChain, //
    },
    kernel_ext::eopnotsupp,
    mm::KernelConsumer,
    pipeline,
    proto::{
        cqe,
        qp_state::QpState,
        wqe::{
            SendFlags,
            Sge,
            WrDetail,
            WrOpcode, //
        },
        wqe_encode::{
            self,
            KernelSend,
            RegWqe,
            SendData, //
        },
    },
    verbs::cq::{
        Pushed,
        RrxeCq, //
    },
};
use kernel::prelude::*;

impl RrxeQp {
    /// Kernel send work requests. Below RTS they fail (`EINVAL`). In RTS, SQD and ERR each is
    /// written to the send ring in the rxe WQE format; then the pipeline runs (or is scheduled,
    /// if this context has interrupts disabled or the QP is busy: `params::Batch`), or in ERR
    /// the ring is flushed ([`Self::flush_after_post`]): each completes with
    /// `IB_WC_WR_FLUSH_ERR` (what `ib_drain_sq` waits for) after every WQE posted before it. In
    /// SQE each completes with `IB_WC_WR_FLUSH_ERR` at once. `ENOMEM` when the send queue is
    /// full.
    pub(crate) fn post_send(
        qp: &Qp<RrxeDevice>,
        wrs: &mut SendWrChain<'_, '_, RrxeDevice>,
    ) -> Result {
        // Only a kernel QP may name kernel addresses (ib refuses user chains before this).
        let kernel = qp.kernel.as_ref().ok_or(EINVAL)?;
        match qp.state() {
            QpState::Reset | QpState::Init | QpState::Rtr => Err(EINVAL),
            QpState::Sqe => {
                for wr in wrs {
                    let wr = wr?;
                    if let Some(cq) = &qp.send_cq {
                        let cqe = cqe::flush_cqe(wr.wr_id, qp.qpn(), None);
                        completed(qp, RrxeCq::push(cq, &cqe, qp.handle(), false))?;
                    }
                }
                Ok(())
            }
            QpState::Err | QpState::Rts | QpState::Sqd => {
                let mut r = Ok(());
                for wr in wrs {
                    r = wr.and_then(|wr| qp.enqueue_kernel_send(kernel, &wr));
                    if r.is_err() {
                        break;
                    }
                }
                if !Self::flush_after_post(qp) {
                    crate::pipeline::kick_or_defer(qp);
                }
                r
            }
        }
    }

    /// After a kernel post wrote its WQEs to a ring: whether the QP is in ERR, in which case
    /// the rings are flushed here if the move to ERR has closed the pipeline, and left to the
    /// move's own flush otherwise. The state is read after the WQEs were written, so a post
    /// that found the QP in RTS but wrote behind the move's flush flushes them itself: none
    /// stays in a ring of a QP in ERR. Flushing only once the pipeline is closed keeps the
    /// completions in order: no WQE posted before completes (with success) after a flush.
    fn flush_after_post(qp: &Qp<RrxeDevice>) -> bool {
        if qp.state() != QpState::Err {
            return false;
        }
        Self::flush_once_closed(qp);
        true
    }

    /// Flushes the rings of a QP in ERR if the move to ERR has closed the pipeline; before
    /// that, the move's own flush, which comes after closing, takes what they hold.
    fn flush_once_closed(qp: &Qp<RrxeDevice>) {
        if qp.pipe.closed() {
            Self::flush_queues(qp);
        }
    }

    /// Encodes one kernel send work request into the send ring, in place in its free slot
    /// (under the ring's lock: a few dozen stores, no buffer cleared or copied). Inline data
    /// is read from the consumer's buffers before the lock is taken.
    fn enqueue_kernel_send(&self, kernel: &KernelConsumer, wr: &SendWr<'_, RrxeDevice>) -> Result {
        if let Some(reg) = &wr.reg {
            let r = RegWqe {
                wr_id: wr.wr_id,
                flags: wr.send_flags,
                mr_index: reg.mr.index(),
                key: reg.key,
                access: reg.access.raw(),
            };
            return self
                .sq
                .lock()
                .ring
                .push_local_with(|slot| wqe_encode::encode_reg_wqe(slot, &r).map_err(|_| EINVAL));
        }
        let opcode = WrOpcode::from_raw(wr.opcode).ok_or_else(eopnotsupp)?;
        // The kernel's `ib_send_wr` has no fields for these (no window to bind, no FLUSH
        // placement, no ATOMIC WRITE operand): refused rather than sent with made-up values.
        if matches!(
            opcode,
            WrOpcode::BindMw | WrOpcode::Flush | WrOpcode::AtomicWrite
        ) {
            return Err(eopnotsupp());
        }
        let detail = match opcode {
            WrOpcode::RdmaWrite | WrOpcode::RdmaWriteWithImm | WrOpcode::RdmaRead => {
                WrDetail::Rdma { rkey: wr.rkey }
            }
            WrOpcode::AtomicCmpAndSwp | WrOpcode::AtomicFetchAndAdd => WrDetail::Atomic {
                compare_add: wr.compare_add,
                swap: wr.swap,
                rkey: wr.rkey,
            },
            _ => match &wr.ud {
                Some(u) => WrDetail::Ud {
                    remote_qpn: u.remote_qpn,
                    remote_qkey: u.remote_qkey,
                    pkey_index: u.pkey_index,
                    ah_num: u.ah.num(),
                },
                None => WrDetail::None,
            },
        };
        let push = |data| {
            let s = KernelSend {
                wr_id: wr.wr_id,
                opcode,
                flags: wr.send_flags,
                ex: wr.ex,
                remote_addr: wr.remote_addr,
                detail,
                data,
            };
            self.sq.lock().ring.push_local_with(|slot| {
                wqe_encode::encode_send_wqe(
                    slot,
                    &s,
                    self.cap.max_send_sge,
                    self.cap.max_inline_data,
                )
                .map_err(|_| EINVAL)
            })
        };
        if wr.send_flags & SendFlags::INLINE != 0 {
            // Inline data is copied now: the consumer may reuse its buffer once this returns.
            let mut inline = [0u8; crate::proto::abi::MAX_INLINE_DATA as usize];
            let mut dst = crate::mm::Fill::from_slice(&mut inline);
            for sge in wr.sges.as_slice() {
                crate::mm::kernel_read(kernel, sge.addr, sge.length as usize, &mut dst)?;
            }
            let len = dst.written();
            push(SendData::Inline(&inline[..len]))
        } else {
            push(SendData::Sges(wr.sges.as_slice()))
        }
    }

    /// Kernel receive work requests: written to the receive ring in librxe's WQE format (the
    /// responder reads both the same way). In ERR they are flushed behind those posted before
    /// (what `ib_drain_rq` waits for; [`Self::flush_after_post`]).
    pub(crate) fn post_recv(qp: &Qp<RrxeDevice>, wrs: &mut RecvWrChain<'_>) -> Result {
        if qp.kernel.is_none() {
            // A user QP's receive ring is user space's (ib refuses user chains before this).
            return Err(EINVAL);
        }
        let Some(rq) = &qp.rq else {
            // Receives of an SRQ-attached QP go to the SRQ.
            return Err(EINVAL);
        };
        if qp.state() == QpState::Reset {
            return Err(EINVAL);
        }
        let mut r = Ok(());
        for wr in wrs {
            r = wr.and_then(|wr| {
                rq.lock().ring.push_local_with(|slot| {
                    let sges = wr.sges.as_slice();
                    wqe_encode::encode_recv_wqe(slot, wr.wr_id, sges, qp.cap.max_recv_sge)
                        .map_err(|_| EINVAL)
                })
            });
            if r.is_err() {
                break;
            }
        }
        Self::flush_after_post(qp);
        r
    }

    /// The send doorbell of a user QP. Below RTS it fails (`EINVAL`, as rxe); in ERR/SQE it
    /// flushes. In RTS/SQD the pipeline runs: every new WQE is copied out of the ring and
    /// validated; a malformed one completes with an error and moves the QP to ERR.
    pub(crate) fn doorbell(qp: &Qp<RrxeDevice>) -> Result {
        match qp.state() {
            QpState::Reset | QpState::Init | QpState::Rtr => return Err(EINVAL),
            QpState::Err => {
                Self::flush_once_closed(qp);
                return Ok(());
            }
            QpState::Sqe => {
                Self::flush_queues(qp);
                return Ok(());
            }
            QpState::Rts | QpState::Sqd => {}
        }
        // The requester copies and validates each WQE before use; a bad one completes in
        // error and moves the QP to ERR.
        crate::pipeline::kick(qp);
        Ok(())
    }
}

/// A flush completion of a kernel work request posted in ERR (or SQE): one the CQ did not take
/// fails the post (`EOVERFLOW`; `ib_drain_qp` warns instead of waiting for a completion that
/// will never come) and moves the QP to ERR ([`pipeline::after_push`]).
fn completed(qp: &Qp<RrxeDevice>, pushed: Pushed) -> Result {
    pipeline::after_push(qp, pushed);
    match pushed {
        Pushed::Written => Ok(()),
        Pushed::Lost => Err(EOVERFLOW),
    }
}

impl From<ib::Sge> for Sge {
    fn from(s: ib::Sge) -> Self {
        Self {
            addr: s.addr,
            length: s.length,
            lkey: s.lkey,
        }
    }
}
