// SPDX-License-Identifier: GPL-2.0

//! A borrowed network device (`struct net_device`).

use crate::bindings;
use kernel::{
    prelude::*,
    types::Opaque, //
};

/// A network device, borrowed for the duration of a callback.
///
/// # Invariants
///
/// `self.0` is a valid `struct net_device` that is registered (or being unregistered) and stays
/// alive for as long as the reference is held: the C caller holds a reference or RTNL.
#[repr(transparent)]
pub(crate) struct NetDevice(Opaque<bindings::net_device>);

impl NetDevice {
    /// Creates a reference from a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a valid `net_device` that outlives `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a Self {
        // CAST: `Self` is `repr(transparent)` over `Opaque<net_device>`.
        // SAFETY: The caller guarantees validity for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The raw pointer, for the abstraction layer.
    pub(crate) fn as_raw(&self) -> *mut bindings::net_device {
        self.0.get()
    }

    /// The interface name (`eth0`).
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: By the type invariant the device is valid; `netdev_name` returns its
        // NUL-terminated name, which lives as long as the device.
        unsafe { CStr::from_char_ptr(bindings::rrxe_helper_netdev_name(self.as_raw()).cast()) }
    }

    /// The current MTU in bytes.
    pub(crate) fn mtu(&self) -> u32 {
        // SAFETY: By the type invariant the device is valid.
        unsafe { bindings::rrxe_helper_netdev_mtu(self.as_raw()) }
    }

    /// Whether this is a VLAN device (an upper device of a real one).
    pub(crate) fn is_vlan(&self) -> bool {
        // SAFETY: By the type invariant the device is valid.
        unsafe { bindings::rrxe_helper_netdev_is_vlan(self.as_raw()) }
    }

    /// Whether the device is up with carrier: the RDMA port is then active.
    pub(crate) fn is_running(&self) -> bool {
        // SAFETY: By the type invariant the device is valid.
        let state = unsafe { bindings::rrxe_helper_ib_port_state(self.as_raw()) };
        state == bindings::ib_port_state_IB_PORT_ACTIVE as c_int
    }

    /// Whether the device is administratively up (`IFF_UP`), carrier or not.
    pub(crate) fn is_up(&self) -> bool {
        // SAFETY: By the type invariant the device is valid.
        unsafe { bindings::rrxe_helper_netdev_is_up(self.as_raw()) }
    }

    /// The modified EUI-64 derived from the MAC address, in network byte order as stored.
    pub(crate) fn eui64(&self) -> u64 {
        // SAFETY: By the type invariant the device is valid.
        unsafe { bindings::rrxe_helper_netdev_eui64(self.as_raw()) }
    }

    /// The MAC address.
    pub(crate) fn mac(&self) -> [u8; 6] {
        let mut mac = [0u8; 6];
        // SAFETY: By the type invariant the device is valid; `mac` has room for 6 bytes.
        unsafe { bindings::rrxe_helper_netdev_mac(self.as_raw(), mac.as_mut_ptr()) };
        mac
    }

    /// Calls `f` with the real device under this VLAN device, if it is one.
    pub(crate) fn with_real_dev<R>(&self, f: impl FnOnce(&NetDevice) -> R) -> Option<R> {
        // SAFETY: By the type invariant the device is valid; a VLAN device holds its real
        // device while it exists.
        let real = unsafe { bindings::rrxe_helper_real_dev(self.as_raw()) };
        if real.is_null() {
            return None;
        }
        // SAFETY: As above, valid while `self` is.
        Some(f(unsafe { NetDevice::from_raw(real) }))
    }

    /// The identity of the device's network namespace, for comparison only (never a pointer
    /// to use: the namespace may be gone by the time it is compared).
    pub(crate) fn net_id(&self) -> usize {
        // SAFETY: The device is valid, so is its namespace pointer.
        unsafe { bindings::rrxe_helper_dev_net(self.as_raw()) as usize }
    }
}

/// A counted reference to a netdev (`dev_hold`/`dev_put`): the device stays allocated (it may
/// be unregistered meanwhile; its unregistration waits for the reference to go).
///
/// # Invariants
///
/// `ptr` is a valid netdev on which this object holds one reference.
pub(crate) struct NetDeviceRef {
    ptr: core::ptr::NonNull<bindings::net_device>,
}

// SAFETY: A held netdev may be used and released from any context.
unsafe impl Send for NetDeviceRef {}
// SAFETY: `&NetDevice` methods are safe to call concurrently.
unsafe impl Sync for NetDeviceRef {}

impl NetDeviceRef {
    /// Takes a reference to `ndev`.
    pub(crate) fn new(ndev: &NetDevice) -> Self {
        // SAFETY: `ndev` is valid; the reference is dropped in `drop`.
        unsafe { bindings::rrxe_helper_dev_hold(ndev.as_raw()) };
        Self {
            ptr: core::ptr::NonNull::from(ndev).cast(),
        }
    }
}

impl core::ops::Deref for NetDeviceRef {
    type Target = NetDevice;

    fn deref(&self) -> &NetDevice {
        // SAFETY: By the type invariant the netdev is valid while we hold the reference.
        unsafe { NetDevice::from_raw(self.ptr.as_ptr()) }
    }
}

impl Drop for NetDeviceRef {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we hold one reference.
        unsafe { bindings::rrxe_helper_dev_put(self.ptr.as_ptr()) };
    }
}
