// SPDX-License-Identifier: GPL-2.0

//! Memory regions: user MRs over pinned user memory and the DMA MR of kernel PDs, with rxe's
//! key scheme (`lkey == rkey == index << 8 | key`, where the low byte is random and is what
//! fast registration may change). Fast-registration MRs are in [`frwr`].

mod frwr;
mod keyed;

use frwr::PageList;
pub(crate) use keyed::KeyedMr;

use crate::sync::SpinLockIrq;
use crate::{
    device::RrxeDevice,
    ib::{
        Access,
        AccessFlags,
        Device,
        Mr,
        MrKeys,
        Prefetch,
        ResEntry,
        Umem,
        UmemOdp, //
    },
    index::PoolIndex,
    kernel_ext::{
        cond_resched,
        fatal_signal_pending,
        random_u8, //
    },
    mm::{
        Fill,
        KernelConsumer,
        Span, //
    },
};
use kernel::{
    prelude::*,
    sync::{
        atomic::{
            Acquire,
            Atomic,
            Relaxed, //
        },
        Arc,
    },
};

/// `IB_MR_REREG_ACCESS`.
const REREG_ACCESS: u32 = 1 << 2;

/// What an MR maps.
enum MrKind {
    /// Pinned user memory, unpinned when the MR is deregistered.
    User {
        /// The pinned pages.
        umem: Umem,
    },
    /// User memory paged on demand: the data path finds a page absent (`EAGAIN`) until a fault
    /// in process context (the QP's fault job: [`RrxeMr::fault_target`]) brings it in.
    OnDemand {
        /// The registration and the table of its present pages; shared with the faults in
        /// progress, which may outlive the MR ([`RrxeMr::fault_target`]).
        odp: Arc<UmemOdp>,
    },
    /// All of kernel virtual memory (virtual DMA); only kernel consumers have one.
    Dma(KernelConsumer),
    /// A fast-registration MR: the page list `map_mr_sg` fills (posted with REG_MR).
    FastReg {
        /// The pages, at most the `max_num_sg` given at allocation.
        pages: Pin<KBox<SpinLockIrq<PageList>>>,
        /// Its pages are kernel addresses: only kernel consumers allocate these MRs.
        kernel: KernelConsumer,
    },
}

/// The driver data of a memory region: what it maps, from which address, with which rights.
/// The data path finds it by key in the device's MR table ([`crate::pipeline::mem`]).
pub(crate) struct RrxeMr {
    /// The MR index, returned to the device's pool when the MR is deregistered.
    index: PoolIndex,
    kind: MrKind,
    /// `IB_ACCESS_*` rights (changed by re-registration).
    access: Atomic<u32>,
    /// The first address of the region (user MRs; 0 for the DMA MR).
    iova: u64,
    /// The length of the region in bytes.
    length: u64,
    /// The memory windows bound to the region ([`crate::verbs::mw`]); deregistration waits for none.
    binds: Arc<Atomic<u32>>,
    /// The key (`lkey == rkey`) that names the region now: the one it was created with, then
    /// that of the last fast registration executed. Not `ib_mr.lkey`: a kernel consumer
    /// rewrites that (`ib_update_fast_reg_key`) when it posts the REG_MR, while a LOCAL_INV of
    /// the old key posted before it may still be waiting in the send queue.
    key: Atomic<u32>,
}

/// Refuses `IB_ACCESS_FLUSH_PERSISTENT`: it promises that a FLUSH makes the region durable,
/// which only persistent memory can keep (C rxe refuses it for pages that are not pmem; we
/// support no persistent memory at all).
fn check_persistence(access: AccessFlags) -> Result {
    if access.contains(Access::FlushPersistent) {
        return Err(EINVAL);
    }
    Ok(())
}

/// Keys for MR index `index`: the index in the upper 24 bits, a random key byte below.
fn keys_for(index: u32) -> MrKeys {
    let key = index << 8 | u32::from(random_u8());
    MrKeys {
        lkey: key,
        rkey: key,
    }
}

impl RrxeMr {
    fn new(
        dev: &Device<RrxeDevice>,
        kind: MrKind,
        access: AccessFlags,
        iova: u64,
        length: u64,
    ) -> Result<(Self, MrKeys)> {
        let index = PoolIndex::alloc(dev.mr_pool())?;
        let keys = keys_for(index.get());
        Ok((
            Self {
                index,
                kind,
                access: Atomic::new(access.raw()),
                iova,
                length,
                binds: Arc::new(Atomic::new(0), GFP_KERNEL)?,
                key: Atomic::new(keys.lkey),
            },
            keys,
        ))
    }

    /// The MR's index in the device's table (its key without the low byte).
    pub(crate) fn index(&self) -> u32 {
        self.index.get()
    }

    /// The key that names the region now (its `lkey` and `rkey`).
    pub(crate) fn key(&self) -> u32 {
        self.key.load(Acquire)
    }

    /// Whether this is the DMA MR of a kernel PD (all of memory, local writes allowed).
    pub(crate) fn is_dma(&self) -> bool {
        matches!(self.kind, MrKind::Dma(_))
    }

    /// The `IB_ACCESS_*` rights.
    pub(crate) fn access(&self) -> AccessFlags {
        AccessFlags::from_raw(self.access.load(Relaxed))
    }

    /// The MR's state for `rdma -dd res show mr`: what it maps, its rights, the windows bound
    /// to it and, for a fast-registration MR, whether a registration is valid and its pages.
    pub(crate) fn report(&self, e: &mut ResEntry) -> Result {
        let kind = match &self.kind {
            MrKind::User { .. } => c"pinned",
            MrKind::OnDemand { .. } => c"on_demand",
            MrKind::Dma(_) => c"dma",
            MrKind::FastReg { .. } => c"fast_reg",
        };
        e.str(c"kind", kind)?;
        e.u32_hex(c"access", self.access.load(Relaxed))?;
        e.u32(c"windows", self.binds.load(Relaxed))?;
        if let MrKind::FastReg { pages, .. } = &self.kind {
            let (valid, n) = {
                let p = pages.lock();
                (p.valid, p.pages.len())
            };
            e.u32(c"valid", u32::from(valid))?;
            e.u32(c"pages", u32::try_from(n).unwrap_or(u32::MAX))?;
        }
        Ok(())
    }

    /// The count of memory windows bound to the region.
    pub(crate) fn binds(&self) -> &Arc<Atomic<u32>> {
        &self.binds
    }

    /// Whether a memory window may cover `[addr, addr + len)`: inside a user region (kernel
    /// consumers cannot bind windows, so their DMA and fast-registration MRs hold none).
    pub(crate) fn can_hold_window(&self, addr: u64, len: u64) -> bool {
        matches!(self.kind, MrKind::User { .. } | MrKind::OnDemand { .. })
            && usize::try_from(len).is_ok_and(|len| self.offset(addr, len).is_ok())
    }

    /// The byte offset of `[va, va + len)` in the region; `EFAULT` outside it.
    fn offset(&self, va: u64, len: usize) -> Result<u64> {
        if matches!(self.kind, MrKind::FastReg { .. }) {
            return Ok(0);
        }
        let off = va.checked_sub(self.iova).ok_or(EFAULT)?;
        let end = off.checked_add(len as u64).ok_or(EFAULT)?;
        if end > self.length {
            return Err(EFAULT);
        }
        Ok(off)
    }

    /// Checks that `[va, va + len)` lies inside the region (for a fast-registration MR, inside
    /// the valid registration `key` names); `EFAULT` if not. Every remote request is checked
    /// this way when it arrives, before any byte moves, so later per-packet address arithmetic
    /// stays inside. The memory accesses below take the key the region was found by
    /// ([`KeyedMr`]).
    fn check_range(&self, key: u32, va: u64, len: u64) -> Result {
        match &self.kind {
            MrKind::FastReg { pages, .. } => {
                let p = pages.lock();
                let off = va.checked_sub(p.iova).ok_or(EFAULT)?;
                if !self.names(&p, key) || off.checked_add(len).is_none_or(|e| e > p.length) {
                    return Err(EFAULT);
                }
                Ok(())
            }
            _ => {
                self.offset(va, usize::try_from(len).map_err(|_| EFAULT)?)?;
                Ok(())
            }
        }
    }

    /// The memory of `[va, va + len)` as one side of a direct copy; `EFAULT` outside the
    /// region, `EINVAL` for fast-registration and on-demand-paging MRs (their pages are copied
    /// through the packet path, which waits for page faults).
    fn span(&self, va: u64, len: usize) -> Result<Span<'_>> {
        let off = self.offset(va, len)?;
        match &self.kind {
            MrKind::User { umem } => Ok(Span::Pinned(umem.pages(), off as usize)),
            MrKind::Dma(k) => Ok(Span::Kernel(k, va)),
            MrKind::FastReg { .. } | MrKind::OnDemand { .. } => Err(EINVAL),
        }
    }

    /// Whether `[va, va + len)` can be a side of a direct copy ([`Self::for_spans`]): `EFAULT`
    /// outside the region (a fast-registration MR's valid registration), `EINVAL` for a region
    /// paged on demand (the packet path waits for its faults).
    fn check_direct(&self, key: u32, va: u64, len: usize) -> Result {
        match &self.kind {
            MrKind::FastReg { .. } => self.check_range(key, va, len as u64),
            _ => self.span(va, len).map(|_| ()),
        }
    }

    /// Whether this is a fast-registration MR (its pages are behind the mapping's lock).
    pub(crate) fn is_fast_reg(&self) -> bool {
        matches!(self.kind, MrKind::FastReg { .. })
    }

    /// Calls `f(span, bytes)` for the pieces of `[va, va + len)` in order, as one side of a
    /// direct copy: one piece of a user or DMA region; one per page of a fast-registration
    /// MR, all under its mapping's lock, so an invalidation or a new registration waits for the
    /// copy (its pages are the kernel consumer's until then). `EFAULT` outside the region,
    /// `EINVAL` for a region paged on demand.
    fn for_spans(
        &self,
        key: u32,
        va: u64,
        len: usize,
        mut f: impl FnMut(Span<'_>, usize) -> Result,
    ) -> Result {
        match &self.kind {
            MrKind::FastReg { pages, kernel } => self.walk(pages, key, va, len, |addr, r| {
                f(Span::Kernel(kernel, addr), r.len())
            }),
            _ => f(self.span(va, len)?, len),
        }
    }

    /// What a fault at `va` of a region paged on demand needs, without the MR: the
    /// registration (shared: the MR may be deregistered while the fault runs), the offset of
    /// `va` in it, and the bytes from `va` to the region's end (callers ask for what lies ahead
    /// of an access, not past the end). `None` for other regions and addresses outside. Any
    /// context.
    pub(crate) fn fault_target(&self, va: u64) -> Option<(Arc<UmemOdp>, u64, u64)> {
        let MrKind::OnDemand { odp } = &self.kind else {
            return None;
        };
        let off = self.offset(va, 0).ok()?;
        Some((odp.clone(), off, self.length - off))
    }

    /// `ibv_advise_mr` on `[va, va + len)`: `EPERM` to prefetch for writing a region the user
    /// cannot write locally, `EINVAL` for regions that are not paged on demand. Process
    /// context: sleeps; reschedules between pieces of [`crate::ib::MAX_FAULT_BYTES`] and gives
    /// up with `EINTR` once the caller is sent a fatal signal (a call may name 4 GiB per range).
    pub(crate) fn prefetch(&self, va: u64, len: u64, advice: Prefetch) -> Result {
        let MrKind::OnDemand { odp } = &self.kind else {
            return Err(EINVAL);
        };
        if advice == Prefetch::Write && !self.access().contains(Access::LocalWrite) {
            return Err(EPERM);
        }
        let mut done = 0u64;
        while done < len {
            if fatal_signal_pending() {
                return Err(EINTR);
            }
            let n = (len - done).min(crate::ib::MAX_FAULT_BYTES);
            let at = va.checked_add(done).ok_or(EFAULT)?;
            let off = self.offset(at, usize::try_from(n).map_err(|_| EFAULT)?)?;
            odp.fault(
                off,
                n,
                advice == Prefetch::Write,
                advice != Prefetch::NoFault,
            )?;
            done += n;
            cond_resched();
        }
        Ok(())
    }

    /// Appends `n` bytes at address `va` of the region to `dst`.
    fn read(&self, key: u32, va: u64, n: usize, dst: &mut Fill<'_>) -> Result {
        let off = self.offset(va, n)?;
        match &self.kind {
            MrKind::User { umem } => umem.pages().read(off as usize, n, dst),
            MrKind::OnDemand { odp } => odp.read(off as usize, n, dst),
            MrKind::Dma(k) => crate::mm::kernel_read(k, va, n, dst),
            MrKind::FastReg { pages, kernel } => self.walk(pages, key, va, n, |addr, r| {
                crate::mm::kernel_read(kernel, addr, r.len(), dst)
            }),
        }
    }

    /// Copies `src` to address `va` of the region.
    fn write(&self, key: u32, va: u64, src: &[u8]) -> Result {
        let off = self.offset(va, src.len())?;
        match &self.kind {
            MrKind::User { umem } => umem.pages().write(off as usize, src),
            MrKind::OnDemand { odp } => odp.write(off as usize, src),
            MrKind::Dma(k) => crate::mm::kernel_write(k, va, src),
            MrKind::FastReg { pages, kernel } => self.walk(pages, key, va, src.len(), |addr, r| {
                crate::mm::kernel_write(kernel, addr, src.get(r).ok_or(EFAULT)?)
            }),
        }
    }

    /// Runs `f` on the aligned 64-bit word at address `va` of the region.
    fn atomic_u64<R>(
        &self,
        key: u32,
        va: u64,
        f: impl FnOnce(&core::sync::atomic::AtomicU64) -> R,
    ) -> Result<R> {
        let off = self.offset(va, 8)?;
        match &self.kind {
            MrKind::User { umem } => umem.pages().atomic_u64(off as usize, f),
            MrKind::OnDemand { odp } => odp.atomic_u64(off as usize, f),
            MrKind::Dma(k) => crate::mm::kernel_atomic_u64(k, va, f),
            MrKind::FastReg { pages, kernel } => {
                // An aligned word never crosses a page (pages are at least 4 KiB): find its
                // kernel address under the lock, so an invalidation cannot race the lookup.
                let p = pages.lock();
                if !self.names(&p, key) {
                    return Err(EFAULT);
                }
                let addr = p.word(va)?;
                crate::mm::kernel_atomic_u64(kernel, addr, f)
            }
        }
    }

    /// Executes a FLUSH (IBA Annex A19) of `[va, va + len)`, or of the whole region when
    /// `whole` (selectivity level `IB_FLUSH_MR`). The region is ordinary, cache-coherent
    /// memory: global visibility needs only that every earlier write is ordered before the
    /// answer; persistence is refused at registration (there is no persistent memory to make
    /// durable), so a FLUSH asking for it never finds an MR with the right to it.
    fn flush(&self, key: u32, va: u64, len: u64, whole: bool) -> Result {
        if !whole {
            self.check_range(key, va, len)?;
        } else if let MrKind::FastReg { pages, .. } = &self.kind {
            if !self.names(&pages.lock(), key) {
                return Err(EFAULT);
            }
        }
        core::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    /// Re-registration in place: a new PD (moved by ib_core) and/or new access rights, which
    /// the pinned pages must allow (`EACCES` for write access to read-only memory).
    pub(crate) fn rereg(mr: &Mr<RrxeDevice>, flags: u32, access: AccessFlags) -> Result {
        match &mr.kind {
            MrKind::User { umem } => umem.check_rereg(flags, access)?,
            // The umem's writability and paging mode are fixed at registration.
            MrKind::OnDemand { .. } if flags & REREG_ACCESS != 0 => {
                return Err(crate::kernel_ext::eopnotsupp())
            }
            _ => {}
        }
        if flags & REREG_ACCESS != 0 {
            check_persistence(access)?;
            mr.access.store(access.raw(), Relaxed);
        }
        Ok(())
    }

    /// Registers pinned user memory addressed from `iova` (which may not wrap around).
    pub(crate) fn user(
        dev: &Device<RrxeDevice>,
        umem: Umem,
        iova: u64,
        access: AccessFlags,
    ) -> Result<(Self, MrKeys)> {
        check_persistence(access)?;
        let len = umem.len();
        iova.checked_add(len).ok_or(EINVAL)?;
        Self::new(dev, MrKind::User { umem }, access, iova, len)
    }

    /// Registers user memory paged on demand, addressed from `iova` (which may not wrap).
    pub(crate) fn on_demand(
        dev: &Device<RrxeDevice>,
        odp: UmemOdp,
        iova: u64,
        access: AccessFlags,
    ) -> Result<(Self, MrKeys)> {
        check_persistence(access)?;
        let len = odp.len();
        iova.checked_add(len).ok_or(EINVAL)?;
        let odp = Arc::new(odp, GFP_KERNEL_ACCOUNT)?;
        Self::new(dev, MrKind::OnDemand { odp }, access, iova, len)
    }

    /// The DMA MR of a kernel PD.
    pub(crate) fn dma(
        dev: &Device<RrxeDevice>,
        access: AccessFlags,
        kernel: KernelConsumer,
    ) -> Result<(Self, MrKeys)> {
        Self::new(dev, MrKind::Dma(kernel), access, 0, u64::MAX)
    }
}

#[kernel::prelude::kunit_tests(rrxe_mr)]
mod tests {
    use super::*;

    #[test]
    fn keys_carry_the_index() {
        for index in [1u32, 2, 0x7ffff, 0x8_0000] {
            let k = keys_for(index);
            assert_eq!(k.lkey >> 8, index);
            assert_eq!(k.lkey, k.rkey);
        }
    }
}
