// SPDX-License-Identifier: GPL-2.0

//! Local memory of work requests: the payload of a send gathered from its SGEs, and received
//! data scattered into a receive WQE's SGEs. Each SGE's key is looked up in the device's MR
//! table and checked (same PD, access rights, bounds) before a byte moves.

use super::{
    odp::{
        self,
        Access,
        Side, //
    },
    state::Snapshot,
};
use crate::{
    device::RrxeDevice,
    ib::{
        self,
        Qp, //
    },
    mm::Fill,
    proto::wqe::Sge, //
};
use kernel::prelude::*;

/// Walks the SGE list from message byte `offset`, calling `f(sge, byte in sge, range in buf)`.
fn walk(
    num_sge: u32,
    sge_at: impl Fn(u32) -> Option<Sge>,
    offset: u32,
    len: usize,
    mut f: impl FnMut(&Sge, u32, core::ops::Range<usize>) -> Result,
) -> Result {
    let mut skip = offset;
    let mut done = 0usize;
    for i in 0..num_sge {
        if done == len {
            break;
        }
        let sge = sge_at(i).ok_or(EINVAL)?;
        if skip >= sge.length {
            skip -= sge.length;
            continue;
        }
        let n = ((sge.length - skip) as usize).min(len - done);
        f(&sge, skip, done..done + n)?;
        done += n;
        skip = 0;
    }
    if done < len {
        return Err(EINVAL);
    }
    Ok(())
}

/// The address `skip` bytes into `sge` (`EFAULT` if it wraps: a user's SGE can name any
/// address, and the region check comes after).
fn at(sge: &Sge, skip: u32) -> Result<u64> {
    sge.addr.checked_add(u64::from(skip)).ok_or(EFAULT)
}

/// The access to `len` bytes `skip` bytes into `sge` (the rest of the SGE lies ahead).
fn access(sge: &Sge, skip: u32, len: usize, write: bool) -> Result<Access> {
    Ok(Access {
        va: at(sge, skip)?,
        need: len as u64,
        ahead: u64::from(sge.length.saturating_sub(skip)),
        write,
    })
}

/// Appends message bytes `[offset, offset + dst.remaining())` of a send WQE to `dst`.
/// `EAGAIN`: a page of an on-demand-paging MR is being faulted in, `side` waits ([`odp`]).
pub(crate) fn gather(
    qp: &Qp<RrxeDevice>,
    side: Side,
    snap: &Snapshot,
    sge_at: impl Fn(u32) -> Option<Sge>,
    num_sge: u32,
    offset: u32,
    dst: &mut Fill<'_>,
) -> Result {
    let len = dst.remaining();
    walk(num_sge, sge_at, offset, len, |sge, skip, r| {
        let mr = qp.device().lookup_mr(sge.lkey, snap.pd).ok_or(EINVAL)?;
        let a = access(sge, skip, r.len(), false)?;
        odp::check(qp, side, &mr, a, mr.read(a.va, r.len(), dst))
    })
}

/// Copies `data` into the SGEs from message byte `offset` (local write access needed).
/// `EAGAIN`: a page of an on-demand-paging MR is being faulted in, `side` waits ([`odp`]).
pub(crate) fn scatter(
    qp: &Qp<RrxeDevice>,
    side: Side,
    snap: &Snapshot,
    sges: &[Sge],
    offset: u32,
    data: &[u8],
) -> Result {
    let n = u32::try_from(sges.len()).map_err(|_| EINVAL)?;
    scatter_at(
        qp,
        side,
        snap,
        |i| sges.get(i as usize).copied(),
        n,
        offset,
        data,
    )
}

/// As [`scatter`], for `num_sge` SGEs read through `sge_at` (from a WQE slot).
pub(crate) fn scatter_at(
    qp: &Qp<RrxeDevice>,
    side: Side,
    snap: &Snapshot,
    sge_at: impl Fn(u32) -> Option<Sge>,
    num_sge: u32,
    offset: u32,
    data: &[u8],
) -> Result {
    walk(num_sge, sge_at, offset, data.len(), |sge, skip, r| {
        let mr = qp.device().lookup_mr(sge.lkey, snap.pd).ok_or(EINVAL)?;
        if !mr.access().contains(ib::Access::LocalWrite) && !mr.is_dma() {
            return Err(EACCES);
        }
        let a = access(sge, skip, r.len(), true)?;
        odp::check(qp, side, &mr, a, mr.write(a.va, &data[r]))
    })
}
