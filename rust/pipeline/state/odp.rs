// SPDX-License-Identifier: GPL-2.0

//! A QP's wait for the page faults of on-demand-paging MRs: which side waits, for which range,
//! and whether the last fault failed; and the fault job that runs them. How the pipeline parks
//! and resumes is in `pipeline/odp.rs`.
//!
//! A fault may wait on user space for as long as user space likes: the page may be a FUSE
//! file's whose server never answers, and neither the fault nor the server's request can then
//! be interrupted (a work item takes no signals; FUSE waits uninterruptibly for a request its
//! server has read). So nothing may wait for a fault: the job is an object of its own, shared by
//! the QP and its work item ([`FaultWork`], on rrxe's own workqueue). A fault in progress holds
//! the job, the MR's registration (an `Arc` of the [`UmemOdp`], which keeps the device's memory)
//! and a module reference, never the QP or the MR: destroying the QP closes the job and returns
//! at once, deregistering the MR drops the MR's share of the registration. When the fault ends
//! (its pages arrive, or the FUSE connection is aborted and it fails) the job finds the QP gone,
//! drops what it held (the registration is released then, with the last reference) and the
//! module reference last; until then `rmmod` is refused with `EBUSY`.

use crate::sync::{
    FaultTarget,
    FaultWork,
    ObjRef, //
};
use crate::{
    counters::Counter,
    device::RrxeDevice,
    ib::{
        Mr,
        Qp,
        UmemOdp, //
    },
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

/// The two sides of a QP that can wait for a fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    /// Received packets: the responder, the completer and READ responses.
    Recv = 0,
    /// The requester.
    Send = 1,
}

/// A range of an on-demand-paging registration to fault in. Holds the registration, not the
/// MR: the MR may be deregistered meanwhile. Dropped only in process context (dropping the
/// last reference releases the registration, which sleeps).
struct Fault {
    odp: Arc<UmemOdp>,
    /// The offset of the access in the registration.
    off: u64,
    /// The bytes the access needs.
    need: u64,
    /// The bytes from `off` worth faulting in at once (at least `need`: the rest of the
    /// message or SGE, as later packets will want them), up to the registration's end.
    ahead: u64,
    write: bool,
}

/// An access to an MR: `need` bytes at `va` (and `ahead` bytes from `va` that will be
/// accessed soon), for writing when `write`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Access {
    pub(in crate::pipeline) va: u64,
    pub(in crate::pipeline) need: u64,
    pub(in crate::pipeline) ahead: u64,
    pub(in crate::pipeline) write: bool,
}

/// The faults a QP's sides wait for, whether the last one failed, and the QP while it lives.
struct Faults {
    pending: [Option<Fault>; 2],
    failed: [bool; 2],
    /// The QP, from its first fault until it is destroyed: how the job reaches it after a
    /// fault. Taken out by [`OdpWait::close`] (before the QP waits for its users), so a fault
    /// in progress never keeps the QP's destroy waiting.
    qp: Option<ObjRef<Qp<RrxeDevice>>>,
    /// The QP is being destroyed: no more faults.
    closed: bool,
}

/// The fault job of a QP: shared by the QP and its work item, so it outlives the QP while a
/// fault runs.
#[pin_data]
struct FaultJob {
    /// Whether each side waits for a fault: set by the pipeline, cleared by the job once the
    /// fault is done.
    stalled: [Atomic<bool>; 2],
    #[pin]
    faults: SpinLockIrq<Faults>,
    #[pin]
    work: FaultWork<FaultJob>,
}

/// The on-demand-paging state of a QP's pipeline.
pub(crate) struct OdpWait {
    /// The packet the receive side handles now must wait (set and taken within one pass).
    parked: Atomic<bool>,
    job: Arc<FaultJob>,
}

impl OdpWait {
    /// Nothing waiting.
    pub(crate) fn new() -> Result<Self> {
        let faults = Faults {
            pending: [const { None }; 2],
            failed: [false; 2],
            qp: None,
            closed: false,
        };
        let job = Arc::pin_init(
            pin_init!(FaultJob {
                stalled: [const { Atomic::new(false) }; 2],
                faults <- new_spinlock_irq!(faults, "rrxe_odp"),
                work <- FaultWork::new(),
            }),
            GFP_KERNEL_ACCOUNT,
        )?;
        Ok(Self {
            parked: Atomic::new(false),
            job,
        })
    }

    /// Whether `side` waits for a fault.
    pub(crate) fn stalled(&self, side: Side) -> bool {
        self.job.stalled[side as usize].load(Relaxed)
    }

    /// Takes the note that the packet just handled must wait (it goes back to the inbox).
    pub(crate) fn take_parked(&self) -> bool {
        self.parked.load(Relaxed) && self.parked.xchg(false, Relaxed)
    }

    /// Closes the job for good (the QP is being destroyed): no more faults, the QP forgotten, a
    /// queued run cancelled. Does not wait for a fault in progress: it ends on its own, holding
    /// nothing of the QP. Process context.
    pub(crate) fn close(&self) {
        let (qp, pending) = {
            let mut f = self.job.faults.lock();
            f.closed = true;
            (
                f.qp.take(),
                core::mem::replace(&mut f.pending, [const { None }; 2]),
            )
        };
        // Outside the lock: the last reference to a registration releases it, which sleeps.
        drop(pending);
        drop(qp);
        self.job.work.close();
    }

    /// After a miss of access `a` to `mr` by `qp`: for an on-demand-paging MR, asks for the
    /// fault and stalls `side` (`true`), unless the side's last fault failed (`false`, and the
    /// failure is forgotten) or the QP is being destroyed (`false`). While a fault of the side
    /// is pending the side keeps waiting for it (a miss after it asks again). Packets of the
    /// receive side are parked ([`Self::take_parked`]). Any context.
    pub(crate) fn wait_for_fault(
        &self,
        qp: &Qp<RrxeDevice>,
        side: Side,
        mr: &Mr<RrxeDevice>,
        a: Access,
    ) -> bool {
        let Some((odp, off, room)) = mr.fault_target(a.va) else {
            return false;
        };
        let job = &self.job;
        let mut f = job.faults.lock();
        let i = side as usize;
        if core::mem::take(&mut f.failed[i]) || f.closed {
            drop(f);
            // The registration is also the MR's, which the caller holds: not the last
            // reference, dropping it releases nothing.
            drop(odp);
            return false;
        }
        if f.pending[i].is_none() {
            if !job.work.queue(job) {
                drop(f);
                drop(odp);
                return false;
            }
            if f.qp.is_none() {
                f.qp = Some(ObjRef::new(qp));
            }
            let need = a.need.max(1);
            f.pending[i] = Some(Fault {
                odp,
                off,
                need,
                ahead: a.ahead.max(need).min(room).max(need),
                write: a.write,
            });
        } else {
            drop(odp);
        }
        job.stalled[i].store(true, Relaxed);
        drop(f);
        if side == Side::Recv {
            self.parked.store(true, Relaxed);
        }
        true
    }
}

impl FaultTarget for FaultJob {
    /// Faults in what the QP's sides wait for (process context, rrxe's fault workqueue), lets
    /// each side whose fault is done go on, and runs the QP, if it still lives.
    fn fault_run(job: Arc<Self>) {
        let mut done = [None; 2];
        for side in [Side::Recv, Side::Send] {
            let i = side as usize;
            let Some(fault) = job.faults.lock().pending[i].take() else {
                continue;
            };
            // What lies ahead may be unmapped where the access itself is not: then only what
            // the access needs.
            let r = fault
                .odp
                .fault(fault.off, fault.ahead, fault.write, true)
                .or_else(|_| fault.odp.fault(fault.off, fault.need, fault.write, true));
            // Perhaps the last reference to the registration (its MR is gone): released here.
            drop(fault);
            let mut f = job.faults.lock();
            f.failed[i] = r.is_err();
            // A new fault may have been asked for meanwhile: the side waits for it instead.
            if f.pending[i].is_none() {
                job.stalled[i].store(false, Relaxed);
            }
            drop(f);
            done[i] = Some(r.is_ok());
        }
        // The QP, unless it is being destroyed (then nothing waits for this fault).
        let qp = job.faults.lock().qp.clone();
        if let Some(qp) = qp {
            for ok in done.into_iter().flatten() {
                qp.counts().inc(if ok {
                    Counter::OdpFaults
                } else {
                    Counter::OdpFaultErrors
                });
            }
            crate::pipeline::kick(&qp);
        }
    }
}

impl Access {
    /// The aligned 64-bit word at `va`, written (atomics).
    pub(crate) fn word(va: u64) -> Self {
        Self {
            va,
            need: 8,
            ahead: 8,
            write: true,
        }
    }
}
