// SPDX-License-Identifier: GPL-2.0

//! The one-packet RC requests the responder executes and answers at once: compare-and-swap
//! and fetch-and-add (answered by an atomic ACK carrying the original value), ATOMIC WRITE and
//! FLUSH (answered by a zero-length READ RESPONSE ONLY). Each keeps a responder resource so a
//! duplicate is answered again without executing twice.

use super::{
    super::{
        odp::{
            self,
            Access,
            Side, //
        },
        rkey,
        state::{
            Resource,
            Snapshot, //
        },
        DropReason, Outbox,
    },
    reply, RecvGuard,
};
use crate::{
    device::RrxeDevice,
    ib::{
        self,
        AccessFlags,
        Qp, //
    },
    proto::{hdr::Aeth, opcode::OpKind, packet::ParsedHeaders, wqe},
};
use core::sync::atomic::Ordering::SeqCst;
use kernel::error::code::EAGAIN;

/// CMP_SWAP or FETCH_ADD on an aligned word.
pub(super) fn compare_swap_or_fetch_add(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    mut st: RecvGuard<'_>,
    h: &ParsedHeaders,
    out: &mut Outbox,
) -> Result<(), DropReason> {
    let psn = h.headers.bth.psn;
    let Some(a) = h.headers.atomic_eth else {
        return Err(DropReason::Malformed);
    };
    if a.va % 8 != 0 {
        reply::nak(qp, snap, st, Aeth::NAK_INVALID_REQUEST, out);
        return Err(DropReason::Malformed);
    }
    let t = match rkey::resolve(qp, snap, a.rkey, ib::Access::RemoteAtomic.into(), a.va, 8) {
        Ok(t) => t,
        Err(s) => {
            reply::nak(qp, snap, st, s, out);
            return Err(DropReason::BadRkey);
        }
    };
    let cas = h.info.kind == OpKind::CompareSwap;
    let r = t.mr.atomic_u64(t.va, |w| {
        if cas {
            match w.compare_exchange(a.compare, a.swap_add, SeqCst, SeqCst) {
                Ok(v) | Err(v) => v,
            }
        } else {
            w.fetch_add(a.swap_add, SeqCst)
        }
    });
    let orig = match odp::check(qp, Side::Recv, &t.mr, Access::word(t.va), r) {
        Ok(orig) => orig,
        // Not executed: the packet is handled again once the page is in.
        Err(e) if e == EAGAIN => return Ok(()),
        Err(_) => {
            reply::nak(qp, snap, st, Aeth::NAK_REMOTE_ACCESS_ERROR, out);
            return Err(DropReason::BadRkey);
        }
    };
    st.resources.save(Resource::Atomic { psn, orig });
    st.msn = st.msn.wrapping_add(1);
    st.epsn = psn.next();
    st.reack.executed(h.info.kind, psn);
    st.last_op = None;
    let msn = st.msn;
    drop(st);
    reply::atomic_ack(qp, snap, msn, psn, orig, out);
    Ok(())
}

/// ATOMIC WRITE (IBA oA19-28): exactly 8 bytes to an aligned address, written as one store.
pub(super) fn atomic_write(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: RecvGuard<'_>,
    h: &ParsedHeaders,
    payload: &[u8],
    out: &mut Outbox,
) -> Result<(), DropReason> {
    let Some(reth) = h.headers.reth else {
        return Err(DropReason::Malformed);
    };
    let Ok(value) = <[u8; 8]>::try_from(payload) else {
        reply::nak(qp, snap, st, Aeth::NAK_INVALID_REQUEST, out);
        return Err(DropReason::LengthError);
    };
    if reth.dma_len != 8 || h.headers.bth.pad != 0 || reth.va % 8 != 0 {
        reply::nak(qp, snap, st, Aeth::NAK_INVALID_REQUEST, out);
        return Err(DropReason::LengthError);
    }
    let stored = rkey::resolve(
        qp,
        snap,
        reth.rkey,
        ib::Access::RemoteWrite.into(),
        reth.va,
        8,
    )
    .and_then(|t| {
        let r =
            t.mr.atomic_u64(t.va, |w| w.store(u64::from_ne_bytes(value), SeqCst));
        match odp::check(qp, Side::Recv, &t.mr, Access::word(t.va), r) {
            Ok(()) => Ok(true),
            Err(e) if e == EAGAIN => Ok(false),
            Err(_) => Err(Aeth::NAK_REMOTE_ACCESS_ERROR),
        }
    });
    match stored {
        Ok(true) => {}
        // Not executed: the packet is handled again once the page is in.
        Ok(false) => return Ok(()),
        Err(s) => {
            reply::nak(qp, snap, st, s, out);
            return Err(DropReason::BadRkey);
        }
    }
    reply::answer_with_empty_read(qp, snap, st, h.headers.bth.psn, out);
    Ok(())
}

/// FLUSH of a range or of a whole region, for global visibility (persistence is refused at
/// registration, so no region carries the right to it).
pub(super) fn flush(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: RecvGuard<'_>,
    h: &ParsedHeaders,
    payload: &[u8],
    out: &mut Outbox,
) -> Result<(), DropReason> {
    let (Some(feth), Some(reth)) = (h.headers.feth, h.headers.reth) else {
        return Err(DropReason::Malformed);
    };
    let kind = feth.placement_type;
    let known = wqe::FLUSH_GLOBAL | wqe::FLUSH_PERSISTENT;
    let whole = match feth.selectivity {
        wqe::FLUSH_RANGE => false,
        wqe::FLUSH_MR => true,
        _ => {
            reply::nak(qp, snap, st, Aeth::NAK_INVALID_REQUEST, out);
            return Err(DropReason::Malformed);
        }
    };
    if kind == 0 || kind & !known != 0 || !payload.is_empty() {
        reply::nak(qp, snap, st, Aeth::NAK_INVALID_REQUEST, out);
        return Err(DropReason::Malformed);
    }
    let mut access = AccessFlags::empty();
    if kind & wqe::FLUSH_GLOBAL != 0 {
        access |= ib::Access::FlushGlobal;
    }
    if kind & wqe::FLUSH_PERSISTENT != 0 {
        access |= ib::Access::FlushPersistent;
    }
    let len = if whole { 0 } else { u64::from(reth.dma_len) };
    let flushed = rkey::resolve(qp, snap, reth.rkey, access, reth.va, len).and_then(|t| {
        t.mr.flush(t.va, len, whole)
            .map_err(|_| Aeth::NAK_REMOTE_ACCESS_ERROR)
    });
    if let Err(s) = flushed {
        reply::nak(qp, snap, st, s, out);
        return Err(DropReason::BadRkey);
    }
    reply::answer_with_empty_read(qp, snap, st, h.headers.bth.psn, out);
    Ok(())
}
