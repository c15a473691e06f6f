// SPDX-License-Identifier: GPL-2.0

//! RoCEv2 wire protocol logic shared by the driver and the host test crate.
//!
//! Everything below this module is pure `core` code: it knows how InfiniBand transport headers are
//! laid out on the wire, which headers each opcode carries, how 24-bit packet sequence numbers
//! wrap around and how the invariant CRC is computed. It performs no allocation, holds no kernel
//! objects and never panics on malformed input, so the same files are compiled into the kernel
//! module and into `tests/host`, where they are unit tested with a normal `cargo test`.
//!
//! The submodules carry explicit `path` attributes so that they resolve to `proto/*.rs` both when
//! this file is loaded as `mod proto;` from the module's crate root and when the host test crate
//! loads it through a `path` attribute of its own.

#[path = "proto/abi.rs"]
pub(crate) mod abi;
#[path = "proto/attr_mask.rs"]
pub(crate) mod attr_mask;
#[path = "proto/cc_params.rs"]
pub(crate) mod cc_params;
#[path = "proto/cnp.rs"]
pub(crate) mod cnp;
#[path = "proto/cqe.rs"]
pub(crate) mod cqe;
#[path = "proto/dcqcn.rs"]
pub(crate) mod dcqcn;
#[path = "proto/ecn.rs"]
pub(crate) mod ecn;
#[path = "proto/gso.rs"]
pub(crate) mod gso;
#[path = "proto/hdr.rs"]
pub(crate) mod hdr;
#[path = "proto/icrc.rs"]
pub(crate) mod icrc;
#[path = "proto/mad.rs"]
pub(crate) mod mad;
#[path = "proto/opcode.rs"]
pub(crate) mod opcode;
#[path = "proto/packet.rs"]
pub(crate) mod packet;
#[path = "proto/path_rtt.rs"]
pub(crate) mod path_rtt;
#[path = "proto/psn.rs"]
pub(crate) mod psn;
#[path = "proto/qp_attr.rs"]
pub(crate) mod qp_attr;
#[path = "proto/qp_state.rs"]
pub(crate) mod qp_state;
#[path = "proto/rate.rs"]
pub(crate) mod rate;
#[path = "proto/read_gaps.rs"]
pub(crate) mod read_gaps;
#[path = "proto/recovery.rs"]
pub(crate) mod recovery;
#[path = "proto/reorder.rs"]
pub(crate) mod reorder;
#[path = "proto/retry.rs"]
pub(crate) mod retry;
#[path = "proto/ring.rs"]
pub(crate) mod ring;
#[path = "proto/seq.rs"]
pub(crate) mod seq;
#[path = "proto/sport.rs"]
pub(crate) mod sport;
#[path = "proto/window.rs"]
pub(crate) mod window;
#[path = "proto/wqe.rs"]
pub(crate) mod wqe;
#[path = "proto/wqe_encode.rs"]
pub(crate) mod wqe_encode;
#[path = "proto/wqe_parse.rs"]
pub(crate) mod wqe_parse;

/// Why a buffer could not be parsed as, or filled with, RoCEv2 headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Error {
    /// The input ends before the header, header set or packet it must contain.
    Truncated,
    /// The output buffer is shorter than the headers that were to be written into it.
    NoSpace,
    /// The BTH opcode is not one this driver implements (including every RD opcode).
    BadOpcode,
    /// The BTH transport header version is not the only defined version, zero.
    BadVersion,
    /// The BTH pad count is larger than the bytes that follow the headers before the ICRC.
    BadPad,
    /// A value does not fit in its wire field, such as a QPN above 24 bits or a pad count above 3.
    FieldRange,
    /// An extension header that the opcode requires was not supplied for writing.
    MissingHeader,
    /// The ICRC carried by the packet differs from the one computed over it.
    BadIcrc,
}
