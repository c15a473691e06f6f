/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C helpers for on-demand paging (rust/ib/odp.rs): the static inlines and macros of
 * <rdma/ib_umem_odp.h>, <linux/mmu_notifier.h> and <linux/hmm.h> that Rust cannot call.
 */
#ifndef RRXE_ODP_H
#define RRXE_ODP_H

#include <linux/types.h>

struct ib_umem_odp;
struct mmu_interval_notifier;
struct mmu_notifier_range;
struct page;

/* The umem of an interval notifier (container_of). */
struct ib_umem_odp *rrxe_helper_odp_of_notifier(struct mmu_interval_notifier *mni);
/* mmu_notifier_range_blockable(): whether the invalidation may sleep. */
bool rrxe_helper_odp_range_blockable(const struct mmu_notifier_range *range);
/* mmu_interval_set_seq(). */
void rrxe_helper_odp_set_seq(struct mmu_interval_notifier *mni, unsigned long cur_seq);
/* mutex_lock()/mutex_unlock() of the umem's umem_mutex (macros under lockdep). */
void rrxe_helper_odp_lock(struct ib_umem_odp *odp);
void rrxe_helper_odp_unlock(struct ib_umem_odp *odp);
/* ib_umem_start()/ib_umem_end(): the page-aligned range the notifier covers. */
unsigned long rrxe_helper_odp_start(struct ib_umem_odp *odp);
unsigned long rrxe_helper_odp_end(struct ib_umem_odp *odp);
/* The HMM pfn entry of page idx (under umem_mutex); hmm_pfn_to_page() of a valid entry. */
unsigned long rrxe_helper_odp_pfn(struct ib_umem_odp *odp, size_t idx);
struct page *rrxe_helper_hmm_pfn_to_page(unsigned long pfn);
/* Marks a page written through the kernel mapping dirty (its compound head). */
void rrxe_helper_odp_set_dirty(struct page *page);

/*
 * Faults [va, va + len) of the umem's process in the way get_user_pages() does for a caller
 * that lets it drop mmap_lock: I/O is waited for without mmap_lock held and killably (-EINTR on
 * a fatal signal of the caller). Nothing is pinned. 0, or a negative errno.
 */
int rrxe_helper_odp_prefault(struct ib_umem_odp *odp, unsigned long va, unsigned long len,
			     bool write);
/* get_device()/put_device() of the ib_device's struct device: its memory stays until the put. */
struct ib_device;
void rrxe_helper_ib_device_hold(struct ib_device *dev);
void rrxe_helper_ib_device_drop(struct ib_device *dev);

/* HMM pfn flags (enum hmm_pfn_flags: bit positions bindgen may not evaluate). */
extern const unsigned long RRXE_HMM_PFN_VALID;
extern const unsigned long RRXE_HMM_PFN_WRITE;

#endif
