/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C helpers for rrxe: static inline functions and macros of the kernel that Rust cannot call
 * directly. Only the abstraction layer (rust/ib, rust/net, rust/kernel_ext) uses them.
 */
#ifndef RRXE_HELPERS_H
#define RRXE_HELPERS_H

#include <linux/types.h>

struct ib_device;
struct net_device;
struct net;
struct module;

/* ib_core */
struct ib_device *rrxe_helper_ib_alloc_device(size_t size, struct net_device *ndev);
int rrxe_helper_ib_port_state(struct net_device *ndev);

int rrxe_helper_num_possible_cpus(void);
struct module *rrxe_helper_this_module(void);

struct ib_udata;
struct uverbs_attr_bundle;
struct ib_udata *rrxe_helper_bundle_udata(struct uverbs_attr_bundle *attrs);
struct ib_ucontext *rrxe_helper_udata_to_ucontext(struct ib_udata *udata);

struct ib_umem;
struct ib_umem *rrxe_helper_umem_get(struct ib_device *dev, unsigned long addr, size_t size,
				     int access);
u8 rrxe_helper_random_u8(void);

/* net_device */
void rrxe_helper_dev_put(struct net_device *ndev);
const char *rrxe_helper_netdev_name(const struct net_device *ndev);
unsigned int rrxe_helper_netdev_mtu(const struct net_device *ndev);
bool rrxe_helper_netdev_is_vlan(const struct net_device *ndev);
__be64 rrxe_helper_netdev_eui64(const struct net_device *ndev);
struct net_device *rrxe_helper_netdev_from_notifier(void *info);

/* memory */
void *rrxe_helper_vmalloc_user(size_t size);

/* notifiers */
int rrxe_helper_notifier_from_errno(int err);

/* modules */
const char *rrxe_helper_module_name(const void *mod);
bool rrxe_helper_module_loaded(const char *name);

/* interrupt-safe spinlocks (the lock is a spinlock_t) */
unsigned long rrxe_helper_spin_lock_irqsave(void *lock);
bool rrxe_helper_spin_trylock_irqsave(void *lock, unsigned long *flags);
void rrxe_helper_spin_unlock_irqrestore(void *lock, unsigned long flags);
void rrxe_helper_spin_assert_held(void *lock);

/* the driver-wide link mutex (serialises rdma link add/delete with netdev events) */
void rrxe_helper_link_lock(void);
void rrxe_helper_link_unlock(void);

#endif /* RRXE_HELPERS_H */
