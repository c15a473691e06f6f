// SPDX-License-Identifier: GPL-2.0

//! Request packets: the next packet of the WQE being sent, its headers (the BTH and the
//! extension headers its opcode carries) and its payload, gathered from the WQE's SGEs or
//! inline data; then the sender's progress past it.

use super::mtu_of;
use crate::{
    counters::Counter,
    device::RrxeDevice,
    ib::{
        AddressVector,
        Qp, //
    },
    kernel_ext::now_ns,
    mm::Fill,
    pipeline::{
        congestion, mem,
        odp::Side,
        state::{
            SendState,
            Snapshot,
            Track, //
        },
        xmit, TxItem,
    },
    proto::{
        cqe::WcStatus,
        hdr::{
            AtomicEth,
            Bth,
            Deth,
            Feth,
            Ieth,
            Immdt,
            Reth, //
        },
        opcode::{
            ExtHeader,
            Position, //
        },
        packet::{
            pad_for,
            TransportHeaders, //
        },
        psn::cmp_psn,
        qp_state::QpType,
        read_gaps::ReadAsk,
        seq,
        wqe::{
            SendFlags,
            SendWqe,
            WrDetail,
            WrOpcode, //
        },
    },
};
use core::cmp::Ordering;
use kernel::prelude::*;

/// Builds the next packet of the current WQE; `None` when there is none or its payload waits
/// for a page being faulted in. An error fails the WQE. `now` is the time for a paced QP.
pub(super) fn next_packet(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: &mut SendState,
    now: Option<u64>,
) -> Result<Option<TxItem>, WcStatus> {
    let Some(cur) = st.cur.as_ref() else {
        return Ok(None);
    };
    let (w, offset, sent, npkts) = (cur.wqe, cur.offset, cur.sent, cur.npkts);
    let position = seq::position(sent, npkts).ok_or(WcStatus::LocQpOpErr)?;
    let opcode =
        seq::request_opcode(snap.qp_type, w.opcode, position).ok_or(WcStatus::LocQpOpErr)?;
    let payload = if w.opcode.request_has_no_payload() {
        0
    } else {
        (w.length - offset).min(mtu_of(snap))
    };
    let last = position.ends_message();
    // Applied once the packet is built (a payload waiting for a page fault is built again).
    let since_ackreq = st.since_ackreq.saturating_add(1);
    let paced_due = now.is_some_and(|now| {
        seq::paced_ack_due(
            now,
            st.ackreq_ns,
            crate::pipeline::timeout_us(snap.timeout, 0),
        )
    });
    // A probe asks for its answer (selective recovery), and so does the last packet a paced
    // QP's in-flight cap lets go.
    let asks = st.probe == Some(st.psn) || (now.is_some() && congestion::fills_window(st));
    let ack_req = snap.qp_type == QpType::Rc
        && (paced_due || asks || seq::ack_due(since_ackreq, last, seq::MAX_PKT_PER_ACK));
    let (dest_qpn, av) = destination(qp, snap, &w)?;
    let mut h = TransportHeaders::new(Bth {
        solicited: last && w.flags.contains(SendFlags::SOLICITED),
        pad: pad_for(payload as usize),
        ack_req,
        ..Bth::plain(opcode, dest_qpn, st.psn)
    });
    let info = opcode.info().ok_or(WcStatus::LocQpOpErr)?;
    let starts = position.starts_message() || position == Position::Only;
    for &ext in info.ext_headers {
        ext_header(&mut h, ext, snap, &w, starts, offset)?;
    }
    let slot = &st.slot;
    let skb = match xmit::build(qp.device(), &h, payload as usize, |dst| {
        fill_payload(qp, snap, &w, slot, offset, dst)
    }) {
        Ok(skb) => skb,
        // A page of the payload is being faulted in: the sender waits ([`super::super::odp`]).
        Err(e) if e == EAGAIN => return Ok(None),
        Err(_) => return Err(WcStatus::LocQpOpErr),
    };
    st.since_ackreq = if ack_req { 0 } else { since_ackreq };
    if ack_req {
        if let Some(now) = now {
            st.ackreq_ns = now;
        }
        // Timed for the round-trip time tail probes wait by, unless it goes again (Karn): by
        // its ACK, or a READ's or atomic's request by its first answer. No clock read without
        // tail probes.
        if crate::params::tail_probes() && cmp_psn(st.psn, st.sent_to) != Ordering::Less {
            st.rtt
                .sending(st.psn, now.unwrap_or_else(now_ns), st.comp_psn);
        }
    }
    if w.opcode == WrOpcode::RdmaRead && offset > 0 {
        st.read_resumed_at = Some(st.psn);
    }
    sent_one(st, snap, &w, offset, payload)?;
    Ok(Some(TxItem {
        skb,
        av,
        src_port: snap.src_port,
    }))
}

/// The request asking again for a run of the oldest unanswered READ's responses
/// ([`crate::proto::read_gaps`]), if one is due: a READ request at the run's first PSN whose
/// RETH names the run's bytes of the READ's remote buffer (copied with its sink). It takes no
/// new PSN; the next new PSN is remembered, as an answer from there on shows the responder
/// answered the ask. An ask that names no outstanding READ any more is dropped.
pub(super) fn read_ask(qp: &Qp<RrxeDevice>, snap: &Snapshot, st: &mut SendState) -> Option<TxItem> {
    let a = st.read_ask.filter(|a| a.after.is_none())?;
    // The oldest unanswered READ; WQEs before it that wait for an ACK only are acknowledged
    // by its answer (a tail probe asks for a READ none of whose responses came behind them).
    let t = st.first_unanswered();
    let Some((t, item)) = t.and_then(|t| ask_packet(qp, snap, st, t, a).map(|i| (t, i))) else {
        st.read_ask = None;
        return None;
    };
    // A responder that took an earlier ask for a new READ (it never saw this one) answers this
    // one as new too: from a FIRST or ONLY at its start.
    if a.start != t.first_psn {
        st.read_resumed_at = Some(a.start);
    }
    st.read_ask = Some(ReadAsk {
        after: Some(st.psn),
        ..a
    });
    Some(item)
}

/// An extra ask (`state/extra_asks.rs`) not sent yet, built as [`read_ask`] builds the oldest
/// run's, for the READ that holds its run; one that names no outstanding READ is dropped.
pub(super) fn extra_ask(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: &mut SendState,
) -> Option<TxItem> {
    let k = st
        .extra_asks
        .iter()
        .position(|a| a.is_some_and(|a| a.after.is_none()))?;
    let a = st.extra_asks[k]?;
    let t = st.holding(a.start).and_then(|i| st.entry(i).copied());
    let Some(item) = t.and_then(|t| ask_packet(qp, snap, st, t, a)) else {
        st.extra_asks[k] = None;
        return None;
    };
    st.extra_asks[k] = Some(ReadAsk {
        after: Some(st.psn),
        ..a
    });
    Some(item)
}

/// The READ request of ask `a` for the run of READ `t`'s responses it names; `None` when `t`
/// is no READ holding that run.
fn ask_packet(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    st: &SendState,
    t: Track,
    a: ReadAsk,
) -> Option<TxItem> {
    let holds = t.opcode == WrOpcode::RdmaRead
        && cmp_psn(a.start, t.first_psn) != Ordering::Less
        && cmp_psn(a.end, t.last_psn) != Ordering::Greater
        && cmp_psn(a.end, a.start) != Ordering::Less;
    let sink = t.sink.filter(|_| holds)?;
    let remote = st.sinks.remote(sink);
    let skip = a.start.distance_from(t.first_psn).checked_mul(snap.mtu)?;
    let runs = (a.end.distance_from(a.start) + 1).checked_mul(snap.mtu)?;
    let len = t.length.checked_sub(skip)?.min(runs);
    let opcode = seq::request_opcode(QpType::Rc, WrOpcode::RdmaRead, Position::Only)?;
    let mut h = TransportHeaders::new(Bth::plain(opcode, snap.dest_qpn, a.start));
    h.reth = Some(Reth {
        va: remote.va.checked_add(u64::from(skip))?,
        rkey: remote.rkey,
        dma_len: len,
    });
    let skb = xmit::build(qp.device(), &h, 0, |_| Ok(())).ok()?;
    qp.counts().inc(Counter::ReadAsked);
    Some(TxItem {
        skb,
        av: snap.av,
        src_port: snap.src_port,
    })
}

/// Where the packet goes: the connected QP's peer, or a UD WQE's address handle (of the QP's
/// PD) and remote QP.
fn destination(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    w: &SendWqe,
) -> Result<(u32, AddressVector), WcStatus> {
    match w.detail {
        WrDetail::Ud {
            remote_qpn, ah_num, ..
        } => {
            let av = qp.device().ah_av(ah_num, snap.pd);
            Ok((remote_qpn, av.ok_or(WcStatus::LocQpOpErr)?))
        }
        _ => Ok((snap.dest_qpn, snap.av)),
    }
}

/// Fills extension header `ext` of a packet of `w` from byte `offset` of its message. The
/// RETH goes only in a message's first packet.
fn ext_header(
    h: &mut TransportHeaders,
    ext: ExtHeader,
    snap: &Snapshot,
    w: &SendWqe,
    starts: bool,
    offset: u32,
) -> Result<(), WcStatus> {
    match ext {
        ExtHeader::Reth if starts => {
            let rkey = match w.detail {
                WrDetail::Rdma { rkey } | WrDetail::Flush { rkey, .. } => rkey,
                _ => 0,
            };
            // A resumed READ asks for the rest (`offset` is zero otherwise).
            let va = w.iova.checked_add(u64::from(offset));
            h.reth = Some(Reth {
                va: va.ok_or(WcStatus::LocQpOpErr)?,
                rkey,
                dma_len: w.length - offset,
            });
        }
        // `ex` holds the big-endian immediate as stored in memory.
        ExtHeader::Immdt => {
            h.immdt = Some(Immdt {
                imm: u32::from_be_bytes(w.ex.to_le_bytes()),
            })
        }
        ExtHeader::Ieth => h.ieth = Some(Ieth { rkey: w.ex }),
        ExtHeader::Feth => {
            if let WrDetail::Flush { kind, level, .. } = w.detail {
                h.feth = Some(Feth {
                    selectivity: level,
                    placement_type: kind,
                });
            }
        }
        ExtHeader::Deth => {
            let qkey = match w.detail {
                // The top bit asks for the QP's own Q_Key (IBA 10.2.5).
                WrDetail::Ud { remote_qkey, .. } if remote_qkey & 0x8000_0000 == 0 => remote_qkey,
                _ => snap.qkey,
            };
            h.deth = Some(Deth {
                qkey,
                src_qpn: snap.qpn,
            });
        }
        ExtHeader::AtomicEth => {
            if let WrDetail::Atomic {
                compare_add,
                swap,
                rkey,
            } = w.detail
            {
                let (swap_add, compare) = if w.opcode == WrOpcode::AtomicCmpAndSwp {
                    (swap, compare_add)
                } else {
                    (compare_add, 0)
                };
                h.atomic_eth = Some(AtomicEth {
                    va: w.iova,
                    rkey,
                    swap_add,
                    compare,
                });
            }
        }
        _ => {}
    }
    Ok(())
}

/// Moves the sender past a packet of `w` carrying `payload` bytes from `offset`: the PSN (a
/// READ request takes one per response packet), and the WQE's progress; after its last packet
/// a UC or UD WQE is complete (an RC one waits for its acknowledgement).
fn sent_one(
    st: &mut SendState,
    snap: &Snapshot,
    w: &SendWqe,
    offset: u32,
    payload: u32,
) -> Result<(), WcStatus> {
    let psns = if w.opcode == WrOpcode::RdmaRead {
        seq::packets_for(w.length - offset, mtu_of(snap)).unwrap_or(1)
    } else {
        1
    };
    st.advance(psns);
    let cur = st.cur.as_mut().ok_or(WcStatus::LocQpOpErr)?;
    cur.offset += payload;
    cur.sent += 1;
    if cur.sent < cur.npkts {
        return Ok(());
    }
    st.cur = None;
    if snap.qp_type != QpType::Rc {
        let last = st.count.wrapping_sub(1);
        if let Some(t) = st.entry(last) {
            t.done = Some(WcStatus::Success);
        }
    }
    Ok(())
}

/// Appends `dst.remaining()` bytes of the message from byte `offset` to `dst`.
fn fill_payload(
    qp: &Qp<RrxeDevice>,
    snap: &Snapshot,
    w: &SendWqe,
    slot: &[u8],
    offset: u32,
    dst: &mut Fill<'_>,
) -> Result {
    if dst.remaining() == 0 {
        return Ok(());
    }
    if let Some(data) = w.inline_data(slot) {
        let start = offset as usize;
        let src = data.get(start..start + dst.remaining()).ok_or(EINVAL)?;
        return dst.put(src);
    }
    mem::gather(
        qp,
        Side::Send,
        snap,
        |i| w.sge(slot, i),
        w.num_sge,
        offset,
        dst,
    )
}
