// SPDX-License-Identifier: GPL-2.0

//! An RDMA device (`struct ib_device`) with the driver's data as a Rust tail.
//!
//! Lifetime: [`Device::register`] allocates the C device with room for `T`, initialises `T` in
//! place and registers the device. From then on ib_core owns it: it is freed after
//! unregistration (`rdma link delete`, [`DeviceRef::unregister_queued`], or
//! [`Driver`]'s drop at module unload), and the `dealloc_driver` callback drops `T` first.

use super::{
    ops::Adapter,
    DeviceOps, //
};
use crate::{
    bindings,
    net::NetDevice, //
};
use core::{
    marker::PhantomData,
    ops::Deref,
    ptr::NonNull, //
};
use kernel::{
    error::to_result,
    prelude::*,
    types::Opaque, //
};

/// The user-space provider a device is for (`enum rdma_driver_id`): libibverbs binds the
/// provider of that id to the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DriverId {
    /// librxe, the provider of the soft-RoCE driver (`RDMA_DRIVER_RXE`).
    Rxe,
}

impl DriverId {
    pub(super) const fn to_raw(self) -> bindings::rdma_driver_id {
        match self {
            Self::Rxe => bindings::rdma_driver_id_RDMA_DRIVER_RXE,
        }
    }
}

/// A legacy `write()` command of uverbs that ib_core does not enable by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WriteCmd {
    /// `IB_USER_VERBS_CMD_POST_SEND`.
    PostSend,
    /// `IB_USER_VERBS_CMD_REQ_NOTIFY_CQ`.
    ReqNotifyCq,
}

impl WriteCmd {
    fn bit(self) -> u64 {
        let cmd = match self {
            Self::PostSend => bindings::ib_uverbs_write_cmds_IB_USER_VERBS_CMD_POST_SEND,
            Self::ReqNotifyCq => bindings::ib_uverbs_write_cmds_IB_USER_VERBS_CMD_REQ_NOTIFY_CQ,
        };
        1u64 << cmd
    }
}

/// An RDMA device: the C `struct ib_device` at offset 0, then the driver data `T`.
///
/// # Invariants
///
/// `ib` is a device allocated by `_ib_alloc_device` with room for `Self`, with `data`
/// initialised and the ops of [`Adapter<T>`] set, so `dealloc_driver` drops `data`.
#[repr(C)]
pub(crate) struct Device<T: DeviceOps> {
    ib: Opaque<bindings::ib_device>,
    data: T,
}

// SAFETY: ib_core synchronises its own fields; `T` is `Send`.
unsafe impl<T: DeviceOps> Send for Device<T> {}
// SAFETY: Shared access only reads C fields set before registration or goes through C APIs
// that lock; `T` is `Sync`.
unsafe impl<T: DeviceOps> Sync for Device<T> {}

impl<T: DeviceOps> Device<T> {
    /// The C structure must come first: ib_core treats the start of the allocation as the C
    /// object.
    const IB_AT_OFFSET_0: () = assert!(core::mem::offset_of!(Self, ib) == 0);

    /// The raw C device.
    pub(super) fn as_raw(&self) -> *mut bindings::ib_device {
        self.ib.get()
    }

    /// Borrows a device from the C pointer ib_core passes to a callback.
    ///
    /// # Safety
    ///
    /// `ib` must be a device created by [`Device::<T>::register`] that stays alive for `'a`.
    pub(super) unsafe fn from_raw<'a>(ib: *mut bindings::ib_device) -> &'a Self {
        // CAST: `ib` is at offset 0 of `Self` (checked above).
        // SAFETY: The caller guarantees the device is a live `Device<T>`.
        unsafe { &*ib.cast::<Self>() }
    }

    /// The driver data.
    ///
    /// # Safety
    ///
    /// `ib` must be a device created by [`Device::<T>::register`].
    pub(super) unsafe fn data_ptr(ib: *mut bindings::ib_device) -> *mut T {
        // SAFETY: The caller guarantees `ib` is the start of a `Device<T>`.
        unsafe { &raw mut (*ib.cast::<Self>()).data }
    }

    /// Allocates, initialises and registers a device named `name` bound to `ndev` (port 1).
    pub(crate) fn register(name: &CStr, ndev: &NetDevice, init: impl PinInit<T, Error>) -> Result {
        let () = Self::IB_AT_OFFSET_0;
        let size = core::mem::size_of::<Self>();
        // SAFETY: `ndev` is valid; the helper calls `_ib_alloc_device(size, dev_net(ndev))`.
        let ib = unsafe { bindings::rrxe_helper_ib_alloc_device(size, ndev.as_raw()) };
        let ib = NonNull::new(ib).ok_or(ENOMEM)?.as_ptr();

        // SAFETY: `ib` has room for `Self`; `data` is uninitialised, pinned memory that ib_core
        // never moves.
        if let Err(e) = unsafe { init.__pinned_init(Self::data_ptr(ib)) } {
            // SAFETY: No ops are set yet, so this frees the allocation without touching `data`.
            unsafe { bindings::ib_dealloc_device(ib) };
            return Err(e);
        }

        // SAFETY: `ib` is a freshly allocated, unregistered device that only this thread sees.
        unsafe {
            let dev = &mut *ib;
            dev.node_type = bindings::RDMA_NODE_IB_CA as u8;
            dev.phys_port_cnt = 1;
            dev.num_comp_vectors = bindings::rrxe_helper_num_possible_cpus();
            dev.local_dma_lkey = 0;
            dev.node_guid = ndev.eui64();
            // The sysfs parent is the netdev's bus device, as for a hardware RoCE NIC, so
            // `/sys/class/infiniband/*/device/net/` names the netdev (rdma-core's rdma_cm tests
            // and scripts look there); a virtual netdev has none. DMA does not follow it: the
            // device registers with no DMA device (virtual DMA). The parent outlives the
            // device: removing the NIC unregisters the netdev, whose unregistration waits for
            // the references this device holds until it is unregistered itself.
            dev.__bindgen_anon_1.dev.parent = bindings::rrxe_helper_netdev_parent(ndev.as_raw());
            for cmd in T::WRITE_CMDS {
                dev.uverbs_cmd_mask |= cmd.bit();
            }
            let desc = T::NODE_DESC.to_bytes();
            let n = desc.len().min(dev.node_desc.len() - 1);
            for (d, s) in dev.node_desc.iter_mut().zip(&desc[..n]) {
                *d = *s;
            }
        }

        let mut ops = Adapter::<T>::OPS;
        // SAFETY: Returns `THIS_MODULE` of this module.
        ops.owner = unsafe { bindings::rrxe_helper_this_module() };
        // A static group that outlives every device (an `OPS` constant cannot name a static).
        ops.device_group = super::sysfs::device_group();
        // SAFETY: `ib` is valid; the core copies the table. From here on `ib_dealloc_device`
        // calls `dealloc_driver`, which drops `data`.
        unsafe { bindings::ib_set_device_ops(ib, &ops) };

        // SAFETY: `ib` and `ndev` are valid; the core takes its own netdev reference.
        let ret = unsafe { bindings::ib_device_set_netdev(ib, ndev.as_raw(), 1) };
        let ret = to_result(ret).and_then(|()| {
            // SAFETY: `ib` and `name` are valid. NULL dma_device selects virtual DMA.
            to_result(unsafe {
                bindings::ib_register_device(ib, name.as_char_ptr().cast(), core::ptr::null_mut())
            })
        });
        if let Err(e) = ret {
            // SAFETY: Registration failed, so the caller owns `ib`; this drops `data` through
            // `dealloc_driver` and frees the device.
            unsafe { bindings::ib_dealloc_device(ib) };
            return Err(e);
        }
        Ok(())
    }

    /// Finds the registered device of this driver bound to `ndev`, taking a registration reference.
    pub(crate) fn get_by_netdev(ndev: &NetDevice) -> Option<DeviceRef<T>> {
        // SAFETY: `ndev` is valid.
        let ib = unsafe { bindings::ib_device_get_by_netdev(ndev.as_raw(), T::DRIVER_ID.to_raw()) };
        let ib = NonNull::new(ib)?;
        // Only devices of this module have our `Device<T>` layout: compare the ops owner.
        // SAFETY: `ib` is a registered device (we hold a reference).
        let ours = unsafe { (*ib.as_ptr()).ops.owner == bindings::rrxe_helper_this_module() };
        if !ours {
            // SAFETY: Drops the reference `ib_device_get_by_netdev` took.
            unsafe { bindings::ib_device_put(ib.as_ptr()) };
            return None;
        }
        // INVARIANT: `ib` is one of ours and we hold a registration reference.
        Some(DeviceRef {
            ib,
            _t: PhantomData,
        })
    }

    /// The device name (`rrxe0`).
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: `name` is a NUL-terminated array set at registration and only renamed under
        // the core's locks; a racing rename is still NUL-terminated.
        unsafe { CStr::from_char_ptr((*self.as_raw()).name.as_ptr().cast()) }
    }

    /// Replaces the node description (`/sys/class/infiniband/*/node_desc`) with `desc` up to
    /// its first NUL, cut to 63 bytes so the field stays NUL-terminated.
    pub(crate) fn set_node_desc(&self, desc: &[c_char]) {
        let n = desc.iter().position(|&c| c == 0).unwrap_or(desc.len());
        // SAFETY: The device is valid; only the field's address is taken, no reference: readers
        // (sysfs, the SMA) take no lock, as with every driver's `modify_device`.
        let field = unsafe { core::ptr::addr_of_mut!((*self.as_raw()).node_desc) };
        let len = array_len(field);
        let n = n.min(len - 1);
        let src = Iterator::chain(desc[..n].iter().copied(), core::iter::repeat(0));
        for (i, c) in (0..len).zip(src) {
            // SAFETY: `i < len`, inside the field. Each byte is written alone: a reader racing
            // this sees a mix of the old and the new description, never bytes outside the
            // field, whose last byte stays NUL.
            unsafe { field.cast::<c_char>().add(i).write_volatile(c) };
        }
    }

    /// Calls `f` with the netdev bound to port 1, if it is still bound.
    pub(crate) fn with_netdev<R>(&self, f: impl FnOnce(&NetDevice) -> R) -> Option<R> {
        // SAFETY: The device is valid; the core returns a held netdev or NULL.
        let nd = unsafe { bindings::ib_device_get_netdev(self.as_raw(), 1) };
        if nd.is_null() {
            return None;
        }
        // SAFETY: We hold a reference on `nd` until the `dev_put` below.
        let r = f(unsafe { NetDevice::from_raw(nd) });
        // SAFETY: Drops the reference taken by `ib_device_get_netdev`.
        unsafe { bindings::rrxe_helper_dev_put(nd) };
        Some(r)
    }

    /// Reports a port event on port 1 to ib_core's clients (and user space).
    pub(crate) fn port_event(&self, event: PortEvent) {
        let mut ev = bindings::ib_event {
            device: self.as_raw(),
            event: match event {
                PortEvent::Active => bindings::ib_event_type_IB_EVENT_PORT_ACTIVE,
                PortEvent::Error => bindings::ib_event_type_IB_EVENT_PORT_ERR,
            },
            ..Default::default()
        };
        ev.element.port_num = 1;
        // SAFETY: `ev` is a valid event for this registered device; the core copies it.
        unsafe { bindings::ib_dispatch_event(&ev) };
    }
}

impl<T: DeviceOps> Deref for Device<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.data
    }
}

/// A port event for [`Device::port_event`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PortEvent {
    /// The port became active.
    Active,
    /// The port went down.
    Error,
}

/// A registration reference on a [`Device`]: it cannot finish unregistering while held.
///
/// # Invariants
///
/// `ib` is a `Device<T>` on which this object holds one `ib_device_try_get` reference.
pub(crate) struct DeviceRef<T: DeviceOps> {
    ib: NonNull<bindings::ib_device>,
    _t: PhantomData<T>,
}

impl<T: DeviceOps> DeviceRef<T> {
    /// Starts unregistering the device from a work item (safe under RTNL), then drops the
    /// reference.
    pub(crate) fn unregister_queued(self) {
        // SAFETY: By the type invariant the device is registered and referenced.
        unsafe { bindings::ib_unregister_device_queued(self.ib.as_ptr()) };
    }
}

impl<T: DeviceOps> Deref for DeviceRef<T> {
    type Target = Device<T>;

    fn deref(&self) -> &Device<T> {
        // SAFETY: By the type invariant the device is a live `Device<T>` while referenced.
        unsafe { Device::from_raw(self.ib.as_ptr()) }
    }
}

impl<T: DeviceOps> Drop for DeviceRef<T> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we hold one reference.
        unsafe { bindings::ib_device_put(self.ib.as_ptr()) };
    }
}

/// All devices of this driver: dropping it unregisters and frees every device of its
/// [`DeviceOps::DRIVER_ID`].
///
/// Hold it in the module after the link registration (so no new device can appear while it
/// drops). The driver must be the only one registering devices of that id.
pub(crate) struct Driver<T: DeviceOps>(PhantomData<T>);

impl<T: DeviceOps> Driver<T> {
    /// Creates the owner of all devices.
    pub(crate) fn new() -> Self {
        Self(PhantomData)
    }
}

impl<T: DeviceOps> Drop for Driver<T> {
    fn drop(&mut self) {
        // SAFETY: Unregisters (and frees, through `dealloc_driver`) all our devices; sleeps.
        unsafe { bindings::ib_unregister_driver(T::DRIVER_ID.to_raw()) };
    }
}

/// The length of the array behind `_p`, from its type (no access).
const fn array_len<T, const N: usize>(_p: *mut [T; N]) -> usize {
    N
}
