/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C helpers for rrxe: static inline functions and macros of the kernel that Rust cannot call
 * directly. Only the abstraction layer (rust/ib, rust/net, rust/kernel_ext) uses them.
 */
#ifndef RRXE_HELPERS_H
#define RRXE_HELPERS_H

#include <linux/types.h>
#include <linux/hrtimer.h>

struct ib_device;
struct net_device;
struct net;
struct module;

/* ib_core */
struct ib_device *rrxe_helper_ib_alloc_device(size_t size, struct net_device *ndev);
int rrxe_helper_ib_port_state(struct net_device *ndev);

int rrxe_helper_num_possible_cpus(void);
unsigned int rrxe_helper_nth_online_cpu(unsigned int n);
bool rrxe_helper_cpu_online(unsigned int cpu);
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
void rrxe_helper_dev_hold(struct net_device *ndev);
const char *rrxe_helper_netdev_name(const struct net_device *ndev);
unsigned int rrxe_helper_netdev_mtu(const struct net_device *ndev);
bool rrxe_helper_netdev_is_vlan(const struct net_device *ndev);
__be64 rrxe_helper_netdev_eui64(const struct net_device *ndev);
struct net_device *rrxe_helper_netdev_from_notifier(void *info);
void rrxe_helper_netdev_mac(const struct net_device *ndev, u8 *mac);

/* memory */
struct page;
void *rrxe_helper_vmalloc_user(size_t size, struct page ***pages_out);
void rrxe_helper_vfree_user(void *va, struct page **pages, size_t size);
void *rrxe_helper_alloc_user_pages_exact(size_t size);
struct vm_area_struct;
unsigned long rrxe_helper_vma_start(const struct vm_area_struct *vma);
unsigned long rrxe_helper_vma_len(const struct vm_area_struct *vma);
void rrxe_helper_vma_set_dontexpand_dontdump(struct vm_area_struct *vma);

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


/* socket buffers */
struct sk_buff;
struct sk_buff_head;
struct rtable;
struct page;
struct sk_buff *rrxe_helper_skb_alloc(struct net_device *ndev, unsigned int len,
				      unsigned int headroom);
unsigned int rrxe_helper_skb_tailroom(const struct sk_buff *skb);
unsigned char *rrxe_helper_skb_tail_pointer(const struct sk_buff *skb);
unsigned char *rrxe_helper_skb_put(struct sk_buff *skb, unsigned int len);
void rrxe_helper_skb_free(struct sk_buff *skb);
void rrxe_helper_skb_consume(struct sk_buff *skb);
unsigned int rrxe_helper_skb_headlen(const struct sk_buff *skb);
bool rrxe_helper_skb_segments_follow(const struct sk_buff *skb);
void rrxe_helper_skb_fraglist_append(struct sk_buff *head, struct sk_buff *member);
void rrxe_helper_skb_udp_gso_fraglist(struct sk_buff *skb, unsigned int gso_size,
				      unsigned int segs);
int rrxe_helper_skb_linearize(struct sk_buff *skb);
unsigned char *rrxe_helper_skb_data(const struct sk_buff *skb);
unsigned int rrxe_helper_skb_len(const struct sk_buff *skb);
unsigned char *rrxe_helper_skb_network_header(const struct sk_buff *skb);
void rrxe_helper_skb_reset_network_header(struct sk_buff *skb);
void rrxe_helper_skb_reset_transport_header(struct sk_buff *skb);
void rrxe_helper_skb_set_protocol(struct sk_buff *skb, u16 proto);
void rrxe_helper_skb_set_priority(struct sk_buff *skb, u32 priority);
struct net_device *rrxe_helper_skb_dev(const struct sk_buff *skb);
void rrxe_helper_skb_set_dst4(struct sk_buff *skb, struct rtable *rt);
void rrxe_helper_skb_queue_init(struct sk_buff_head *q);
struct nlattr *rrxe_helper_res_driver_begin(struct sk_buff *msg);
void rrxe_helper_res_driver_end(struct sk_buff *msg, struct nlattr *nest, bool keep);
unsigned char *rrxe_helper_skb_cb(struct sk_buff *skb);

/* IPv4 routes */
struct rtable *rrxe_helper_route4(struct net_device *ndev, __be32 saddr, __be32 daddr);
struct rtable *rrxe_helper_route4_cached(struct sock *sk, struct net_device *ndev,
					 __be32 saddr, __be32 daddr);
void rrxe_helper_rt_put(struct rtable *rt);
struct net *rrxe_helper_rt_net(struct rtable *rt);
struct net *rrxe_helper_dev_net(const struct net_device *ndev);
struct net_device *rrxe_helper_real_dev(struct net_device *ndev);

/* IPv6 routes */
struct dst_entry;
struct dst_entry *rrxe_helper_route6(struct net_device *ndev, const u8 *saddr, const u8 *daddr);
void rrxe_helper_skb_set_dst6(struct sk_buff *skb, struct dst_entry *dst);
struct net *rrxe_helper_dst_net(struct dst_entry *dst);
void rrxe_helper_dst_release(struct dst_entry *dst);

/* UDP tunnel sockets */
struct socket;
struct sock;
int rrxe_helper_udp_tunnel_open(struct net *net, u16 port, bool ipv6,
				int (*rcv)(struct sock *sk, struct sk_buff *skb),
				struct socket **sockp);

/* pages */
void *rrxe_helper_kmap_local(struct page *page);
void rrxe_helper_kunmap_local(void *addr);
struct page *rrxe_helper_virt_to_page(unsigned long addr);
size_t rrxe_helper_umem_pages(struct ib_umem *umem, struct page **pages, size_t max);
size_t rrxe_helper_umem_num_pages(struct ib_umem *umem);
unsigned long rrxe_helper_umem_offset(struct ib_umem *umem);

int rrxe_helper_skb_pull(struct sk_buff *skb, unsigned int len);

bool rrxe_helper_irqs_disabled(void);
/* softirqs off on this CPU (and with them, preemption) */
void rrxe_helper_local_bh_disable(void);
void rrxe_helper_local_bh_enable(void);

/* sockets that own transmitted buffers (skb->sk, skb->destructor) */
struct sock;
struct socket;
struct sock *rrxe_helper_socket_sk(struct socket *sock);
void rrxe_helper_sk_set_user_data(struct sock *sk, void *data);
void *rrxe_helper_sk_user_data(struct sock *sk);
void rrxe_helper_skb_set_owner(struct sk_buff *skb, struct sock *sk,
			       void (*destructor)(struct sk_buff *));
struct sock *rrxe_helper_skb_sk(const struct sk_buff *skb);
bool rrxe_helper_skb_received(const struct sk_buff *skb);
void rrxe_helper_sock_put(struct sock *sk);

/* tracepoints (rrxe_trace.h) */
void rrxe_helper_trace_drop(const char *dev, u32 qpn, u32 psn, u8 opcode, const char *reason);

/* work items (on the BH workqueue: softirq context, never run concurrently with themselves) */
struct work_struct;
void rrxe_helper_work_init(struct work_struct *w, void (*fn)(struct work_struct *));
void rrxe_helper_work_init_sleeping(struct work_struct *w, void (*fn)(struct work_struct *));
bool rrxe_helper_work_queue_bh(struct work_struct *w);
bool rrxe_helper_work_queue_bh_on(unsigned int cpu, struct work_struct *w);
/* queue_work() on system_dfl_wq (unbound): process context, may sleep */
bool rrxe_helper_work_queue_unbound(struct work_struct *w);
bool rrxe_helper_work_queue_here(struct work_struct *w);
bool rrxe_helper_work_cancel_sync(struct work_struct *w);
/* cancel_work(): true if the work was pending and will not run for that queueing */
bool rrxe_helper_work_cancel(struct work_struct *w);
/*
 * rrxe's own workqueue for work that may block on user space (page faults of on-demand-paging
 * MRs): allocated at module load, destroyed (drained) at unload.
 */
struct workqueue_struct;
struct workqueue_struct *rrxe_helper_fault_wq_alloc(void);
void rrxe_helper_wq_destroy(struct workqueue_struct *wq);
bool rrxe_helper_work_queue_on(struct workqueue_struct *wq, struct work_struct *w);
/* try_module_get()/module_put() of this module */
bool rrxe_helper_module_tryget(void);
void rrxe_helper_module_put(void);
/* cond_resched() (a macro); fatal_signal_pending(current) (a static inline) */
void rrxe_helper_cond_resched(void);
bool rrxe_helper_fatal_signal_pending(void);
/* a CQ's completion handler, with BHs disabled: softirqs it raises run when it returns */
struct ib_cq;
void rrxe_helper_cq_comp_handler(struct ib_cq *cq);

/* timers */
struct hrtimer;
void rrxe_helper_hrtimer_setup(struct hrtimer *t, enum hrtimer_restart (*fn)(struct hrtimer *));
void rrxe_helper_hrtimer_start_ns(struct hrtimer *t, u64 ns);
u64 rrxe_helper_ktime_get_ns(void);
bool rrxe_helper_is_err(const void *p);
struct timer_list;
void rrxe_helper_timer_setup(struct timer_list *t, void (*fn)(struct timer_list *));
void rrxe_helper_timer_arm_us(struct timer_list *t, unsigned long usecs);

#endif /* RRXE_HELPERS_H */
