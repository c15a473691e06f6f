// SPDX-License-Identifier: GPL-2.0

//! A QP's wait for the page faults of on-demand-paging MRs: which side waits, for which range,
//! and whether the last fault failed. How the pipeline parks and resumes is in
//! `pipeline/odp.rs`.

use crate::sync::{
    ObjRef,
    RefWork,
    Sleeping, //
};
use crate::{
    counters::Counter,
    device::RrxeDevice,
    ib::{
        Mr,
        Qp, //
    },
    new_spinlock_irq,
    sync::SpinLockIrq, //
};
use kernel::{
    prelude::*,
    sync::atomic::{
        Atomic,
        Relaxed, //
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

/// A range of an MR to fault in.
struct Fault {
    mr: ObjRef<Mr<RrxeDevice>>,
    va: u64,
    /// The bytes the access needs.
    need: u64,
    /// The bytes from `va` worth faulting in at once (at least `need`: the rest of the
    /// message or SGE, as later packets will want them).
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

/// The faults a QP's sides wait for, and whether the last one failed.
struct Faults {
    pending: [Option<Fault>; 2],
    failed: [bool; 2],
}

/// The on-demand-paging state of a QP's pipeline.
pub(crate) struct OdpWait {
    /// Whether each side waits for a fault: set by the pipeline, cleared by the fault work once
    /// the fault is done.
    stalled: [Atomic<bool>; 2],
    /// The packet the receive side handles now must wait (set and taken within one pass).
    parked: Atomic<bool>,
    faults: Pin<KBox<SpinLockIrq<Faults>>>,
    worker: Pin<KBox<RefWork<Qp<RrxeDevice>, Sleeping>>>,
}

impl OdpWait {
    /// Nothing waiting.
    pub(crate) fn new() -> Result<Self> {
        let faults = Faults {
            pending: [const { None }; 2],
            failed: [false; 2],
        };
        Ok(Self {
            stalled: [const { Atomic::new(false) }; 2],
            parked: Atomic::new(false),
            faults: KBox::pin_init(new_spinlock_irq!(faults, "rrxe_odp"), GFP_KERNEL_ACCOUNT)?,
            worker: KBox::pin_init(RefWork::new(), GFP_KERNEL_ACCOUNT)?,
        })
    }

    /// Whether `side` waits for a fault.
    pub(crate) fn stalled(&self, side: Side) -> bool {
        self.stalled[side as usize].load(Relaxed)
    }

    /// Takes the note that the packet just handled must wait (it goes back to the inbox).
    pub(crate) fn take_parked(&self) -> bool {
        self.parked.load(Relaxed) && self.parked.xchg(false, Relaxed)
    }

    /// Stops the fault work for good (the QP is being destroyed).
    pub(crate) fn close(&self) {
        self.worker.close();
    }

    /// After a miss of access `a` to `mr` by `qp`: for an on-demand-paging MR, asks for the
    /// fault and stalls `side` (`true`), unless the side's last fault failed (`false`, and the
    /// failure is forgotten). Packets of the receive side are parked ([`Self::take_parked`]).
    pub(crate) fn wait_for_fault(
        &self,
        qp: &Qp<RrxeDevice>,
        side: Side,
        mr: &Mr<RrxeDevice>,
        a: Access,
    ) -> bool {
        if !mr.is_on_demand() {
            return false;
        }
        let w = self;
        let mut f = w.faults.lock();
        let i = side as usize;
        if core::mem::take(&mut f.failed[i]) {
            return false;
        }
        f.pending[i] = Some(Fault {
            mr: ObjRef::new(mr),
            va: a.va,
            need: a.need.max(1),
            ahead: a.ahead.max(a.need).max(1),
            write: a.write,
        });
        w.stalled[i].store(true, Relaxed);
        drop(f);
        if side == Side::Recv {
            w.parked.store(true, Relaxed);
        }
        w.worker.queue(&ObjRef::new(qp));
        true
    }

    /// Faults in what `qp`'s sides wait for (process context: the fault work), counting each
    /// fault, and lets each side whose fault is done go on.
    pub(crate) fn fault_in(&self, qp: &Qp<RrxeDevice>) {
        for side in [Side::Recv, Side::Send] {
            let i = side as usize;
            let Some(fault) = self.faults.lock().pending[i].take() else {
                continue;
            };
            // What lies ahead may be unmapped where the access itself is not: then only what
            // the access needs.
            let r = fault
                .mr
                .fault(fault.va, fault.ahead, fault.write)
                .or_else(|_| fault.mr.fault(fault.va, fault.need, fault.write));
            qp.device().count(if r.is_ok() {
                Counter::OdpFaults
            } else {
                Counter::OdpFaultErrors
            });
            drop(fault);
            let mut f = self.faults.lock();
            f.failed[i] = r.is_err();
            // A new fault may have been asked for meanwhile: the side waits for it instead.
            if f.pending[i].is_none() {
                self.stalled[i].store(false, Relaxed);
            }
            drop(f);
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
