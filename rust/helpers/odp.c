// SPDX-License-Identifier: GPL-2.0
/*
 * C helpers for on-demand paging: see odp.h.
 */
#include <linux/hmm.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
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
