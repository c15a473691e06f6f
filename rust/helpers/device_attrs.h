/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C helpers for the device and port attributes rxe reports (rust/ib/attr.rs, rust/ib/sysfs.rs):
 * static inline functions Rust cannot call directly.
 */
#ifndef RRXE_DEVICE_ATTRS_H
#define RRXE_DEVICE_ATTRS_H

#include <linux/types.h>

struct device;
struct ib_device;
struct net_device;

/* Whether the netdev is administratively up (IFF_UP), carrier or not. */
bool rrxe_helper_netdev_is_up(struct net_device *ndev);
/* The device a netdev sits on (its bus device), or NULL for a virtual netdev. */
struct device *rrxe_helper_netdev_parent(struct net_device *ndev);
/* The RDMA device of a device's sysfs directory (rdma_device_to_ibdev()). */
struct ib_device *rrxe_helper_rdma_device_to_ibdev(struct device *dev);

#endif
