// SPDX-License-Identifier: GPL-2.0

//! Remote keys and local invalidation: what the rkey of a request names (a memory region, or a
//! memory window onto one) once the QP's rights, the key's rights and, for a window, its
//! bounds and owner QP are checked; and the invalidation of either kind of key.

use super::state::Snapshot;
use crate::{
    device::RrxeDevice,
    ib::{
        Access,
        AccessFlags,
        Qp, //
    },
    proto::hdr::Aeth,
    verbs::{
        mr::KeyedMr,
        mw::QpToken, //
    },
};
use kernel::{
    prelude::*,
    sync::Arc, //
};

/// Where a remote access lands: the region, and the region address of its first byte.
pub(crate) struct Target {
    pub(crate) mr: KeyedMr,
    pub(crate) va: u64,
}

/// Resolves `rkey` for a remote operation needing every right in `access` on the bytes
/// `[va, va + len)` (`len` zero for a FLUSH of a whole region). Fails with the NAK syndrome
/// to answer (remote access error).
///
/// The range is checked against the window's bounds and then the region's (each access is
/// checked again when the bytes move, [`crate::verbs::mr::RrxeMr::read`] and friends), so a request
/// whose range leaves the region is refused before it starts.
pub(crate) fn resolve(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    rkey: u32,
    access: AccessFlags,
    va: u64,
    len: u64,
) -> Result<Target, u8> {
    const DENIED: u8 = Aeth::NAK_REMOTE_ACCESS_ERROR;
    if !snap.access.contains_all(access) {
        return Err(DENIED);
    }
    let dev = qp.device();
    if let Some(mw) = dev.lookup_mw(rkey) {
        let t = mw
            .resolve(rkey, snap.pd, qp.mw_token(), access, va, len)
            .ok_or(DENIED)?;
        let mr = dev.lookup_mr(t.mr_key, snap.pd).ok_or(DENIED)?;
        // The very region the window was bound in: a bind that raced its deregistration names
        // a dead region, whose key a new region may have been given since.
        if !Arc::ptr_eq(mr.binds(), &t.mr_binds) {
            return Err(DENIED);
        }
        // The region must still allow what the window grants (its rights may have been
        // re-registered since the bind) and still hold the window's range.
        let writes = access.contains_any(Access::RemoteWrite | Access::RemoteAtomic);
        if writes && !mr.access().contains(Access::LocalWrite) {
            return Err(DENIED);
        }
        if len != 0 {
            mr.check_range(t.va, len).map_err(|_| DENIED)?;
        }
        return Ok(Target { mr, va: t.va });
    }
    let mr = dev.lookup_mr(rkey, snap.pd).ok_or(DENIED)?;
    if !mr.access().contains_all(access) {
        return Err(DENIED);
    }
    if len != 0 {
        mr.check_range(va, len).map_err(|_| DENIED)?;
    }
    Ok(Target { mr, va })
}

/// Invalidates `rkey` in PD `pd`: a fast-registration MR, or a type 2 window (bound to the QP
/// `on` for a SEND with invalidate). `EINVAL` for anything else.
pub(crate) fn invalidate(
    dev: &crate::ib::Device<RrxeDevice>,
    rkey: u32,
    pd: usize,
    on: Option<&QpToken>,
) -> Result {
    if let Some(mw) = dev.lookup_mw(rkey) {
        return mw.invalidate(rkey, pd, on);
    }
    dev.lookup_mr(rkey, pd).ok_or(EINVAL)?.invalidate()
}
