// SPDX-License-Identifier: GPL-2.0

//! A registered notifier block (`struct notifier_block`) on one of the kernel's notifier chains.
//!
//! C header: [`include/linux/notifier.h`](srctree/include/linux/notifier.h).

use crate::bindings;
use core::{
    ffi::c_void,
    marker::PhantomData, //
};
use kernel::{
    error::to_result,
    prelude::*,
    types::Opaque, //
};

/// A notifier chain: how to add a block to it and remove it again.
pub(crate) trait NotifierChain {
    /// Adds `nb` to the chain; returns 0 or a negative errno.
    ///
    /// # Safety
    ///
    /// `nb` must be a valid, pinned notifier block that stays alive until [`Self::unregister`].
    unsafe fn register(nb: *mut bindings::notifier_block) -> c_int;

    /// Removes `nb` from the chain; when it returns no callback runs any more.
    ///
    /// # Safety
    ///
    /// `nb` must have been registered with [`Self::register`].
    unsafe fn unregister(nb: *mut bindings::notifier_block);
}

/// What a notifier block does when the chain calls it.
pub(crate) trait NotifierHandler {
    /// The chain the block is registered on.
    type Chain: NotifierChain;

    /// Handles `action`; returns a `NOTIFY_*` value.
    ///
    /// # Safety
    ///
    /// `data` is the chain-specific argument of `action`, as the chain's C code passes it.
    unsafe fn call(action: c_ulong, data: *mut c_void) -> c_int;
}

/// A notifier block registered on `H::Chain` for as long as this object lives.
///
/// # Invariants
///
/// `nb` is registered on `H::Chain` from construction until drop.
#[pin_data(PinnedDrop)]
pub(crate) struct NotifierBlock<H: NotifierHandler> {
    #[pin]
    nb: Opaque<bindings::notifier_block>,
    _handler: PhantomData<H>,
}

// SAFETY: The block is only touched by the chain's C code under the chain's lock.
unsafe impl<H: NotifierHandler> Send for NotifierBlock<H> {}
// SAFETY: As above; `&NotifierBlock` exposes nothing.
unsafe impl<H: NotifierHandler> Sync for NotifierBlock<H> {}

impl<H: NotifierHandler> NotifierBlock<H> {
    /// Registers a new block on `H::Chain`.
    pub(crate) fn register() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            nb <- Opaque::try_ffi_init(|nb: *mut bindings::notifier_block| {
                // SAFETY: `nb` is valid for writes and pinned (it lives inside `Self`).
                unsafe {
                    nb.write(bindings::notifier_block {
                        notifier_call: Some(Self::call),
                        next: core::ptr::null_mut(),
                        priority: 0,
                    })
                };
                // SAFETY: `nb` is initialised and pinned; `PinnedDrop` unregisters it.
                to_result(unsafe { H::Chain::register(nb) })
            }),
            _handler: PhantomData,
        })
    }

    /// The C trampoline.
    ///
    /// # Safety
    ///
    /// Called by the chain with its own `data` argument for `action`.
    unsafe extern "C" fn call(
        _nb: *mut bindings::notifier_block,
        action: c_ulong,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: The chain passes its own argument, as `H::call` requires.
        unsafe { H::call(action, data) }
    }
}

#[pinned_drop]
impl<H: NotifierHandler> PinnedDrop for NotifierBlock<H> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: By the type invariant `nb` is registered on `H::Chain`.
        unsafe { H::Chain::unregister(self.nb.get()) };
    }
}
