// SPDX-License-Identifier: GPL-2.0

//! Driver-specific command data from user space (`struct ib_udata`).
//!
//! The in-buffer is user memory and the out-buffer is written with `copy_to_user`; both are
//! hostile. Lengths are the provider's: librxe sends none in most commands and expects
//! responses of the exact `rdma_user_rxe.h` sizes.

use super::mmap::{
    MmapEntry,
    MmapHandle, //
};
use crate::{
    bindings,
    mm::{
        KernelConsumer,
        UserBuf, //
    },
};
use kernel::{
    prelude::*,
    sync::Arc,
    uaccess::{
        UserPtr,
        UserSlice, //
    },
};

/// Who creates an object: a user process, through a uverbs command and its driver data, or a
/// kernel verbs consumer, with the proof that only kernel callers get.
pub(crate) enum Caller<'a, 'b> {
    /// A user process; its driver data.
    User(&'a mut Udata<'b>),
    /// A kernel verbs consumer (ib_core passed no `udata`).
    Kernel(KernelConsumer),
}

impl<'a, 'b> Caller<'a, 'b> {
    /// The caller of a verb whose `udata` argument is `udata` (`None` for kernel callers).
    pub(super) fn new(udata: Option<&'a mut Udata<'b>>) -> Self {
        match udata {
            Some(u) => Self::User(u),
            // SAFETY: ib_core passes no `udata` only for kernel verbs consumers: every uverbs
            // command that creates an object passes the driver data of its attribute bundle.
            None => Self::Kernel(unsafe { KernelConsumer::new() }),
        }
    }
}

/// The driver data of one verb call from user space.
///
/// # Invariants
///
/// `ptr` is a valid `ib_udata` embedded in a `uverbs_attr_bundle` with a user context, for `'a`.
pub(crate) struct Udata<'a> {
    ptr: &'a bindings::ib_udata,
}

impl<'a> Udata<'a> {
    /// Wraps the `udata` argument of a verb, `None` for kernel callers.
    ///
    /// # Safety
    ///
    /// `ptr` is NULL or a valid `ib_udata` inside a `uverbs_attr_bundle`, alive for `'a`.
    pub(super) unsafe fn from_raw(ptr: *mut bindings::ib_udata) -> Option<Self> {
        // SAFETY: Guaranteed by the caller.
        unsafe { ptr.as_ref() }.map(|ptr| Self { ptr })
    }

    /// Bytes of driver input.
    pub(crate) fn inlen(&self) -> usize {
        self.ptr.inlen
    }

    /// Bytes of driver output space.
    pub(crate) fn outlen(&self) -> usize {
        self.ptr.outlen
    }

    /// Copies `resp` to the output buffer. Fails if user space gave less room than `resp`;
    /// extra room is left untouched (older/newer providers).
    pub(crate) fn respond(&mut self, resp: &[u8]) -> Result {
        if self.outlen() < resp.len() {
            return Err(EINVAL);
        }
        let out = UserPtr::from_addr(self.ptr.outbuf as usize);
        UserSlice::new(out, resp.len()).writer().write_slice(resp)
    }

    /// Reads exactly `buf.len()` bytes of driver input; fails if the provider sent fewer.
    pub(crate) fn read_in(&self, buf: &mut [u8]) -> Result {
        if self.inlen() < buf.len() {
            return Err(EINVAL);
        }
        let inp = UserPtr::from_addr(self.ptr.inbuf as usize);
        UserSlice::new(inp, buf.len()).reader().read_slice(buf)
    }

    /// Writes `data` to a user address the command carries (the rxe `modify_srq` quirk: the new
    /// ring's mmap info goes to a pointer in the command, not to the response).
    pub(crate) fn write_user(&mut self, addr: u64, data: &[u8]) -> Result {
        let addr = usize::try_from(addr).map_err(|_| EFAULT)?;
        UserSlice::new(UserPtr::from_addr(addr), data.len())
            .writer()
            .write_slice(data)
    }

    /// Makes `buf` mappable by this user context; the handle returned unpublishes it on drop
    /// (existing mappings stay valid until `munmap`).
    pub(crate) fn publish(&mut self, buf: Arc<UserBuf>) -> Result<MmapHandle> {
        // SAFETY: By the invariant the udata sits in a bundle that has a user context.
        let uctx = unsafe {
            bindings::rrxe_helper_udata_to_ucontext(core::ptr::from_ref(self.ptr).cast_mut())
        };
        if uctx.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: `uctx` is the live user context of this call.
        unsafe { MmapEntry::insert(uctx, buf) }
    }
}
