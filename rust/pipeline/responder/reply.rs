// SPDX-License-Identifier: GPL-2.0

//! What the responder sends back: ACKs and NAKs (one coalesced ACK per pass), RDMA READ
//! responses (packet by packet, the memory looked up by rkey for each), atomic ACKs, the
//! zero-length READ response of FLUSH and ATOMIC WRITE, and the answers to duplicates from the
//! saved responder resources.

use super::{
    super::{
        congestion,
        odp::{
            self,
            Access,
            Side, //
        },
        rkey,
        state::{
            ReadOut,
            RecvState,
            Resource,
            Snapshot, //
        },
        xmit, DropReason, Outbox, TxItem,
    },
    RecvGuard,
};
use crate::{
    device::RrxeDevice,
    ib::{
        self,
        Qp, //
    },
    kernel_ext::now_ns,
    mm::Fill,
    proto::{
        hdr::{
            Aeth,
            AtomicAckEth,
            Bth, //
        },
        opcode::{
            OpKind,
            Opcode, //
        },
        packet::{
            pad_for,
            ParsedHeaders,
            TransportHeaders, //
        },
        psn::Psn,
        seq::{
            self,
            DuplicateAction, //
        },
    },
};
use kernel::prelude::*;

/// Builds a response packet (ACK, NAK, READ response, atomic ACK) to the QP's peer.
pub(super) fn response(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    opcode: Opcode,
    psn: Psn,
    (aeth, atomic): (Option<Aeth>, Option<AtomicAckEth>),
    payload: usize,
    fill: impl FnOnce(&mut Fill<'_>) -> Result,
) -> Result<TxItem> {
    let mut h = TransportHeaders::new(Bth {
        pad: pad_for(payload),
        ..Bth::plain(opcode, snap.dest_qpn, psn)
    });
    h.aeth = aeth;
    h.atomic_ack_eth = atomic;
    let skb = xmit::build(qp.device(), &h, payload, fill)?;
    Ok(TxItem {
        skb,
        av: snap.av,
        src_port: snap.src_port,
    })
}

/// Queues an ACK or NAK with `syndrome` for `psn`.
pub(super) fn ack(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    msn: u32,
    psn: Psn,
    syndrome: u8,
    out: &mut Outbox,
) {
    let aeth = Aeth {
        syndrome,
        msn: msn & 0xff_ffff,
    };
    if let Ok(item) = response(qp, snap, Opcode::RC_ACK, psn, (Some(aeth), None), 0, |_| {
        Ok(())
    }) {
        out.push(item);
    }
}

/// Sends the coalesced ACK of this pass, if one is due and the batch has room (a full batch
/// makes the pass go again: the ACK stays due for it).
pub(crate) fn flush_ack(qp: &Qp<RrxeDevice>, snap: &Snapshot, out: &mut Outbox) {
    if !qp.pipe().reply_may_be_due() || out.is_full() {
        return;
    }
    let mut st = qp.pipe().recv.lock();
    if st.read.is_none() && st.ack_due.is_none() && st.held.is_empty() {
        qp.pipe().no_reply_due();
        return;
    }
    if let Some(psn) = st.ack_due.take() {
        let msn = st.msn;
        drop(st);
        ack(qp, snap, msn, psn, Aeth::ACK_UNLIMITED, out);
    }
}

/// Whether a READ's responses are being sent: the requests behind it wait for them.
pub(crate) fn read_in_progress(qp: &Qp<RrxeDevice>) -> bool {
    qp.pipe().reply_may_be_due() && qp.pipe().recv.lock().read.is_some()
}

/// The QP's connection (its moves to RTR, counted) as a pass starts, for [`hold`].
pub(crate) fn connection(qp: &Qp<RrxeDevice>) -> u32 {
    qp.pipe().recv.lock().conn
}

/// Keeps the replies in `out` for the next pass that may send ([`take_held`]): this one may
/// not ([`crate::pipeline::pass::receive_pass`]). It starts with what was held before, so
/// they fit. Replies made under connection `conn` which the QP has left since (reset and
/// connected again) are dropped: they answer requests of its past, as those a RESET clears.
pub(crate) fn hold(qp: &Qp<RrxeDevice>, out: &mut Outbox, conn: u32) {
    if out.is_empty() {
        return;
    }
    let mut st = qp.pipe().recv.lock();
    if st.conn != conn {
        drop(st);
        out.discard();
        return;
    }
    let dropped = out.hold_into(&mut st.held);
    qp.pipe().reply_due();
    drop(st);
    // No memory to keep them: lost as a packet the wire drops, which the requester's
    // retransmission recovers.
    for _ in 0..dropped {
        qp.counts().inc(crate::counters::Counter::SendErr);
    }
}

/// Puts the replies held by a pass that could not send ([`hold`]) into `out`, first. A pass
/// starts with an empty batch, which they fit.
pub(crate) fn take_held(qp: &Qp<RrxeDevice>, out: &mut Outbox) {
    if qp.pipe().reply_may_be_due() {
        out.take_from(&mut qp.pipe().recv.lock().held);
    }
}

/// Sends more responses of the READ in progress; `true` while some remain.
pub(crate) fn continue_read(qp: &Qp<RrxeDevice>, snap: &Snapshot, out: &mut Outbox) -> bool {
    if !qp.pipe().reply_may_be_due() {
        return false;
    }
    let mut st = qp.pipe().recv.lock();
    while !out.is_full() {
        let msn = st.msn;
        // An ACK still due names a SEND or WRITE before this READ: it leaves first. After the
        // READ's first responses it would be an ACK older than the READ the requester is in the
        // middle of, which C rxe's completer answers by failing the QP ([`seq::ReackPsn`]).
        let reading = st.read.is_some();
        if let Some(psn) = st.ack_due.take_if(|_| reading) {
            ack(qp, snap, msn, psn, Aeth::ACK_UNLIMITED, out);
            continue;
        }
        let Some(r) = st.read.as_mut() else {
            return false;
        };
        if r.sent >= r.npkts {
            st.read = st.read_next.pop();
            continue;
        }
        // A rate-limited QP's responses keep to its rate too: the READ waits for the timer.
        let now = snap.paced().then(now_ns);
        if now.is_some_and(|now| congestion::pace_wait(qp, snap, now)) {
            return true;
        }
        let Some((psn, item)) = next_read_response(qp, snap, r, msn) else {
            st.read = st.read_next.pop();
            continue;
        };
        match item {
            Ok(item) => {
                if let Some(now) = now {
                    congestion::sent(qp, snap, now, item.skb.len());
                }
                out.push(item)
            }
            Err(e) if e == EAGAIN => {
                // A page is being faulted in: this response is built again when it is in.
                // No received packet waits for it.
                if let Some(r) = st.read.as_mut() {
                    r.sent -= 1;
                }
                qp.pipe().odp.take_parked();
                return true;
            }
            Err(_) => {
                // The memory vanished under the READ: answer with a remote access NAK.
                st.read = None;
                st.read_next.clear();
                let msn = st.msn;
                drop(st);
                ack(qp, snap, msn, psn, Aeth::NAK_REMOTE_ACCESS_ERROR, out);
                return false;
            }
        }
    }
    st.read.is_some()
}

/// The next response of READ `r` (its packet `r.sent`, counted as sent) and its PSN, its data
/// read from the memory its rkey names now; `None` when the READ has no next response.
fn next_read_response(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    r: &mut ReadOut,
    msn: u32,
) -> Option<(Psn, Result<TxItem>)> {
    let mtu = snap.mtu;
    let off = r.sent.saturating_mul(mtu);
    let n = r.len.saturating_sub(off).min(mtu) as usize;
    let opcode = seq::read_response_opcode(r.sent, r.npkts)?;
    let info_has_aeth = opcode != Opcode::RC_READ_RESPONSE_MIDDLE;
    let aeth = info_has_aeth.then_some(Aeth {
        syndrome: Aeth::ACK_UNLIMITED,
        msn: msn & 0xff_ffff,
    });
    let psn = r.psn.wrapping_add(r.sent);
    let va = r.va.checked_add(u64::from(off));
    let rkey = r.rkey;
    let rest = u64::from(r.len.saturating_sub(off));
    r.sent += 1;
    let item = va
        .ok_or(EFAULT)
        .and_then(|va| {
            rkey::resolve(qp, snap, rkey, ib::Access::RemoteRead.into(), va, n as u64)
                .map_err(|_| EFAULT)
        })
        .and_then(|t| {
            response(qp, snap, opcode, psn, (aeth, None), n, |dst| {
                let r = t.mr.read(t.va, n, dst);
                let a = Access {
                    va: t.va,
                    need: n as u64,
                    ahead: rest,
                    write: false,
                };
                odp::check(qp, Side::Recv, &t.mr, a, r)
            })
        });
    Some((psn, item))
}

/// Answers a duplicate READ (`again`: the run of its responses to send again) in turn with the
/// READ being sent, if any:
/// - a run of that READ from a response it sent already (the requester lost it) starts again
///   there, and what it had still to send is queued first behind it;
/// - a run it is still to send needs nothing, unless it goes further: what lies beyond is
///   queued;
/// - any other (a later run of the same READ, another READ) is queued behind it. A requester
///   that placed responses past several gaps asks for each run at once, and a go-back-N one
///   sends its READs again one after the other; before, all but the first were dropped and
///   asked for again a round trip later each.
///
/// `Err` when the queue is full: the duplicate is dropped and asked for again.
pub(super) fn read_again(st: &mut RecvState, again: ReadOut) -> Result<(), DropReason> {
    let Some(r) = st.read else {
        st.read = Some(again);
        return Ok(());
    };
    let queued = if r.psn != again.psn || again.sent >= r.npkts {
        st.read_next.push(again)
    } else if again.sent >= r.sent {
        let beyond = ReadOut {
            sent: r.npkts,
            ..again
        };
        again.npkts <= r.npkts || st.read_next.push(beyond)
    } else {
        let rest = ReadOut {
            sent: r.sent.max(again.npkts),
            ..r
        };
        if rest.sent < rest.npkts && !st.read_next.push_front(rest) {
            return Err(DropReason::Duplicate);
        }
        st.read = Some(again);
        true
    };
    queued.then_some(()).ok_or(DropReason::Duplicate)
}

/// Answers a request that failed with a NAK of `syndrome` at the expected PSN (RC only: the
/// caller decides), releasing the receive state first.
pub(super) fn nak(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: RecvGuard<'_>,
    syndrome: u8,
    out: &mut Outbox,
) {
    let (msn, epsn) = (st.msn, st.epsn);
    drop(st);
    ack(qp, snap, msn, epsn, syndrome, out);
}

pub(super) fn atomic_ack(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    msn: u32,
    psn: Psn,
    orig: u64,
    out: &mut Outbox,
) {
    let aeth = Aeth {
        syndrome: Aeth::ACK_UNLIMITED,
        msn: msn & 0xff_ffff,
    };
    let item = response(
        qp,
        snap,
        Opcode::RC_ATOMIC_ACK,
        psn,
        (Some(aeth), Some(AtomicAckEth { orig })),
        0,
        |_| Ok(()),
    );
    if let Ok(item) = item {
        out.push(item);
    }
}

/// Finishes a FLUSH or ATOMIC WRITE at `psn`: keeps it for duplicates and answers with a
/// zero-length READ RESPONSE ONLY carrying the ACK (IBA oA19-14; what C rxe sends and expects).
pub(super) fn answer_with_empty_read(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    mut st: RecvGuard<'_>,
    psn: Psn,
    out: &mut Outbox,
) {
    st.resources.save(Resource::Answered { psn });
    st.msn = st.msn.wrapping_add(1);
    st.epsn = psn.next();
    // FLUSH and ATOMIC WRITE alike: answered by their own response.
    st.reack.executed(OpKind::Flush, psn);
    st.last_op = None;
    let msn = st.msn;
    drop(st);
    empty_read_response(qp, snap, msn, psn, out);
}

/// Queues a zero-length RDMA READ RESPONSE ONLY acknowledging `psn`.
pub(super) fn empty_read_response(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    msn: u32,
    psn: Psn,
    out: &mut Outbox,
) {
    let aeth = Aeth {
        syndrome: Aeth::ACK_UNLIMITED,
        msn: msn & 0xff_ffff,
    };
    let opcode = Opcode::RC_READ_RESPONSE_ONLY;
    if let Ok(item) = response(qp, snap, opcode, psn, (Some(aeth), None), 0, |_| Ok(())) {
        out.push(item);
    }
}

/// A duplicate RC request: SEND/WRITE are acknowledged again, READs re-executed from the
/// duplicate's PSN, atomics answered with the saved result, FLUSH and ATOMIC WRITE with another
/// zero-length READ response.
pub(super) fn duplicate(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    mut st: RecvGuard<'_>,
    h: &ParsedHeaders,
    out: &mut Outbox,
) -> Result<(), DropReason> {
    let psn = h.headers.bth.psn;
    match seq::duplicate_action(h.headers.bth.opcode) {
        Some(DuplicateAction::Reack) => {
            if let Some(last) = st.reack.psn().filter(|_| h.headers.bth.ack_req) {
                let msn = st.msn;
                drop(st);
                ack(qp, snap, msn, last, Aeth::ACK_UNLIMITED, out);
            }
            Ok(())
        }
        Some(DuplicateAction::Replay) => {
            let found = st.resources.find(|r| match *r {
                Resource::Read { psn: p, npkts, .. } => crate::proto::psn::in_window(psn, p, npkts),
                Resource::Atomic { psn: p, .. } | Resource::Answered { psn: p } => p == psn,
            });
            match found {
                Some(Resource::Read {
                    psn: p,
                    npkts,
                    va,
                    rkey,
                    len,
                }) => {
                    let read = ReadOut {
                        rkey,
                        va,
                        len,
                        psn: p,
                        npkts,
                        sent: 0,
                    };
                    replay_read(qp, snap, &mut st, h, read)
                }
                Some(Resource::Atomic { orig, .. }) => {
                    let msn = st.msn;
                    drop(st);
                    atomic_ack(qp, snap, msn, psn, orig, out);
                    Ok(())
                }
                // Executed once already: only the answer is sent again (oA19-14, oA19-15).
                Some(Resource::Answered { .. }) => {
                    let msn = st.msn;
                    drop(st);
                    empty_read_response(qp, snap, msn, psn, out);
                    Ok(())
                }
                None => Err(DropReason::Duplicate),
            }
        }
        None => Err(DropReason::Duplicate),
    }
}

/// Answers a duplicate of `read` (a READ the responder answered, whose resource it kept) again:
/// from the duplicate's PSN to the end of the range its RETH names, when that range is the
/// READ's own from there (a requester that placed the responses after a gap asks for the run
/// it misses; C rxe answers the same), else to the READ's end. Its rkey must still resolve.
fn replay_read(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: &mut RecvState,
    h: &ParsedHeaders,
    read: ReadOut,
) -> Result<(), DropReason> {
    let (va, rkey) = (read.va, read.rkey);
    let whole = u64::from(read.len);
    if rkey::resolve(qp, snap, rkey, ib::Access::RemoteRead.into(), va, whole).is_err() {
        return Err(DropReason::BadRkey);
    }
    let start = h.headers.bth.psn.distance_from(read.psn);
    let end = h
        .headers
        .reth
        .filter(|r| {
            let at = u64::from(start).saturating_mul(u64::from(snap.mtu));
            r.rkey == rkey && r.dma_len > 0 && va.checked_add(at) == Some(r.va)
        })
        .and_then(|r| seq::packets_for(r.dma_len, snap.mtu))
        .map_or(read.npkts, |n| start.saturating_add(n).min(read.npkts));
    read_again(
        st,
        ReadOut {
            npkts: end,
            sent: start,
            ..read
        },
    )?;
    qp.pipe().reply_due();
    Ok(())
}
