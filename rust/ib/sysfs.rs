// SPDX-License-Identifier: GPL-2.0

//! The driver's attributes in a device's sysfs directory (`ib_device_ops.device_group`):
//! `parent`, the name of the netdev port 1 is bound to, as rxe has it
//! (`/sys/class/infiniband/DEV/parent`; rdma-core's udev rules and scripts map devices to
//! netdevs with it).
//!
//! C headers: [`include/linux/device.h`](srctree/include/linux/device.h),
//! [`include/rdma/ib_verbs.h`](srctree/include/rdma/ib_verbs.h).

use crate::{
    bindings,
    net::NetDevice, //
};
use kernel::{
    page::PAGE_SIZE,
    prelude::*, //
};

/// A C object in a `static` that only holds pointers to other statics and functions, and that
/// the kernel only reads.
#[repr(transparent)]
struct Static<T>(T);

// SAFETY: Never written after initialisation; every pointer inside is to a `static` or a
// function, valid from any thread.
unsafe impl<T> Sync for Static<T> {}

/// `DEVICE_ATTR_RO(parent)`.
#[allow(
    clippy::needless_update,
    reason = "`struct attribute` has lockdep fields only with CONFIG_DEBUG_LOCK_ALLOC: the update \
              is needless without them, needed with them (so not expect)"
)]
static PARENT: Static<bindings::device_attribute> = Static(bindings::device_attribute {
    attr: bindings::attribute {
        #[expect(
            clippy::disallowed_methods,
            reason = "`as_char_ptr` is not `const`; the pointer is the same"
        )]
        name: c"parent".as_ptr().cast(),
        mode: 0o444,
        ..pin_init::zeroed()
    },
    __bindgen_anon_1: bindings::device_attribute__bindgen_ty_1 {
        show: Some(parent_show),
    },
    // Read-only: no `store`.
    __bindgen_anon_2: pin_init::zeroed(),
});

/// The attribute list, NULL-terminated.
static ATTRS: Static<[*const bindings::attribute; 2]> =
    Static([&raw const PARENT.0.attr, core::ptr::null()]);

/// The group ib_core adds to every device of this driver.
static GROUP: Static<bindings::attribute_group> = Static(bindings::attribute_group {
    __bindgen_anon_2: bindings::attribute_group__bindgen_ty_2 {
        attrs_const: (&raw const ATTRS.0).cast::<*const bindings::attribute>(),
    },
    ..pin_init::zeroed()
});

/// The attribute group for `ib_device_ops.device_group`.
pub(super) fn device_group() -> *const bindings::attribute_group {
    &GROUP.0
}

/// `parent`: the netdev's name and a newline; `ENODEV` once the netdev is unbound (the device
/// is being unregistered).
///
/// # Safety
///
/// Called by sysfs for the `parent` file of a registered RDMA device, with a page-sized `buf`.
unsafe extern "C" fn parent_show(
    dev: *mut bindings::device,
    _attr: *mut bindings::device_attribute,
    buf: *mut c_char,
) -> isize {
    // SAFETY: `dev` is the `struct device` of a registered RDMA device (the group is only
    // attached to ours), so it lies inside an `ib_core_device`.
    let ib = unsafe { bindings::rrxe_helper_rdma_device_to_ibdev(dev) };
    // SAFETY: The device is registered while its sysfs files exist; the core returns a held
    // netdev or NULL.
    let nd = unsafe { bindings::ib_device_get_netdev(ib, 1) };
    if nd.is_null() {
        return ENODEV.to_errno() as isize;
    }
    // SAFETY: We hold a reference on `nd` until the `dev_put` below.
    let name = unsafe { NetDevice::from_raw(nd) }.name().to_bytes();
    // A netdev name is at most IFNAMSIZ - 1 bytes; bound it by the page anyway.
    let n = name.len().min(PAGE_SIZE - 1);
    // SAFETY: sysfs hands in a page-sized buffer; `n + 1 <= PAGE_SIZE` bytes are written, from
    // the netdev's name, which we hold.
    unsafe {
        core::ptr::copy_nonoverlapping(name.as_ptr(), buf.cast::<u8>(), n);
        *buf.add(n) = b'\n' as c_char;
    }
    // SAFETY: Drops the reference `ib_device_get_netdev` took.
    unsafe { bindings::rrxe_helper_dev_put(nd) };
    // `n + 1 <= PAGE_SIZE` fits.
    (n + 1) as isize
}
