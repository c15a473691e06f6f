// SPDX-License-Identifier: GPL-2.0
/*
 * C helpers for rrxe: the static inlines and macros behind rust/helpers/helpers.h.
 * Each is a one-line forwarder; logic belongs in Rust.
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/namei.h>
#include <linux/netdevice.h>
#include <linux/vmalloc.h>
#include <linux/if_vlan.h>
#include <net/addrconf.h>
#include <linux/random.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "helpers.h"

struct ib_device *rrxe_helper_ib_alloc_device(size_t size, struct net_device *ndev)
{
	return _ib_alloc_device(size, dev_net(ndev));
}

struct ib_udata *rrxe_helper_bundle_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}

struct ib_ucontext *rrxe_helper_udata_to_ucontext(struct ib_udata *udata)
{
	return rdma_udata_to_uverbs_attr_bundle(udata)->context;
}

struct ib_umem *rrxe_helper_umem_get(struct ib_device *dev, unsigned long addr, size_t size,
				     int access)
{
	return ib_umem_get_va(dev, addr, size, access);
}

u8 rrxe_helper_random_u8(void)
{
	return get_random_u8();
}

int rrxe_helper_ib_port_state(struct net_device *ndev)
{
	return ib_get_curr_port_state(ndev);
}

int rrxe_helper_num_possible_cpus(void)
{
	return num_possible_cpus();
}

struct module *rrxe_helper_this_module(void)
{
	return THIS_MODULE;
}

void rrxe_helper_dev_put(struct net_device *ndev)
{
	dev_put(ndev);
}

const char *rrxe_helper_netdev_name(const struct net_device *ndev)
{
	return netdev_name(ndev);
}

unsigned int rrxe_helper_netdev_mtu(const struct net_device *ndev)
{
	return READ_ONCE(ndev->mtu);
}

bool rrxe_helper_netdev_is_vlan(const struct net_device *ndev)
{
	return is_vlan_dev(ndev);
}

__be64 rrxe_helper_netdev_eui64(const struct net_device *ndev)
{
	__be64 guid;

	addrconf_addr_eui48((unsigned char *)&guid, ndev->dev_addr);
	return guid;
}

struct net_device *rrxe_helper_netdev_from_notifier(void *info)
{
	return netdev_notifier_info_to_dev(info);
}

void *rrxe_helper_vmalloc_user(size_t size)
{
	return vmalloc_user(size);
}

int rrxe_helper_notifier_from_errno(int err)
{
	return notifier_from_errno(err);
}

const char *rrxe_helper_module_name(const void *mod)
{
	return ((const struct module *)mod)->name;
}

/*
 * Whether a module is loaded, from its /sys/module entry: the module list itself is not exported.
 * Used once, at init, to refuse to run next to the C rdma_rxe.
 */
bool rrxe_helper_module_loaded(const char *name)
{
	char buf[MODULE_NAME_LEN + 16];
	struct path path;

	snprintf(buf, sizeof(buf), "/sys/module/%s/initstate", name);
	if (kern_path(buf, LOOKUP_FOLLOW, &path))
		return false;
	path_put(&path);
	return true;
}

unsigned long rrxe_helper_spin_lock_irqsave(void *lock)
{
	unsigned long flags;

	spin_lock_irqsave((spinlock_t *)lock, flags);
	return flags;
}

bool rrxe_helper_spin_trylock_irqsave(void *lock, unsigned long *flags)
{
	return spin_trylock_irqsave((spinlock_t *)lock, *flags);
}

void rrxe_helper_spin_unlock_irqrestore(void *lock, unsigned long flags)
{
	spin_unlock_irqrestore((spinlock_t *)lock, flags);
}

void rrxe_helper_spin_assert_held(void *lock)
{
	lockdep_assert_held((spinlock_t *)lock);
}

static DEFINE_MUTEX(rrxe_link_mutex);

void rrxe_helper_link_lock(void)
{
	mutex_lock(&rrxe_link_mutex);
}

void rrxe_helper_link_unlock(void)
{
	mutex_unlock(&rrxe_link_mutex);
}
