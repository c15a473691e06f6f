// SPDX-License-Identifier: GPL-2.0

//! RDMA core (`ib_core`) abstractions: devices with a Rust tail, their ops table, attributes and
//! the `rdma link` type registration.
//!
//! C headers: [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h),
//! [`include/rdma/rdma_netlink.h`](srctree/include/rdma/rdma_netlink.h).
//!
//! The contract of `Documentation/infiniband/core_locking.rst` is encoded in the trait docs:
//! callbacks documented as atomic must not sleep.

mod ah;
mod attr;
mod counter;
mod counters;
mod cq;
mod device;
mod link;
mod mad;
mod mmap;
mod mr;
mod object;
mod odp;
mod ops;
mod qp;
mod qp_attr;
mod res;
mod srq;
mod sysfs;
pub(crate) mod uabi;
mod udata;
mod wr;

pub(crate) use ah::{
    AddressVector,
    NetworkType, //
};
pub(crate) use attr::{
    device_cap,
    AtomicCap,
    DeviceAttr,
    Mtu,
    PhysState,
    PortAttr,
    PortState,
    PORT_CM_SUP, //
};
pub(crate) use counter::Counter;
pub(crate) use counters::StatDesc;
pub(crate) use cq::{
    CompletionNotifier,
    Cq,
    CqAttr,
    CqErrorNotifier,
    CqRef,
    NotifyFlags,
    NotifyOn, //
};
pub(crate) use device::{
    Device,
    DeviceRef,
    Driver,
    DriverId,
    PortEvent,
    WriteCmd, //
};
pub(crate) use link::{
    LinkOps,
    LinkRegistration, //
};
pub(crate) use mad::PmaCounters;
pub(crate) use mmap::MmapHandle;
pub(crate) use mr::{
    Access,
    AccessFlags,
    Mr,
    MrKeys,
    MwType,
    Umem, //
};
pub(crate) use odp::{
    Prefetch,
    PrefetchRange,
    UmemOdp, //
    MAX_FAULT_BYTES,
};
pub(crate) use ops::DeviceOps;
pub(crate) use qp::{
    Qp,
    QpCap,
    QpEvent,
    QpInit, //
};
pub(crate) use qp_attr::{
    QpAttr,
    QpAttrMask,
    QpQuery, //
};
pub(crate) use res::ResEntry;
pub(crate) use srq::{
    Srq,
    SrqAttr,
    SrqMask, //
};
pub(crate) use udata::{
    Caller,
    Udata, //
};
pub(crate) use wr::{
    QpHandle,
    RecvWrChain,
    SendWr,
    SendWrChain,
    Sge,
    Wc,
    WcOut, //
};
