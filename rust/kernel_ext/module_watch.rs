// SPDX-License-Identifier: GPL-2.0

//! Module load events (`register_module_notifier`) and a "is module X loaded" query.
//!
//! C header: [`include/linux/module.h`](srctree/include/linux/module.h).

use super::{
    NotifierBlock,
    NotifierChain,
    NotifierHandler, //
};
use crate::bindings;
use core::{
    ffi::c_void,
    marker::PhantomData, //
};
use kernel::prelude::*;

/// Decisions about other modules as they load.
pub(crate) trait ModuleEvents {
    /// A module named `name` is about to run its init; an error refuses the load.
    fn coming(name: &CStr) -> Result;
}

/// The module notifier chain.
pub(crate) struct ModuleChain;

impl NotifierChain for ModuleChain {
    unsafe fn register(nb: *mut bindings::notifier_block) -> c_int {
        // SAFETY: The caller passes a valid, pinned block.
        unsafe { bindings::register_module_notifier(nb) }
    }

    unsafe fn unregister(nb: *mut bindings::notifier_block) {
        // SAFETY: The caller passes a registered block.
        unsafe { bindings::unregister_module_notifier(nb) };
    }
}

/// Adapts a [`ModuleEvents`] implementation to the module chain.
pub(crate) struct ModuleAdapter<T: ModuleEvents>(PhantomData<T>);

impl<T: ModuleEvents> NotifierHandler for ModuleAdapter<T> {
    type Chain = ModuleChain;

    unsafe fn call(action: c_ulong, data: *mut c_void) -> c_int {
        if u32::try_from(action) != Ok(bindings::module_state_MODULE_STATE_COMING) {
            return bindings::RRXE_NOTIFY_DONE;
        }
        // SAFETY: For module chain events `data` is the `struct module` being loaded, whose
        // name is a NUL-terminated array inside it.
        let name = unsafe { CStr::from_char_ptr(bindings::rrxe_helper_module_name(data).cast()) };
        match T::coming(name) {
            Ok(()) => bindings::RRXE_NOTIFY_OK,
            // SAFETY: Pure arithmetic on an errno.
            Err(e) => unsafe { bindings::rrxe_helper_notifier_from_errno(e.to_errno()) },
        }
    }
}

/// Calls `T::coming` for every module loaded while this object lives.
pub(crate) type ModuleWatch<T> = NotifierBlock<ModuleAdapter<T>>;

/// Whether the module `name` is loaded (it has a `/sys/module/NAME/initstate`).
pub(crate) fn module_loaded(name: &CStr) -> bool {
    // SAFETY: `name` is a valid NUL-terminated string; the helper only reads it.
    unsafe { bindings::rrxe_helper_module_loaded(name.as_char_ptr().cast()) }
}
