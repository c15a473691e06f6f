// SPDX-License-Identifier: GPL-2.0

//! An MR as a key named it: the data path's only way to an MR's memory.
//!
//! A key is looked up once per request or SGE ([`crate::device::RrxeDevice`]'s MR table), and
//! the bytes move later. A fast-registration MR may in between be invalidated and registered
//! again under a new key (a kernel consumer's LOCAL_INV and REG_MR, on another CPU): the old
//! key must not reach the new registration's pages, which its owner means for the holder of the
//! new key. So the key travels with the region, and every access checks, under the mapping's
//! lock, that it still names the registration it walks.

use crate::{
    device::RrxeDevice,
    ib::Mr,
    mm::{
        Fill,
        Span, //
    },
    sync::ObjRef,
};
use core::ops::Deref;
use kernel::prelude::*;

/// A memory region and the key (`lkey` or `rkey`) that found it.
pub(crate) struct KeyedMr {
    mr: ObjRef<Mr<RrxeDevice>>,
    key: u32,
}

impl KeyedMr {
    /// `mr`, found by `key` (its key when it was looked up).
    pub(crate) fn new(mr: ObjRef<Mr<RrxeDevice>>, key: u32) -> Self {
        Self { mr, key }
    }

    /// Checks that `[va, va + len)` lies inside the region (for a fast-registration MR, inside
    /// the valid registration the key names); `EFAULT` if not. Every remote request is checked
    /// this way when it arrives, before any byte moves.
    pub(crate) fn check_range(&self, va: u64, len: u64) -> Result {
        self.mr.check_range(self.key, va, len)
    }

    /// The memory of `[va, va + len)` as one side of a direct copy; `EFAULT` outside the
    /// region, `EINVAL` for fast-registration and on-demand-paging MRs.
    pub(crate) fn span(&self, va: u64, len: usize) -> Result<Span<'_>> {
        self.mr.span(va, len)
    }

    /// Whether `[va, va + len)` can be a side of a direct copy ([`Self::for_spans`]): `EFAULT`
    /// outside the region, `EINVAL` for a region paged on demand.
    pub(crate) fn check_direct(&self, va: u64, len: usize) -> Result {
        self.mr.check_direct(self.key, va, len)
    }

    /// Calls `f(span, bytes)` for the pieces of `[va, va + len)` in order, as one side of a
    /// direct copy (a fast-registration MR's all under its mapping's lock).
    pub(crate) fn for_spans(
        &self,
        va: u64,
        len: usize,
        f: impl FnMut(Span<'_>, usize) -> Result,
    ) -> Result {
        self.mr.for_spans(self.key, va, len, f)
    }

    /// Appends `n` bytes at address `va` of the region to `dst`.
    pub(crate) fn read(&self, va: u64, n: usize, dst: &mut Fill<'_>) -> Result {
        self.mr.read(self.key, va, n, dst)
    }

    /// Copies `src` to address `va` of the region.
    pub(crate) fn write(&self, va: u64, src: &[u8]) -> Result {
        self.mr.write(self.key, va, src)
    }

    /// Runs `f` on the aligned 64-bit word at address `va` of the region.
    pub(crate) fn atomic_u64<R>(
        &self,
        va: u64,
        f: impl FnOnce(&core::sync::atomic::AtomicU64) -> R,
    ) -> Result<R> {
        self.mr.atomic_u64(self.key, va, f)
    }

    /// Executes a FLUSH of `[va, va + len)`, or of the whole region when `whole`
    /// ([`super::RrxeMr`]'s rules: ordinary memory, ordered before the answer).
    pub(crate) fn flush(&self, va: u64, len: u64, whole: bool) -> Result {
        self.mr.flush(self.key, va, len, whole)
    }
}

/// The region's other properties (rights, windows, kind) need no key.
impl Deref for KeyedMr {
    type Target = Mr<RrxeDevice>;

    fn deref(&self) -> &Self::Target {
        &self.mr
    }
}
