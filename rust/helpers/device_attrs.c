// SPDX-License-Identifier: GPL-2.0
/*
 * C helpers for the device and port attributes rxe reports: static inline functions Rust cannot
 * call directly. No logic.
 */
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#include "device_attrs.h"

bool rrxe_helper_netdev_is_up(struct net_device *ndev)
{
	return netif_get_flags(ndev) & IFF_UP;
}

struct device *rrxe_helper_netdev_parent(struct net_device *ndev)
{
	return ndev->dev.parent;
}

struct ib_device *rrxe_helper_rdma_device_to_ibdev(struct device *dev)
{
	return rdma_device_to_ibdev(dev);
}
