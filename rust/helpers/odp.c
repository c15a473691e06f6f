// SPDX-License-Identifier: GPL-2.0
/*
 * C helpers for on-demand paging: see odp.h.
 */
#include <linux/hmm.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/sched/mm.h>
#include <rdma/ib_umem_odp.h>

#include "odp.h"

const unsigned long RRXE_HMM_PFN_VALID = HMM_PFN_VALID;
const unsigned long RRXE_HMM_PFN_WRITE = HMM_PFN_WRITE;

struct ib_umem_odp *rrxe_helper_odp_of_notifier(struct mmu_interval_notifier *mni)
{
	return container_of(mni, struct ib_umem_odp, notifier);
}

bool rrxe_helper_odp_range_blockable(const struct mmu_notifier_range *range)
{
	return mmu_notifier_range_blockable(range);
}

void rrxe_helper_odp_set_seq(struct mmu_interval_notifier *mni, unsigned long cur_seq)
{
	mmu_interval_set_seq(mni, cur_seq);
}

void rrxe_helper_odp_lock(struct ib_umem_odp *odp)
{
	mutex_lock(&odp->umem_mutex);
}

void rrxe_helper_odp_unlock(struct ib_umem_odp *odp)
{
	mutex_unlock(&odp->umem_mutex);
}

unsigned long rrxe_helper_odp_start(struct ib_umem_odp *odp)
{
	return ib_umem_start(odp);
}

unsigned long rrxe_helper_odp_end(struct ib_umem_odp *odp)
{
	return ib_umem_end(odp);
}

unsigned long rrxe_helper_odp_pfn(struct ib_umem_odp *odp, size_t idx)
{
	lockdep_assert_held(&odp->umem_mutex);
	return odp->map.pfn_list[idx];
}

struct page *rrxe_helper_hmm_pfn_to_page(unsigned long pfn)
{
	return hmm_pfn_to_page(pfn);
}

void rrxe_helper_odp_set_dirty(struct page *page)
{
	set_page_dirty(compound_head(page));
}

int rrxe_helper_odp_prefault(struct ib_umem_odp *odp, unsigned long va, unsigned long len,
			     bool write)
{
	struct mm_struct *mm = odp->umem.owning_mm;
	unsigned long end = va + len;
	unsigned int flags = write ? FOLL_WRITE : 0;
	int locked = 1, ret = 0;
	long n;

	if (!len)
		return 0;
	if (!mmget_not_zero(mm))
		return -EFAULT;
	if (mmap_read_lock_killable(mm)) {
		mmput(mm);
		return -EINTR;
	}
	va = ALIGN_DOWN(va, PAGE_SIZE);
	while (va < end) {
		/*
		 * With &locked, a fault that must wait for I/O drops mmap_lock, waits killably and
		 * retries (FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_KILLABLE); between pages the walk
		 * reschedules and stops on a fatal signal.
		 */
		if (!locked) {
			if (mmap_read_lock_killable(mm)) {
				ret = -EINTR;
				break;
			}
			locked = 1;
		}
		n = get_user_pages_remote(mm, va, DIV_ROUND_UP(end - va, PAGE_SIZE), flags, NULL,
					  &locked);
		if (n <= 0) {
			ret = n ? (int)n : -EFAULT;
			break;
		}
		va += n << PAGE_SHIFT;
	}
	if (locked)
		mmap_read_unlock(mm);
	mmput(mm);
	return ret;
}

void rrxe_helper_ib_device_hold(struct ib_device *dev)
{
	get_device(&dev->dev);
}

void rrxe_helper_ib_device_drop(struct ib_device *dev)
{
	put_device(&dev->dev);
}
