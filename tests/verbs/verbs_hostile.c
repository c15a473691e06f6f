// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_hostile: a process that writes garbage into its own mmap'ed send ring (random opcodes,
 * REG_MR, huge num_sge, bad lengths, wild producer indices, a corrupted ring header and CQ
 * consumer index) and rings the doorbell. The kernel must turn every bad WQE into an error
 * completion and an errored QP (IB_EVENT_QP_FATAL), flush the rest, and stay clean.
 *
 * Usage: verbs_hostile DEVICE GID_INDEX [ROUNDS]
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "common.h"
#include "raw_ring.h"
#include "rc.h"


static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_index;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct qp_set {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct rxe_queue_buf *sq; /* the mapped send ring */
	struct rxe_queue_buf *cqbuf;
};

static int setup(struct qp_set *s)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 63, .max_recv_wr = 1,
						.max_send_sge = 2, .max_recv_sge = 1 } };

	memset(s, 0, sizeof(*s));
	s->cq = ibv_create_cq(ctx, 255, NULL, NULL, 0);
	if (!s->cq)
		return -1;
	ia.send_cq = ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(pd, &ia);
	if (!s->qp || rc_connect(s->qp, s->qp->qp_num, &gid, gid_index))
		return -1;
	/* SQ slots: 208 + 2 * 16 -> 256 B (log2 8); CQ and RQ use 64 B slots. */
	s->sq = find_ring(8, NULL);
	s->cqbuf = find_ring(6, NULL);
	return s->sq ? 0 : -1;
}

static void teardown(struct qp_set *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->cq)
		ibv_destroy_cq(s->cq);
}

/* Poll up to n completions; count error (non-flush) and flush completions. */
static int drain(struct ibv_cq *cq, int *errs, int *flushes, uint64_t *first_err_id)
{
	struct ibv_wc wc[16];
	int n, total = 0;

	*errs = *flushes = 0;
	while ((n = ibv_poll_cq(cq, 16, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			if (wc[i].status == IBV_WC_WR_FLUSH_ERR) {
				(*flushes)++;
			} else if (wc[i].status != IBV_WC_SUCCESS) {
				if (!*errs && first_err_id)
					*first_err_id = wc[i].wr_id;
				(*errs)++;
			}
		}
		total += n;
	}
	return total;
}

static int state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &i) ? -1 : (int)a.qp_state;
}

static int fatal_event(struct ibv_qp *qp)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int found = 0;

	while (poll(&p, 1, 2000) > 0 && !ibv_get_async_event(ctx, &ev)) {
		if (ev.event_type == IBV_EVENT_QP_FATAL && ev.element.qp == qp)
			found = 1;
		ibv_ack_async_event(&ev);
		if (found)
			break;
	}
	return found;
}

/* One bad WQE at the producer index, then a valid SEND behind it, then the doorbell. */
static void bad_wqe(const char *what, void (*spoil)(struct rxe_send_wqe *))
{
	struct qp_set s;
	int errs, flushes;
	uint64_t id = 0;

	if (setup(&s)) {
		CHECK(0, "%s: setup", what);
		teardown(&s);
		return;
	}
	struct rxe_send_wqe *w = next_slot(s.sq);

	w->wr.wr_id = 0xbad;
	w->wr.opcode = IBV_WR_SEND;
	w->dma.num_sge = 1;
	w->dma.length = w->dma.resid = 8;
	w->dma.sge[0].length = 8;
	spoil(w);
	publish(s.sq);

	int ret = doorbell(s.qp);
	int n = drain(s.cq, &errs, &flushes, &id);
	CHECK(ret == 0 && errs == 1 && id == 0xbad,
	      "%s: error completion for the bad WQE (doorbell %d, %d CQEs, %d errors)", what, ret,
	      n, errs);
	CHECK(state(s.qp) == IBV_QPS_ERR, "%s: QP in ERR", what);
	CHECK(fatal_event(s.qp), "%s: IBV_EVENT_QP_FATAL", what);
	struct ibv_sge sge = { .addr = 0, .length = 0, .lkey = 0 };
	struct ibv_send_wr wr = { .wr_id = 0x900d, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	ibv_post_send(s.qp, &wr, &bad);
	n = drain(s.cq, &errs, &flushes, NULL);
	CHECK(flushes == 1, "%s: a WR posted in ERR completes with IBV_WC_WR_FLUSH_ERR", what);
	teardown(&s);
}

static void op_ff(struct rxe_send_wqe *w) { w->wr.opcode = 0xff; }
static void op_reg_mr(struct rxe_send_wqe *w) { w->wr.opcode = 0x20; }
static void op_lso(struct rxe_send_wqe *w) { w->wr.opcode = 10; }
static void huge_sge(struct rxe_send_wqe *w) { w->dma.num_sge = 0xffffffff; }
static void three_sge(struct rxe_send_wqe *w) { w->dma.num_sge = 3; }
static void bad_len(struct rxe_send_wqe *w) { w->dma.length = 0x7fffffff; }
static void big_inline(struct rxe_send_wqe *w)
{
	w->wr.send_flags = IBV_SEND_INLINE;
	w->dma.length = 100000;
}
static void odd_atomic(struct rxe_send_wqe *w)
{
	w->wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	w->wr.wr.atomic.remote_addr = 0x1003;
	w->dma.length = 8;
}

int main(int argc, char **argv)
{
	int rounds;

	if (argc < 3) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX [ROUNDS]\n", argv[0]);
		return 2;
	}
	gid_index = atoi(argv[2]);
	rounds = argc > 3 ? atoi(argv[3]) : 50;
	ctx = open_device(argv[1]);
	CHECK(ctx && !ibv_query_gid(ctx, 1, gid_index, &gid), "open %s, GID %d", argv[1],
	      gid_index);
	if (!ctx)
		return 1;
	pd = ibv_alloc_pd(ctx);

	bad_wqe("opcode 0xff", op_ff);
	bad_wqe("REG_MR from user space", op_reg_mr);
	bad_wqe("LSO opcode", op_lso);
	bad_wqe("num_sge 0xffffffff", huge_sge);
	bad_wqe("num_sge above max_send_sge", three_sge);
	bad_wqe("length not the SGE sum", bad_len);
	bad_wqe("inline beyond max_inline_data", big_inline);
	bad_wqe("misaligned atomic", odd_atomic);

	/* Random rings, wild producers, corrupted headers: the kernel must survive all of it. */
	int errored = 0;
	for (int r = 0; r < rounds; r++) {
		struct qp_set s;
		int errs, flushes;

		if (setup(&s)) {
			CHECK(0, "random round %d: setup", r);
			teardown(&s);
			break;
		}
		size_t ring_len = ((size_t)s.sq->index_mask + 1) << s.sq->log2_elem_size;
		for (size_t i = 0; i < ring_len; i += 8)
			*(uint64_t *)(s.sq->data + i) = rnd();
		if (r % 3 == 1) {
			/* Header words the kernel must not trust. */
			s.sq->index_mask = (uint32_t)rnd();
			s.sq->log2_elem_size = (uint32_t)rnd();
		}
		if (s.cqbuf && r % 4 == 2)
			s.cqbuf->consumer_index = (uint32_t)rnd();
		__atomic_store_n(&s.sq->producer_index, (uint32_t)rnd(), __ATOMIC_RELEASE);
		doorbell(s.qp);
		doorbell(s.qp);
		if (s.cqbuf && r % 4 == 2)
			s.cqbuf->consumer_index = s.cqbuf->producer_index;
		drain(s.cq, &errs, &flushes, NULL);
		errored += state(s.qp) == IBV_QPS_ERR;
		teardown(&s);
	}
	CHECK(errored >= rounds * 9 / 10, "%d of %d random rings errored their QP", errored, rounds);

	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("# verbs_hostile: %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
