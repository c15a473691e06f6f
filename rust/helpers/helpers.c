// SPDX-License-Identifier: GPL-2.0
/*
 * C helpers for rrxe: the static inlines and macros behind rust/helpers/helpers.h.
 * Each is a one-line forwarder; logic belongs in Rust.
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/namei.h>
#include <linux/netdevice.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <net/addrconf.h>
#include <linux/random.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <linux/highmem.h>
#include <linux/timer.h>
#include <linux/hrtimer.h>
#include <linux/timekeeping.h>
#include <linux/debugfs.h>
#include <linux/workqueue.h>
#include <linux/sched/signal.h>
#include <linux/skbuff.h>
#include <net/ip.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <net/ipv6.h>
#include <net/ip6_route.h>
#include <net/netlink.h>
#include <rdma/rdma_netlink.h>

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

unsigned int rrxe_helper_nth_online_cpu(unsigned int n)
{
	return cpumask_local_spread(n, NUMA_NO_NODE);
}

bool rrxe_helper_cpu_online(unsigned int cpu)
{
	return cpu < nr_cpu_ids && cpu_online(cpu);
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

/*
 * vmalloc_user() charged to the caller's memory cgroup: zeroed pages allocated with
 * GFP_KERNEL_ACCOUNT, mapped with VM_USERMAP (so remap_vmalloc_range() accepts the area).
 * vmalloc_user() itself allocates with GFP_KERNEL, and the range allocator that takes flags is
 * not exported. On success *pages_out holds the page array for rrxe_helper_vfree_user().
 */
void *rrxe_helper_vmalloc_user(size_t size, struct page ***pages_out)
{
	unsigned int n = DIV_ROUND_UP(size, PAGE_SIZE), i;
	struct page **pages;
	void *va;

	if (!n || size > (size_t)UINT_MAX * PAGE_SIZE)
		return NULL;
	pages = kvcalloc(n, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages)
		return NULL;
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!pages[i])
			goto fail;
	}
	va = vmap(pages, n, VM_MAP | VM_USERMAP, PAGE_KERNEL);
	if (!va)
		goto fail;
	*pages_out = pages;
	return va;
fail:
	while (i--)
		__free_page(pages[i]);
	kvfree(pages);
	return NULL;
}

/* Frees what rrxe_helper_vmalloc_user() returned (pages user space still maps live on). */
void rrxe_helper_vfree_user(void *va, struct page **pages, size_t size)
{
	unsigned int n = DIV_ROUND_UP(size, PAGE_SIZE), i;

	vunmap(va);
	for (i = 0; i < n; i++)
		__free_page(pages[i]);
	kvfree(pages);
}

/*
 * Order-0 pages, physically contiguous, charged to the caller's memory cgroup, not zeroed (the
 * caller zeroes the pages it keeps: __GFP_ZERO would also clear the tail of the power-of-two
 * block that alloc_pages_exact() frees); NULL (quietly) when none are free.
 * alloc_pages_exact() is a macro (allocation profiling).
 */
void *rrxe_helper_alloc_user_pages_exact(size_t size)
{
	return alloc_pages_exact(size, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
}

unsigned long rrxe_helper_vma_start(const struct vm_area_struct *vma)
{
	return vma->vm_start;
}

unsigned long rrxe_helper_vma_len(const struct vm_area_struct *vma)
{
	return vma->vm_end - vma->vm_start;
}

/* What remap_vmalloc_range() sets on the VMAs it fills. */
void rrxe_helper_vma_set_dontexpand_dontdump(struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
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

#ifdef RRXE_PROFILE_LOCKS
/*
 * Profiling builds only (RRXE_MODULE_EXTRA="KCFLAGS=-DRRXE_PROFILE_LOCKS" scripts/build-module):
 * a lock taken with interrupts on keeps them on and disables bottom halves instead, so that the
 * samples of a cpu-clock profile land inside the critical sections rather than all on their
 * unlock. Unsafe with kernel consumers that post or poll from hard interrupts; never in a
 * build that is tested or shipped.
 */
#define RRXE_LOCKED_BH (~0UL)

static bool rrxe_lock_bh_only(void)
{
	return !irqs_disabled() && !in_hardirq();
}
#endif

unsigned long rrxe_helper_spin_lock_irqsave(void *lock)
{
	unsigned long flags;

#ifdef RRXE_PROFILE_LOCKS
	if (rrxe_lock_bh_only()) {
		spin_lock_bh((spinlock_t *)lock);
		return RRXE_LOCKED_BH;
	}
#endif
	spin_lock_irqsave((spinlock_t *)lock, flags);
	return flags;
}

bool rrxe_helper_spin_trylock_irqsave(void *lock, unsigned long *flags)
{
#ifdef RRXE_PROFILE_LOCKS
	if (rrxe_lock_bh_only()) {
		*flags = RRXE_LOCKED_BH;
		return spin_trylock_bh((spinlock_t *)lock);
	}
#endif
	return spin_trylock_irqsave((spinlock_t *)lock, *flags);
}

void rrxe_helper_spin_unlock_irqrestore(void *lock, unsigned long flags)
{
#ifdef RRXE_PROFILE_LOCKS
	if (flags == RRXE_LOCKED_BH) {
		spin_unlock_bh((spinlock_t *)lock);
		return;
	}
#endif
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

struct sk_buff *rrxe_helper_skb_alloc(struct net_device *ndev, unsigned int len,
				      unsigned int headroom)
{
	unsigned int room = headroom + LL_RESERVED_SPACE(ndev);
	struct sk_buff *skb = alloc_skb(len + room, GFP_ATOMIC);

	if (!skb)
		return NULL;
	skb_reserve(skb, room);
	skb->dev = ndev;
	return skb;
}

unsigned int rrxe_helper_skb_tailroom(const struct sk_buff *skb)
{
	return skb_tailroom(skb);
}

unsigned char *rrxe_helper_skb_tail_pointer(const struct sk_buff *skb)
{
	return skb_tail_pointer(skb);
}

unsigned char *rrxe_helper_skb_put(struct sk_buff *skb, unsigned int len)
{
	return skb_put(skb, len);
}

void rrxe_helper_skb_free(struct sk_buff *skb)
{
	kfree_skb(skb);
}

void rrxe_helper_skb_consume(struct sk_buff *skb)
{
	consume_skb(skb);
}

unsigned int rrxe_helper_skb_headlen(const struct sk_buff *skb)
{
	return skb_headlen(skb);
}

/*
 * A UDP socket that does not take GSO buffers splits one into its segments and hands them
 * to the encapsulation receiver one by one, each still linked to the next
 * (udp_queue_rcv_skb() walks the list with skb_list_walk_safe()).
 */
bool rrxe_helper_skb_segments_follow(const struct sk_buff *skb)
{
	return skb->next;
}

void rrxe_helper_skb_fraglist_append(struct sk_buff *head, struct sk_buff *member)
{
	struct sk_buff **pp = &skb_shinfo(head)->frag_list;

	while (*pp)
		pp = &(*pp)->next;
	member->next = NULL;
	*pp = member;
	head->len += member->len;
	head->data_len += member->len;
	head->truesize += member->truesize;
}

void rrxe_helper_skb_udp_gso_fraglist(struct sk_buff *skb, unsigned int gso_size,
				      unsigned int segs)
{
	skb_shinfo(skb)->gso_size = gso_size;
	skb_shinfo(skb)->gso_segs = segs;
	skb_shinfo(skb)->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
	/* The UDP checksum is 0, as RoCEv2 senders send it: nothing to fill in. */
	skb->ip_summed = CHECKSUM_UNNECESSARY;
}

int rrxe_helper_skb_linearize(struct sk_buff *skb)
{
	return skb_linearize(skb);
}

unsigned char *rrxe_helper_skb_data(const struct sk_buff *skb)
{
	return skb->data;
}

unsigned int rrxe_helper_skb_len(const struct sk_buff *skb)
{
	return skb->len;
}

unsigned char *rrxe_helper_skb_network_header(const struct sk_buff *skb)
{
	return skb_network_header(skb);
}

void rrxe_helper_skb_reset_network_header(struct sk_buff *skb)
{
	skb_reset_network_header(skb);
}

void rrxe_helper_skb_reset_transport_header(struct sk_buff *skb)
{
	skb_reset_transport_header(skb);
}

void rrxe_helper_skb_set_protocol(struct sk_buff *skb, u16 proto)
{
	skb->protocol = htons(proto);
}

void rrxe_helper_skb_set_priority(struct sk_buff *skb, u32 priority)
{
	skb->priority = priority;
}

struct net_device *rrxe_helper_skb_dev(const struct sk_buff *skb)
{
	return skb->dev;
}

void rrxe_helper_skb_set_dst4(struct sk_buff *skb, struct rtable *rt)
{
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	skb_dst_set(skb, dst_clone(&rt->dst));
}

void rrxe_helper_skb_queue_init(struct sk_buff_head *q)
{
	skb_queue_head_init(q);
}

unsigned char *rrxe_helper_skb_cb(struct sk_buff *skb)
{
	return skb->cb;
}

/*
 * The interface a RoCE packet from an address leaves by: the device's own netdev, or the upper
 * device of it (a VLAN, a macvlan) that holds the address. ib_core gives the device a GID for
 * each address of its netdev's upper devices, with that upper device as the GID's netdev, and
 * C rxe sends through the source GID's netdev (rxe_init_packet): a VLAN's connections leave
 * tagged, with the PCP of its egress map. Routed out of the netdev itself they would leave
 * untagged (the kernel takes a destination the interface has no route to as on-link).
 */
static int rrxe_oif(struct net_device *ndev, struct net_device *holder)
{
	int oif = ndev->ifindex;

	if (holder && holder != ndev && netdev_has_upper_dev_all_rcu(ndev, holder))
		oif = holder->ifindex;
	return oif;
}

static int rrxe_oif4(struct net_device *ndev, __be32 saddr)
{
	int oif;

	rcu_read_lock();
	oif = rrxe_oif(ndev, __ip_dev_find(dev_net(ndev), saddr, false));
	rcu_read_unlock();
	return oif;
}

struct rtable *rrxe_helper_route4(struct net_device *ndev, __be32 saddr, __be32 daddr)
{
	struct flowi4 fl = {
		.flowi4_oif = rrxe_oif4(ndev, saddr),
		.saddr = saddr,
		.daddr = daddr,
		.flowi4_proto = IPPROTO_UDP,
	};

	return ip_route_output_key(dev_net(ndev), &fl);
}

/*
 * The route of one QP's packets, cached in the QP's transmit socket (created only to own its
 * buffers: never bound, never hashed) as a connected UDP socket caches its own: the socket's
 * addresses and bound device hold the key, and sk_dst_check() drops a route that a change of
 * the routing tables (or of the device) has made obsolete.
 */
struct rtable *rrxe_helper_route4_cached(struct sock *sk, struct net_device *ndev,
					 __be32 saddr, __be32 daddr)
{
	struct inet_sock *inet = inet_sk(sk);
	struct dst_entry *dst = NULL;
	struct rtable *rt;

	spin_lock_bh(&sk->sk_lock.slock);
	if (inet->inet_saddr == saddr && inet->inet_daddr == daddr &&
	    READ_ONCE(sk->sk_bound_dev_if) == ndev->ifindex)
		dst = sk_dst_check(sk, 0);
	spin_unlock_bh(&sk->sk_lock.slock);
	if (dst) {
		rt = dst_rtable(dst);
		if (net_eq(dev_net(rt->dst.dev), dev_net(ndev)))
			return rt;
		dst_release(dst);
	}
	rt = rrxe_helper_route4(ndev, saddr, daddr);
	if (IS_ERR(rt))
		return rt;
	spin_lock_bh(&sk->sk_lock.slock);
	inet->inet_saddr = saddr;
	inet->inet_daddr = daddr;
	WRITE_ONCE(sk->sk_bound_dev_if, ndev->ifindex);
	sk_dst_set(sk, dst_clone(&rt->dst));
	spin_unlock_bh(&sk->sk_lock.slock);
	return rt;
}

void rrxe_helper_rt_put(struct rtable *rt)
{
	ip_rt_put(rt);
}

struct net *rrxe_helper_rt_net(struct rtable *rt)
{
	return dev_net(rt->dst.dev);
}

struct net *rrxe_helper_dev_net(const struct net_device *ndev)
{
	return dev_net(ndev);
}

struct net_device *rrxe_helper_real_dev(struct net_device *ndev)
{
	return is_vlan_dev(ndev) ? vlan_dev_real_dev(ndev) : NULL;
}

int rrxe_helper_udp_tunnel_open(struct net *net, u16 port, bool ipv6,
				int (*rcv)(struct sock *sk, struct sk_buff *skb),
				struct socket **sockp)
{
	struct udp_port_cfg cfg = {
		.family = ipv6 ? AF_INET6 : AF_INET,
		.ipv6_v6only = ipv6,
		.local_udp_port = htons(port),
	};
	struct udp_tunnel_sock_cfg tnl = { .encap_type = 1, .encap_rcv = rcv };
	int err = udp_sock_create(net, &cfg, sockp);

	if (!err)
		setup_udp_tunnel_sock(net, (*sockp)->sk, &tnl);
	return err;
}

void *rrxe_helper_kmap_local(struct page *page)
{
	return kmap_local_page(page);
}

void rrxe_helper_kunmap_local(void *addr)
{
	kunmap_local(addr);
}

struct page *rrxe_helper_virt_to_page(unsigned long addr)
{
	return virt_addr_valid((void *)addr) ? virt_to_page((void *)addr) : NULL;
}

size_t rrxe_helper_umem_pages(struct ib_umem *umem, struct page **pages, size_t max)
{
	struct sg_page_iter it;
	size_t n = 0;

	for_each_sgtable_page(&umem->sgt_append.sgt, &it, 0) {
		if (n == max)
			break;
		pages[n++] = sg_page_iter_page(&it);
	}
	return n;
}

size_t rrxe_helper_umem_num_pages(struct ib_umem *umem)
{
	return ib_umem_num_pages(umem);
}

unsigned long rrxe_helper_umem_offset(struct ib_umem *umem)
{
	return ib_umem_offset(umem);
}

void rrxe_helper_netdev_mac(const struct net_device *ndev, u8 *mac)
{
	ether_addr_copy(mac, ndev->dev_addr);
}

void rrxe_helper_work_init(struct work_struct *w, void (*fn)(struct work_struct *))
{
	INIT_WORK(w, fn);
}

void rrxe_helper_work_init_sleeping(struct work_struct *w, void (*fn)(struct work_struct *))
{
	/* Its own lockdep class: it runs with softirqs enabled, the BH kind in softirq context. */
	INIT_WORK(w, fn);
}

bool rrxe_helper_work_queue_bh(struct work_struct *w)
{
	return queue_work(system_bh_wq, w);
}

/* Queues on the BH workqueue of @cpu (this CPU's if @cpu is not online). */
bool rrxe_helper_work_queue_bh_on(unsigned int cpu, struct work_struct *w)
{
	if (cpu >= nr_cpu_ids || !cpu_online(cpu))
		return queue_work(system_bh_wq, w);
	return queue_work_on(cpu, system_bh_wq, w);
}

bool rrxe_helper_work_queue_unbound(struct work_struct *w)
{
	return queue_work(system_dfl_wq, w);
}

bool rrxe_helper_work_queue_here(struct work_struct *w)
{
	return queue_work(system_highpri_wq, w);
}

bool rrxe_helper_work_cancel_sync(struct work_struct *w)
{
	return cancel_work_sync(w);
}

bool rrxe_helper_work_cancel(struct work_struct *w)
{
	return cancel_work(w);
}

struct workqueue_struct *rrxe_helper_fault_wq_alloc(void)
{
	/*
	 * Unbound: a fault sleeps for as long as the file system behind the page takes. No
	 * WQ_MEM_RECLAIM: reclaim never waits for these faults (an invalidation only takes the
	 * umem mutex, which a fault holds only after its pages are in), so no rescuer is needed.
	 */
	return alloc_workqueue("rrxe_fault", WQ_UNBOUND, 0);
}

void rrxe_helper_wq_destroy(struct workqueue_struct *wq)
{
	destroy_workqueue(wq);
}

bool rrxe_helper_work_queue_on(struct workqueue_struct *wq, struct work_struct *w)
{
	return queue_work(wq, w);
}

bool rrxe_helper_module_tryget(void)
{
	return try_module_get(THIS_MODULE);
}

void rrxe_helper_module_put(void)
{
	module_put(THIS_MODULE);
}

void rrxe_helper_cond_resched(void)
{
	cond_resched();
}

bool rrxe_helper_fatal_signal_pending(void)
{
	return fatal_signal_pending(current);
}

void rrxe_helper_timer_setup(struct timer_list *t, void (*fn)(struct timer_list *))
{
	timer_setup(t, fn, 0);
}

void rrxe_helper_hrtimer_setup(struct hrtimer *t, enum hrtimer_restart (*fn)(struct hrtimer *))
{
	hrtimer_setup(t, fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
}

void rrxe_helper_hrtimer_start_ns(struct hrtimer *t, u64 ns)
{
	hrtimer_start(t, ns_to_ktime(ns), HRTIMER_MODE_REL_SOFT);
}

u64 rrxe_helper_ktime_get_ns(void)
{
	return ktime_get_ns();
}

bool rrxe_helper_is_err(const void *p)
{
	return IS_ERR(p);
}

void rrxe_helper_timer_arm_us(struct timer_list *t, unsigned long usecs)
{
	mod_timer(t, jiffies + usecs_to_jiffies(usecs) + 1);
}

int rrxe_helper_skb_pull(struct sk_buff *skb, unsigned int len)
{
	return skb_pull(skb, len) ? 0 : -EINVAL;
}

void rrxe_helper_cq_comp_handler(struct ib_cq *cq)
{
	if (!cq->comp_handler)
		return;
	/*
	 * Process context (the unbound workqueue): handlers that schedule softirq work
	 * (irq_poll_sched, napi_schedule) expect to be called from an interrupt, so that work runs
	 * right after them; local_bh_enable() runs it here instead of waking ksoftirqd.
	 */
	local_bh_disable();
	cq->comp_handler(cq, cq->cq_context);
	local_bh_enable();
}

bool rrxe_helper_irqs_disabled(void)
{
	return irqs_disabled();
}

void rrxe_helper_local_bh_disable(void)
{
	local_bh_disable();
}

void rrxe_helper_local_bh_enable(void)
{
	local_bh_enable();
}

struct sock *rrxe_helper_socket_sk(struct socket *sock)
{
	return sock->sk;
}

void rrxe_helper_sk_set_user_data(struct sock *sk, void *data)
{
	rcu_assign_sk_user_data(sk, data);
}

void *rrxe_helper_sk_user_data(struct sock *sk)
{
	/* Set before the first buffer the socket owns and never changed: no RCU needed. */
	return rcu_dereference_protected(sk->sk_user_data, 1);
}

void rrxe_helper_skb_set_owner(struct sk_buff *skb, struct sock *sk,
			       void (*destructor)(struct sk_buff *))
{
	skb_orphan(skb);
	sock_hold(sk);
	skb->sk = sk;
	skb->destructor = destructor;
}

/*
 * Whether the buffer went through a receive path of this host (a veth or the loopback device
 * carried it back in): __netif_receive_skb_core() sets skb_iif, which a buffer allocated to
 * be sent starts with 0.
 */
bool rrxe_helper_skb_received(const struct sk_buff *skb)
{
	return skb->skb_iif != 0;
}

struct sock *rrxe_helper_skb_sk(const struct sk_buff *skb)
{
	return skb->sk;
}

void rrxe_helper_sock_put(struct sock *sk)
{
	sock_put(sk);
}

struct dst_entry *rrxe_helper_route6(struct net_device *ndev, const u8 *saddr, const u8 *daddr)
{
	struct flowi6 fl6 = { .flowi6_proto = IPPROTO_UDP };
	struct dst_entry *dst;

	memcpy(&fl6.saddr, saddr, sizeof(fl6.saddr));
	memcpy(&fl6.daddr, daddr, sizeof(fl6.daddr));
	/* Through the upper device that holds the source address, as for IPv4 (rrxe_oif). */
	rcu_read_lock();
	fl6.flowi6_oif = rrxe_oif(ndev, ipv6_dev_find(dev_net(ndev), &fl6.saddr, NULL));
	rcu_read_unlock();
	dst = ip6_dst_lookup_flow(dev_net(ndev), NULL, &fl6, NULL);
	if (!IS_ERR(dst) && dst->error) {
		dst_release(dst);
		return ERR_PTR(-EHOSTUNREACH);
	}
	return dst;
}

void rrxe_helper_skb_set_dst6(struct sk_buff *skb, struct dst_entry *dst)
{
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	skb_dst_set(skb, dst_clone(dst));
}

struct net *rrxe_helper_dst_net(struct dst_entry *dst)
{
	return dev_net(dst->dev);
}

void rrxe_helper_dst_release(struct dst_entry *dst)
{
	dst_release(dst);
}

void rrxe_helper_dev_hold(struct net_device *ndev)
{
	dev_hold(ndev);
}

struct nlattr *rrxe_helper_res_driver_begin(struct sk_buff *msg)
{
	return nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
}

void rrxe_helper_res_driver_end(struct sk_buff *msg, struct nlattr *nest, bool keep)
{
	if (keep)
		nla_nest_end(msg, nest);
	else
		nla_nest_cancel(msg, nest);
}
