// SPDX-License-Identifier: GPL-2.0

//! Shared receive queues: a user-produced receive ring in the rxe layout, resize (with the
//! librxe quirk: the new ring's mmap info is written to a user pointer the command carries) and
//! the limit.
//!
//! Lock: `state` (a spinlock) holds the ring and the limit. A resize copies the posted WQEs
//! into the new ring outside it (up to 2^20 of them: not with interrupts off), then, under it,
//! drops those consumed meanwhile and swaps the rings: a few index operations.

use crate::sync::{
    ObjRef,
    RefWork,
    Sleeping,
    WorkTarget, //
};
use crate::{
    device::RrxeDevice,
    ib::{
        Device,
        MmapHandle,
        RecvWrChain,
        ResEntry,
        Srq,
        SrqAttr,
        SrqMask,
        Udata, //
    },
    index::PoolIndex,
    limits,
    proto::{
        ring::{
            self,
            RingGeometry, //
        },
        wqe_encode,
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
use kernel::prelude::*;

/// What the SRQ lock protects.
struct SrqState {
    ring: KernelConsumedRing,
    _mmap: Option<MmapHandle>,
    /// Raise the limit event when fewer WRs than this remain; 0 when disarmed.
    limit: u32,
}

/// The driver data of a shared receive queue.
#[pin_data]
pub(crate) struct RrxeSrq {
    /// The SRQ number, returned to the device's pool on destroy.
    _num: PoolIndex,
    max_sge: u32,
    #[pin]
    state: SpinLockIrq<SrqState>,
    /// Raises the limit event in process context, outside the receiving QP's locks and outside
    /// every verb call (a kernel sender's `post_send` can take the WQE on loopback).
    #[pin]
    limit_work: RefWork<Srq<RrxeDevice>, Sleeping>,
}

impl WorkTarget<Sleeping> for Srq<RrxeDevice> {
    fn work_run(srq: ObjRef<Self>) {
        srq.limit_event();
    }
}

/// A ring for at least `max_wr` WQEs of `max_sge` SGEs, published to user space when there is a
/// user (its `mminfo` is returned for the caller to send where librxe expects it).
fn new_ring(
    max_wr: u32,
    max_sge: u32,
    udata: Option<&mut Udata<'_>>,
) -> Result<(KernelConsumedRing, Option<MmapHandle>)> {
    let size = ring::recv_wqe_size(max_sge).ok_or(EINVAL)?;
    let geo = RingGeometry::new(max_wr, size, limits::MAX_SRQ_WR).map_err(ring_errno)?;
    let ring = KernelConsumedRing::new(geo)?;
    let mmap = match udata {
        Some(u) => Some(u.publish(ring.buf().clone())?),
        None => None,
    };
    Ok((ring, mmap))
}

impl RrxeSrq {
    /// Creates a basic SRQ (checks as rxe: 1..=2^20 WRs, 1..=27 SGEs, limit <= WRs) and answers
    /// user space with `struct rxe_create_srq_resp` (`mminfo`, `srq_num`).
    pub(crate) fn create(
        dev: &Device<RrxeDevice>,
        attr: &mut SrqAttr,
        mut udata: Option<&mut Udata<'_>>,
    ) -> Result<impl PinInit<Self, Error>> {
        if attr.max_wr == 0
            || attr.max_wr > limits::MAX_SRQ_WR
            || attr.max_sge > limits::MAX_SRQ_SGE
        {
            return Err(EINVAL);
        }
        if attr.srq_limit > attr.max_wr {
            return Err(EINVAL);
        }
        let max_sge = attr.max_sge.max(1);
        let num = PoolIndex::alloc(dev.srq_pool())?;
        let (ring, mmap) = new_ring(attr.max_wr, max_sge, udata.as_deref_mut())?;
        if let (Some(u), Some(h)) = (udata, &mmap) {
            let mut resp = [0u8; 24];
            resp[..16].copy_from_slice(&h.info().to_bytes());
            resp[16..20].copy_from_slice(&num.get().to_ne_bytes());
            u.respond(&resp)?;
        }
        let limit = attr.srq_limit;
        *attr = SrqAttr {
            max_wr: ring.capacity(),
            max_sge,
            srq_limit: limit,
        };
        Ok(try_pin_init!(Self {
            _num: num,
            max_sge,
            state <- new_spinlock_irq!(
                SrqState {
                    ring,
                    _mmap: mmap,
                    limit,
                },
                "rrxe_srq"
            ),
            limit_work <- RefWork::new(),
        }? Error))
    }

    /// Modify SRQ: resize (keeping the posted WQEs) and/or set the limit; unchanged on error.
    pub(crate) fn modify(
        srq: &Srq<RrxeDevice>,
        attr: &SrqAttr,
        mask: SrqMask,
        mut udata: Option<&mut Udata<'_>>,
    ) -> Result {
        if mask.max_wr {
            if attr.max_wr == 0 || attr.max_wr > limits::MAX_SRQ_WR {
                return Err(EINVAL);
            }
            let limit = if mask.limit {
                attr.srq_limit
            } else {
                srq.state.lock().limit
            };
            if limit > attr.max_wr {
                return Err(EINVAL);
            }
            // librxe passes `struct rxe_modify_srq_cmd { u64 mmap_info_addr; }`.
            let mut info_addr = None;
            if let Some(u) = udata.as_deref() {
                let mut cmd = [0u8; 8];
                u.read_in(&mut cmd)?;
                info_addr = Some(u64::from_ne_bytes(cmd));
            }
            let (ring, mmap) = new_ring(attr.max_wr, srq.max_sge, udata.as_deref_mut())?;
            if let (Some(u), Some(addr), Some(h)) = (udata, info_addr, &mmap) {
                u.write_user(addr, &h.info().to_bytes())?;
            }
            // Two resizes may race (uverbs takes the SRQ for reading only): the second to swap
            // finds its snapshot's ring gone and fails with `EBUSY`.
            let snap = srq.state.lock().ring.pending_snapshot()?;
            let mut ring = ring;
            ring.fill_from(&snap)?;
            let mut st = srq.state.lock();
            ring.skip_consumed_since(&st.ring, &snap)?;
            let prev = core::mem::replace(&mut st.ring, ring);
            let prev_mmap = core::mem::replace(&mut st._mmap, mmap);
            st.limit = limit;
            drop(st);
            // Freed outside the lock (`vfree` may sleep).
            drop(prev);
            drop(prev_mmap);
        } else if mask.limit {
            let mut st = srq.state.lock();
            if attr.srq_limit > st.ring.capacity() {
                return Err(EINVAL);
            }
            st.limit = attr.srq_limit;
        }
        Ok(())
    }

    /// Kernel receive work requests: written to the SRQ ring in librxe's WQE format.
    pub(crate) fn post_recv(srq: &Srq<RrxeDevice>, wrs: &mut RecvWrChain<'_>) -> Result {
        for wr in wrs {
            let wr = wr?;
            srq.state.lock().ring.push_local_with(|slot| {
                let sges = wr.sges.as_slice();
                wqe_encode::encode_recv_wqe(slot, wr.wr_id, sges, srq.max_sge).map_err(|_| EINVAL)
            })?;
        }
        Ok(())
    }

    /// Takes the next receive WQE into `slot` for a QP: `Some(max_sge)` to parse it with, or
    /// `None` when the SRQ is empty. Fires the limit event (once per arming) when fewer WQEs
    /// than the limit remain (from a work item: the caller holds the QP's receive lock). Any
    /// context.
    pub(crate) fn take(srq: &Srq<RrxeDevice>, slot: &mut [u8]) -> Option<u32> {
        let mut st = srq.state.lock();
        if !st.ring.peek(slot).ok()? {
            return None;
        }
        st.ring.pop().ok()?;
        let fire = st.limit > 0 && st.ring.pending().ok()? < st.limit;
        if fire {
            st.limit = 0;
        }
        drop(st);
        if fire {
            srq.limit_work.queue(&ObjRef::new(srq));
        }
        Some(srq.max_sge)
    }

    /// The SRQ is being destroyed: a limit event not raised yet is not.
    pub(crate) fn destroying(srq: &Srq<RrxeDevice>) {
        srq.limit_work.close();
    }

    /// The most SGEs a receive WQE of the SRQ holds.
    pub(crate) fn max_sge(srq: &Srq<RrxeDevice>) -> u32 {
        srq.max_sge
    }

    /// The SRQ's state for `rdma -dd res show srq`: WQEs posted and not yet taken, and the
    /// armed limit (0: none).
    pub(crate) fn report(srq: &Srq<RrxeDevice>, e: &mut ResEntry) -> Result {
        let (queued, limit) = {
            let st = srq.state.lock();
            (st.ring.pending().unwrap_or(0), st.limit)
        };
        e.u32(c"queued", queued)?;
        e.u32(c"limit", limit)?;
        e.u32(c"max_sge", srq.max_sge)
    }

    /// Query SRQ.
    pub(crate) fn query(srq: &Srq<RrxeDevice>) -> SrqAttr {
        let st = srq.state.lock();
        SrqAttr {
            max_wr: st.ring.capacity(),
            max_sge: srq.max_sge,
            srq_limit: st.limit,
        }
    }
}
