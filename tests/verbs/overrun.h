/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CQ overrun, for verbs_cq: more completions than a CQ holds, none polled. The completion
 * that does not fit must raise IBV_EVENT_CQ_ERR on that CQ (an affiliated asynchronous error),
 * nothing crashes, and the CQ and its QP can be destroyed.
 *
 *   overrun_flush      receives flushed by the move to ERR (no traffic).
 *   overrun_connected  signaled RDMA WRITEs into a send CQ (the requester's completions), and
 *                      SENDs into a receive CQ (the responder's), on an RC QP connected to
 *                      itself.
 *
 * What becomes of the QP differs, deliberately. IBA: a CQ in error takes no more completions,
 * and a work queue that tries to complete to it has a local catastrophic error (the QP goes to
 * ERR, IBV_EVENT_QP_FATAL); rrxe does that, and reports the CQ error once. C rxe reports
 * IBV_EVENT_CQ_ERR for every completion that does not fit; its responder moves the QP to ERR
 * without an event, its requester leaves it in RTS, and the CQ takes completions again once
 * polled. The strict (rrxe) run checks the IBA behaviour, the --rxe-compatible one only the
 * CQ error, the receive side's ERR and the teardown.
 */
#ifndef RRXE_VERBS_OVERRUN_H
#define RRXE_VERBS_OVERRUN_H

#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "common.h"
#include "rc.h"

/* The asynchronous events an overrun raised. */
struct overrun_events {
	int cq_err;   /* IBV_EVENT_CQ_ERR on the overrun CQ */
	int qp_fatal; /* IBV_EVENT_QP_FATAL on the QP */
	int other;    /* anything else */
};

static long long overrun_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/*
 * Reads (and acks) the context's asynchronous events: until the first CQ_ERR on `cq`, for at
 * most 5 s, then until none comes for 500 ms (every event must be acked before the CQ or QP can
 * be destroyed).
 */
static void overrun_collect(struct ibv_context *ctx, struct ibv_cq *cq, struct ibv_qp *qp,
			    struct overrun_events *e)
{
	long long deadline = overrun_ms() + 5000;

	for (;;) {
		struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
		long long left = deadline - overrun_ms();
		struct ibv_async_event ev;
		int wait = e->cq_err ? 500 : (int)(left > 0 ? left : 0);

		if (wait <= 0 || poll(&pfd, 1, wait) != 1 || ibv_get_async_event(ctx, &ev))
			return;
		if (ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == cq)
			e->cq_err++;
		else if (ev.event_type == IBV_EVENT_QP_FATAL && ev.element.qp == qp)
			e->qp_fatal++;
		else
			e->other++;
		printf("# async event: %s\n", ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
}

static int overrun_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &i) ? -1 : (int)a.qp_state;
}

/* Polls `cq` dry; how many completions it held. */
static int overrun_poll_all(struct ibv_cq *cq)
{
	struct ibv_wc wc[16];
	int n = 0, got;

	while ((got = ibv_poll_cq(cq, 16, wc)) > 0)
		n += got;
	return n;
}

/*
 * A CQ of a few entries; an RC QP in INIT with more receives posted than it holds; the move to
 * ERR flushes them all into it. The first `cqe` are there to poll, the rest are lost.
 */
static void overrun_flush(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 64,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct overrun_events e = { 0 };
	static char buf[64];
	struct ibv_qp *qp = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_cq *cq, *big;
	int posted = 0, n, held = 0;

	printf("# overrun: flushed receives\n");
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	big = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (cq && big) {
		ia.send_cq = big;
		ia.recv_cq = cq;
		qp = ibv_create_qp(pd, &ia);
		mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	}
	CHECK(cq && big && qp && mr, "a CQ of 4, an RC QP receiving into it");
	if (!cq || !big || !qp || !mr)
		goto out;
	held = cq->cqe;
	n = held + 4;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					 IBV_QP_ACCESS_FLAGS) == 0, "QP to INIT");
	for (int i = 0; i < n; i++) {
		struct ibv_sge s = { (uintptr_t)buf, sizeof(buf), mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &s, .num_sge = 1 }, *bad;

		posted += ibv_post_recv(qp, &wr, &bad) == 0;
	}
	CHECK(posted == n, "%d receives posted to a CQ of %d", posted, held);
	a.qp_state = IBV_QPS_ERR;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == 0, "QP to ERR flushes them");
	overrun_collect(ctx, cq, qp, &e);
	CHECK(e.cq_err >= 1, "IBV_EVENT_CQ_ERR on the CQ (%d; %d QP fatal, %d other)", e.cq_err,
	      e.qp_fatal, e.other);
	n = overrun_poll_all(cq);
	CHECK(n == held, "the CQ holds the %d completions that fit (%d)", held, n);
out:
	CHECK(!qp || ibv_destroy_qp(qp) == 0, "destroy the QP");
	if (mr)
		ibv_dereg_mr(mr);
	CHECK(!cq || ibv_destroy_cq(cq) == 0, "destroy the overrun CQ");
	if (big)
		ibv_destroy_cq(big);
}

/*
 * An RC QP connected to itself whose send CQ (`recv_side` 0) or receive CQ (1) holds a few
 * entries and the other 64: more signaled RDMA WRITEs (or SENDs, each into a posted receive)
 * than the small one holds, nothing polled.
 */
static void overrun_side(struct ibv_context *ctx, struct ibv_pd *pd, int gid_index, int strict,
			 int recv_side)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 64, .max_recv_wr = 64,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	const char *side = recv_side ? "receive" : "send";
	struct overrun_events e = { 0 };
	static char buf[4096];
	struct ibv_cq *small, *big;
	struct ibv_qp *qp = NULL;
	struct ibv_mr *mr = NULL;
	union ibv_gid gid;
	int n, posted = 0, st;

	printf("# overrun: the %s CQ\n", side);
	small = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	big = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (small && big) {
		ia.send_cq = recv_side ? big : small;
		ia.recv_cq = recv_side ? small : big;
		qp = ibv_create_qp(pd, &ia);
		mr = ibv_reg_mr(pd, buf, sizeof(buf),
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	}
	CHECK(small && big && qp && mr && !ibv_query_gid(ctx, 1, gid_index, &gid) &&
		      !rc_connect(qp, qp->qp_num, &gid, gid_index),
	      "an RC QP connected to itself, its %s CQ of 4", side);
	if (!small || !big || !qp || !mr)
		goto out;
	n = small->cqe + 4;
	for (int i = 0; i < n && recv_side; i++) {
		struct ibv_sge s = { (uintptr_t)buf, 64, mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &s, .num_sge = 1 }, *bad;

		posted += ibv_post_recv(qp, &wr, &bad) == 0;
	}
	for (int i = 0; i < n; i++) {
		struct ibv_sge s = { (uintptr_t)buf + 2048, 8, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 100 + i, .sg_list = &s, .num_sge = 1,
					  .opcode = recv_side ? IBV_WR_SEND : IBV_WR_RDMA_WRITE };

		wr.wr.rdma.remote_addr = (uintptr_t)buf + 64 * i;
		wr.wr.rdma.rkey = mr->rkey;
		posted += post_signaled(qp, &wr) == 0;
	}
	CHECK(posted == (recv_side ? 2 * n : n), "%d %s posted for a CQ of %d", n,
	      recv_side ? "SENDs (and receives)" : "signaled WRITEs", small->cqe);
	overrun_collect(ctx, small, qp, &e);
	CHECK(e.cq_err >= 1, "IBV_EVENT_CQ_ERR on the %s CQ (%d; %d QP fatal, %d other)", side,
	      e.cq_err, e.qp_fatal, e.other);
	st = overrun_qp_state(qp);
	printf("# the QP is in state %d (%s)\n", st, st == IBV_QPS_ERR ? "ERR" : "not ERR");
	if (strict || recv_side)
		CHECK(st == IBV_QPS_ERR, "the QP that completed to the overrun CQ is in ERR");
	if (strict)
		CHECK(e.cq_err == 1 && e.qp_fatal == 1,
		      "one CQ error, one IBV_EVENT_QP_FATAL (local catastrophic error)");
	n = overrun_poll_all(small);
	CHECK(n == small->cqe, "the %s CQ holds the %d completions that fit (%d)", side,
	      small->cqe, n);
	overrun_poll_all(big);
out:
	CHECK(!qp || ibv_destroy_qp(qp) == 0, "destroy the QP");
	if (mr)
		ibv_dereg_mr(mr);
	CHECK(!small || ibv_destroy_cq(small) == 0, "destroy the overrun CQ");
	if (big)
		ibv_destroy_cq(big);
}

static void overrun_connected(struct ibv_context *ctx, struct ibv_pd *pd, int gid_index,
			      int strict)
{
	overrun_side(ctx, pd, gid_index, strict, 0);
	overrun_side(ctx, pd, gid_index, strict, 1);
}

#endif /* RRXE_VERBS_OVERRUN_H */
