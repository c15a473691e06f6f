// SPDX-License-Identifier: GPL-2.0

//! One pass of a QP's work ([`pass`]): the received packets (responder for requests,
//! completer for responses), then the requester, then the retiring of finished WQEs; and the
//! pass of a run that may not send ([`receive_pass`]), which handles what arrived and holds
//! the replies.

use super::{
    completer, congestion, drop_qp_packet, odp, recv, requester, responder, state::Snapshot,
    DropReason, Kicks, Outbox,
};
use crate::{
    counters::Counter,
    device::RrxeDevice,
    ib::Qp,
    net::SkBuff,
    proto::{
        cnp, ecn,
        hdr::Bth,
        opcode::OpKind,
        packet,
        qp_state::{
            QpState,
            QpType, //
        },
    },
    verbs::qp::RrxeQp,
};
use kernel::sync::atomic::Relaxed;
/// One pass, sending what it builds through `out`; `true` when another pass may find work that
/// no event announces: the batch filled up with work left, retiring WQEs made room that a
/// blocked WQE waits for, or the QP failed. Everything else that makes work (a doorbell, a
/// packet, a timer, a resolved page fault) kicks the QP, and a kick during a run makes the run
/// go once more ([`gate`]); so a pass that merely did something is not followed by an empty
/// one.
pub(super) fn pass(qp: &Qp<RrxeDevice>, out: &mut Outbox, kicks: &mut Kicks) -> bool {
    let snap = RrxeQp::snapshot(qp);
    let c = completer::on_timer(qp, &snap);
    // Replies a pass that could not send made leave first.
    responder::take_held(qp, out);
    let mut fatal = c.fatal | handle_inbox(qp, &snap, out, true);
    responder::flush_ack(qp, &snap, out);
    let mut blocked = false;
    if !fatal && !waits(qp, &snap, odp::Side::Send) {
        let r = requester::run(qp, &snap, out);
        blocked = r.blocked;
        fatal |= r.fatal;
    }
    let retired = completer::complete_done(qp, &snap);
    fatal |= retired.failed | cq_overran(qp);
    // A full batch stopped the responder or the requester with work left; retiring makes
    // room in the window that a blocked WQE waits for.
    let again = out.is_full() || (blocked && retired.any) || fatal;
    out.send_all(qp, kicks);
    if fatal {
        RrxeQp::pipeline_fatal(qp, snap.epoch);
    }
    again
}

/// A pass of a run that may not send ([`super::flow`]: the QP's packets are in the stack on another
/// CPU): the packets received are handled, up to one that must wait behind a READ's responses,
/// and the completions they make are written; the replies they make at once (NAKs, atomic
/// results, answers to duplicates) are held for the next pass that may send. ACKs and READ
/// responses wait as state of the responder, as they do between passes. So a QP whose last
/// packet was parked on another CPU still delivers what arrives here without waiting for that
/// CPU's drain: the receiving half of a round trip costs no wakeup of another CPU.
pub(super) fn receive_pass(qp: &Qp<RrxeDevice>, out: &mut Outbox) {
    let conn = responder::connection(qp);
    let snap = RrxeQp::snapshot(qp);
    responder::take_held(qp, out);
    let mut fatal = handle_inbox(qp, &snap, out, false);
    fatal |= completer::complete_done(qp, &snap).failed | cq_overran(qp);
    responder::hold(qp, out, conn);
    if fatal {
        RrxeQp::pipeline_fatal(qp, snap.epoch);
    }
}

/// Whether a side of the QP waits for a page fault: it does nothing until the fault work
/// resumes it (a QP in ERR only flushes and drops: it touches no memory and need not wait).
fn waits(qp: &Qp<RrxeDevice>, snap: &Snapshot, side: odp::Side) -> bool {
    snap.state != QpState::Err && qp.pipe().odp.stalled(side)
}

/// Whether a completion of the QP did not fit its CQ (this pass's, or another context's).
fn cq_overran(qp: &Qp<RrxeDevice>) -> bool {
    let pipe = qp.pipe();
    pipe.cq_overrun.load(Relaxed) && pipe.cq_overrun.xchg(false, Relaxed)
}

/// Handles the received packets while `out` has room; `may_send`: the READ in progress sends
/// its responses first, else the packets behind it wait. `true` when the QP must move to ERR.
fn handle_inbox(qp: &Qp<RrxeDevice>, snap: &Snapshot, out: &mut Outbox, may_send: bool) -> bool {
    let mut fatal = false;
    while !out.is_full() && !waits(qp, snap, odp::Side::Recv) {
        let reading = if may_send {
            responder::continue_read(qp, snap, out)
        } else {
            responder::read_in_progress(qp)
        };
        if reading {
            break;
        }
        // A request kept past a gap whose turn has come goes before what arrived after it.
        let next = responder::take_due(qp, snap, out).or_else(|| qp.pipe().inbox.pop());
        let Some(mut skb) = next else {
            break;
        };
        let h = handle(qp, snap, &mut skb, out);
        if qp.pipe().odp.take_parked() {
            // The packet needs a page that is being faulted in: it is handled again first.
            qp.pipe().inbox.push_front(skb);
            break;
        }
        fatal |= h.fatal;
        if let Some(at) = h.keep {
            if let Err((skb, why)) = responder::keep(qp, at, skb) {
                drop_qp_packet(qp, why, None);
                drop(skb);
            }
        } else if !h.dropped {
            // Drop monitors see only the packets dropped (and counted) above.
            skb.consume();
        }
    }
    fatal
}

/// What became of a received packet.
#[derive(Default)]
struct Handled {
    /// The QP must move to ERR.
    fatal: bool,
    /// The packet was dropped (and counted).
    dropped: bool,
    /// An RC request past a gap, to be kept for its turn: its PSN and connection.
    keep: Option<responder::KeepAt>,
}

impl Handled {
    const DROPPED: Self = Self {
        fatal: false,
        dropped: true,
        keep: None,
    };
}

/// Whether a packet (its GRH area `grh`) of a connected QP comes from elsewhere than the QP's
/// peer: a connected QP talks to one peer (rxe's `check_addr`), so its packets must come from
/// the address of the QP's address vector, to the QP's own.
fn from_elsewhere(snap: &Snapshot, grh: &[u8; responder::GRH_LEN]) -> bool {
    matches!(snap.qp_type, QpType::Rc | QpType::Uc)
        && (recv::source_gid(grh) != snap.av.dgid || recv::dest_gid(grh) != snap.av.sgid)
}

/// Handles one received packet.
fn handle(qp: &Qp<RrxeDevice>, snap: &Snapshot, skb: &mut SkBuff, out: &mut Outbox) -> Handled {
    let mut grh = [0u8; responder::GRH_LEN];
    grh.copy_from_slice(&skb.cb()[..responder::GRH_LEN]);
    let data = skb.data();
    // The opcode byte first: no other packet's BTH is parsed twice.
    if data.first() == Some(&cnp::CNP_OPCODE.0) {
        if let Some(bth) = Bth::parse(data).ok().filter(|b| cnp::is_cnp(data, b)) {
            if from_elsewhere(snap, &grh) {
                drop_qp_packet(qp, DropReason::AddressMismatch, Some(&bth));
                return Handled::DROPPED;
            }
            congestion::cnp_arrived(qp, snap);
            return Handled::default();
        }
    }
    let Ok(h) = packet::parse_headers(data) else {
        drop_qp_packet(qp, DropReason::Malformed, None);
        return Handled::DROPPED;
    };
    let bth = h.headers.bth;
    let Some(payload) = data.get(h.payload_offset..h.payload_offset + h.payload_len) else {
        drop_qp_packet(qp, DropReason::Malformed, Some(&bth));
        return Handled::DROPPED;
    };
    if from_elsewhere(snap, &grh) {
        drop_qp_packet(qp, DropReason::AddressMismatch, Some(&bth));
        return Handled::DROPPED;
    }
    if ecn::is_ce(&grh) {
        congestion::ce_arrived(qp, snap, h.info.kind == OpKind::ReadResponse, out);
    }
    if h.info.is_request {
        match responder::on_request(qp, snap, &h, payload, &grh, out) {
            Ok(responder::Received::Done) => Handled::default(),
            Ok(responder::Received::Keep(at)) => Handled {
                keep: Some(at),
                ..Handled::default()
            },
            Err(reason) => {
                drop_qp_packet(qp, reason, Some(&bth));
                Handled {
                    fatal: reason == DropReason::BadRecvWqe,
                    dropped: true,
                    keep: None,
                }
            }
        }
    } else {
        qp.counts().inc(Counter::AckDeferred);
        let c = completer::on_response(qp, snap, &h, payload);
        if let Some(reason) = c.dropped {
            drop_qp_packet(qp, reason, Some(&bth));
        }
        Handled {
            fatal: c.fatal,
            dropped: c.dropped.is_some(),
            keep: None,
        }
    }
}
