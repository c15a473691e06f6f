/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Headers fed to bindgen for rrxe's own bindings module (rust/bindings.rs).
 */
#include <linux/module.h>
#include <linux/crc32.h>
#include <linux/netdevice.h>
#include <linux/notifier.h>
#include <linux/vmalloc.h>
#include <linux/hrtimer.h>
#include <linux/debugfs.h>
#include <linux/mm.h>
#include <linux/skbuff.h>
#include <linux/ip.h>
#include <net/ip.h>
#include <net/udp_tunnel.h>
#include <net/net_namespace.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_netlink.h>
#include <uapi/rdma/rdma_user_rxe.h>

#include "helpers.h"
#include "device_attrs.h"
#include "odp.h"

/* Constants bindgen cannot evaluate from macros. */
const int RRXE_NOTIFY_DONE = NOTIFY_DONE;
const int RRXE_NOTIFY_OK = NOTIFY_OK;
