// SPDX-License-Identifier: GPL-2.0

//! Binding RDMA devices to netdevs: `rdma link add NAME type rrxe netdev DEV` and the netdev
//! events that follow the bound device (up/down, MTU, unregister).

use crate::{
    device::RrxeDevice,
    ib::{
        Device,
        LinkOps,
        PortEvent, //
    },
    kernel_ext::LinkLock,
    net::{
        NetDevice,
        NetDeviceRef,
        NetdevEvent,
        NetdevEvents, //
        NetnsTunnel,
    },
};
use crate::{
    pipeline::open_tunnel,
    proto::hdr::ROCE_V2_UDP_PORT, //
};
use kernel::prelude::*;

/// The `rrxe` link type.
pub(crate) struct RrxeLink;

impl LinkOps for RrxeLink {
    const TYPE: &'static CStr = c"rrxe";

    fn newlink(name: &CStr, ndev: &NetDevice) -> Result {
        add(name, ndev, Self::TYPE)
    }
}

/// The `rxe` link type, so that `rdma link add NAME type rxe netdev DEV` (what tools, scripts
/// and documentation say) creates an rrxe device while rrxe is loaded (module parameter
/// `rxe_link`). rrxe never claims rdma_rxe's module alias: without rrxe loaded, the same
/// command loads rdma_rxe. rrxe and rdma_rxe never share a kernel (`conflict.rs`), so the type
/// name is never registered twice.
pub(crate) struct RxeLink;

impl LinkOps for RxeLink {
    const TYPE: &'static CStr = c"rxe";

    fn newlink(name: &CStr, ndev: &NetDevice) -> Result {
        add(name, ndev, Self::TYPE)
    }
}

/// Creates rrxe device `name` on `ndev`, asked for as link type `link_type`.
fn add(name: &CStr, ndev: &NetDevice, link_type: &CStr) -> Result {
    if ndev.is_vlan() {
        pr_err!(
            "{}: refusing {}: create the device on the real netdev, VLAN traffic is received there\n",
            name,
            ndev.name()
        );
        return Err(EPERM);
    }
    // Check and register under one lock so two requests cannot bind the same netdev.
    let _guard = LinkLock::lock();
    if let Some(existing) = Device::<RrxeDevice>::get_by_netdev(ndev) {
        pr_err!(
            "{}: {} already has RDMA device {}: one device per netdev\n",
            name,
            ndev.name(),
            existing.name()
        );
        return Err(EEXIST);
    }
    let tunnel = shared_tunnel(ndev)?;
    Device::register(
        name,
        ndev,
        RrxeDevice::new(
            name,
            ndev.eui64(),
            ndev.is_running(),
            tunnel,
            NetDeviceRef::new(ndev),
        ),
    )
    .inspect_err(|e| {
        pr_err!(
            "{}: registration on {} failed: {:?}\n",
            name,
            ndev.name(),
            e
        )
    })?;
    pr_info!(
        "{}: added on {} (mtu {}, link type {})\n",
        name,
        ndev.name(),
        ndev.mtu(),
        link_type
    );
    Ok(())
}

/// The UDP port 4791 sockets of `ndev`'s network namespace: shared with the rrxe devices
/// already there, else opened.
fn shared_tunnel(ndev: &NetDevice) -> Result<NetnsTunnel> {
    open_tunnel(ndev).inspect_err(|e| {
        pr_err!(
            "cannot open UDP port {} in the namespace of {}: {:?}\n",
            ROCE_V2_UDP_PORT,
            ndev.name(),
            e
        )
    })
}

impl NetdevEvents for RrxeLink {
    fn event(event: NetdevEvent, ndev: &NetDevice) {
        let Some(dev) = Device::<RrxeDevice>::get_by_netdev(ndev) else {
            return;
        };
        match event {
            NetdevEvent::Unregister => {
                pr_info!(
                    "{}: {} is going away, removing the device\n",
                    dev.name(),
                    ndev.name()
                );
                // RTNL is held: the core unregisters from a work item.
                dev.unregister_queued();
            }
            NetdevEvent::Up | NetdevEvent::Down | NetdevEvent::Change => {
                let active = ndev.is_running();
                if dev.set_port_active(active) {
                    dev.port_event(if active {
                        PortEvent::Active
                    } else {
                        PortEvent::Error
                    });
                    pr_info!(
                        "{}: port {}\n",
                        dev.name(),
                        if active { "active" } else { "down" }
                    );
                }
            }
            // query_port reads the MTU live; nothing cached to update yet.
            NetdevEvent::ChangeMtu => {
                pr_info!("{}: {} mtu {}\n", dev.name(), ndev.name(), ndev.mtu());
            }
        }
    }
}
