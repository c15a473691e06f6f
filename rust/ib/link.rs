// SPDX-License-Identifier: GPL-2.0

//! The `rdma link add NAME type TYPE netdev DEV` handler (`struct rdma_link_ops`).

use crate::{
    bindings,
    net::NetDevice, //
};
use core::marker::PhantomData;
use kernel::{
    error::from_result,
    prelude::*,
    types::Opaque, //
};

/// A link type for `rdma link add`.
pub(crate) trait LinkOps {
    /// The link type name (`rrxe`). The module needs the alias `rdma-link-<TYPE>` to be
    /// autoloaded by `rdma link add`.
    const TYPE: &'static CStr;

    /// Creates the RDMA device `name` on `ndev`. Process context, may sleep.
    fn newlink(name: &CStr, ndev: &NetDevice) -> Result;
}

/// The link type `T` registered with the RDMA netlink core while this object lives (unless
/// it was created disabled).
///
/// # Invariants
///
/// If `registered`, `ops` is registered with `rdma_link_register` from construction until
/// drop.
#[pin_data(PinnedDrop)]
pub(crate) struct LinkRegistration<T: LinkOps> {
    #[pin]
    ops: Opaque<bindings::rdma_link_ops>,
    registered: bool,
    _t: PhantomData<T>,
}

// SAFETY: The ops are only linked into and read by the core under its lock.
unsafe impl<T: LinkOps> Send for LinkRegistration<T> {}
// SAFETY: `&LinkRegistration` exposes nothing.
unsafe impl<T: LinkOps> Sync for LinkRegistration<T> {}

impl<T: LinkOps> LinkRegistration<T> {
    /// Registers the link type.
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        Self::new_if(true)
    }

    /// Registers the link type if `enabled`; otherwise holds nothing.
    ///
    /// A type name may be registered once: the caller makes sure no other module holds it
    /// (the core warns and ignores a second registration).
    pub(crate) fn new_if(enabled: bool) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            ops <- Opaque::ffi_init(|ops: *mut bindings::rdma_link_ops| {
                // SAFETY: `ops` is valid for writes and pinned inside `Self`; the type string is
                // static. The core links `list` into its own list.
                unsafe {
                    ops.write(bindings::rdma_link_ops {
                        list: bindings::list_head {
                            next: core::ptr::null_mut(),
                            prev: core::ptr::null_mut(),
                        },
                        type_: T::TYPE.as_char_ptr().cast(),
                        newlink: Some(Self::newlink),
                        dellink: None,
                    });
                    if enabled {
                        bindings::rdma_link_register(ops);
                    }
                }
            }),
            registered: enabled,
            _t: PhantomData,
        })
    }

    /// # Safety
    ///
    /// Called by the RDMA netlink core with a valid name and netdev.
    unsafe extern "C" fn newlink(
        name: *const kernel::ffi::c_char,
        ndev: *mut bindings::net_device,
    ) -> c_int {
        from_result(|| {
            // SAFETY: nldev passes a NUL-terminated name and a netdev it holds a reference on
            // for the duration of the call.
            let (name, ndev) =
                unsafe { (CStr::from_char_ptr(name.cast()), NetDevice::from_raw(ndev)) };
            T::newlink(name, ndev)?;
            Ok(0)
        })
    }
}

#[pinned_drop]
impl<T: LinkOps> PinnedDrop for LinkRegistration<T> {
    fn drop(self: Pin<&mut Self>) {
        if self.registered {
            // SAFETY: By the type invariant `ops` is registered.
            unsafe { bindings::rdma_link_unregister(self.ops.get()) };
        }
    }
}
