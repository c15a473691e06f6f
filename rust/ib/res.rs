// SPDX-License-Identifier: GPL-2.0

//! Driver attributes in `rdma res show` (`rdma -dd res show qp`): the resource tracker's
//! netlink dump asks the driver to add its own name/value pairs to an object's entry.
//!
//! What a driver adds is its internal state (for a QP: live PSNs, retry state), which is what a
//! packet injector needs, so only a reader with `CAP_NET_ADMIN` gets it, as only such a reader
//! gets an MR's keys from the core: a [`ResEntry`] exists only for one. Everyone else sees
//! the core's attributes, what C rxe shows.
//!
//! C header: [`include/rdma/restrack.h`](srctree/include/rdma/restrack.h).

use crate::bindings;
use kernel::{
    error::to_result,
    prelude::*, //
};

/// Proof that the reader of a restrack message has `CAP_NET_ADMIN` in the initial user
/// namespace: the current task has it and, when the message is a dump's (it then belongs to
/// the reader's netlink socket), so did the socket's opener (nldev's `netlink_capable()`).
struct NetAdmin(());

impl NetAdmin {
    /// The proof, if the reader of `msg` has `CAP_NET_ADMIN`. The current task is asked first
    /// and without an audit record: an unprivileged reader is no event.
    ///
    /// # Safety
    ///
    /// `msg` is the message passed to a `fill_res_*_entry` op, during that call (a dump runs
    /// it in the reader's context, with the reader's socket held).
    unsafe fn of_reader(msg: *mut bindings::sk_buff) -> Option<Self> {
        let cap = kernel::bindings::CAP_NET_ADMIN as c_int;
        let ns = &raw mut kernel::bindings::init_user_ns;
        // SAFETY: `init_user_ns` is always valid; `cap` is a valid capability.
        if !unsafe { kernel::bindings::ns_capable_noaudit(ns, cap) } {
            return None;
        }
        // SAFETY: `msg` is valid (the caller's guarantee); a dump's message is owned by the
        // reader's socket, which the dump holds, as the socket holds its file; a message of
        // a single-object request has no owner.
        let file = unsafe {
            let sk = (*msg).sk;
            let sock = if sk.is_null() {
                core::ptr::null_mut()
            } else {
                (*sk).sk_socket
            };
            if sock.is_null() {
                core::ptr::null_mut()
            } else {
                (*sock).file
            }
        };
        if !file.is_null() {
            // SAFETY: `file` is the reader's socket's, alive for this call (above).
            let opener = unsafe { kernel::bindings::file_ns_capable(file.cast(), ns, cap) };
            if !opener {
                return None;
            }
        }
        Some(Self(()))
    }
}

/// The driver table (`RDMA_NLDEV_ATTR_DRIVER`) of one object's entry, open for attributes, for
/// a reader with `CAP_NET_ADMIN`.
///
/// # Invariants
///
/// `msg` is the message the core is filling for the duration of the `fill_res_*_entry` call
/// that made this value, with the driver table open; its reader has `CAP_NET_ADMIN`.
pub(crate) struct ResEntry {
    msg: *mut bindings::sk_buff,
    _reader: NetAdmin,
}

impl ResEntry {
    /// If the reader of `msg` has `CAP_NET_ADMIN`: opens the driver table of the entry in
    /// `msg`, lets `fill` add to it, and closes it; an error of `fill` (the message is full)
    /// takes the table out again. For any other reader, adds nothing (no table, as C rxe).
    ///
    /// # Safety
    ///
    /// `msg` is the message passed to a `fill_res_*_entry` op, during that call.
    pub(super) unsafe fn fill(
        msg: *mut bindings::sk_buff,
        fill: impl FnOnce(&mut Self) -> Result,
    ) -> Result {
        // SAFETY: The caller's guarantee.
        let Some(reader) = (unsafe { NetAdmin::of_reader(msg) }) else {
            return Ok(());
        };
        // SAFETY: `msg` is valid (the caller's guarantee).
        let nest = unsafe { bindings::rrxe_helper_res_driver_begin(msg) };
        if nest.is_null() {
            return Err(EMSGSIZE);
        }
        let r = fill(&mut Self {
            msg,
            _reader: reader,
        });
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
