// SPDX-License-Identifier: GPL-2.0

//! Driver attributes in `rdma res show` (`rdma -dd res show qp`): the resource tracker's
//! netlink dump asks the driver to add its own name/value pairs to an object's entry.
//!
//! C header: [`include/rdma/restrack.h`](srctree/include/rdma/restrack.h).

use crate::bindings;
use kernel::{
    error::to_result,
    prelude::*, //
};

/// The driver table (`RDMA_NLDEV_ATTR_DRIVER`) of one object's entry, open for attributes.
///
/// # Invariants
///
/// `msg` is the message the core is filling for the duration of the `fill_res_*_entry` call
/// that made this value, with the driver table open.
pub(crate) struct ResEntry {
    msg: *mut bindings::sk_buff,
}

impl ResEntry {
    /// Opens the driver table of the entry in `msg`, lets `fill` add to it, and closes it; an
    /// error of `fill` (the message is full) takes the table out again.
    ///
    /// # Safety
    ///
    /// `msg` is the message passed to a `fill_res_*_entry` op, during that call.
    pub(super) unsafe fn fill(
        msg: *mut bindings::sk_buff,
        fill: impl FnOnce(&mut Self) -> Result,
    ) -> Result {
        // SAFETY: `msg` is valid (the caller's guarantee).
        let nest = unsafe { bindings::rrxe_helper_res_driver_begin(msg) };
        if nest.is_null() {
            return Err(EMSGSIZE);
        }
        let r = fill(&mut Self { msg });
        // SAFETY: `nest` was opened in `msg` just now and nothing after it is closed yet.
        unsafe { bindings::rrxe_helper_res_driver_end(msg, nest, r.is_ok()) };
        r
    }

    /// Adds `name` = `value` (decimal). `EMSGSIZE` when the message is full: the dump then
    /// continues in a new message.
    pub(crate) fn u32(&mut self, name: &CStr, value: u32) -> Result {
        // SAFETY: By the type invariant `msg` is valid; `name` is NUL-terminated.
        to_result(unsafe { bindings::rdma_nl_put_driver_u32(self.msg, name.as_char_ptr(), value) })
    }

    /// Adds `name` = `value` in hexadecimal (PSNs).
    pub(crate) fn u32_hex(&mut self, name: &CStr, value: u32) -> Result {
        // SAFETY: As in `u32`.
        to_result(unsafe {
            bindings::rdma_nl_put_driver_u32_hex(self.msg, name.as_char_ptr(), value)
        })
    }

    /// Adds `name` = `value` (decimal).
    pub(crate) fn u64(&mut self, name: &CStr, value: u64) -> Result {
        // SAFETY: As in `u32`.
        to_result(unsafe { bindings::rdma_nl_put_driver_u64(self.msg, name.as_char_ptr(), value) })
    }

    /// Adds `name` = `value`.
    pub(crate) fn str(&mut self, name: &CStr, value: &CStr) -> Result {
        // SAFETY: As in `u32`; both strings are NUL-terminated.
        to_result(unsafe {
            bindings::rdma_nl_put_driver_string(self.msg, name.as_char_ptr(), value.as_char_ptr())
        })
    }
}
