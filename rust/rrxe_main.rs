// SPDX-License-Identifier: GPL-2.0

//! rrxe: a soft-RoCE (RoCEv2) RDMA driver in Rust.
//!
//! `rdma link add rrxe0 type rrxe netdev eth0` turns an Ethernet netdev into an RDMA device that
//! the stock rdma-core rxe provider drives. See `Documentation/rrxe.rst` (user guide) and
//! `Documentation/design.rst` (layers, object model, contexts).
//!
//! Layers, in this crate:
//! - `bindings`: generated from the target kernel's headers; used only by the abstractions.
//! - `ib`, `net`, `kernel_ext`: the abstraction layer, the only code with `unsafe`.
//! - `proto`: pure protocol logic, also built and tested on the host (`tests/host`).
//! - everything else is the driver and may not use `unsafe`: the crate denies it, and only the
//!   abstraction layer's modules allow it.

#![deny(unsafe_code)]

use kernel::prelude::*;

#[expect(unsafe_code, reason = "generated from the kernel's headers")]
mod bindings;
#[expect(unsafe_code, reason = "the abstraction layer")]
mod ib;
#[expect(unsafe_code, reason = "the abstraction layer")]
mod kernel_ext;
#[expect(unsafe_code, reason = "the abstraction layer")]
mod mm;
#[expect(unsafe_code, reason = "the abstraction layer")]
mod net;
#[expect(unsafe_code, reason = "the abstraction layer")]
mod sync;

#[expect(
    dead_code,
    reason = "kept whole for the host tests (tests/host), which use all of it"
)]
mod proto;

mod conflict;
mod counters;
mod device;
mod index;
mod limits;
mod link;
mod mcast;
mod module;
mod params;
mod pipeline;
mod queue;
mod table;
mod verbs;

module! {
    type: module::RrxeModule,
    name: "rrxe",
    authors: ["rrxe developers"],
    description: "Soft-RoCE (RoCEv2) RDMA driver in Rust",
    license: "GPL",
    alias: ["rdma-link-rrxe"],
    params: {
        rxe_flush_icrc: u8 {
            default: 1,
            description: "1: put C rxe's ICRC on FLUSH requests (it covers the headers twice; rxe drops others); 0: the IBA ICRC. Either is accepted on receive",
        },
        rxe_link: u8 {
            default: 1,
            description: "1: `rdma link add NAME type rxe` creates rrxe devices too (rdma_rxe's link type, never its module alias); 0: only type rrxe",
        },
        gso: u8 {
            default: 1,
            description: "1: send runs of packets to one IPv4 peer as UDP GSO trains (chained buffers, no copy); 0: one packet at a time",
        },
        qp_cpu: u8 {
            default: 1,
            description: "1: each QP has a home CPU (QPs dealt round the online CPUs in turn) and its packet work runs there once it is busy (packets in flight, or more than one received): a doorbell, packet or timer on another CPU hands the run over; an idle QP runs where its event happens; 2: always on the home CPU; 0: always where the event happens",
        },
        cq_notify: u8 {
            default: 0,
            description: "0: a CQ's completion handler runs from a work item on the unbound workqueue (an idle CPU if there is one); 1: from a work item on the CPU that wrote the completion",
        },
        rx_batch: u8 {
            default: 2,
            description: "2: a packet received from the network runs its QP at once if the QP is idle, else from BH work after the receive softirq, once for all the packets of the poll; 1: always from BH work; 0: always at once",
        },
        post_batch: u8 {
            default: 2,
            description: "2: a kernel consumer's post runs its QP at once if the QP is idle, else from BH work after the caller's section, once for all the posts before it; 1: always from BH work; 0: always at once",
        },
        tx_flow: u8 {
            default: 3,
            description: "bit 0: a QP sends from another CPU only when none of its packets is left in the stack, at most 64 in flight; bit 1: a QP's run keeps softirqs disabled (for measurements)",
        },
        recovery: u8 {
            default: 3,
            description: "bit 0: selective recovery (an RC responder keeps requests past a gap; a requester resends only the lost packet to a peer that keeps the rest, and places READ responses past a gap); bit 1: tail loss probes; 0: go-back-N alone, as C rxe",
        },
    },
}
