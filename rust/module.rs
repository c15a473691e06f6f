// SPDX-License-Identifier: GPL-2.0

//! The module object: what is registered while rrxe is loaded, in teardown order.

use crate::{
    conflict::{
        RxeAbsent,
        RxeGuard, //
    },
    device::RrxeDevice,
    ib::{
        Driver,
        LinkRegistration, //
    },
    kernel_ext::{
        DebugfsRoot,
        ModuleWatch, //
    },
    link::{
        RrxeLink,
        RxeLink, //
    },
    net::{
        NetdevNotifier,
        NetnsTunnels, //
    },
    sync::FaultQueue,
};
use kernel::prelude::*;

/// Everything rrxe registers. Fields drop in declaration order, which is the teardown order:
/// no new devices, then every device unregistered, then the fault workqueue destroyed, then no
/// namespace exit hook (it closes any tunnel socket left), then no more netdev events, then
/// `rdma_rxe` may load again.
#[pin_data]
pub(crate) struct RrxeModule {
    /// `rdma link add ... type rrxe`.
    #[pin]
    link: LinkRegistration<RrxeLink>,
    /// `rdma link add ... type rxe`, unless the module parameter `rxe_link` is 0.
    #[pin]
    rxe_link: LinkRegistration<RxeLink>,
    /// Owns all devices; unregisters them on drop.
    devices: Driver<RrxeDevice>,
    /// The page faults of on-demand-paging MRs run here (`rust/sync/fault_work.rs`).
    _fault_queue: FaultQueue,
    /// Closes a network namespace's UDP tunnel sockets when the namespace goes, even while
    /// a device that used them still waits for its users.
    #[pin]
    netns_tunnels: NetnsTunnels,
    /// Netdev up/down/MTU/unregister for bound devices.
    #[pin]
    netdev_events: NetdevNotifier<RrxeLink>,
    /// Checked once the guard below was in place.
    _rxe_absent: RxeAbsent,
    /// Keeps `rdma_rxe` from loading.
    #[pin]
    rxe_guard: ModuleWatch<RxeGuard>,
    /// `/sys/kernel/debug/rrxe`: dropped last, after every device's directory under it.
    _debugfs: DebugfsRoot,
}

impl kernel::InPlaceModule for RrxeModule {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        // Initialised bottom-up: the guard first, the link type last.
        try_pin_init!(Self {
            _debugfs: DebugfsRoot::create(),
            rxe_guard <- ModuleWatch::register(),
            _rxe_absent: RxeGuard::check()?,
            netdev_events <- NetdevNotifier::register(),
            netns_tunnels <- NetnsTunnels::register(),
            _fault_queue: FaultQueue::new()?,
            devices: Driver::new(),
            rxe_link <- LinkRegistration::new_if(crate::params::rxe_link()),
            link <- LinkRegistration::new(),
        })
    }
}
