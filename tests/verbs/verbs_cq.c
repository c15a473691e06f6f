// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_cq: completion queues through the stock rxe provider (librxe) and the rxe user ABI:
 * create, the mmap'ed ring, resize, notification arming, destroy, error paths and hostile
 * mmap calls on the uverbs file; and CQ overrun (overrun.h): more completions than a CQ holds,
 * never polled, must report IBV_EVENT_CQ_ERR on it.
 *
 * Usage: verbs_cq DEVICE [GID_INDEX [--rxe-compatible]]
 *   exit 0 when every check passes; prints "# " diagnostics. With GID_INDEX, also the
 *   overruns that need a connected QP; --rxe-compatible (the C rxe run) does not require what
 *   only rrxe does (see overrun.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "common.h"
#include "overrun.h"

/* The offsets of this process's mappings of the uverbs file, from /proc/self/maps. */
static int uverbs_maps(unsigned long long *offs, size_t *lens, int max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	while (f && fgets(line, sizeof(line), f) && n < max) {
		unsigned long start, end;
		unsigned long long off;

		if (!strstr(line, "uverbs"))
			continue;
		if (sscanf(line, "%lx-%lx %*s %llx", &start, &end, &off) == 3) {
			offs[n] = off;
			lens[n] = end - start;
			n++;
		}
	}
	if (f)
		fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	struct ibv_comp_channel *ch;
	struct ibv_context *ctx;
	struct ibv_cq *cq, *cq2;
	struct ibv_wc wc[4];
	struct ibv_pd *pd;

	if (argc < 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	ctx = open_device(argv[1]);
	CHECK(ctx, "open %s", argv[1]);
	if (!ctx)
		return 1;

	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc PD");

	ch = ibv_create_comp_channel(ctx);
	CHECK(ch, "create completion channel");

	cq = ibv_create_cq(ctx, 10, NULL, ch, 0);
	CHECK(cq, "create CQ of 10");
	if (!cq)
		return 1;
	CHECK(cq->cqe >= 10 && cq->cqe < 64, "CQ rounded to %d entries (2^k-1)", cq->cqe);
	CHECK(ibv_poll_cq(cq, 4, wc) == 0, "poll an empty CQ from user space");
	CHECK(ibv_req_notify_cq(cq, 0) == 0, "arm CQ (next completion)");
	CHECK(ibv_req_notify_cq(cq, 1) == 0, "arm CQ (solicited only)");

	/* The ring librxe mapped: exactly one mapping of the uverbs file, one page or more. */
	unsigned long long offs[8];
	size_t lens[8];
	int n = uverbs_maps(offs, lens, 8);
	CHECK(n >= 1, "%d mapping(s) of the uverbs file", n);
	if (n >= 1) {
		void *p = mmap(NULL, lens[0], PROT_READ | PROT_WRITE, MAP_SHARED, ctx->cmd_fd,
			       offs[0]);
		CHECK(p == MAP_FAILED, "a second mmap of offset %#llx is refused", offs[0]);
		if (p != MAP_FAILED)
			munmap(p, lens[0]);
	}
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->cmd_fd, 0x7ff0000000ULL);
	CHECK(p == MAP_FAILED, "mmap of an unknown offset is refused");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, ctx->cmd_fd, 0);
	CHECK(p == MAP_FAILED, "private mmap is refused");

	CHECK(ibv_resize_cq(cq, 100) == 0, "resize CQ to 100");
	CHECK(cq->cqe >= 100 && cq->cqe < 256, "resized CQ has %d entries", cq->cqe);
	CHECK(ibv_poll_cq(cq, 4, wc) == 0, "poll the resized (new ring) CQ");
	CHECK(ibv_resize_cq(cq, 3) == 0, "shrink empty CQ to 3");
	CHECK(ibv_resize_cq(cq, 40000) != 0, "resize above max_cqe fails");
	CHECK(ibv_poll_cq(cq, 4, wc) == 0, "CQ still usable after a failed resize");

	errno = 0;
	cq2 = ibv_create_cq(ctx, 0, NULL, NULL, 0);
	CHECK(!cq2, "CQ of 0 entries is refused");
	cq2 = ibv_create_cq(ctx, 32768, NULL, NULL, 0);
	CHECK(!cq2, "CQ above max_cqe (32767) is refused");
	cq2 = ibv_create_cq(ctx, 32767, NULL, NULL, 0);
	CHECK(cq2, "CQ of max_cqe entries");
	if (cq2)
		CHECK(ibv_destroy_cq(cq2) == 0, "destroy the large CQ");

	/* Many create/destroy cycles: leaks show up in kmemleak. */
	int ok = 1;
	for (int i = 0; i < 200 && ok; i++) {
		cq2 = ibv_create_cq(ctx, 1 + i * 7, NULL, NULL, 0);
		ok = cq2 && ibv_destroy_cq(cq2) == 0;
	}
	CHECK(ok, "200 create/destroy cycles");

	/*
	 * Completions in the ring: receives posted to a QP that then goes to ERR are flushed into
	 * the CQ. With the CQ armed, the flush raises an event on the completion channel; a resize
	 * below the fill level fails, one above keeps the completions.
	 */
	struct ibv_cq *fcq = ibv_create_cq(ctx, 31, NULL, ch, 0);
	struct ibv_qp_init_attr qia = { .send_cq = fcq, .recv_cq = fcq, .qp_type = IBV_QPT_RC,
					.cap = { .max_send_wr = 1, .max_recv_wr = 8,
						 .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &qia);
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	static char rbuf[64];
	struct ibv_mr *mr = ibv_reg_mr(pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);

	CHECK(fcq && qp && mr, "CQ, QP and MR for flushed completions");
	if (fcq && qp && mr) {
		CHECK(ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						 IBV_QP_ACCESS_FLAGS) == 0, "QP to INIT");
		int posted = 0;
		for (int i = 0; i < 8; i++) {
			struct ibv_sge s = { (uintptr_t)rbuf, sizeof(rbuf), mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &s, .num_sge = 1 },
					   *bad;
			posted += ibv_post_recv(qp, &wr, &bad) == 0;
		}
		CHECK(posted == 8, "post 8 receives (user space only)");
		CHECK(ibv_req_notify_cq(fcq, 0) == 0, "arm the CQ");
		qa.qp_state = IBV_QPS_ERR;
		CHECK(ibv_modify_qp(qp, &qa, IBV_QP_STATE) == 0, "QP to ERR flushes the receives");
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
		struct ibv_cq *ev_cq;
		void *ev_ctx;
		CHECK(poll(&pfd, 1, 2000) == 1 && ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == 0 &&
			      ev_cq == fcq, "completion event on the channel");
		ibv_ack_cq_events(fcq, 1);
		CHECK(ibv_resize_cq(fcq, 3) != 0, "resize below the fill level (8) fails");
		CHECK(ibv_resize_cq(fcq, 40) == 0 && fcq->cqe >= 40, "resize above it keeps them");
		int n = 0, ok = 1, got;
		while ((got = ibv_poll_cq(fcq, 4, wc)) > 0) {
			for (int i = 0; i < got; i++)
				ok &= wc[i].status == IBV_WC_WR_FLUSH_ERR && wc[i].wr_id == (uint64_t)(100 + n + i);
			n += got;
		}
		CHECK(n == 8 && ok, "the 8 flushed receives survive the resize, in order (%d)", n);
		ibv_destroy_qp(qp);
	}
	if (mr)
		ibv_dereg_mr(mr);
	if (fcq)
		ibv_destroy_cq(fcq);

	CHECK(ibv_destroy_cq(cq) == 0, "destroy CQ");
	CHECK(ibv_destroy_comp_channel(ch) == 0, "destroy completion channel");

	overrun_flush(ctx, pd);
	if (argc > 2) {
		int strict = !(argc > 3 && !strcmp(argv[3], "--rxe-compatible"));

		overrun_connected(ctx, pd, atoi(argv[2]), strict);
	}
	CHECK(ibv_dealloc_pd(pd) == 0, "dealloc PD");

	/* Leave objects behind: closing the device must clean them up. */
	for (int i = 0; i < 4; i++)
		ibv_create_cq(ctx, 16, NULL, NULL, 0);
	ibv_alloc_pd(ctx);
	CHECK(ibv_close_device(ctx) == 0, "close device with live CQs and PD");

	printf("# verbs_cq: %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
