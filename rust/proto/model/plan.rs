// SPDX-License-Identifier: GPL-2.0

//! The send queue of one generation of a QP: which PSNs each posted work request takes.
//!
//! IBA 9.7.1 (packet sequence numbers): the requester gives every request packet the next PSN, so
//! the PSNs of the work requests follow from the post order alone. A SEND or RDMA WRITE of LEN
//! bytes is `max(1, ceil(LEN / MTU))` packets; an RDMA READ request takes one packet but as many
//! PSNs as its responses, `max(1, ceil(LEN / MTU))` (9.7.4.1.2); CmpSwap, FetchAdd, ATOMIC WRITE
//! and FLUSH take one. The PSN space is 24 bits wide and wraps.

use std::collections::HashMap;

use super::trace::Conn;
use super::trace::Post;
use super::trace::WrOp;
use crate::proto::psn::Psn;

/// Returns the number of PSNs a work request of `op` and `len` bytes takes at path MTU `mtu`.
pub(crate) const fn psns(op: WrOp, len: u32, mtu: u32) -> u32 {
    match op {
        WrOp::Local => 0,
        WrOp::Cas | WrOp::Faa | WrOp::AWrite | WrOp::Flush => 1,
        _ => {
            if len == 0 || mtu == 0 {
                1
            } else {
                len.div_ceil(mtu)
            }
        }
    }
}

/// Returns whether `a` comes at or after `b` in serial order.
pub(crate) const fn at_or_after(a: Psn, b: Psn) -> bool {
    a.serial_diff(b) >= 0
}

/// Returns whether `a` comes strictly after `b` in serial order.
pub(crate) const fn after(a: Psn, b: Psn) -> bool {
    a.serial_diff(b) > 0
}

/// Returns whether `p` lies in the serial range `[lo, hi]`.
pub(crate) const fn within(p: Psn, lo: Psn, hi: Psn) -> bool {
    at_or_after(p, lo) && at_or_after(hi, p)
}

/// A posted send work request and the PSNs it takes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wr {
    /// When it was posted.
    pub(crate) t: u64,
    /// The victim's sequence number.
    pub(crate) seq: u64,
    /// The operation.
    pub(crate) op: WrOp,
    /// Bytes.
    pub(crate) len: u32,
    /// Its first PSN.
    pub(crate) first: Psn,
    /// How many PSNs it takes.
    pub(crate) npsn: u32,
}

impl Wr {
    /// Its last PSN.
    pub(crate) const fn last(&self) -> Psn {
        self.first.wrapping_add(self.npsn.saturating_sub(1))
    }

    /// Returns whether `p` is one of its PSNs.
    pub(crate) const fn covers(&self, p: Psn) -> bool {
        crate::proto::psn::in_window(p, self.first, self.npsn)
    }
}

/// One generation of a QP: its connection and its send queue in post order.
#[derive(Debug)]
pub(crate) struct Generation {
    /// The `conn` line.
    pub(crate) conn: Conn,
    /// The work requests in post order.
    pub(crate) wrs: Vec<Wr>,
    /// Work request index by sequence number.
    pub(crate) by_seq: HashMap<u64, usize>,
    /// `post_t[i]` is the latest post time among `wrs[..=i]` (monotone, for searching).
    post_t: Vec<u64>,
    /// `ends[i]` is the last PSN `wrs[..=i]` take, if they take any.
    ends: Vec<Option<Psn>>,
    /// `done_t[i]` is the latest completion time among `wrs[..=i]` (`u64::MAX` if one of them
    /// never completed), monotone.
    done_t: Vec<u64>,
    /// The PSN the next posted work request takes.
    next: Psn,
}

impl Generation {
    /// Starts a generation at its `conn` line.
    pub(crate) fn new(conn: Conn) -> Self {
        Self {
            conn,
            wrs: Vec::new(),
            by_seq: HashMap::new(),
            post_t: Vec::new(),
            ends: Vec::new(),
            done_t: Vec::new(),
            next: Psn::new(conn.sq_psn),
        }
    }

    /// Appends a posted work request; false if its sequence number was posted before.
    pub(crate) fn post(&mut self, p: &Post) -> bool {
        if self.by_seq.contains_key(&p.seq) {
            return false;
        }
        let npsn = psns(p.op, p.len, self.conn.mtu);
        let wr = Wr {
            t: p.t,
            seq: p.seq,
            op: p.op,
            len: p.len,
            first: self.next,
            npsn,
        };
        self.next = self.next.wrapping_add(npsn);
        self.by_seq.insert(p.seq, self.wrs.len());
        let t = self.post_t.last().map_or(p.t, |&l| l.max(p.t));
        self.post_t.push(t);
        let end = if npsn > 0 {
            Some(wr.last())
        } else {
            self.ends.last().copied().flatten()
        };
        self.ends.push(end);
        self.wrs.push(wr);
        true
    }

    /// Records the completion times (index, time) once every post is in.
    pub(crate) fn set_done(&mut self, done: &[(usize, u64)]) {
        let mut d = vec![u64::MAX; self.wrs.len()];
        for &(i, t) in done {
            if let Some(x) = d.get_mut(i) {
                *x = (*x).min(t);
            }
        }
        let mut m = 0u64;
        self.done_t = d
            .into_iter()
            .map(|t| {
                m = m.max(t);
                m
            })
            .collect();
    }

    /// How many work requests had been posted by time `t`.
    pub(crate) fn posted_by(&self, t: u64) -> usize {
        self.post_t.partition_point(|&x| x <= t)
    }

    /// The last PSN any work request posted by time `t` takes: the newest PSN the requester may
    /// have sent by then (IBA 9.7.5.1.3: a response for a PSN never sent is not an
    /// acknowledgement).
    pub(crate) fn last_psn_by(&self, t: u64) -> Option<Psn> {
        let n = self.posted_by(t);
        n.checked_sub(1).and_then(|i| self.ends[i])
    }

    /// The requester's window at time `t`: from the first PSN of the oldest work request posted
    /// and not completed to the last PSN posted. `None` if nothing is outstanding.
    pub(crate) fn window_at(&self, t: u64) -> Option<(Psn, Psn)> {
        let n = self.posted_by(t);
        let head = self.done_t.partition_point(|&d| d <= t).min(n);
        if head >= n {
            return None;
        }
        Some((self.wrs[head].first, self.ends[n - 1]?))
    }

    /// The PSNs sent by time `t` (first of the generation to the last posted), if any.
    pub(crate) fn sent_by(&self, t: u64) -> Option<(Psn, Psn)> {
        Some((Psn::new(self.conn.sq_psn), self.last_psn_by(t)?))
    }
}
