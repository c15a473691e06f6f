// SPDX-License-Identifier: GPL-2.0

//! The private copies of the local buffers of outstanding RDMA READs and atomics: the
//! completer's single fetch (see [`ReadSinks`]).

use crate::proto::wqe::Sge;
use kernel::prelude::*;

/// The remote buffer of an outstanding RDMA READ (copied with its sink): where a request that
/// asks again for some of its responses points.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct Remote {
    pub(crate) va: u64,
    pub(crate) rkey: u32,
}

/// Names a sink of [`ReadSinks`].
#[derive(Clone, Copy)]
pub(crate) struct SinkRef {
    index: u16,
    num_sge: u8,
}

/// The local buffers of the outstanding RDMA READs and atomics, copied from their WQEs when
/// they start, so that the completer never reads the user's send ring again (a single fetch:
/// the ring is mapped into user space and may change between the request and its response).
///
/// `slots` sinks of `per_slot` SGEs, used as a ring from `head`: one is taken for every
/// operation that counts in `SendState::rd_outstanding`, and responses retire them oldest
/// first (a direct loopback copy finishes the newest at once and gives its sink back).
pub(crate) struct ReadSinks {
    pub(super) sges: KVec<Sge>,
    /// Each sink's remote buffer.
    remote: KVec<Remote>,
    per_slot: usize,
    pub(super) slots: usize,
    /// The sink of the oldest outstanding operation.
    head: usize,
}

impl ReadSinks {
    /// Sinks for a QP that sends up to `slots` WQEs of up to `per_slot` SGEs at a time.
    pub(super) fn new(slots: usize, per_slot: usize) -> Result<Self> {
        let n = slots.checked_mul(per_slot).ok_or(EINVAL)?;
        let mut sges = KVec::with_capacity(n, GFP_KERNEL_ACCOUNT)?;
        sges.resize(n, Sge::default(), GFP_KERNEL_ACCOUNT)?;
        let mut remote = KVec::with_capacity(slots, GFP_KERNEL_ACCOUNT)?;
        remote.resize(slots, Remote::default(), GFP_KERNEL_ACCOUNT)?;
        Ok(Self {
            sges,
            remote,
            per_slot,
            slots,
            head: 0,
        })
    }

    /// Copies the `num_sge` SGEs `sge_at` yields, and the `remote` buffer, into the sink after
    /// the `outstanding` ones in use. `None` when no sink is free or an SGE is missing.
    pub(crate) fn take(
        &mut self,
        outstanding: u32,
        sge_at: impl Fn(u32) -> Option<Sge>,
        num_sge: u32,
        remote: Remote,
    ) -> Option<SinkRef> {
        let outstanding = outstanding as usize;
        if outstanding >= self.slots || num_sge as usize > self.per_slot {
            return None;
        }
        let index = (self.head + outstanding) % self.slots;
        let base = index * self.per_slot;
        for k in 0..num_sge {
            *self.sges.get_mut(base + k as usize)? = sge_at(k)?;
        }
        *self.remote.get_mut(index)? = remote;
        Some(SinkRef {
            index: u16::try_from(index).ok()?,
            num_sge: u8::try_from(num_sge).ok()?,
        })
    }

    /// The SGEs of sink `s`.
    pub(crate) fn get(&self, s: SinkRef) -> &[Sge] {
        let base = usize::from(s.index) * self.per_slot;
        self.sges
            .get(base..base + usize::from(s.num_sge))
            .unwrap_or(&[])
    }

    /// The remote buffer of sink `s`.
    pub(crate) fn remote(&self, s: SinkRef) -> Remote {
        self.remote
            .get(usize::from(s.index))
            .copied()
            .unwrap_or_default()
    }

    /// The oldest outstanding operation was answered: its sink is free.
    pub(crate) fn retire_oldest(&mut self) {
        self.head = (self.head + 1) % self.slots.max(1);
    }
}

#[kernel::prelude::kunit_tests(rrxe_pipeline_sinks)]
mod tests {
    use super::*;

    #[test]
    fn sinks_are_taken_in_order_and_retired_oldest_first() {
        let mut s = ReadSinks::new(2, 2).unwrap();
        let sge = |a: u64| Sge {
            addr: a,
            length: 8,
            lkey: 1,
        };
        let far = |va: u64| Remote { va, rkey: 7 };
        let a = s
            .take(0, |k| Some(sge(10 + u64::from(k))), 2, far(1))
            .unwrap();
        let b = s
            .take(1, |k| Some(sge(20 + u64::from(k))), 1, far(2))
            .unwrap();
        // Both sinks in use: none is free.
        assert!(s.take(2, |_| Some(sge(0)), 1, far(0)).is_none());
        // More SGEs than a sink holds.
        assert!(s.take(0, |_| Some(sge(0)), 3, far(0)).is_none());
        assert_eq!(s.get(a), &[sge(10), sge(11)]);
        assert_eq!(s.get(b), &[sge(20)]);
        assert_eq!((s.remote(a), s.remote(b)), (far(1), far(2)));
        s.retire_oldest();
        // The oldest is free again: the next one takes it, the newer one is untouched.
        let c = s.take(1, |_| Some(sge(30)), 1, far(3)).unwrap();
        assert_eq!(s.get(c), &[sge(30)]);
        assert_eq!(s.get(b), &[sge(20)]);
        assert_eq!((s.remote(c), s.remote(b)), (far(3), far(2)));
    }
}
