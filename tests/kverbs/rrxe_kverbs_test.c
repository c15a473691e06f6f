// SPDX-License-Identifier: GPL-2.0
/*
 * rrxe_kverbs_test: exercises the kernel verbs of one RDMA device the way kernel consumers
 * (ULPs) use them: PD with the DMA lkey, CQs polled directly and from softirq (irq_poll, armed
 * with ib_req_notify_cq), QP state changes, receive and send posting, flush in ERR,
 * ib_drain_qp, SRQ posting, an RC transfer between two QPs (transfer.h), completion
 * handlers that never run inside the consumer's own verb calls (context.h), and the move to
 * ERR racing SENDs, READs and atomics in flight (err_race.h), and send rate limits
 * (rate_limit.h). Loading it runs the tests on device `dev=NAME` and prints KTAP-like lines
 * and "kverbs: N passed, N failed"; the load itself always succeeds (unload after).
 */
#include <linux/module.h>
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

static char *dev = "rrxe0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to test");

/*
 * Where rrxe is stricter than the C rxe: an FRWR MR above max_fast_reg_page_list_len is refused
 * (rxe accepts it), and flushed receives report IB_WC_RECV (rxe reports opcode 0; the IBA leaves
 * the opcode of error completions undefined); a kernel IB_WR_ATOMIC_WRITE, which has no operand
 * in ib_send_wr, is refused (rxe sends the SGE's address as the value). Off for the oracle run.
 */
static bool strict = true;
module_param(strict, bool, 0444);
MODULE_PARM_DESC(strict, "Also check where rrxe is stricter than the C rxe");

static int passed, failed;

#define CHECK(cond, fmt, ...)                                                       \
	do {                                                                        \
		if (cond) {                                                         \
			passed++;                                                   \
			pr_info("kverbs: ok: " fmt "\n", ##__VA_ARGS__);            \
		} else {                                                            \
			failed++;                                                   \
			pr_info("kverbs: FAIL (line %d): " fmt "\n", __LINE__,      \
				##__VA_ARGS__);                                     \
		}                                                                   \
	} while (0)

static atomic_t last_wqe_events;

static void qp_event(struct ib_event *ev, void *ctx)
{
	if (ev->event == IB_EVENT_QP_LAST_WQE_REACHED)
		atomic_inc(&last_wqe_events);
}

static struct ib_qp *create_qp(struct ib_pd *pd, struct ib_cq *cq, struct ib_srq *srq)
{
	struct ib_qp_init_attr a = {
		.event_handler = qp_event,
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 16, .max_recv_wr = srq ? 0 : 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ib_create_qp(pd, &a);
}

static int to_init(struct ib_qp *qp)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_INIT, .port_num = 1,
				.qp_access_flags = IB_ACCESS_REMOTE_WRITE };

	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
				    IB_QP_ACCESS_FLAGS);
}

static int to_state(struct ib_qp *qp, enum ib_qp_state s)
{
	struct ib_qp_attr a = { .qp_state = s };

	return ib_modify_qp(qp, &a, IB_QP_STATE);
}

static int post_recvs(struct ib_qp *qp, struct ib_srq *srq, struct ib_sge *sge, int n, u64 id0)
{
	const struct ib_recv_wr *bad;
	int i, ret = 0;

	for (i = 0; i < n && !ret; i++) {
		struct ib_recv_wr wr = { .wr_id = id0 + i, .sg_list = sge, .num_sge = 1 };

		ret = srq ? ib_post_srq_recv(srq, &wr, &bad) : ib_post_recv(qp, &wr, &bad);
	}
	return ret;
}

/*
 * Polls until n completions arrived or a second passed (the C rxe flushes from its tasks, rrxe
 * at once); counts flush errors of the expected opcode and QP.
 */
static int poll_flushes(struct ib_cq *cq, struct ib_qp *qp, enum ib_wc_opcode op, int n,
			u64 *id_sum)
{
	struct ib_wc wc[8];
	int got, i, flushes = 0, tries = 100;

	*id_sum = 0;
	while (n > 0 && tries > 0) {
		got = ib_poll_cq(cq, min(n, 8), wc);
		if (got <= 0) {
			tries--;
			msleep(10);
			continue;
		}
		for (i = 0; i < got; i++) {
			pr_info("kverbs: wc wr_id %llu status %d opcode %d qp %s\n", wc[i].wr_id,
				wc[i].status, wc[i].opcode, wc[i].qp == qp ? "ok" : "other");
			if (wc[i].status == IB_WC_WR_FLUSH_ERR && wc[i].qp == qp &&
			    (op == (enum ib_wc_opcode)-1 || !strict || wc[i].opcode == op))
				flushes++;
			*id_sum += wc[i].wr_id;
		}
		n -= got;
	}
	return flushes;
}

#include "transfer.h"
#include "rate_limit.h"
#include "context.h"
#include "err_race.h"

/* Fast registration (FRWR, what NVMe-oF and rdma_rw use): alloc_mr and map_mr_sg. */
static void frwr(struct ib_device *ibdev, struct ib_pd *pd)
{
	struct scatterlist sgl[20];
	struct ib_mr *mr, *other;
	unsigned long pages;
	int i, n;

	mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 16);
	CHECK(!IS_ERR(mr), "alloc an FRWR MR for 16 pages");
	if (IS_ERR(mr))
		return;
	CHECK(mr->lkey == mr->rkey && mr->lkey >> 8, "FRWR keys %#x", mr->lkey);
	if (strict) {
		other = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 513);
		CHECK(IS_ERR(other), "more pages than max_fast_reg_page_list_len refused");
		if (!IS_ERR(other))
			ib_dereg_mr(other);
	}
	other = ib_alloc_mr(pd, IB_MR_TYPE_SG_GAPS, 16);
	CHECK(IS_ERR(other), "SG_GAPS MRs refused");
	if (!IS_ERR(other))
		ib_dereg_mr(other);

	pages = __get_free_pages(GFP_KERNEL, 5);	/* 32 pages */
	if (!pages) {
		ib_dereg_mr(mr);
		return;
	}
	sg_init_table(sgl, 20);
	for (i = 0; i < 20; i++)
		sg_set_buf(&sgl[i], (void *)(pages + i * PAGE_SIZE), PAGE_SIZE);
	n = ib_dma_map_sg(ibdev, sgl, 3, DMA_BIDIRECTIONAL);
	CHECK(n == 3, "map 3 pages for DMA (virtual DMA)");
	CHECK(ib_map_mr_sg(mr, sgl, n, NULL, PAGE_SIZE) == 3, "map_mr_sg maps 3 entries");
	CHECK(mr->length == 3 * PAGE_SIZE && mr->iova == (u64)pages,
	      "MR covers the 3 pages (iova %llx, length %llu)", mr->iova, mr->length);
	ib_dma_unmap_sg(ibdev, sgl, 3, DMA_BIDIRECTIONAL);
	sg_init_table(sgl, 20);
	for (i = 0; i < 20; i++)
		sg_set_buf(&sgl[i], (void *)(pages + i * PAGE_SIZE), PAGE_SIZE);
	n = ib_dma_map_sg(ibdev, sgl, 20, DMA_BIDIRECTIONAL);
	CHECK(ib_map_mr_sg(mr, sgl, n, NULL, PAGE_SIZE) == 16,
	      "map_mr_sg of 20 pages into a 16-page MR maps 16");
	ib_dma_unmap_sg(ibdev, sgl, 20, DMA_BIDIRECTIONAL);
	CHECK(ib_dereg_mr(mr) == 0, "deregister the FRWR MR");
	free_pages(pages, 5);
}

static void run(struct ib_device *ibdev)
{
	struct ib_cq *cq, *scq;
	struct ib_srq *srq;
	struct ib_qp *qp;
	struct ib_pd *pd;
	struct ib_sge sge;
	const struct ib_send_wr *bad;
	struct ib_send_wr swr = { .wr_id = 77, .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_SIGNALED };
	struct ib_srq_init_attr sia = { .attr = { .max_wr = 16, .max_sge = 1 },
					.srq_type = IB_SRQT_BASIC };
	u64 sum;
	void *buf;

	pd = ib_alloc_pd(ibdev, 0);
	CHECK(!IS_ERR(pd), "alloc PD");
	if (IS_ERR(pd))
		return;
	CHECK(pd->local_dma_lkey != 0, "PD has a DMA lkey (%#x) from get_dma_mr", pd->local_dma_lkey);
	buf = kzalloc(4096, GFP_KERNEL);
	sge = (struct ib_sge){ .addr = (u64)(uintptr_t)buf, .length = 4096,
			       .lkey = pd->local_dma_lkey };

	cq = ib_alloc_cq(ibdev, NULL, 64, 0, IB_POLL_DIRECT);
	CHECK(!IS_ERR(cq), "alloc CQ (direct polling)");
	if (IS_ERR(cq))
		goto out_pd;
	CHECK(cq->cqe >= 64, "CQ has %d entries", cq->cqe);

	qp = create_qp(pd, cq, NULL);
	CHECK(!IS_ERR(qp), "create RC QP");
	if (IS_ERR(qp))
		goto out_cq;
	CHECK(qp->qp_num >= 16, "QPN %u", qp->qp_num);
	CHECK(post_recvs(qp, NULL, &sge, 1, 1) == -EINVAL, "post_recv in RESET fails");
	CHECK(to_init(qp) == 0, "RESET->INIT");
	CHECK(post_recvs(qp, NULL, &sge, 4, 1) == 0, "post 4 receives in INIT");
	CHECK(ib_post_send(qp, &swr, &bad) == -EINVAL && bad == &swr,
	      "post_send below RTS fails and reports the WR");
	CHECK(to_state(qp, IB_QPS_ERR) == 0, "INIT->ERR");
	CHECK(poll_flushes(cq, qp, IB_WC_RECV, 4, &sum) == 4 && sum == 1 + 2 + 3 + 4,
	      "the 4 receives complete with IB_WC_WR_FLUSH_ERR (RECV, wc.qp, wr_ids)");
	CHECK(ib_post_send(qp, &swr, &bad) == 0, "post_send in ERR succeeds");
	CHECK(poll_flushes(cq, qp, -1, 1, &sum) == 1 && sum == 77, "and completes as flushed");
	CHECK(post_recvs(qp, NULL, &sge, 2, 10) == 0, "post_recv in ERR succeeds");
	CHECK(poll_flushes(cq, qp, IB_WC_RECV, 2, &sum) == 2 && sum == 21, "and completes as flushed");
	ib_drain_qp(qp);
	CHECK(1, "ib_drain_qp returns (direct CQ)");
	ib_destroy_qp(qp);

	/* A CQ polled from softirq by irq_poll, armed by ib_req_notify_cq: drain waits on it. */
	scq = ib_alloc_cq(ibdev, NULL, 32, 0, IB_POLL_SOFTIRQ);
	CHECK(!IS_ERR(scq), "alloc CQ (softirq polling)");
	if (!IS_ERR(scq)) {
		qp = create_qp(pd, scq, NULL);
		CHECK(!IS_ERR(qp) && to_init(qp) == 0, "QP on the softirq CQ in INIT");
		if (!IS_ERR(qp)) {
			ib_drain_qp(qp);
			CHECK(1, "ib_drain_qp returns (completion event and softirq poll)");
			ib_destroy_qp(qp);
		}
		ib_free_cq(scq);
	}

	srq = ib_create_srq(pd, &sia);
	CHECK(!IS_ERR(srq), "create SRQ");
	if (!IS_ERR(srq)) {
		CHECK(sia.attr.max_wr >= 16, "SRQ has %u WRs", sia.attr.max_wr);
		CHECK(post_recvs(NULL, srq, &sge, 8, 100) == 0, "post 8 SRQ receives");
		qp = create_qp(pd, cq, srq);
		CHECK(!IS_ERR(qp), "QP on the SRQ");
		if (!IS_ERR(qp)) {
			CHECK(post_recvs(qp, NULL, &sge, 1, 1) != 0,
			      "post_recv on an SRQ-attached QP fails");
			atomic_set(&last_wqe_events, 0);
			CHECK(to_init(qp) == 0 && to_state(qp, IB_QPS_ERR) == 0,
			      "SRQ-attached QP INIT->ERR");
			for (int i = 0; i < 100 && !atomic_read(&last_wqe_events); i++)
				msleep(10);
			CHECK(atomic_read(&last_wqe_events) == 1, "IB_EVENT_QP_LAST_WQE_REACHED once");
			ib_destroy_qp(qp);
		}
		ib_destroy_srq(srq);
		CHECK(1, "destroy SRQ with posted receives");
	}
	frwr(ibdev, pd);
	transfer(ibdev, pd);
	rate_limit(ibdev, pd);
	completion_context(ibdev, pd);
	err_race(ibdev, pd);
	kfree(buf);
out_cq:
	ib_free_cq(cq);
out_pd:
	ib_dealloc_pd(pd);
}

static bool found;

static int kverbs_add(struct ib_device *ibdev)
{
	if (!strcmp(dev_name(&ibdev->dev), dev)) {
		found = true;
		run(ibdev);
	}
	return 0;
}

static void kverbs_remove(struct ib_device *ibdev, void *data)
{
}

static struct ib_client kverbs_client = {
	.name = "rrxe_kverbs_test",
	.add = kverbs_add,
	.remove = kverbs_remove,
};

static int __init kverbs_init(void)
{
	/* Registering a client calls add() for every device, here, in process context. */
	int ret = ib_register_client(&kverbs_client);

	if (ret)
		return ret;
	ib_unregister_client(&kverbs_client);
	if (!found) {
		pr_err("kverbs: no RDMA device %s\n", dev);
		return -ENODEV;
	}
	pr_info("kverbs: %d passed, %d failed\n", passed, failed);
	return 0;
}

static void __exit kverbs_exit(void)
{
}

module_init(kverbs_init);
module_exit(kverbs_exit);
MODULE_DESCRIPTION("rrxe kernel verbs test");
MODULE_LICENSE("GPL");
