// SPDX-License-Identifier: GPL-2.0

//! The reference the state machine is judged against: the raw `enum ib_qp_attr_mask`,
//! `enum ib_qp_state` and `enum ib_qp_type` numbers of `include/rdma/ib_verbs.h` and the IBA
//! Modify QP table as the core's `qp_state_table` encodes it, transcribed independently of the
//! code under test.

use crate::proto::attr_mask::AttrMask;
use crate::proto::qp_state::QpState;
use crate::proto::qp_state::QpType;

// Raw `enum ib_qp_attr_mask` bits.
pub(super) const STATE: u32 = 1;
pub(super) const CUR: u32 = 1 << 1;
pub(super) const SQD_NOTIFY: u32 = 1 << 2;
pub(super) const ACCESS: u32 = 1 << 3;
pub(super) const PKEY: u32 = 1 << 4;
pub(super) const PORT: u32 = 1 << 5;
pub(super) const QKEY: u32 = 1 << 6;
pub(super) const AV: u32 = 1 << 7;
pub(super) const MTU: u32 = 1 << 8;
pub(super) const TIMEOUT: u32 = 1 << 9;
pub(super) const RETRY: u32 = 1 << 10;
pub(super) const RNR_RETRY: u32 = 1 << 11;
pub(super) const RQ_PSN: u32 = 1 << 12;
pub(super) const MAX_QP_RD: u32 = 1 << 13;
pub(super) const ALT: u32 = 1 << 14;
pub(super) const MIN_RNR: u32 = 1 << 15;
pub(super) const SQ_PSN: u32 = 1 << 16;
pub(super) const MAX_DEST_RD: u32 = 1 << 17;
pub(super) const MIG: u32 = 1 << 18;
pub(super) const CAP: u32 = 1 << 19;
pub(super) const DEST_QPN: u32 = 1 << 20;
pub(super) const RATE: u32 = 1 << 25;

// Raw `enum ib_qp_state` values.
pub(super) const RESET: u32 = 0;
pub(super) const INIT: u32 = 1;
pub(super) const RTR: u32 = 2;
pub(super) const RTS: u32 = 3;
pub(super) const SQD: u32 = 4;
pub(super) const SQE: u32 = 5;
pub(super) const ERR: u32 = 6;

// Raw `enum ib_qp_type` values.
pub(super) const SMI: u32 = 0;
pub(super) const GSI: u32 = 1;
pub(super) const RC: u32 = 2;
pub(super) const UC: u32 = 3;
pub(super) const UD: u32 = 4;

/// Transitions that are valid for every type and take no attribute but the state.
pub(super) const BARE: [(u32, u32); 13] = [
    (RESET, RESET),
    (INIT, RESET),
    (INIT, ERR),
    (RTR, RESET),
    (RTR, ERR),
    (RTS, RESET),
    (RTS, ERR),
    (SQD, RESET),
    (SQD, ERR),
    (SQE, RESET),
    (SQE, ERR),
    (ERR, RESET),
    (ERR, ERR),
];

/// The transitions with attributes: (from, to, type, required, optional).
pub(super) const WITH_ATTRS: [(u32, u32, u32, u32, u32); 40] = [
    // RESET -> INIT
    (RESET, INIT, UD, PKEY | PORT | QKEY, 0),
    (RESET, INIT, UC, PKEY | PORT | ACCESS, 0),
    (RESET, INIT, RC, PKEY | PORT | ACCESS, 0),
    (RESET, INIT, SMI, PKEY | QKEY, 0),
    (RESET, INIT, GSI, PKEY | QKEY, 0),
    // INIT -> INIT
    (INIT, INIT, UD, 0, PKEY | PORT | QKEY),
    (INIT, INIT, UC, 0, PKEY | PORT | ACCESS),
    (INIT, INIT, RC, 0, PKEY | PORT | ACCESS),
    (INIT, INIT, SMI, 0, PKEY | QKEY),
    (INIT, INIT, GSI, 0, PKEY | QKEY),
    // INIT -> RTR
    (INIT, RTR, UD, 0, PKEY | QKEY),
    (
        INIT,
        RTR,
        UC,
        AV | MTU | DEST_QPN | RQ_PSN,
        ALT | ACCESS | PKEY,
    ),
    (
        INIT,
        RTR,
        RC,
        AV | MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD | MIN_RNR,
        ALT | ACCESS | PKEY,
    ),
    (INIT, RTR, SMI, 0, PKEY | QKEY),
    (INIT, RTR, GSI, 0, PKEY | QKEY),
    // RTR -> RTS
    (RTR, RTS, UD, SQ_PSN, CUR | QKEY),
    (RTR, RTS, UC, SQ_PSN, CUR | ALT | ACCESS | MIG),
    (
        RTR,
        RTS,
        RC,
        TIMEOUT | RETRY | RNR_RETRY | SQ_PSN | MAX_QP_RD,
        CUR | ALT | ACCESS | MIN_RNR | MIG,
    ),
    (RTR, RTS, SMI, SQ_PSN, CUR | QKEY),
    (RTR, RTS, GSI, SQ_PSN, CUR | QKEY),
    // RTS -> RTS
    (RTS, RTS, UD, 0, CUR | QKEY),
    (RTS, RTS, UC, 0, CUR | ACCESS | ALT | MIG),
    (RTS, RTS, RC, 0, CUR | ACCESS | ALT | MIG | MIN_RNR),
    (RTS, RTS, SMI, 0, CUR | QKEY),
    (RTS, RTS, GSI, 0, CUR | QKEY),
    // SQD -> RTS
    (SQD, RTS, UD, 0, CUR | QKEY),
    (SQD, RTS, UC, 0, CUR | ALT | ACCESS | MIG),
    (SQD, RTS, RC, 0, CUR | ALT | ACCESS | MIN_RNR | MIG),
    (SQD, RTS, SMI, 0, CUR | QKEY),
    (SQD, RTS, GSI, 0, CUR | QKEY),
    // SQD -> SQD
    (SQD, SQD, UD, 0, PKEY | QKEY),
    (SQD, SQD, UC, 0, AV | ALT | ACCESS | PKEY | MIG),
    (
        SQD,
        SQD,
        RC,
        0,
        PORT | AV
            | TIMEOUT
            | RETRY
            | RNR_RETRY
            | MAX_QP_RD
            | MAX_DEST_RD
            | ALT
            | ACCESS
            | PKEY
            | MIN_RNR
            | MIG,
    ),
    (SQD, SQD, SMI, 0, PKEY | QKEY),
    (SQD, SQD, GSI, 0, PKEY | QKEY),
    // SQE -> RTS
    (SQE, RTS, UD, 0, CUR | QKEY),
    (SQE, RTS, UC, 0, CUR | ACCESS),
    (SQE, RTS, SMI, 0, CUR | QKEY),
    (SQE, RTS, GSI, 0, CUR | QKEY),
    // RC has no optional attribute here but the transition exists.
    (SQE, RTS, RC, 0, 0),
];

/// Transitions valid for every type whose per-type attributes are all in [`WITH_ATTRS`].
pub(super) const VALID_WITH_ATTRS: [(u32, u32); 8] = [
    (RESET, INIT),
    (INIT, INIT),
    (INIT, RTR),
    (RTR, RTS),
    (RTS, RTS),
    (SQD, RTS),
    (SQD, SQD),
    (SQE, RTS),
];

/// The expected (required, optional) raw masks of a transition, or `None` if it is invalid.
pub(super) fn expected(cur: u32, next: u32, ty: u32) -> Option<(u32, u32)> {
    if BARE.contains(&(cur, next)) {
        return Some((0, 0));
    }
    if (cur, next) == (RTS, SQD) {
        return Some((0, SQD_NOTIFY));
    }
    WITH_ATTRS
        .iter()
        .find(|row| (row.0, row.1, row.2) == (cur, next, ty))
        .map(|row| (row.3, row.4))
}

/// An independent transcription of `ib_modify_qp_is_ok`.
pub(super) fn reference_is_ok(cur: u32, next: u32, ty: u32, mask: u32) -> bool {
    if mask & CUR != 0 && !matches!(cur, RTR | RTS | SQD | SQE) {
        return false;
    }
    let Some((req, opt)) = expected(cur, next, ty) else {
        return false;
    };
    mask & req == req && mask & !(req | opt | STATE | RATE) == 0
}

/// The types rrxe supports plus SMI, which the table also covers.
pub(super) const TYPES: [u32; 5] = [SMI, GSI, RC, UC, UD];

/// Converts raw state and type numbers to the module's types.
pub(super) fn st(cur: u32, next: u32, ty: u32) -> (QpState, QpState, QpType) {
    (
        QpState::from_raw(cur).unwrap(),
        QpState::from_raw(next).unwrap(),
        QpType::from_raw(ty).unwrap(),
    )
}

/// Shorthand for a raw mask.
pub(super) fn m(bits: u32) -> AttrMask {
    AttrMask::from_bits(bits)
}

/// A small xorshift generator for reproducible random masks.
pub(super) struct XorShift(pub(super) u32);

impl XorShift {
    /// Returns the next pseudo-random word.
    pub(super) fn next(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }
}
