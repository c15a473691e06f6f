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
    kernel_ext::ModuleWatch,
    link::{
        RrxeLink,
        RxeLink, //
    },
    net::{
        NetdevNotifier,
        NetnsTunnels, //
    },
};
use kernel::prelude::*;

/// Everything rrxe registers. Fields drop in declaration order, which is the teardown order:
/// no new devices, then every device unregistered, then no namespace exit hook (it closes any
/// tunnel socket left), then no more netdev events, then `rdma_rxe` may load again.
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
}

impl kernel::InPlaceModule for RrxeModule {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        // Initialised bottom-up: the guard first, the link type last.
        try_pin_init!(Self {
            rxe_guard <- ModuleWatch::register(),
            _rxe_absent: RxeGuard::check()?,
            netdev_events <- NetdevNotifier::register(),
            netns_tunnels <- NetnsTunnels::register(),
            devices: Driver::new(),
            rxe_link <- LinkRegistration::new_if(rxe_link()),
            link <- LinkRegistration::new(),
        })
    }
}

/// Whether FLUSH requests carry C rxe's ICRC rather than the IBA's (module parameter
/// `rxe_flush_icrc`; see `proto::icrc::rxe_flush_icrc_ipv4`).
pub(crate) fn rxe_flush_icrc() -> bool {
    *crate::module_parameters::rxe_flush_icrc.value() != 0
}

/// Whether `rdma link add ... type rxe` creates rrxe devices (module parameter `rxe_link`).
pub(crate) fn rxe_link() -> bool {
    *crate::module_parameters::rxe_link.value() != 0
}

/// Whether a QP's runs follow the transmit flow rules (bit 0 of module parameter `tx_flow`).
pub(crate) fn tx_flow_rules() -> bool {
    *crate::module_parameters::tx_flow.value() & 1 != 0
}

/// Whether a QP's run keeps softirqs disabled (bit 1 of module parameter `tx_flow`).
pub(crate) fn tx_flow_bh_off() -> bool {
    *crate::module_parameters::tx_flow.value() & 2 != 0
}

/// Whether runs of packets leave as UDP GSO trains (module parameter `gso`).
pub(crate) fn gso() -> bool {
    *crate::module_parameters::gso.value() != 0
}
