// SPDX-License-Identifier: GPL-2.0

//! Kernel work requests (`struct ib_send_wr`, `struct ib_recv_wr` chains) and work completions
//! (`struct ib_wc`) as Rust values.
//!
//! These come from kernel consumers (ULPs), which are trusted to pass valid chains; the values
//! are still range-checked before the driver uses them.

use super::{
    ah::Ah,
    mr::AccessFlags,
    DeviceOps,
    Mr, //
};
use crate::bindings;
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

// The status of a work completion (`enum ib_wc_status`): proto's, whose numbering is the
// kernel's (and user space's `IBV_WC_*`).
use crate::proto::cqe::{
    WcOpcode,
    WcStatus, //
};

// proto numbers the statuses as the kernel's `enum ib_wc_status`, value by value.
const _: () = {
    let kernel = [
        bindings::ib_wc_status_IB_WC_SUCCESS,
        bindings::ib_wc_status_IB_WC_LOC_LEN_ERR,
        bindings::ib_wc_status_IB_WC_LOC_QP_OP_ERR,
        bindings::ib_wc_status_IB_WC_LOC_EEC_OP_ERR,
        bindings::ib_wc_status_IB_WC_LOC_PROT_ERR,
        bindings::ib_wc_status_IB_WC_WR_FLUSH_ERR,
        bindings::ib_wc_status_IB_WC_MW_BIND_ERR,
        bindings::ib_wc_status_IB_WC_BAD_RESP_ERR,
        bindings::ib_wc_status_IB_WC_LOC_ACCESS_ERR,
        bindings::ib_wc_status_IB_WC_REM_INV_REQ_ERR,
        bindings::ib_wc_status_IB_WC_REM_ACCESS_ERR,
        bindings::ib_wc_status_IB_WC_REM_OP_ERR,
        bindings::ib_wc_status_IB_WC_RETRY_EXC_ERR,
        bindings::ib_wc_status_IB_WC_RNR_RETRY_EXC_ERR,
        bindings::ib_wc_status_IB_WC_LOC_RDD_VIOL_ERR,
        bindings::ib_wc_status_IB_WC_REM_INV_RD_REQ_ERR,
        bindings::ib_wc_status_IB_WC_REM_ABORT_ERR,
        bindings::ib_wc_status_IB_WC_INV_EECN_ERR,
        bindings::ib_wc_status_IB_WC_INV_EEC_STATE_ERR,
        bindings::ib_wc_status_IB_WC_FATAL_ERR,
        bindings::ib_wc_status_IB_WC_RESP_TIMEOUT_ERR,
        bindings::ib_wc_status_IB_WC_GENERAL_ERR,
    ];
    assert!(kernel.len() == WcStatus::ALL.len());
    let mut i = 0;
    while i < kernel.len() {
        assert!(WcStatus::ALL[i].to_raw() == kernel[i]);
        i += 1;
    }
};

// proto's completion opcodes are the kernel's `enum ib_wc_opcode`, value by value.
macro_rules! same_opcodes {
    ($($name:ident = $kernel:ident),* $(,)?) => {
        $(const _: () = assert!(WcOpcode::$name.to_raw() == bindings::$kernel);)*
    };
}
same_opcodes!(
    Send = ib_wc_opcode_IB_WC_SEND,
    RdmaWrite = ib_wc_opcode_IB_WC_RDMA_WRITE,
    RdmaRead = ib_wc_opcode_IB_WC_RDMA_READ,
    CompSwap = ib_wc_opcode_IB_WC_COMP_SWAP,
    FetchAdd = ib_wc_opcode_IB_WC_FETCH_ADD,
    BindMw = ib_wc_opcode_IB_WC_BIND_MW,
    LocalInv = ib_wc_opcode_IB_WC_LOCAL_INV,
    Flush = ib_wc_opcode_IB_WC_FLUSH,
    AtomicWrite = ib_wc_opcode_IB_WC_ATOMIC_WRITE,
    RegMr = ib_wc_opcode_IB_WC_REG_MR,
    Recv = ib_wc_opcode_IB_WC_RECV,
    RecvRdmaWithImm = ib_wc_opcode_IB_WC_RECV_RDMA_WITH_IMM,
);
const _: () = assert!(WcOpcode::ALL.len() == 12);

/// A work completion for a kernel CQ (the fields of `struct ib_wc` rrxe reports).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wc {
    /// The work request id.
    pub(crate) wr_id: u64,
    /// The status.
    pub(crate) status: WcStatus,
    /// The opcode.
    pub(crate) opcode: WcOpcode,
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
    /// The network header of a UD receive with a GRH: 4 (IPv4) or 6 (IPv6); 0 if none.
    pub(crate) network: u8,
}

impl Wc {
    /// Writes the C completion.
    pub(super) fn write_to(&self, c: &mut bindings::ib_wc) {
        *c = bindings::ib_wc::default();
        c.__bindgen_anon_1.wr_id = self.wr_id;
        c.status = self.status.to_raw();
        c.opcode = self.opcode.to_raw();
        c.vendor_err = self.vendor_err;
        c.byte_len = self.byte_len;
        c.qp = self.qp.0;
        c.ex.invalidate_rkey = self.ex;
        c.src_qp = self.src_qp;
        c.wc_flags = i32::try_from(self.wc_flags).unwrap_or(0);
        c.pkey_index = self.pkey_index;
        c.sl = self.sl;
        c.port_num = self.port_num.into();
        let net = match self.network {
            4 => Some(bindings::rdma_network_type_RDMA_NETWORK_IPV4),
            6 => Some(bindings::rdma_network_type_RDMA_NETWORK_IPV6),
            _ => None,
        };
        if let Some(n) = net {
            c.network_hdr_type = n as u8;
            c.wc_flags |= bindings::ib_wc_flags_IB_WC_WITH_NETWORK_HDR_TYPE as i32;
        }
    }
}

/// The consumer's array of `struct ib_wc` that `poll_cq` fills: completions are written into
/// it as they are taken from the CQ (nothing built on the stack first).
pub(crate) struct WcOut<'a> {
    wc: *mut bindings::ib_wc,
    room: usize,
    n: usize,
    _life: PhantomData<&'a mut bindings::ib_wc>,
}

impl WcOut<'_> {
    /// # Safety
    ///
    /// `wc` has room for `room` completions, written only through this value while it lives.
    pub(super) unsafe fn new(wc: *mut bindings::ib_wc, room: usize) -> Self {
        Self {
            wc,
            room,
            n: 0,
            _life: PhantomData,
        }
    }

    /// Whether the array is full.
    pub(crate) fn is_full(&self) -> bool {
        self.n >= self.room
    }

    /// Writes the next completion; `false` (nothing written) when the array is full.
    pub(crate) fn push(&mut self, w: &Wc) -> bool {
        if self.is_full() {
            return false;
        }
        // SAFETY: `n < room` and the array has room for `room` completions (the constructor's
        // contract), written only through this value.
        w.write_to(unsafe { &mut *self.wc.add(self.n) });
        self.n += 1;
        true
    }

    /// The completions written.
    pub(crate) fn written(&self) -> usize {
        self.n
    }
}

/// A scatter/gather entry of a kernel work request: `struct ib_sge`, in its layout, so the
/// consumer's list is read in place ([`SgeList`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sge {
    /// Local virtual (or DMA) address.
    pub(crate) addr: u64,
    /// Length in bytes.
    pub(crate) length: u32,
    /// Local key of the memory region.
    pub(crate) lkey: u32,
}

const _: () = {
    assert!(core::mem::size_of::<Sge>() == core::mem::size_of::<bindings::ib_sge>());
    assert!(core::mem::align_of::<Sge>() == core::mem::align_of::<bindings::ib_sge>());
    assert!(core::mem::offset_of!(Sge, addr) == core::mem::offset_of!(bindings::ib_sge, addr));
    assert!(core::mem::offset_of!(Sge, length) == core::mem::offset_of!(bindings::ib_sge, length));
    assert!(core::mem::offset_of!(Sge, lkey) == core::mem::offset_of!(bindings::ib_sge, lkey));
};

/// One kernel work request's scatter/gather list: the consumer's own array, borrowed for the
/// post call (nothing copied: a post reads each entry once, as it encodes it).
#[derive(Clone, Copy)]
pub(crate) struct SgeList<'a>(&'a [Sge]);

impl<'a> SgeList<'a> {
    /// The `num` entries at `list`; `EINVAL` for more than [`MAX_WR_SGE`], a negative count,
    /// or no list for a positive one.
    ///
    /// # Safety
    ///
    /// `list` points to `num` valid `struct ib_sge` when `num > 0`, which nothing writes during
    /// `'a` (the post call: the consumer owns the chain until it returns).
    unsafe fn new(list: *const bindings::ib_sge, num: c_int) -> Result<Self> {
        let len = usize::try_from(num).map_err(|_| EINVAL)?;
        if len > MAX_WR_SGE {
            return Err(EINVAL);
        }
        if len == 0 {
            return Ok(Self(&[]));
        }
        if list.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: `list` holds `len` entries valid and unchanged for `'a` (the caller's
        // guarantee); `Sge` has the layout of `struct ib_sge` (asserted above).
        Ok(Self(unsafe {
            core::slice::from_raw_parts(list.cast::<Sge>(), len)
        }))
    }

    /// The entries.
    pub(crate) fn as_slice(&self) -> &'a [Sge] {
        self.0
    }
}

/// A kernel receive work request.
pub(crate) struct RecvWr<'a> {
    /// The work request id.
    pub(crate) wr_id: u64,
    /// Its buffers.
    pub(crate) sges: SgeList<'a>,
}

/// The destination of a kernel UD send.
pub(crate) struct UdDest<'a, T: DeviceOps> {
    /// The address handle (of this device: the core checks it).
    pub(crate) ah: &'a Ah<T>,
    pub(crate) remote_qpn: u32,
    pub(crate) remote_qkey: u32,
    pub(crate) pkey_index: u16,
}

/// A kernel fast registration (`IB_WR_REG_MR`).
pub(crate) struct RegMr<'a, T: DeviceOps> {
    /// The MR (of this device).
    pub(crate) mr: &'a Mr<T>,
    pub(crate) key: u32,
    pub(crate) access: AccessFlags,
}

/// A kernel send work request.
pub(crate) struct SendWr<'a, T: DeviceOps> {
    /// The work request id.
    pub(crate) wr_id: u64,
    /// `enum ib_wr_opcode`.
    pub(crate) opcode: u32,
    /// `enum ib_send_flags`.
    pub(crate) send_flags: u32,
    /// Immediate data (as stored) or the rkey to invalidate.
    pub(crate) ex: u32,
    /// Local buffers.
    pub(crate) sges: SgeList<'a>,
    /// RDMA and atomic operations: the remote address and key.
    pub(crate) remote_addr: u64,
    pub(crate) rkey: u32,
    /// Atomics: compare (or add) and swap operands.
    pub(crate) compare_add: u64,
    pub(crate) swap: u64,
    /// UD and GSI QPs: the destination.
    pub(crate) ud: Option<UdDest<'a, T>>,
    /// `IB_WR_REG_MR`.
    pub(crate) reg: Option<RegMr<'a, T>>,
}

/// A chain of kernel send work requests of a QP of a `Device<T>`.
pub(crate) struct SendWrChain<'a, 'b, T: DeviceOps> {
    inner: &'b mut WrChain<'a, bindings::ib_send_wr>,
    /// The QP is UD or GSI (its requests are `struct ib_ud_wr`).
    ud: bool,
    _t: PhantomData<T>,
}

impl<'a, 'b, T: DeviceOps> SendWrChain<'a, 'b, T> {
    /// # Safety
    ///
    /// `inner` is the chain posted to a QP of a `Device<T>`; `ud` says whether that QP is UD or
    /// GSI.
    pub(super) unsafe fn new(inner: &'b mut WrChain<'a, bindings::ib_send_wr>, ud: bool) -> Self {
        Self {
            inner,
            ud,
            _t: PhantomData,
        }
    }
}

impl<'a, T: DeviceOps + 'a> Iterator for SendWrChain<'a, '_, T> {
    type Item = Result<SendWr<'a, T>>;

    fn next(&mut self) -> Option<Self::Item> {
        let raw = self.inner.next_raw()?;
        // SAFETY: By the chain's contract `raw` is a valid request for `'a`.
        let c = unsafe { &*raw };
        let op = c.opcode;
        // SAFETY: `sg_list` holds `num_sge` entries, unchanged while the chain is posted (the
        // ULP's contract).
        let sges = match unsafe { SgeList::new(c.sg_list, c.num_sge) } {
            Ok(s) => s,
            Err(e) => return Some(Err(e)),
        };
        let mut wr = SendWr {
            // SAFETY: As for receive requests.
            wr_id: unsafe { c.__bindgen_anon_1.wr_id },
            opcode: op,
            send_flags: c.send_flags as u32,
            // SAFETY: Both union members are a 32-bit value.
            ex: unsafe { c.ex.invalidate_rkey },
            sges,
            remote_addr: 0,
            rkey: 0,
            compare_add: 0,
            swap: 0,
            ud: None,
            reg: None,
        };
        // The request is the first member of the larger structure its opcode (and the QP type)
        // selects (`rdma_wr()`, `atomic_wr()`, `ud_wr()`, `reg_wr()` in C).
        match op {
            bindings::ib_wr_opcode_IB_WR_RDMA_WRITE
            | bindings::ib_wr_opcode_IB_WR_RDMA_WRITE_WITH_IMM
            | bindings::ib_wr_opcode_IB_WR_RDMA_READ => {
                // SAFETY: RDMA requests are `struct ib_rdma_wr`.
                let r = unsafe { &*raw.cast::<bindings::ib_rdma_wr>() };
                wr.remote_addr = r.remote_addr;
                wr.rkey = r.rkey;
            }
            bindings::ib_wr_opcode_IB_WR_ATOMIC_CMP_AND_SWP
            | bindings::ib_wr_opcode_IB_WR_ATOMIC_FETCH_AND_ADD => {
                // SAFETY: Atomic requests are `struct ib_atomic_wr`.
                let a = unsafe { &*raw.cast::<bindings::ib_atomic_wr>() };
                wr.remote_addr = a.remote_addr;
                wr.rkey = a.rkey;
                wr.compare_add = a.compare_add;
                wr.swap = a.swap;
            }
            bindings::ib_wr_opcode_IB_WR_REG_MR => {
                // SAFETY: Registrations are `struct ib_reg_wr` naming an MR of this device.
                let r = unsafe { &*raw.cast::<bindings::ib_reg_wr>() };
                if r.mr.is_null() {
                    return Some(Err(EINVAL));
                }
                wr.reg = Some(RegMr {
                    // SAFETY: An MR of this `Device<T>`, live while the request is posted.
                    mr: unsafe { Mr::from_raw(r.mr) },
                    key: r.key,
                    access: AccessFlags::from_raw(u32::try_from(r.access).unwrap_or(0)),
                });
            }
            bindings::ib_wr_opcode_IB_WR_SEND | bindings::ib_wr_opcode_IB_WR_SEND_WITH_IMM
                if self.ud =>
            {
                // SAFETY: Sends on UD/GSI QPs are `struct ib_ud_wr`.
                let u = unsafe { &*raw.cast::<bindings::ib_ud_wr>() };
                if u.ah.is_null() {
                    return Some(Err(EINVAL));
                }
                wr.ud = Some(UdDest {
                    // SAFETY: An AH of this `Device<T>` (the core checks the PD), live while
                    // the request is posted.
                    ah: unsafe { Ah::from_raw(u.ah) },
                    remote_qpn: u.remote_qpn,
                    remote_qkey: u.remote_qkey,
                    pkey_index: u.pkey_index,
                });
            }
            _ => {}
        }
        Some(Ok(wr))
    }
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

impl<'a> Iterator for WrChain<'a, bindings::ib_recv_wr> {
    type Item = Result<RecvWr<'a>>;

    fn next(&mut self) -> Option<Result<RecvWr<'a>>> {
        // SAFETY: By the constructor's contract the chain is valid.
        let c = unsafe { self.next.as_ref() }?;
        self.last = self.next;
        self.next = c.next;
        // SAFETY: `sg_list` holds `num_sge` entries, unchanged while the chain is posted (the
        // ULP's contract).
        Some(
            unsafe { SgeList::new(c.sg_list, c.num_sge) }.map(|sges| RecvWr {
                // SAFETY: Reading the id member of the union, as ULPs that use `wr_cqe` expect it
                // back bit for bit.
                wr_id: unsafe { c.__bindgen_anon_1.wr_id },
                sges,
            }),
        )
    }
}

impl<'a> WrChain<'a, bindings::ib_send_wr> {
    /// The next request, as a raw pointer valid for `'a`.
    fn next_raw(&mut self) -> Option<*const bindings::ib_send_wr> {
        // SAFETY: By the constructor's contract the chain is valid.
        let c = unsafe { self.next.as_ref() }?;
        let raw = self.next;
        self.last = self.next;
        self.next = c.next;
        Some(raw)
    }
}

/// A chain of kernel receive requests.
pub(crate) type RecvWrChain<'a> = WrChain<'a, bindings::ib_recv_wr>;
