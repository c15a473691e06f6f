// SPDX-License-Identifier: GPL-2.0

//! Kernel work requests (`struct ib_send_wr`, `struct ib_recv_wr` chains) and work completions
//! (`struct ib_wc`) as Rust values.
//!
//! These come from kernel consumers (ULPs), which are trusted to pass valid chains; the values
//! are still range-checked before the driver uses them.

use crate::{
    bindings,
    proto::wqe::Sge, //
};
use core::marker::PhantomData;
use kernel::prelude::*;

/// The most scatter/gather entries a kernel work request may carry here.
pub(crate) const MAX_WR_SGE: usize = 32;

/// A QP that a kernel completion names (`ib_wc.qp`), obtained from a live QP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct QpHandle(*mut bindings::ib_qp);

// SAFETY: A handle is only an address handed back to ib_core in a completion.
unsafe impl Send for QpHandle {}
// SAFETY: As above.
unsafe impl Sync for QpHandle {}

impl QpHandle {
    /// No QP (placeholders in preallocated completion buffers).
    pub(crate) const NONE: Self = Self(core::ptr::null_mut());

    /// The handle of the C QP `qp`.
    pub(super) fn new(qp: *mut bindings::ib_qp) -> Self {
        Self(qp)
    }
}

/// A work completion for a kernel CQ (the fields of `struct ib_wc` rrxe reports).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wc {
    /// The work request id.
    pub(crate) wr_id: u64,
    /// `enum ib_wc_status`.
    pub(crate) status: u32,
    /// `enum ib_wc_opcode`.
    pub(crate) opcode: u32,
    /// Vendor error.
    pub(crate) vendor_err: u32,
    /// Bytes transferred.
    pub(crate) byte_len: u32,
    /// The QP the completion belongs to.
    pub(crate) qp: QpHandle,
    /// Immediate data (wire order) or invalidated rkey.
    pub(crate) ex: u32,
    /// Source QP (UD receives).
    pub(crate) src_qp: u32,
    /// `IB_WC_*` flags, kernel values.
    pub(crate) wc_flags: u32,
    /// P_Key index.
    pub(crate) pkey_index: u16,
    /// Service level.
    pub(crate) sl: u8,
    /// Port number.
    pub(crate) port_num: u8,
}

impl Wc {
    /// A placeholder for buffers the driver fills.
    pub(super) const EMPTY: Wc = Wc {
        wr_id: 0,
        status: 0,
        opcode: 0,
        vendor_err: 0,
        byte_len: 0,
        qp: QpHandle::NONE,
        ex: 0,
        src_qp: 0,
        wc_flags: 0,
        pkey_index: 0,
        sl: 0,
        port_num: 0,
    };

    /// Writes the C completion.
    pub(super) fn write_to(&self, c: &mut bindings::ib_wc) {
        *c = bindings::ib_wc::default();
        c.__bindgen_anon_1.wr_id = self.wr_id;
        c.status = self.status;
        c.opcode = self.opcode;
        c.vendor_err = self.vendor_err;
        c.byte_len = self.byte_len;
        c.qp = self.qp.0;
        c.ex.invalidate_rkey = self.ex;
        c.src_qp = self.src_qp;
        c.wc_flags = i32::try_from(self.wc_flags).unwrap_or(0);
        c.pkey_index = self.pkey_index;
        c.sl = self.sl;
        c.port_num = self.port_num.into();
    }
}

/// One kernel work request's scatter/gather list, copied.
pub(crate) struct SgeList {
    sges: [Sge; MAX_WR_SGE],
    len: usize,
}

impl SgeList {
    /// Copies `num` entries from `list`.
    ///
    /// # Safety
    ///
    /// `list` points to `num` valid `struct ib_sge` when `num > 0`.
    unsafe fn copy(list: *const bindings::ib_sge, num: c_int) -> Result<Self> {
        let len = usize::try_from(num).map_err(|_| EINVAL)?;
        if len > MAX_WR_SGE {
            return Err(EINVAL);
        }
        let mut s = Self {
            sges: [Sge::default(); MAX_WR_SGE],
            len,
        };
        for (i, out) in s.sges.iter_mut().take(len).enumerate() {
            // SAFETY: `i < num` entries are valid per the caller.
            let c = unsafe { &*list.add(i) };
            *out = Sge {
                addr: c.addr,
                length: c.length,
                lkey: c.lkey,
            };
        }
        Ok(s)
    }

    /// The entries.
    pub(crate) fn as_slice(&self) -> &[Sge] {
        &self.sges[..self.len]
    }
}

/// A kernel receive work request.
pub(crate) struct RecvWr {
    /// The work request id.
    pub(crate) wr_id: u64,
    /// Its buffers.
    pub(crate) sges: SgeList,
}

/// A kernel send work request (what the driver needs of it so far: the id, for flushing; the
/// packet pipeline adds the rest).
pub(crate) struct SendWr {
    /// The work request id.
    pub(crate) wr_id: u64,
}

/// A chain of kernel work requests; remembers the one last handed out so the caller can report
/// it as `bad_wr` when the driver fails on it.
pub(crate) struct WrChain<'a, W> {
    next: *const W,
    last: *const W,
    _life: PhantomData<&'a W>,
}

impl<'a, W> WrChain<'a, W> {
    /// # Safety
    ///
    /// `head` is NULL or a valid chain that outlives `'a`.
    pub(super) unsafe fn new(head: *const W) -> Self {
        Self {
            next: head,
            last: head,
            _life: PhantomData,
        }
    }

    /// The request the driver was working on (for `bad_wr`).
    pub(super) fn current(&self) -> *const W {
        self.last
    }
}

impl Iterator for WrChain<'_, bindings::ib_recv_wr> {
    type Item = Result<RecvWr>;

    fn next(&mut self) -> Option<Result<RecvWr>> {
        // SAFETY: By the constructor's contract the chain is valid.
        let c = unsafe { self.next.as_ref() }?;
        self.last = self.next;
        self.next = c.next;
        // SAFETY: `sg_list` holds `num_sge` entries (the ULP's contract).
        Some(
            unsafe { SgeList::copy(c.sg_list, c.num_sge) }.map(|sges| RecvWr {
                // SAFETY: Reading the id member of the union, as ULPs that use `wr_cqe` expect it
                // back bit for bit.
                wr_id: unsafe { c.__bindgen_anon_1.wr_id },
                sges,
            }),
        )
    }
}

impl Iterator for WrChain<'_, bindings::ib_send_wr> {
    type Item = Result<SendWr>;

    fn next(&mut self) -> Option<Result<SendWr>> {
        // SAFETY: By the constructor's contract the chain is valid.
        let c = unsafe { self.next.as_ref() }?;
        self.last = self.next;
        self.next = c.next;
        Some(Ok(SendWr {
            // SAFETY: As for receive requests.
            wr_id: unsafe { c.__bindgen_anon_1.wr_id },
        }))
    }
}

/// A chain of kernel receive requests.
pub(crate) type RecvWrChain<'a> = WrChain<'a, bindings::ib_recv_wr>;

/// A chain of kernel send requests.
pub(crate) type SendWrChain<'a> = WrChain<'a, bindings::ib_send_wr>;
