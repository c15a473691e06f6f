// SPDX-License-Identifier: GPL-2.0

//! Waiting for the page faults of on-demand-paging MRs.
//!
//! The pipeline runs in atomic context; a page of an on-demand-paging MR that is not present
//! can only be faulted in from process context. So an access that finds a page missing
//! (`EAGAIN`: no byte moved) *parks* what it was doing instead of failing it, and asks the QP's
//! fault job (on rrxe's own workqueue; see `state/odp.rs` for why nothing waits for it) to
//! fault the range in:
//!
//! - the receive side (a request the responder handles, a response the completer handles, a
//!   READ response being generated) stops taking packets from the inbox; the packet that found
//!   the page missing goes back to the head of the inbox, with the responder's state as it was
//!   before the packet (a receive WQE the packet took is handed back, nothing advanced);
//! - the send side (the requester gathering a payload) stops sending; the packet it was
//!   building is built again.
//!
//! Nothing shows on the wire: no NAK, no RNR, no retransmission (if the fault outlasts the
//! peer's ACK timeout the peer retransmits, and its duplicates are handled as usual). When the
//! fault is done the side resumes and the QP runs. A fault that fails (the range is no longer
//! mapped, or not writable) is remembered: the next miss on that side is then an access error,
//! handled as any bad address is (an error completion or a NAK), so a bad mapping cannot stall a
//! QP forever.

pub(crate) use super::state::odp::{
    Access,
    Side, //
};
use crate::{
    device::RrxeDevice,
    ib::{
        Mr,
        Qp, //
    },
};
use kernel::prelude::*;

/// The result `r` of access `a` by `side` to `mr`: `EAGAIN` if and only if the side now waits
/// for a fault ([`OdpWait::wait_for_fault`](super::state::odp::OdpWait::wait_for_fault)); a miss that is not waited for is `EFAULT`.
pub(crate) fn check<T>(
    qp: &Qp<RrxeDevice>,
    side: Side,
    mr: &Mr<RrxeDevice>,
    a: Access,
    r: Result<T>,
) -> Result<T> {
    match r {
        Err(e) if e == EAGAIN => Err(if qp.pipe().odp.wait_for_fault(qp, side, mr, a) {
            EAGAIN
        } else {
            EFAULT
        }),
        r => r,
    }
}
