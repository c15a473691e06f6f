// SPDX-License-Identifier: GPL-2.0

//! Pure sequencing decisions of the RC, UC and UD transports (IBA Vol 1 sections 9.5 to 9.9).
//!
//! The requester splits each message into path-MTU-sized packets and gives every packet the exact
//! opcode its position in the message calls for. The responder classifies each request PSN against
//! the one it expects, checks that the opcodes of consecutive packets form whole messages and
//! decides when to acknowledge. The requester's completer classifies the acknowledgements it
//! receives (its retry budgets are in [`super::retry`]). Nothing here touches a queue pair: the
//! packet pipeline passes in the state and acts on the decision.

use super::cqe::WcStatus;
use super::hdr::Aeth;
use super::hdr::AethSyndrome;
use super::opcode::OpKind;
use super::opcode::Opcode;
use super::opcode::Position;
use super::psn::cmp_psn;
use super::psn::Psn;
use super::qp_attr::rnr_timer_us;
use super::qp_state::QpType;
use super::window::Outstanding;
use super::wqe::WrOpcode;
use core::cmp::Ordering;

/// The most packets the requester sends before it sets AckReq again (`RXE_MAX_PKT_PER_ACK`).
pub(crate) const MAX_PKT_PER_ACK: u32 = 64;

/// Returns how many packets a message of `len` bytes needs with a payload limit of `mtu` bytes.
///
/// A zero-length message still takes one packet. Returns `None` when `mtu` is zero.
pub(crate) fn packets_for(len: u32, mtu: u32) -> Option<u32> {
    let full = len.checked_div(mtu)?;
    let partial = u32::from(len.checked_rem(mtu)? != 0);
    Some(full.checked_add(partial)?.max(1))
}

/// Returns whether a request payload of `len` bytes fits its packet's `position` in a message
/// with path MTU `mtu` (IBA 9.7.6.1.3, C9-93): a first or middle packet carries exactly one
/// MTU, a last packet between one byte and one MTU, an only packet at most one MTU.
pub(crate) fn payload_fits_position(position: Position, len: usize, mtu: u32) -> bool {
    let mtu = mtu as usize;
    match position {
        Position::First | Position::Middle => len == mtu,
        Position::Last => len != 0 && len <= mtu,
        Position::Only => len <= mtu,
    }
}

/// Returns where packet `index` (counted from zero) lies in a message of `count` packets.
///
/// Returns `None` when `index` is not below `count`, which includes every `index` when `count`
/// is zero.
pub(crate) fn position(index: u32, count: u32) -> Option<Position> {
    let last = count.checked_sub(1)?;
    match (index, count) {
        (i, _) if i > last => None,
        (_, 1) => Some(Position::Only),
        (0, _) => Some(Position::First),
        (i, _) if i == last => Some(Position::Last),
        _ => Some(Position::Middle),
    }
}

/// Picks the opcode of a multi-packet operation from its four position-dependent variants.
const fn by_position(position: Position, ops: &[Opcode; 4]) -> Opcode {
    let [first, middle, last, only] = *ops;
    match position {
        Position::First => first,
        Position::Middle => middle,
        Position::Last => last,
        Position::Only => only,
    }
}

/// A table of FIRST, MIDDLE, LAST and ONLY opcodes of one operation.
type Variants = [Opcode; 4];

/// RC SEND.
const RC_SEND: Variants = [
    Opcode::RC_SEND_FIRST,
    Opcode::RC_SEND_MIDDLE,
    Opcode::RC_SEND_LAST,
    Opcode::RC_SEND_ONLY,
];
/// RC SEND with immediate data.
const RC_SEND_IMM: Variants = [
    Opcode::RC_SEND_FIRST,
    Opcode::RC_SEND_MIDDLE,
    Opcode::RC_SEND_LAST_IMM,
    Opcode::RC_SEND_ONLY_IMM,
];
/// RC SEND with invalidate.
const RC_SEND_INV: Variants = [
    Opcode::RC_SEND_FIRST,
    Opcode::RC_SEND_MIDDLE,
    Opcode::RC_SEND_LAST_INV,
    Opcode::RC_SEND_ONLY_INV,
];
/// RC RDMA WRITE.
const RC_WRITE: Variants = [
    Opcode::RC_WRITE_FIRST,
    Opcode::RC_WRITE_MIDDLE,
    Opcode::RC_WRITE_LAST,
    Opcode::RC_WRITE_ONLY,
];
/// RC RDMA WRITE with immediate data.
const RC_WRITE_IMM: Variants = [
    Opcode::RC_WRITE_FIRST,
    Opcode::RC_WRITE_MIDDLE,
    Opcode::RC_WRITE_LAST_IMM,
    Opcode::RC_WRITE_ONLY_IMM,
];
/// UC SEND.
const UC_SEND: Variants = [
    Opcode::UC_SEND_FIRST,
    Opcode::UC_SEND_MIDDLE,
    Opcode::UC_SEND_LAST,
    Opcode::UC_SEND_ONLY,
];
/// UC SEND with immediate data.
const UC_SEND_IMM: Variants = [
    Opcode::UC_SEND_FIRST,
    Opcode::UC_SEND_MIDDLE,
    Opcode::UC_SEND_LAST_IMM,
    Opcode::UC_SEND_ONLY_IMM,
];
/// UC RDMA WRITE.
const UC_WRITE: Variants = [
    Opcode::UC_WRITE_FIRST,
    Opcode::UC_WRITE_MIDDLE,
    Opcode::UC_WRITE_LAST,
    Opcode::UC_WRITE_ONLY,
];
/// UC RDMA WRITE with immediate data.
const UC_WRITE_IMM: Variants = [
    Opcode::UC_WRITE_FIRST,
    Opcode::UC_WRITE_MIDDLE,
    Opcode::UC_WRITE_LAST_IMM,
    Opcode::UC_WRITE_ONLY_IMM,
];
/// RDMA READ response.
const READ_RESPONSE: Variants = [
    Opcode::RC_READ_RESPONSE_FIRST,
    Opcode::RC_READ_RESPONSE_MIDDLE,
    Opcode::RC_READ_RESPONSE_LAST,
    Opcode::RC_READ_RESPONSE_ONLY,
];

/// Returns `op` if `position` is [`Position::Only`], for operations that always fit one packet.
const fn only(position: Position, op: Opcode) -> Option<Opcode> {
    match position {
        Position::Only => Some(op),
        _ => None,
    }
}

/// Returns the IBA opcode of the packet at `position` of a `wr` message sent on a `qp` queue pair.
///
/// RC carries every operation; SEND with immediate data or with invalidate and RDMA WRITE with
/// immediate data differ from their plain forms only in their last or only packet. RDMA READ
/// requests, the atomics, FLUSH and ATOMIC WRITE always take exactly one packet (the READ request
/// reserves PSNs for its responses but is itself one packet). UC carries SEND and RDMA WRITE with
/// and without immediate data, and UD and GSI carry one-packet SENDs with and without immediate
/// data. Local operations, SMI queue pairs and any other combination return `None`.
pub(crate) fn request_opcode(qp: QpType, wr: WrOpcode, position: Position) -> Option<Opcode> {
    let p = position;
    let multi = |ops: &Variants| Some(by_position(p, ops));
    match (qp, wr) {
        (QpType::Rc, WrOpcode::Send) => multi(&RC_SEND),
        (QpType::Rc, WrOpcode::SendWithImm) => multi(&RC_SEND_IMM),
        (QpType::Rc, WrOpcode::SendWithInv) => multi(&RC_SEND_INV),
        (QpType::Rc, WrOpcode::RdmaWrite) => multi(&RC_WRITE),
        (QpType::Rc, WrOpcode::RdmaWriteWithImm) => multi(&RC_WRITE_IMM),
        (QpType::Rc, WrOpcode::RdmaRead) => only(p, Opcode::RC_READ_REQUEST),
        (QpType::Rc, WrOpcode::AtomicCmpAndSwp) => only(p, Opcode::RC_COMPARE_SWAP),
        (QpType::Rc, WrOpcode::AtomicFetchAndAdd) => only(p, Opcode::RC_FETCH_ADD),
        (QpType::Rc, WrOpcode::Flush) => only(p, Opcode::RC_FLUSH),
        (QpType::Rc, WrOpcode::AtomicWrite) => only(p, Opcode::RC_ATOMIC_WRITE),
        (QpType::Uc, WrOpcode::Send) => multi(&UC_SEND),
        (QpType::Uc, WrOpcode::SendWithImm) => multi(&UC_SEND_IMM),
        (QpType::Uc, WrOpcode::RdmaWrite) => multi(&UC_WRITE),
        (QpType::Uc, WrOpcode::RdmaWriteWithImm) => multi(&UC_WRITE_IMM),
        (QpType::Ud | QpType::Gsi, WrOpcode::Send) => only(p, Opcode::UD_SEND_ONLY),
        (QpType::Ud | QpType::Gsi, WrOpcode::SendWithImm) => only(p, Opcode::UD_SEND_ONLY_IMM),
        _ => None,
    }
}

/// Returns the opcode of RDMA READ response packet `index` of `count`, or `None` when `index` is
/// not below `count`.
pub(crate) fn read_response_opcode(index: u32, count: u32) -> Option<Opcode> {
    Some(by_position(position(index, count)?, &READ_RESPONSE))
}

/// How a responder's request PSN relates to the PSN it expects next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RespPsn {
    /// The PSN is the expected one: process the packet.
    Expected,
    /// The PSN lies in the duplicate region behind the expected one: the request was seen before.
    Duplicate,
    /// The PSN lies ahead of the expected one: packets were lost in between.
    OutOfSequence,
}

impl RespPsn {
    /// Returns the AETH syndrome an RC responder answers with: a PSN sequence error NAK for an
    /// out-of-sequence request (sent once, then such packets are dropped silently until the
    /// expected PSN arrives), `None` otherwise.
    pub(crate) const fn nak_syndrome(self) -> Option<u8> {
        match self {
            Self::OutOfSequence => Some(Aeth::NAK_PSN_SEQ_ERROR),
            Self::Expected | Self::Duplicate => None,
        }
    }
}

/// Classifies a request PSN `psn` against the expected PSN `epsn` (IBA 9.7.5.1.1).
///
/// Let `d = (psn - epsn) mod 2^24`. `d == 0` is [`RespPsn::Expected`]; `d` in `[1, 2^23 - 1]` is
/// [`RespPsn::OutOfSequence`] (ahead); `d` in `[2^23, 2^24 - 1]`, that is a PSN between one and
/// 2^23 packets behind `epsn`, is [`RespPsn::Duplicate`]. The duplicate region is thus the 2^23
/// PSNs before `epsn`, the same split as [`cmp_psn`] and the C driver's `psn_compare`. This rule
/// applies to RC; a UC responder treats every unexpected PSN alike and drops packets until the next
/// FIRST or ONLY.
pub(crate) fn classify_request_psn(psn: Psn, epsn: Psn) -> RespPsn {
    match cmp_psn(psn, epsn) {
        Ordering::Equal => RespPsn::Expected,
        Ordering::Less => RespPsn::Duplicate,
        Ordering::Greater => RespPsn::OutOfSequence,
    }
}

/// What an RC responder does with a duplicate request (IBA 9.7.5.1.2, C9-105).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DuplicateAction {
    /// SEND or RDMA WRITE: do not execute it again, ACK it again as [`ReackPsn`] says.
    Reack,
    /// RDMA READ, atomic, FLUSH or ATOMIC WRITE: replay the saved responder resource for the
    /// PSN, or drop the packet silently if no resource holds it.
    Replay,
}

/// Returns how to handle a duplicate request with opcode `op`, or `None` for a non-request.
pub(crate) fn duplicate_action(op: Opcode) -> Option<DuplicateAction> {
    match op.info()?.kind {
        OpKind::Send | OpKind::Write => Some(DuplicateAction::Reack),
        OpKind::ReadRequest
        | OpKind::CompareSwap
        | OpKind::FetchAdd
        | OpKind::Flush
        | OpKind::AtomicWrite => Some(DuplicateAction::Replay),
        OpKind::ReadResponse | OpKind::Ack | OpKind::AtomicAck => None,
    }
}

/// Whether and with which PSN an RC responder acknowledges a duplicate SEND or RDMA WRITE again:
/// only while the newest request it executed is a SEND or WRITE, naming that request's packet.
///
/// A READ, an atomic, a FLUSH or an ATOMIC WRITE is acknowledged by its own response, and the
/// requester's go-back-N asks for it again right after the duplicate (the replayed responses
/// acknowledge the duplicate too). An ACK sent after one of them would mislead C rxe's completer
/// either way: naming the newest PSN (that READ's last) completes a READ whose last response is
/// missing, without that response's data (an NVMe-oF target on C rxe stored bad data under loss);
/// naming the newest SEND or WRITE before it (what C rxe's own responder names) arrives as an ACK
/// older than the READ the completer is in the middle of, which resets its opcode state so that
/// the READ's next response fails the QP (`WARNING` in `rxe_completer`; the target's QP stopped
/// answering, and an rrxe host's SEND used up its retries). Only [`ReackPsn::executed`] moves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReackPsn(Option<Psn>);

impl ReackPsn {
    /// Nothing executed yet: the PSN before `epsn`, the first one expected (an ACK naming it
    /// acknowledges nothing new).
    pub(crate) const fn before(epsn: Psn) -> Self {
        Self(Some(epsn.wrapping_sub(1)))
    }

    /// A request of `kind` was executed up to its packet `last`.
    pub(crate) fn executed(&mut self, kind: OpKind, last: Psn) {
        match kind {
            OpKind::Send | OpKind::Write => self.0 = Some(last),
            OpKind::ReadRequest
            | OpKind::CompareSwap
            | OpKind::FetchAdd
            | OpKind::Flush
            | OpKind::AtomicWrite => self.0 = None,
            OpKind::ReadResponse | OpKind::Ack | OpKind::AtomicAck => {}
        }
    }

    /// The PSN to name in the ACK of a duplicate SEND or WRITE, or `None`: no ACK.
    pub(crate) const fn psn(self) -> Option<Psn> {
        self.0
    }
}

/// Why a request opcode cannot follow the previous one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SeqError {
    /// A MIDDLE or LAST packet arrived while no SEND or RDMA WRITE message was in progress.
    MissingFirst,
    /// A SEND or RDMA WRITE message was in progress, but the packet is not its MIDDLE or LAST.
    MissingLast,
    /// The opcode is not an implemented request opcode.
    NotRequest,
}

impl SeqError {
    /// Returns the AETH syndrome an RC responder answers with: every opcode sequence error is a
    /// class C "NAK - Invalid Request" that also moves the queue pair to the error state. The PSN
    /// sequence error NAK is reserved for PSN gaps ([`RespPsn::nak_syndrome`]).
    ///
    /// UC has no NAKs: a MIDDLE or LAST without a FIRST is dropped until the next FIRST or ONLY,
    /// and an interrupted message is abandoned (class D1).
    pub(crate) const fn nak_syndrome(self) -> u8 {
        Aeth::NAK_INVALID_REQUEST
    }

    /// Returns the status of the receive completion the RC responder reports for this error.
    pub(crate) const fn wc_status(self) -> WcStatus {
        WcStatus::RemInvReqErr
    }
}

/// Checks that request opcode `next` may follow `prev`, the opcode of the last request packet the
/// responder accepted (`None` if there was none), as the C driver's `check_op_seq`.
///
/// A SEND or RDMA WRITE message is in progress after its FIRST or a MIDDLE packet; only a MIDDLE
/// or LAST of the same service and operation may follow (SEND LAST with immediate data or with
/// invalidate included). When no message is in progress, any FIRST or ONLY packet may follow but
/// a MIDDLE or LAST may not. Whether the opcode's service matches the queue pair is checked
/// elsewhere.
pub(crate) fn check_request_sequence(prev: Option<Opcode>, next: Opcode) -> Result<(), SeqError> {
    let next = match next.info() {
        Some(info) if info.is_request => info,
        _ => return Err(SeqError::NotRequest),
    };
    let open = prev.and_then(Opcode::info).filter(|p| {
        matches!(p.kind, OpKind::Send | OpKind::Write)
            && matches!(p.position, Position::First | Position::Middle)
    });
    let continues = matches!(next.position, Position::Middle | Position::Last);
    match open {
        Some(p) if continues && p.service == next.service && p.kind == next.kind => Ok(()),
        Some(_) => Err(SeqError::MissingLast),
        None if continues => Err(SeqError::MissingFirst),
        None => Ok(()),
    }
}

/// What the requester's completer does with an acknowledgement (a packet carrying an AETH)
/// whose PSN lies in the send window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AckDecision {
    /// A positive acknowledgement of every PSN up to and including `last_acked`.
    Ack {
        /// The PSN the acknowledgement carries.
        last_acked: Outstanding,
    },
    /// Receiver not ready: wait `timer_us` microseconds, then retry from the NAKed PSN.
    RnrNak {
        /// The RNR delay of IBA table 45 that the syndrome's timer code selects.
        timer_us: u32,
    },
    /// PSN sequence error: every PSN before `expected` is acknowledged; resend from `expected`.
    NakSeqErr {
        /// The PSN the responder expects next.
        expected: Outstanding,
    },
    /// The responder rejected the request as invalid.
    NakInvalidRequest,
    /// The responder found a remote access violation.
    NakRemoteAccess,
    /// The responder failed the request, or sent a reserved NAK code (as the C driver treats it).
    NakRemoteOperation,
    /// A reserved syndrome: drop it.
    Ignore,
}

impl AckDecision {
    /// Returns the send completion status of a fatal NAK, or `None` for the other decisions.
    pub(crate) const fn wc_status(self) -> Option<WcStatus> {
        match self {
            Self::NakInvalidRequest => Some(WcStatus::RemInvReqErr),
            Self::NakRemoteAccess => Some(WcStatus::RemAccessErr),
            Self::NakRemoteOperation => Some(WcStatus::RemOpErr),
            _ => None,
        }
    }
}

/// Classifies an acknowledgement with header `aeth` and BTH PSN `psn`.
///
/// Only an acknowledgement inside the send window gets here: the caller classified its PSN
/// ([`SendWindow::classify`](super::window::SendWindow::classify)); one outside it (a stale
/// duplicate, or one for a PSN never sent) changes nothing. The syndrome decides: ACK, RNR NAK
/// with its delay, or the NAK code (0 PSN sequence error, 1 invalid request, 2 remote access
/// error, 3 remote operational error, others treated as 3).
pub(crate) fn classify_ack(aeth: Aeth, psn: Outstanding) -> AckDecision {
    match aeth.kind() {
        AethSyndrome::Ack { .. } => AckDecision::Ack { last_acked: psn },
        AethSyndrome::RnrNak { timer } => match rnr_timer_us(timer) {
            Some(timer_us) => AckDecision::RnrNak { timer_us },
            None => AckDecision::Ignore,
        },
        AethSyndrome::Nak { code: 0 } => AckDecision::NakSeqErr { expected: psn },
        AethSyndrome::Nak { code: 1 } => AckDecision::NakInvalidRequest,
        AethSyndrome::Nak { code: 2 } => AckDecision::NakRemoteAccess,
        AethSyndrome::Nak { .. } => AckDecision::NakRemoteOperation,
        AethSyndrome::Reserved => AckDecision::Ignore,
    }
}

/// Returns whether an acknowledgement is due for a packet.
///
/// `pkts_since_ack` counts the packets since the last acknowledgement, including this one. The
/// requester sets AckReq (and the responder acknowledges) on the last packet of each message,
/// given as `ack_req`, and at least once every `max_pkts_per_ack` packets, normally
/// [`MAX_PKT_PER_ACK`]; zero acknowledges every packet.
pub(crate) const fn ack_due(pkts_since_ack: u32, ack_req: bool, max_pkts_per_ack: u32) -> bool {
    ack_req || pkts_since_ack >= max_pkts_per_ack
}

/// Whether a paced requester (rate-limited: it may take longer than its local ACK timeout to
/// send [`MAX_PKT_PER_ACK`] packets) sets AckReq by time: when a quarter of the timeout
/// (`timeout_us`, `None` for none) passed since it last set it (`last_ns`), so the responder
/// acknowledges it before the timer takes the silence for a loss.
pub(crate) const fn paced_ack_due(now_ns: u64, last_ns: u64, timeout_us: Option<u64>) -> bool {
    match timeout_us {
        Some(us) => now_ns.saturating_sub(last_ns) >= us.saturating_mul(1000) / 4,
        None => false,
    }
}
