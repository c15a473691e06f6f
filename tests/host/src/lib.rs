// SPDX-License-Identifier: GPL-2.0

//! Host build of the `rrxe` protocol logic, for unit testing with `cargo test`.
//!
//! The kernel module loads `rust/proto.rs` as `mod proto;` from its crate root. This crate loads
//! the very same file through a `path` attribute and adds test modules that exercise it, so the
//! code under test is exactly the code the module runs.

#![allow(dead_code)]

#[path = "../../../rust/proto.rs"]
mod proto;

#[path = "../../../rust/proto/model.rs"]
pub mod model;

#[cfg(test)]
mod icrc_vectors;
#[cfg(test)]
mod tests_ack;
#[cfg(test)]
mod tests_cqe;
#[cfg(test)]
mod tests_dcqcn;
#[cfg(test)]
mod tests_ecn;
#[cfg(test)]
#[path = "fuzz/mod.rs"]
mod tests_fuzz;
#[cfg(test)]
mod tests_gso;
#[cfg(test)]
mod tests_hdr;
#[cfg(test)]
mod tests_icrc;
#[cfg(test)]
mod tests_mad;
#[cfg(test)]
mod tests_model;
#[cfg(test)]
mod tests_opcode;
#[cfg(test)]
mod tests_packet;
#[cfg(test)]
mod tests_path_rtt;
#[cfg(test)]
mod tests_psn;
#[cfg(test)]
mod tests_qp_attr;
#[cfg(test)]
mod tests_qp_state;
#[cfg(test)]
mod tests_rate;
#[cfg(test)]
mod tests_read_gaps;
#[cfg(test)]
mod tests_recovery;
#[cfg(test)]
mod tests_reorder;
#[cfg(test)]
mod tests_ring;
#[cfg(test)]
mod tests_seq;
#[cfg(test)]
mod tests_sport;
#[cfg(test)]
mod tests_window;
#[cfg(test)]
mod tests_wqe;
#[cfg(test)]
mod tests_wqe_encode;
#[cfg(test)]
mod tests_wqe_send;
