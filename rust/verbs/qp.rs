// SPDX-License-Identifier: GPL-2.0

//! Queue pairs: creation with rxe's capability rounding and mmap'ed send/receive rings, and the
//! IBA state machine of `modify_qp` (`proto::qp_state`), enforced for user and kernel callers
//! alike, leaving the QP unchanged on any error.
//!
//! Lock: `inner` (a spinlock) holds the state and attributes; modify, query and, later, the
//! data path take it briefly and never sleep under it. Posting work requests is [`post`]'s.

mod modify;
mod post;

use crate::sync::ObjRef;
use crate::{
    device::RrxeDevice,
    ib::{
        Caller,
        CqRef,
        Device,
        MmapHandle,
        Qp,
        QpAttr,
        QpCap,
        QpInit,
        QpQuery,
        Srq,
        Udata, //
    },
    index::PoolIndex,
    kernel_ext::eopnotsupp,
    limits,
    mm::KernelConsumer,
    new_spinlock_irq,
    pipeline::state::{
        QpPipe,
        Snapshot, //
    },
    proto::{
        abi::SEND_WQE_HDR_LEN,
        dcqcn::CcParam,
        ecn,
        qp_attr::QpAttrError,
        qp_state::{
            QpState,
            QpStateError,
            QpType, //
        },
        rate,
        ring::{
            self,
            RingGeometry, //
        },
        sport,
        wqe_parse, //
    },
    queue::{
        ring_errno,
        KernelConsumedRing, //
    },
    sync::SpinLockIrq,
    verbs::counter::QpCounts,
    verbs::mw::QpToken,
    verbs::srq::RrxeSrq,
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
    /// Counts the changes of state (not a modify within one): a failure the pipeline found under one state is not applied
    /// to the QP after a later `modify_qp` (a consumer that polled the error completion and
    /// reconnected at once).
    epoch: u32,
}

/// One of the QP's rings and, for user QPs, its published mmap entry.
struct QueueRing {
    ring: KernelConsumedRing,
    _mmap: Option<MmapHandle>,
}

/// The driver data of a queue pair (the `rxe_qp` analogue), initialised in place in the QP
/// object ib_core allocated: its locks, timer and work items are embedded; the sender's and the
/// receiver's state and the receive ring's lock are boxes of their own.
#[pin_data]
pub(crate) struct RrxeQp {
    /// The QP number, returned to the device's pool when the QP is destroyed.
    qpn: Qpn,
    qp_type: QpType,
    /// Granted capacities.
    cap: QpCap,
    sq_sig_all: bool,
    #[pin]
    inner: SpinLockIrq<QpInner>,
    /// The send ring; its lock serialises doorbells and flushes.
    #[pin]
    sq: SpinLockIrq<QueueRing>,
    /// The receive ring, `None` with an SRQ.
    rq: Option<Pin<KBox<SpinLockIrq<QueueRing>>>>,
    send_cq: Option<CqRef<RrxeDevice>>,
    recv_cq: Option<CqRef<RrxeDevice>>,
    /// The SRQ receives come from, instead of `rq`.
    srq: Option<ObjRef<Srq<RrxeDevice>>>,
    /// Held when a kernel consumer owns the QP (its rings are not mapped to user space): the
    /// right to post work requests whose addresses are kernel memory. User QPs have none.
    kernel: Option<KernelConsumer>,
    /// The packet pipeline's state.
    #[pin]
    pipe: QpPipe,
    /// This QP's identity for the type 2 memory windows bound to it.
    mw_token: QpToken,
    /// What the QP counted (`verbs/counter.rs`).
    counts: QpCounts,
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

/// The type of QP `init` asks for, if rrxe creates it (for a user QP when `user`): RC, UC
/// and UD, and QP1 for the kernel's MAD layer; no creation flags.
fn qp_type_of(init: &QpInit<RrxeDevice>, user: bool) -> Result<QpType> {
    let qp_type = match init.qp_type {
        Some(t @ (QpType::Rc | QpType::Uc | QpType::Ud)) => t,
        // QP1, for the MAD layer (ib_mad creates it for each port).
        Some(QpType::Gsi) if !user => QpType::Gsi,
        // SMI (QP0) does not exist on RoCE.
        Some(QpType::Gsi | QpType::Smi) | None => return Err(eopnotsupp()),
    };
    if init.create_flags != 0 {
        return Err(eopnotsupp());
    }
    Ok(qp_type)
}

/// The send ring and, without an SRQ, the receive ring `init` asks for, their capacities
/// checked and rounded as rxe rounds them, and what they grant; a user QP's are mapped and
/// `struct rxe_create_qp_resp` (RQ then SQ `mminfo`) answered.
fn new_rings(
    init: &QpInit<RrxeDevice>,
    mut udata: Option<&mut Udata<'_>>,
) -> Result<(QueueRing, Option<QueueRing>, QpCap)> {
    let cap = init.cap;
    if cap.max_send_wr > limits::MAX_QP_WR
        || (!init.has_srq
            && (cap.max_recv_wr > limits::MAX_QP_WR || cap.max_recv_sge > limits::MAX_SGE))
    {
        return Err(EINVAL);
    }
    let send = ring::round_send_caps(cap.max_send_sge, cap.max_inline_data).map_err(ring_errno)?;
    let sq_geo = RingGeometry::new_allow_empty(cap.max_send_wr, send.wqe_size, limits::MAX_QP_WR)
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
    Ok((sq, rq, granted))
}

/// The size of the receive WQEs the responder copies, and their SGEs: the receive queue's,
/// or the SRQ's.
fn recv_copy_size(
    rq: Option<&QueueRing>,
    init: &QpInit<RrxeDevice>,
    granted: QpCap,
) -> Result<(usize, u32)> {
    Ok(match (rq, &init.srq) {
        (Some(rq), _) => (rq.ring.elem_size(), granted.max_recv_sge),
        (None, Some(srq)) => {
            let max_sge = RrxeSrq::max_sge(srq);
            (
                ring::recv_wqe_size(max_sge).ok_or(EINVAL)? as usize,
                max_sge,
            )
        }
        (None, None) => (0, 0),
    })
}

impl RrxeQp {
    /// Creates a QP: checks the type and capabilities, rounds them as rxe does, allocates the
    /// rings and, for user QPs, answers with `struct rxe_create_qp_resp` (RQ then SQ `mminfo`).
    pub(crate) fn create(
        dev: &Device<RrxeDevice>,
        init: &mut QpInit<RrxeDevice>,
        caller: Caller<'_, '_>,
    ) -> Result<impl PinInit<Self, Error>> {
        let (udata, kernel) = match caller {
            Caller::User(u) => (Some(u), None),
            Caller::Kernel(k) => (None, Some(k)),
        };
        let qp_type = qp_type_of(init, udata.is_some())?;
        if let Some(u) = udata.as_deref() {
            // librxe sends no driver data with create_qp.
            if u.inlen() != 0 {
                return Err(EINVAL);
            }
        }
        let (sq, rq, granted) = new_rings(init, udata)?;
        let qpn = if qp_type == QpType::Gsi {
            Qpn::Gsi {
                _claim: GsiClaim::take(dev.gsi_claim())?,
            }
        } else {
            Qpn::Pooled(PoolIndex::alloc(dev.qpn_pool())?)
        };
        init.cap = granted;
        let (rq_elem, max_recv_sge) = recv_copy_size(rq.as_ref(), init, granted)?;
        let pipe = QpPipe::new(
            sq.ring.capacity(),
            sq.ring.elem_size(),
            granted.max_send_sge,
            rq_elem,
            max_recv_sge,
            !qp_type.is_connected(),
        )?;
        let attr = QpAttr {
            port_num: 1,
            cap: granted,
            ..QpAttr::default()
        };
        let rq = match rq {
            Some(rq) => Some(KBox::pin_init(
                new_spinlock_irq!(rq, "rrxe_rq"),
                GFP_KERNEL,
            )?),
            None => None,
        };
        let mw_token = Arc::new((), GFP_KERNEL)?;
        let counts = QpCounts::new(dev.counters().clone());
        let (send_cq, recv_cq, srq) = (init.send_cq.take(), init.recv_cq.take(), init.srq.take());
        let sq_sig_all = init.sq_sig_all;
        Ok(try_pin_init!(Self {
            qpn,
            qp_type,
            cap: granted,
            sq_sig_all,
            inner <- new_spinlock_irq!(
                QpInner {
                    state: QpState::Reset,
                    attr,
                    epoch: 0,
                },
                "rrxe_qp"
            ),
            sq <- new_spinlock_irq!(sq, "rrxe_sq"),
            rq,
            send_cq,
            recv_cq,
            srq,
            kernel,
            pipe <- pipe,
            mw_token,
            counts,
        }? Error))
    }

    /// This QP's identity for the type 2 windows bound to it.
    pub(crate) fn mw_token(&self) -> &QpToken {
        &self.mw_token
    }

    /// What the QP counted.
    pub(crate) fn counts(&self) -> &QpCounts {
        &self.counts
    }

    /// The packet pipeline's state.
    pub(crate) fn pipe(&self) -> &QpPipe {
        &self.pipe
    }

    /// The send CQ.
    pub(crate) fn send_cq(&self) -> Option<&crate::ib::Cq<RrxeDevice>> {
        self.send_cq.as_deref()
    }

    /// The receive CQ.
    pub(crate) fn recv_cq(&self) -> Option<&crate::ib::Cq<RrxeDevice>> {
        self.recv_cq.as_deref()
    }

    /// Granted send SGEs.
    pub(crate) fn max_send_sge(&self) -> u32 {
        self.cap.max_send_sge
    }

    /// Granted inline bytes.
    pub(crate) fn max_inline(&self) -> u32 {
        self.cap.max_inline_data
    }

    /// Copies send slot `n` places after the consumer into `dst`, as far as its fixed part
    /// says it reaches ([`wqe_parse::send_wqe_extent`]): the bytes copied, `None` if not
    /// produced.
    pub(crate) fn sq_read_nth(&self, n: u32, dst: &mut [u8]) -> Result<Option<usize>> {
        self.sq
            .lock()
            .ring
            .peek_nth(n, dst, SEND_WQE_HDR_LEN, wqe_parse::send_wqe_extent)
    }

    /// Retires the oldest send slot.
    pub(crate) fn sq_pop(&self) -> Result {
        self.sq.lock().ring.pop()
    }

    /// Takes the next receive WQE (from the SRQ if the QP has one) into `dst`: `Some(max_sge)`
    /// to parse it with, `None` when none is posted.
    pub(crate) fn rq_take(&self, dst: &mut [u8]) -> Option<u32> {
        if let Some(srq) = &self.srq {
            return RrxeSrq::take(srq, dst);
        }
        let mut rq = self.rq.as_ref()?.lock();
        if !rq.ring.peek(dst).ok()? {
            return None;
        }
        rq.ring.pop().ok()?;
        Some(self.cap.max_recv_sge)
    }

    /// The attributes the data path reads.
    pub(crate) fn snapshot(qp: &Qp<RrxeDevice>) -> Snapshot {
        let inner = qp.inner.lock();
        let a = &inner.attr;
        let congestion = matches!(qp.qp_type, QpType::Rc | QpType::Uc)
            && qp.device().cc_param(CcParam::RpEnable) != 0;
        let mut av = a.av;
        av.traffic_class = ecn::outgoing_tclass(av.traffic_class, congestion);
        Snapshot {
            state: inner.state,
            epoch: inner.epoch,
            qp_type: qp.qp_type,
            qpn: qp.qpn(),
            mtu: crate::proto::qp_attr::PathMtu::from_raw(a.path_mtu).map_or(1024, |m| m.bytes()),
            dest_qpn: a.dest_qp_num,
            av,
            qkey: a.qkey,
            access: a.qp_access_flags,
            timeout: a.timeout,
            min_rnr_timer: a.min_rnr_timer,
            max_rd_atomic: a.max_rd_atomic,
            pd: qp.pd_id(),
            sq_sig_all: qp.sq_sig_all,
            kernel: qp.kernel.is_some(),
            src_port: Self::src_port(qp.qp_type, qp.qpn(), a),
            congestion,
            limit: rate::user_limit(a.av.static_rate, a.rate_limit),
        }
    }

    /// The UDP source port of the QP's packets (RoCEv2 entropy, [`sport`]): a connected QP's
    /// from its address vector's flow label, or from both QP numbers if it sets none, as
    /// ib_core's `rdma_get_udp_sport` (C rxe and RoCE NICs agree, and both ends of a connection
    /// pick the same); a datagram QP's from its QP number.
    fn src_port(qp_type: QpType, qpn: u32, attr: &QpAttr) -> u16 {
        match qp_type {
            QpType::Rc | QpType::Uc => {
                sport::of_connection(attr.av.flow_label, qpn, attr.dest_qp_num)
            }
            _ => sport::of_qpn(qpn),
        }
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

    /// Query QP.
    pub(crate) fn query(qp: &Qp<RrxeDevice>) -> QpQuery {
        let inner = qp.inner.lock();
        let mut attr = inner.attr;
        attr.qp_state = inner.state;
        attr.cap = qp.cap;
        QpQuery {
            attr,
            init_cap: qp.cap,
            sq_sig_all: qp.sq_sig_all,
        }
    }
}
