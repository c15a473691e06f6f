/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw access to librxe's mmap'ed send ring, for tests that write WQEs librxe cannot (hostile
 * ones, or operations rdma-core 44 has no verb for, such as FLUSH): find the ring, address a
 * slot, publish it, and ring the doorbell exactly as librxe does.
 */
#ifndef RRXE_VERBS_RAW_RING_H
#define RRXE_VERBS_RAW_RING_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

/*
 * The last of this process's uverbs mappings whose ring header says log2_elem_size == log2
 * (other than `not`). Give the ring a slot size no other queue has to find it for sure.
 */
static inline struct rxe_queue_buf *find_ring(unsigned int log2, void *not)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	void *found = NULL;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		if (!strstr(line, "uverbs") || sscanf(line, "%lx-%lx", &start, &end) != 2)
			continue;
		if (((struct rxe_queue_buf *)start)->log2_elem_size == log2 && (void *)start != not)
			found = (void *)start;
	}
	if (f)
		fclose(f);
	return found;
}

/* The doorbell librxe rings after writing WQEs: a POST_SEND write() with no work requests. */
static inline int doorbell(struct ibv_qp *qp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} c = { 0 };
	struct ib_uverbs_post_send_resp resp;

	c.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(resp) / 4;
	c.cmd.response = (uintptr_t)&resp;
	c.cmd.qp_handle = qp->handle;
	c.cmd.wqe_size = sizeof(struct ibv_send_wr);
	return write(qp->context->cmd_fd, &c, sizeof(c)) == sizeof(c) ? 0 : errno;
}

/* Send ring slot i. */
static inline struct rxe_send_wqe *slot(struct rxe_queue_buf *q, uint32_t i)
{
	return (void *)(q->data + ((i & q->index_mask) << q->log2_elem_size));
}

/* The zeroed slot at the producer index, to fill and then publish(). */
static inline struct rxe_send_wqe *next_slot(struct rxe_queue_buf *q)
{
	struct rxe_send_wqe *w = slot(q, q->producer_index);

	memset(w, 0, 1u << q->log2_elem_size);
	return w;
}

/* Makes the slot at the producer index visible to the kernel. */
static inline void publish(struct rxe_queue_buf *q)
{
	__atomic_store_n(&q->producer_index, (q->producer_index + 1) & q->index_mask,
			 __ATOMIC_RELEASE);
}

/* IB_WR_FLUSH, which rdma-core 44 cannot post. */
#define RAW_WR_FLUSH 14

/*
 * Posts a signaled FLUSH of [va, va + len) through `rkey` on `qp`, whose send ring is `q`,
 * filled as a newer librxe's ibv_wr_flush() fills it (wr.flush of the 6.2+ uapi:
 * remote_addr, length, rkey, type, level).
 */
static inline int raw_flush(struct rxe_queue_buf *q, struct ibv_qp *qp, uint64_t id,
			    uint32_t rkey, uint64_t va, uint32_t len, uint8_t type, uint8_t level)
{
	struct rxe_send_wqe *w = next_slot(q);
	uint8_t *f = (uint8_t *)&w->wr.wr;

	w->wr.wr_id = id;
	w->wr.opcode = RAW_WR_FLUSH;
	w->wr.send_flags = IBV_SEND_SIGNALED;
	memcpy(f, &va, 8);
	memcpy(f + 8, &len, 4);
	memcpy(f + 12, &rkey, 4);
	f[16] = type;
	f[17] = level;
	w->dma.length = w->dma.resid = len;
	w->iova = va;
	publish(q);
	return doorbell(qp);
}

#endif /* RRXE_VERBS_RAW_RING_H */
