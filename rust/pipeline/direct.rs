// SPDX-License-Identifier: GPL-2.0

//! Direct loopback: an RC or UC message to a QP of the same device is executed at once,
//! copied a single time from the sender's memory into the receiver's (page to page, no socket
//! buffer), when nothing else is in flight between the two QPs. Both sides advance their PSNs
//! as if every packet had been sent, received in order and acknowledged, so the packet path
//! can take over at any message boundary. Whatever this path does not handle (inline data,
//! atomics, fast-registered memory on both sides of one copy, a receiver that is not in step)
//! goes through packets.

use super::{
    rkey,
    state::{
        RecvState,
        SendState,
        Snapshot,
        TakenRecv, //
    },
};
use crate::{
    counters::Counter,
    device::RrxeDevice,
    ib::{
        Access,
        AccessFlags,
        Device,
        NetworkType,
        Qp, //
    },
    mm::copy_span,
    proto::{
        cqe::{
            Cqe,
            WcOpcode,
            WcStatus, //
        },
        hdr::{
            Bth,
            ICRC_LEN, //
        },
        opcode::OpKind,
        packet::ip_packet_len,
        qp_state::{
            QpState,
            QpType, //
        },
        seq,
        wqe::{
            SendFlags,
            SendWqe,
            Sge,
            WrDetail,
            WrOpcode, //
        },
    },
    verbs::cq::RrxeCq,
    verbs::mr::KeyedMr,
    verbs::qp::RrxeQp,
};
use kernel::prelude::*;

/// The longest message copied directly: the copy runs with both QPs' locks held (interrupts
/// off), so its length bounds that time. Longer messages go through packets, a packet's worth
/// under the locks at a time.
const MAX_DIRECT_LEN: u32 = 1 << 20;

/// A checked piece of memory: `len` bytes at `va` of `mr`.
struct Seg {
    mr: KeyedMr,
    va: u64,
    len: u32,
}

/// Where one side of a copy stands in its memory: the segments come from `segs` as the copy
/// reaches them (each SGE looked up and checked then, nothing built beforehand), `None` for
/// one that cannot be used directly, which ends the copy (the packet path takes over).
struct Cursor<I> {
    segs: I,
    cur: Option<Seg>,
    /// Bytes of `cur` already copied.
    off: u32,
}

impl<I: Iterator<Item = Option<Seg>>> Cursor<I> {
    fn new(segs: I) -> Self {
        Self {
            segs,
            cur: None,
            off: 0,
        }
    }

    /// The segment the copy is in, moved to the next one when it is used up, and the offset
    /// in it; `None` at the end or at a segment that cannot be used.
    fn current(&mut self) -> Option<(&Seg, u32)> {
        if self.cur.as_ref().is_none_or(|s| self.off >= s.len) {
            self.cur = Some(self.segs.next()??);
            self.off = 0;
        }
        Some((self.cur.as_ref()?, self.off))
    }
}

/// Local SGEs as segments, each looked up and checked (`access` needed beyond the PD match)
/// when a copy reaches it; empty ones skipped.
fn local<'a>(
    dev: &'a Device<RrxeDevice>,
    pd: usize,
    sges: impl Iterator<Item = Option<Sge>> + 'a,
    access: AccessFlags,
) -> Cursor<impl Iterator<Item = Option<Seg>> + 'a> {
    Cursor::new(
        sges.filter(|sge| sge.is_none_or(|s| s.length != 0))
            .map(move |sge| {
                let sge = sge?;
                let mr = dev.lookup_mr(sge.lkey, pd)?;
                if !access.is_empty() && !mr.access().contains_any(access) && !mr.is_dma() {
                    return None;
                }
                mr.check_direct(sge.addr, sge.length as usize).ok()?;
                Some(Seg {
                    mr,
                    va: sge.addr,
                    len: sge.length,
                })
            }),
    )
}

/// Copies `len` bytes from `src` to `dst`. Fails (`EFAULT`) where either side ends or names
/// memory that cannot be used directly, with what came before it copied: the packet path
/// then writes the message again, whole.
fn copy(
    dst: &mut Cursor<impl Iterator<Item = Option<Seg>>>,
    src: &mut Cursor<impl Iterator<Item = Option<Seg>>>,
    len: u32,
) -> Result {
    let mut left = len;
    while left > 0 {
        let (d, doff) = dst.current().ok_or(EFAULT)?;
        let (s, soff) = src.current().ok_or(EFAULT)?;
        let n = (d.len - doff).min(s.len - soff).min(left);
        let dva = d.va.checked_add(u64::from(doff)).ok_or(EFAULT)?;
        let sva = s.va.checked_add(u64::from(soff)).ok_or(EFAULT)?;
        copy_between(&d.mr, dva, &s.mr, sva, n as usize)?;
        left -= n;
        dst.off += n;
        src.off += n;
    }
    Ok(())
}

/// Copies `n` bytes at `sva` of `src` to `dva` of `dst`. One side at most may be a
/// fast-registration MR, whose mapping's lock is held over the copy ([`KeyedMr::for_spans`]): two
/// such locks would be taken in either order by copies in opposite directions. With two, the
/// message goes through packets (`EINVAL`).
fn copy_between(dst: &KeyedMr, dva: u64, src: &KeyedMr, sva: u64, n: usize) -> Result {
    let mut done = 0usize;
    if src.is_fast_reg() {
        if dst.is_fast_reg() {
            return Err(EINVAL);
        }
        let ds = dst.span(dva, n)?;
        return src.for_spans(sva, n, |ss, k| {
            copy_span(ds.skip(done)?, ss, k)?;
            done += k;
            Ok(())
        });
    }
    let ss = src.span(sva, n)?;
    dst.for_spans(dva, n, |ds, k| {
        copy_span(ds, ss.skip(done)?, k)?;
        done += k;
        Ok(())
    })
}

/// The memory a remote key of the destination QP `dest` names for `access` over
/// `[va, va + len)` (a region or a window onto one: [`rkey::resolve`]), checked now; `None`
/// when it cannot be used directly.
fn remote(
    dest: &Qp<RrxeDevice>,
    dsnap: &Snapshot,
    rkey: u32,
    va: u64,
    len: u32,
    access: AccessFlags,
) -> Option<Cursor<impl Iterator<Item = Option<Seg>>>> {
    let seg = if len == 0 {
        None
    } else {
        let t = rkey::resolve(dest, dsnap, rkey, access, va, u64::from(len)).ok()?;
        t.mr.check_direct(t.va, len as usize).ok()?;
        Some(Seg {
            mr: t.mr,
            va: t.va,
            len,
        })
    };
    Some(Cursor::new(seg.into_iter().map(Some)))
}

/// Executes the WQE just started (the last entry of `st`, parsed from `st.slot`) directly if
/// it can be: a local peer QP connected to this one, idle at the PSN this WQE starts at. `None`
/// when it did not (the packet path sends it), else whether it succeeded (on failure the WQE
/// completed in error and the QP must move to ERR).
pub(crate) fn try_message(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: &mut SendState,
) -> Option<bool> {
    let w = eligible(snap, st)?;
    let dev = qp.device();
    if !dev.is_local(&snap.av) {
        return None;
    }
    let dest = dev.lookup_qp(snap.dest_qpn)?;
    let dsnap = RrxeQp::snapshot(&dest);
    if dsnap.qp_type != snap.qp_type
        || dsnap.dest_qpn != snap.qpn
        || dsnap.limit.is_some()
        || !matches!(dsnap.state, QpState::Rtr | QpState::Rts | QpState::Sqd)
    {
        return None;
    }
    let npkts = seq::packets_for(w.length, snap.mtu)?;
    let mut r = dest.pipe().recv.lock();
    if !r.open
        || r.epsn != st.psn
        || r.last_op.is_some()
        || r.recv.is_some()
        || r.write.is_some()
        || r.read.is_some()
        || r.ack_due.is_some()
        || !r.held.is_empty()
    {
        return None;
    }
    let status = execute(qp, snap, &st.slot, &w, &dest, &dsnap, &mut r)?;
    if w.opcode == WrOpcode::RdmaRead {
        st.rd_outstanding = st.rd_outstanding.saturating_sub(1);
    }
    // The receiver moves past the message as if its packets had come.
    r.epsn = r.epsn.wrapping_add(npkts);
    let kind = match w.opcode {
        WrOpcode::RdmaRead => OpKind::ReadRequest,
        WrOpcode::RdmaWrite | WrOpcode::RdmaWriteWithImm => OpKind::Write,
        _ => OpKind::Send,
    };
    let last_psn = r.epsn.wrapping_sub(1);
    r.reack.executed(kind, last_psn);
    r.msn = r.msn.wrapping_add(1);
    drop(r);
    // And the sender as if they had been sent and acknowledged.
    st.advance(npkts);
    st.comp_psn = st.psn;
    st.cur = None;
    if let Some(t) = st.entry(st.count - 1) {
        t.done = Some(status);
    }
    qp.counts().inc(Counter::DirectMsgs);
    let ipv6 = snap.av.network == NetworkType::Ipv6;
    if w.opcode == WrOpcode::RdmaRead {
        count_as_packets(&dest, qp, npkts, w.length, ipv6);
    } else {
        count_as_packets(qp, &dest, npkts, w.length, ipv6);
    }
    Some(status == WcStatus::Success)
}

/// Counts a message that went directly as its packets would have been counted on the wire:
/// `npkts` packets carrying `length` bytes from `from` (the responder of a READ, else the
/// requester) to `to`, each with its IP, UDP and base transport headers and ICRC (the few bytes
/// of the first's and the last's extension headers are left out), and one packet the other way
/// (a READ's request, else the ACK).
fn count_as_packets(
    from: &Qp<RrxeDevice>,
    to: &Qp<RrxeDevice>,
    npkts: u32,
    length: u32,
    ipv6: bool,
) {
    let bare = ip_packet_len(Bth::LEN + ICRC_LEN, ipv6);
    let data = (length as usize).saturating_add((npkts as usize).saturating_mul(bare));
    let (from, to) = (from.counts(), to.counts());
    from.packets_sent(npkts, data);
    to.packets_received(npkts, data);
    to.packets_sent(1, bare);
    from.packets_received(1, bare);
}

/// The WQE just started, when it may go directly: an RC or UC SEND, WRITE or READ of at most
/// [`MAX_DIRECT_LEN`] bytes, not inline, not resumed mid-message by a retransmission, with
/// everything sent before it finished (nothing may be overtaken).
fn eligible(snap: &Snapshot, st: &mut SendState) -> Option<SendWqe> {
    // A QP its user limits sends packets, each one through its pacer. (DCQCN has nothing to
    // do between QPs of one device: no queue on the way marks their packets.)
    if !matches!(snap.qp_type, QpType::Rc | QpType::Uc) || st.count == 0 || snap.limit.is_some() {
        return None;
    }
    let last = st.count - 1;
    if st.oldest_unfinished().is_some_and(|i| i < last) {
        return None;
    }
    let cur = st.cur.as_ref()?;
    if cur.offset != 0 || cur.sent != 0 {
        return None;
    }
    let w = cur.wqe;
    let direct = matches!(
        w.opcode,
        WrOpcode::Send
            | WrOpcode::SendWithImm
            | WrOpcode::SendWithInv
            | WrOpcode::RdmaWrite
            | WrOpcode::RdmaWriteWithImm
            | WrOpcode::RdmaRead
    );
    (direct && w.length <= MAX_DIRECT_LEN && !w.flags.contains(SendFlags::INLINE)).then_some(w)
}

/// Moves the message of `w` (its local SGEs in `slot`) between this QP and its local peer
/// `dest`, whose responder state `r` is locked: READ and WRITE through the peer's rkey, SEND
/// (and WRITE with immediate) into the peer's next receive WQE. `None` when it cannot go
/// directly (nothing moved or completed: the packet path sends it and reports any error).
fn execute(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    slot: &[u8],
    w: &SendWqe,
    dest: &Qp<RrxeDevice>,
    dsnap: &Snapshot,
    r: &mut RecvState,
) -> Option<WcStatus> {
    let dev = qp.device();
    let sges = (0..w.num_sge).map(|i| w.sge(slot, i));
    let rkey = match w.detail {
        WrDetail::Rdma { rkey } => Some(rkey),
        _ => None,
    };
    match w.opcode {
        WrOpcode::RdmaRead => {
            // A peer without responder resources NAKs the request: the packet path sends it.
            if r.resources.is_empty() {
                return None;
            }
            let mut src = remote(
                dest,
                dsnap,
                rkey?,
                w.iova,
                w.length,
                Access::RemoteRead.into(),
            )?;
            let mut dst = local(dev, snap.pd, sges, Access::LocalWrite.into());
            copy(&mut dst, &mut src, w.length).ok()?;
            Some(WcStatus::Success)
        }
        WrOpcode::RdmaWrite | WrOpcode::RdmaWriteWithImm => {
            let mut dst = remote(
                dest,
                dsnap,
                rkey?,
                w.iova,
                w.length,
                Access::RemoteWrite.into(),
            )?;
            let imm = w.opcode == WrOpcode::RdmaWriteWithImm;
            if imm && !has_recv(dest, r) {
                return None;
            }
            let mut src = local(dev, snap.pd, sges, AccessFlags::empty());
            copy(&mut dst, &mut src, w.length).ok()?;
            if imm {
                deliver_recv(dest, dsnap, r, w, WcOpcode::RecvRdmaWithImm);
            }
            Some(WcStatus::Success)
        }
        _ => {
            if !has_recv(dest, r) {
                return None;
            }
            let src = local(dev, snap.pd, sges, AccessFlags::empty());
            fill_recv(dest, dsnap, r, w, src)?;
            deliver_recv(dest, dsnap, r, w, WcOpcode::Recv)
        }
    }
}

/// Whether the receiver has a valid receive WQE (taken into its state when it has). A
/// malformed one stays taken for the packet path, which reports it.
fn has_recv(dest: &Qp<RrxeDevice>, r: &mut RecvState) -> bool {
    let taken = super::responder::take_recv(dest, r);
    r.direct_recv = taken;
    matches!(taken, Some(TakenRecv::Wqe(..)))
}

/// Copies a SEND's data from `src` (the sender's memory) into the receiver's WQE taken by
/// [`has_recv`]. `None` when it cannot be copied directly: a receive buffer this path cannot
/// reach (a region with on-demand paging, a fast-registered one when the sender's is too), or
/// one that is too small or not writable. The WQE stays taken for the packet path, which
/// sends the message and faults, or reports the error with the right NAK.
fn fill_recv(
    dest: &Qp<RrxeDevice>,
    dsnap: &Snapshot,
    r: &RecvState,
    w: &SendWqe,
    mut src: Cursor<impl Iterator<Item = Option<Seg>>>,
) -> Option<()> {
    let Some(TakenRecv::Wqe(_, length)) = r.direct_recv else {
        return None;
    };
    if w.length > length {
        return None;
    }
    let mut dst = local(
        dest.device(),
        dsnap.pd,
        r.sges.iter().map(|s| Some(*s)),
        Access::LocalWrite.into(),
    );
    // A partial copy is written again by the packet path.
    copy(&mut dst, &mut src, w.length).ok()
}

/// Completes the receiver's WQE taken by [`has_recv`] (filled by [`fill_recv`] for a SEND).
/// Returns the sender's completion status.
fn deliver_recv(
    dest: &Qp<RrxeDevice>,
    dsnap: &Snapshot,
    r: &mut RecvState,
    w: &SendWqe,
    opcode: WcOpcode,
) -> Option<WcStatus> {
    let Some(TakenRecv::Wqe(wr_id, _)) = r.direct_recv else {
        return None;
    };
    r.direct_recv = None;
    let mut c = Cqe::received(wr_id, opcode, w.length, dsnap.qpn, dsnap.dest_qpn);
    if matches!(w.opcode, WrOpcode::SendWithImm | WrOpcode::RdmaWriteWithImm) {
        c = c.with_imm(w.ex);
    }
    if w.opcode == WrOpcode::SendWithInv {
        // As the packet path's responder: the key is invalidated for the receiver's PD (an
        // unknown key or another PD's is ignored), and the completion names it.
        let _ = rkey::invalidate(dest.device(), w.ex, dsnap.pd, Some(dest.mw_token()));
        c = c.with_inv(w.ex);
    }
    dest.counts().inc(Counter::RdmaRecvs);
    if let Some(cq) = dest.recv_cq() {
        let solicited = w.flags.contains(SendFlags::SOLICITED);
        // The receiver's pass, not this one, moves it to ERR if its CQ overran.
        super::after_push(dest, RrxeCq::push(cq, &c, dest.handle(), solicited));
    }
    Some(WcStatus::Success)
}
