// SPDX-License-Identifier: GPL-2.0

//! Completions as user space reads them: the raw 48-byte `struct ib_uverbs_wc` the stock rxe
//! provider copies out of the completion ring, with the status, opcode and flag values of
//! `include/rdma/ib_verbs.h` and `include/uapi/rdma/ib_user_verbs.h`. Native endian; rrxe only
//! supports little-endian targets.

use super::{
    abi::{
        rd16,
        rd32,
        rd64,
        CQE_LEN, //
    },
    wqe::WrOpcode,
};

/// The body of a `const fn from_raw(raw)` of an enum with an `ALL` table and a `to_raw`: the
/// value whose raw number is `raw`, if any.
macro_rules! value_of {
    ($raw:expr) => {{
        let mut i = 0;
        let mut found = None;
        while i < Self::ALL.len() {
            if Self::ALL[i].to_raw() == $raw {
                found = Some(Self::ALL[i]);
                break;
            }
            i += 1;
        }
        found
    }};
}

/// The status of a completion, numbered as `enum ib_wc_status` (`IBV_WC_*` in user space).
/// One byte (`Option<WcStatus>` too), so that per-WQE state that keeps one stays small.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum WcStatus {
    /// `IB_WC_SUCCESS`.
    Success = 0,
    /// `IB_WC_LOC_LEN_ERR`: a local length error.
    LocLenErr = 1,
    /// `IB_WC_LOC_QP_OP_ERR`: a malformed or unsupported work request.
    LocQpOpErr = 2,
    /// `IB_WC_LOC_EEC_OP_ERR` (RD only).
    LocEecOpErr = 3,
    /// `IB_WC_LOC_PROT_ERR`: a local key or protection domain check failed.
    LocProtErr = 4,
    /// `IB_WC_WR_FLUSH_ERR`: the work request was flushed by a queue pair in error.
    WrFlushErr = 5,
    /// `IB_WC_MW_BIND_ERR`.
    MwBindErr = 6,
    /// `IB_WC_BAD_RESP_ERR`: an unexpected response opcode.
    BadRespErr = 7,
    /// `IB_WC_LOC_ACCESS_ERR`: a local access violation while writing a response.
    LocAccessErr = 8,
    /// `IB_WC_REM_INV_REQ_ERR`: the responder NAKed an invalid request.
    RemInvReqErr = 9,
    /// `IB_WC_REM_ACCESS_ERR`: the responder NAKed a remote access violation.
    RemAccessErr = 10,
    /// `IB_WC_REM_OP_ERR`: the responder NAKed an operational error.
    RemOpErr = 11,
    /// `IB_WC_RETRY_EXC_ERR`: the transport retry count was exceeded.
    RetryExcErr = 12,
    /// `IB_WC_RNR_RETRY_EXC_ERR`: the RNR retry count was exceeded.
    RnrRetryExcErr = 13,
    /// `IB_WC_LOC_RDD_VIOL_ERR` (RD only).
    LocRddViolErr = 14,
    /// `IB_WC_REM_INV_RD_REQ_ERR` (RD only).
    RemInvRdReqErr = 15,
    /// `IB_WC_REM_ABORT_ERR`.
    RemAbortErr = 16,
    /// `IB_WC_INV_EECN_ERR` (RD only).
    InvEecnErr = 17,
    /// `IB_WC_INV_EEC_STATE_ERR` (RD only).
    InvEecStateErr = 18,
    /// `IB_WC_FATAL_ERR`.
    FatalErr = 19,
    /// `IB_WC_RESP_TIMEOUT_ERR`.
    RespTimeoutErr = 20,
    /// `IB_WC_GENERAL_ERR`.
    GeneralErr = 21,
}

impl WcStatus {
    /// Every status, in the order of their raw values.
    pub(crate) const ALL: [Self; 22] = [
        Self::Success,
        Self::LocLenErr,
        Self::LocQpOpErr,
        Self::LocEecOpErr,
        Self::LocProtErr,
        Self::WrFlushErr,
        Self::MwBindErr,
        Self::BadRespErr,
        Self::LocAccessErr,
        Self::RemInvReqErr,
        Self::RemAccessErr,
        Self::RemOpErr,
        Self::RetryExcErr,
        Self::RnrRetryExcErr,
        Self::LocRddViolErr,
        Self::RemInvRdReqErr,
        Self::RemAbortErr,
        Self::InvEecnErr,
        Self::InvEecStateErr,
        Self::FatalErr,
        Self::RespTimeoutErr,
        Self::GeneralErr,
    ];

    /// Returns the status whose `enum ib_wc_status` value is `raw`, or `None` for an unknown
    /// value.
    pub(crate) const fn from_raw(raw: u32) -> Option<Self> {
        value_of!(raw)
    }

    /// Returns the `enum ib_wc_status` value of this status.
    pub(crate) const fn to_raw(self) -> u32 {
        self as u32
    }
}

/// The opcode of a completion, numbered as `IB_UVERBS_WC_*` (`IBV_WC_*` in user space).
///
/// `IB_UVERBS_WC_TSO` (7) is omitted: rxe never performs segmentation offload.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum WcOpcode {
    /// `IB_UVERBS_WC_SEND`.
    Send = 0,
    /// `IB_UVERBS_WC_RDMA_WRITE`.
    RdmaWrite = 1,
    /// `IB_UVERBS_WC_RDMA_READ`.
    RdmaRead = 2,
    /// `IB_UVERBS_WC_COMP_SWAP`.
    CompSwap = 3,
    /// `IB_UVERBS_WC_FETCH_ADD`.
    FetchAdd = 4,
    /// `IB_UVERBS_WC_BIND_MW`.
    BindMw = 5,
    /// `IB_UVERBS_WC_LOCAL_INV`.
    LocalInv = 6,
    /// `IB_UVERBS_WC_FLUSH`.
    Flush = 8,
    /// `IB_UVERBS_WC_ATOMIC_WRITE`.
    AtomicWrite = 9,
    /// The kernel's `IB_WC_REG_MR`: a fast registration, which only kernel consumers post (no
    /// `IB_UVERBS_WC_*` value is 10).
    RegMr = 10,
    /// `IB_WC_RECV` (`IBV_WC_RECV`): an incoming send.
    Recv = 128,
    /// `IB_WC_RECV_RDMA_WITH_IMM`: an incoming RDMA write with immediate data.
    RecvRdmaWithImm = 129,
}

impl WcOpcode {
    /// Every opcode, in the order of their raw values.
    pub(crate) const ALL: [Self; 12] = [
        Self::Send,
        Self::RdmaWrite,
        Self::RdmaRead,
        Self::CompSwap,
        Self::FetchAdd,
        Self::BindMw,
        Self::LocalInv,
        Self::Flush,
        Self::AtomicWrite,
        Self::RegMr,
        Self::Recv,
        Self::RecvRdmaWithImm,
    ];

    /// Returns the opcode whose value is `raw`, or `None` for one rrxe never reports.
    pub(crate) const fn from_raw(raw: u32) -> Option<Self> {
        value_of!(raw)
    }

    /// Returns the `IB_UVERBS_WC_*` value of this opcode.
    pub(crate) const fn to_raw(self) -> u32 {
        self as u32
    }
}

/// Returns the opcode a send queue completion of `op` reports, as rxe's `wr_to_wc_opcode`.
pub(crate) const fn wc_opcode_for(op: WrOpcode) -> WcOpcode {
    match op {
        WrOpcode::RdmaWrite | WrOpcode::RdmaWriteWithImm => WcOpcode::RdmaWrite,
        WrOpcode::Send | WrOpcode::SendWithImm | WrOpcode::SendWithInv => WcOpcode::Send,
        WrOpcode::RdmaRead => WcOpcode::RdmaRead,
        WrOpcode::AtomicCmpAndSwp => WcOpcode::CompSwap,
        WrOpcode::AtomicFetchAndAdd => WcOpcode::FetchAdd,
        WrOpcode::LocalInv => WcOpcode::LocalInv,
        WrOpcode::BindMw => WcOpcode::BindMw,
        WrOpcode::Flush => WcOpcode::Flush,
        WrOpcode::AtomicWrite => WcOpcode::AtomicWrite,
        WrOpcode::RegMr => WcOpcode::RegMr,
    }
}

/// The `wc_flags` of a completion, with the values user space (`enum ibv_wc_flags`) decodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct WcFlags(pub(crate) u32);

impl WcFlags {
    /// `IBV_WC_GRH`: a GRH precedes the received data (always, for UD on RoCE).
    pub(crate) const GRH: u32 = 1;
    /// `IBV_WC_WITH_IMM`: `ex` holds immediate data.
    pub(crate) const WITH_IMM: u32 = 1 << 1;
    /// `IBV_WC_WITH_INV`: `ex` holds the rkey the sender invalidated.
    ///
    /// This is the libibverbs value, 1 << 3. The kernel's `IB_WC_WITH_INVALIDATE` is 1 << 2,
    /// which libibverbs reads as `IBV_WC_IP_CSUM_OK`; C rxe copies the kernel value into user
    /// completions, so its users never see `IBV_WC_WITH_INV`. rrxe reports the user value.
    pub(crate) const WITH_INV: u32 = 1 << 3;

    /// The kernel's `IB_WC_WITH_INVALIDATE` (1 << 2), for kernel CQs.
    pub(crate) const KERNEL_WITH_INVALIDATE: u32 = 1 << 2;

    /// The same flags with the kernel's values (`enum ib_wc_flags`), for kernel consumers.
    pub(crate) const fn to_kernel(self) -> u32 {
        let mut k = self.0 & (Self::GRH | Self::WITH_IMM);
        if self.0 & Self::WITH_INV != 0 {
            k |= Self::KERNEL_WITH_INVALIDATE;
        }
        k
    }
}

/// A completion as user space reads it, `struct ib_uverbs_wc`: the fields below, in this order
/// and without padding, followed by one reserved zero byte (48 bytes in all). No default: every
/// completion is made with its status and opcode named ([`Cqe::new`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cqe {
    /// `wr_id` at byte 0: the work request id.
    pub(crate) wr_id: u64,
    /// `status` at byte 8.
    pub(crate) status: WcStatus,
    /// `opcode` at byte 12 (`SEND`, zero, in flushed completions, as in rxe).
    pub(crate) opcode: WcOpcode,
    /// `vendor_err` at byte 16.
    pub(crate) vendor_err: u32,
    /// `byte_len` at byte 20: the length of the message.
    pub(crate) byte_len: u32,
    /// `ex` at byte 24: immediate data (in wire byte order) or the invalidated rkey.
    pub(crate) ex: u32,
    /// `qp_num` at byte 28: the local queue pair.
    pub(crate) qp_num: u32,
    /// `src_qp` at byte 32: the sender's queue pair (UD receives).
    pub(crate) src_qp: u32,
    /// `wc_flags` at byte 36.
    pub(crate) wc_flags: WcFlags,
    /// `u16 pkey_index` at byte 40.
    pub(crate) pkey_index: u16,
    /// `u16 slid` at byte 42 (zero on RoCE).
    pub(crate) slid: u16,
    /// `u8 sl` at byte 44.
    pub(crate) sl: u8,
    /// `u8 dlid_path_bits` at byte 45 (zero on RoCE).
    pub(crate) dlid_path_bits: u8,
    /// `u8 port_num` at byte 46.
    pub(crate) port_num: u8,
}

impl Cqe {
    /// The completion of work request `wr_id` of QP `qp_num` with `status` and `opcode`; every
    /// other field zero.
    pub(crate) const fn new(wr_id: u64, status: WcStatus, opcode: WcOpcode, qp_num: u32) -> Self {
        Self {
            wr_id,
            status,
            opcode,
            vendor_err: 0,
            byte_len: 0,
            ex: 0,
            qp_num,
            src_qp: 0,
            wc_flags: WcFlags(0),
            pkey_index: 0,
            slid: 0,
            sl: 0,
            dlid_path_bits: 0,
            port_num: 0,
        }
    }

    /// The completion of send WQE `wr_id` of QP `qp_num`, of `opcode` with `status`, for a
    /// message of `byte_len` bytes (on port 1, the device's one port).
    pub(crate) const fn sent(
        wr_id: u64,
        status: WcStatus,
        opcode: WcOpcode,
        byte_len: u32,
        qp_num: u32,
    ) -> Self {
        Self {
            byte_len,
            port_num: 1,
            ..Self::new(wr_id, status, opcode, qp_num)
        }
    }

    /// A receive completion: `byte_len` bytes of a message from `src_qp` delivered into receive
    /// WQE `wr_id` of QP `qp_num` (on port 1, the device's one port), successful unless
    /// `status` is set afterwards.
    pub(crate) fn received(
        wr_id: u64,
        opcode: WcOpcode,
        byte_len: u32,
        qp_num: u32,
        src_qp: u32,
    ) -> Self {
        Cqe {
            byte_len,
            src_qp,
            port_num: 1,
            ..Cqe::new(wr_id, WcStatus::Success, opcode, qp_num)
        }
    }

    /// The completion with immediate data `ex` (as the consumer reads it: wire byte order).
    pub(crate) fn with_imm(mut self, ex: u32) -> Self {
        self.ex = ex;
        self.wc_flags.0 |= WcFlags::WITH_IMM;
        self
    }

    /// The completion of a SEND with Invalidate that invalidated `rkey`.
    pub(crate) fn with_inv(mut self, rkey: u32) -> Self {
        self.ex = rkey;
        self.wc_flags.0 |= WcFlags::WITH_INV;
        self
    }

    /// Returns the completion encoded as `struct ib_uverbs_wc`.
    pub(crate) fn to_uverbs(self) -> [u8; CQE_LEN] {
        let mut out = [0u8; CQE_LEN];
        let mut pos = 0usize;
        let mut put = |bytes: &[u8]| {
            let end = pos.saturating_add(bytes.len());
            if let Some(dst) = out.get_mut(pos..end) {
                dst.copy_from_slice(bytes);
            }
            pos = end;
        };
        put(&self.wr_id.to_le_bytes());
        put(&self.status.to_raw().to_le_bytes());
        put(&self.opcode.to_raw().to_le_bytes());
        put(&self.vendor_err.to_le_bytes());
        put(&self.byte_len.to_le_bytes());
        put(&self.ex.to_le_bytes());
        put(&self.qp_num.to_le_bytes());
        put(&self.src_qp.to_le_bytes());
        put(&self.wc_flags.0.to_le_bytes());
        put(&self.pkey_index.to_le_bytes());
        put(&self.slid.to_le_bytes());
        put(&[self.sl, self.dlid_path_bits, self.port_num]);
        out
    }

    /// Decodes a `struct ib_uverbs_wc`: `None` for a status or opcode rrxe never reports; the
    /// reserved byte is ignored.
    pub(crate) fn from_uverbs(wc: &[u8; CQE_LEN]) -> Option<Self> {
        let byte = |off: usize| wc.get(off).copied().unwrap_or(0);
        Some(Self {
            wr_id: rd64(wc, 0),
            status: WcStatus::from_raw(rd32(wc, 8))?,
            opcode: WcOpcode::from_raw(rd32(wc, 12))?,
            vendor_err: rd32(wc, 16),
            byte_len: rd32(wc, 20),
            ex: rd32(wc, 24),
            qp_num: rd32(wc, 28),
            src_qp: rd32(wc, 32),
            wc_flags: WcFlags(rd32(wc, 36)),
            pkey_index: rd16(wc, 40),
            slid: rd16(wc, 42),
            sl: byte(44),
            dlid_path_bits: byte(45),
            port_num: byte(46),
        })
    }
}

/// Returns the completion of a work request flushed from a queue pair in error.
///
/// C rxe reports only `wr_id`, `status` and `qp_num` and leaves the opcode zero; the IBA leaves
/// the opcode of error completions undefined. Pass `None` to match rxe, or an opcode to report.
pub(crate) fn flush_cqe(wr_id: u64, qp_num: u32, opcode: Option<WcOpcode>) -> Cqe {
    let opcode = match opcode {
        Some(o) => o,
        None => WcOpcode::Send,
    };
    Cqe::new(wr_id, WcStatus::WrFlushErr, opcode, qp_num)
}
