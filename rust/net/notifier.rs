// SPDX-License-Identifier: GPL-2.0

//! Network device events (`register_netdevice_notifier`).

use super::NetDevice;
use crate::{
    bindings,
    kernel_ext::{
        NotifierBlock,
        NotifierChain,
        NotifierHandler, //
    },
};
use core::{
    ffi::c_void,
    marker::PhantomData, //
};
use kernel::prelude::*;

/// The network device events rrxe reacts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NetdevEvent {
    /// The device was brought up (`NETDEV_UP`).
    Up,
    /// The device went down (`NETDEV_DOWN`).
    Down,
    /// Carrier or operational state changed (`NETDEV_CHANGE`).
    Change,
    /// The MTU changed (`NETDEV_CHANGEMTU`).
    ChangeMtu,
    /// The device is being unregistered (`NETDEV_UNREGISTER`).
    Unregister,
}

impl NetdevEvent {
    fn from_raw(action: c_ulong) -> Option<Self> {
        let action = u32::try_from(action).ok()?;
        Some(match action {
            bindings::netdev_cmd_NETDEV_UP => Self::Up,
            bindings::netdev_cmd_NETDEV_DOWN => Self::Down,
            bindings::netdev_cmd_NETDEV_CHANGE => Self::Change,
            bindings::netdev_cmd_NETDEV_CHANGEMTU => Self::ChangeMtu,
            bindings::netdev_cmd_NETDEV_UNREGISTER => Self::Unregister,
            _ => return None,
        })
    }
}

/// Reactions to network device events. Called in process context with RTNL held.
pub(crate) trait NetdevEvents {
    /// `event` happened on `dev`.
    fn event(event: NetdevEvent, dev: &NetDevice);
}

/// The netdevice notifier chain.
pub(crate) struct NetdevChain;

impl NotifierChain for NetdevChain {
    unsafe fn register(nb: *mut bindings::notifier_block) -> c_int {
        // SAFETY: The caller passes a valid, pinned block.
        unsafe { bindings::register_netdevice_notifier(nb) }
    }

    unsafe fn unregister(nb: *mut bindings::notifier_block) {
        // SAFETY: The caller passes a registered block.
        unsafe { bindings::unregister_netdevice_notifier(nb) };
    }
}

/// Adapts a [`NetdevEvents`] implementation to the netdevice chain.
pub(crate) struct NetdevAdapter<T: NetdevEvents>(PhantomData<T>);

impl<T: NetdevEvents> NotifierHandler for NetdevAdapter<T> {
    type Chain = NetdevChain;

    unsafe fn call(action: c_ulong, data: *mut c_void) -> c_int {
        let Some(event) = NetdevEvent::from_raw(action) else {
            return bindings::RRXE_NOTIFY_DONE;
        };
        // SAFETY: For netdevice chain events `data` is a `netdev_notifier_info` whose device is
        // valid for the duration of the call (RTNL is held).
        let dev = unsafe { NetDevice::from_raw(bindings::rrxe_helper_netdev_from_notifier(data)) };
        T::event(event, dev);
        bindings::RRXE_NOTIFY_OK
    }
}

/// Calls `T::event` for netdev events while this object lives.
pub(crate) type NetdevNotifier<T> = NotifierBlock<NetdevAdapter<T>>;
