/* SPDX-License-Identifier: GPL-2.0 */
/*
 * verbs_attack's subtest on the move to ERR racing the data path (issue #33, finding 3):
 * modify_qp(ERR) from another thread while SENDs, READs and atomics of a deep send queue are
 * in flight to a peer receiving on its receive queue or on an SRQ. Every work request must
 * complete exactly once; a work queue's completions come in order, so none completes with
 * success after one of its queue was flushed; and a buffer handed back by a flush completion
 * never changes afterwards. Included once, by verbs_attack.c (after attack_forged.h).
 */
#ifndef RRXE_VERBS_ATTACK_ERR_H
#define RRXE_VERBS_ATTACK_ERR_H

#include <pthread.h>

/* Rounds of err_race: ERR_ROUNDS from the environment (make soak), else 40. */
#define ERR_ROUNDS_DEFAULT 40
#define ERR_WRS 48
#define ERR_SLOT 1024
#define ERR_PEER_BIT (1ULL << 40)

struct err_round {
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *v, *p;
	struct ibv_mr *lmr, *pmr;
	uint8_t *lbuf, *pbuf;
	unsigned int delay_us;
	int peer_too;
};

static void *err_mover(void *arg)
{
	struct err_round *r = arg;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	usleep(r->delay_us);
	ibv_modify_qp(r->v, &a, IBV_QP_STATE);
	if (r->peer_too)
		ibv_modify_qp(r->p, &a, IBV_QP_STATE);
	return NULL;
}

static struct ibv_qp *err_qp(struct err_round *r, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC, .send_cq = r->cq, .recv_cq = r->cq,
				       .srq = srq,
				       .cap = { .max_send_wr = ERR_WRS, .max_recv_wr = ERR_WRS,
						.max_send_sge = 1, .max_recv_sge = 1 } };

	return ibv_create_qp(pd, &ia);
}

static void err_round_free(struct err_round *r)
{
	if (r->v)
		ibv_destroy_qp(r->v);
	if (r->p)
		ibv_destroy_qp(r->p);
	if (r->srq)
		ibv_destroy_srq(r->srq);
	if (r->lmr)
		ibv_dereg_mr(r->lmr);
	if (r->pmr)
		ibv_dereg_mr(r->pmr);
	free(r->lbuf);
	free(r->pbuf);
	if (r->cq)
		ibv_destroy_cq(r->cq);
}

/* Posts P's receives and V's mixed send queue; the number of send WRs posted. */
static int err_post(struct err_round *r, int round)
{
	for (int j = 0; j < ERR_WRS; j++) {
		struct ibv_sge sge = { .addr = (uintptr_t)(r->pbuf + j * ERR_SLOT),
				       .length = ERR_SLOT, .lkey = r->pmr->lkey };
		struct ibv_recv_wr wr = { .wr_id = ERR_PEER_BIT | j, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		if (r->srq ? ibv_post_srq_recv(r->srq, &wr, &bad) : ibv_post_recv(r->p, &wr, &bad))
			return 0;
	}
	for (int i = 0; i < ERR_WRS; i++) {
		uint8_t *l = r->lbuf + i * ERR_SLOT;
		struct ibv_sge sge = { .addr = (uintptr_t)l, .length = ERR_SLOT,
				       .lkey = r->lmr->lkey };
		struct ibv_send_wr wr = { .wr_id = (uint64_t)round << 16 | i, .sg_list = &sge,
					  .num_sge = 1, .send_flags = IBV_SEND_SIGNALED }, *bad;

		switch (i % 3) {
		case 0:
			wr.opcode = IBV_WR_SEND;
			sge.length = 256;
			break;
		case 1:
			wr.opcode = IBV_WR_RDMA_READ;
			wr.wr.rdma.remote_addr = (uintptr_t)(r->pbuf + ERR_WRS * ERR_SLOT);
			wr.wr.rdma.rkey = r->pmr->rkey;
			break;
		default:
			wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			sge.length = 8;
			wr.wr.atomic.remote_addr = (uintptr_t)(r->pbuf + ERR_WRS * ERR_SLOT);
			wr.wr.atomic.rkey = r->pmr->rkey;
			wr.wr.atomic.compare_add = 1;
			break;
		}
		if (ibv_post_send(r->v, &wr, &bad))
			return i;
	}
	return ERR_WRS;
}

/* One round; the number of violations found. */
static int err_round_run(int round)
{
	struct err_round r = { .delay_us = (unsigned int)(rand() % 2000),
			       .peer_too = round % 4 == 3 };
	static uint8_t snap[ERR_WRS][ERR_SLOT];
	int seen[ERR_WRS] = { 0 }, peer_seen[ERR_WRS] = { 0 }, flushed_at[ERR_WRS];
	int done = 0, bad = 0, v_flushed = 0, p_flushed = 0, posted;
	size_t psize = (ERR_WRS + 1) * ERR_SLOT;
	pthread_t t;
	double end;

	r.cq = ibv_create_cq(ctx, 4 * ERR_WRS, NULL, NULL, 0);
	r.lbuf = aligned_alloc(4096, ERR_WRS * ERR_SLOT);
	r.pbuf = aligned_alloc(4096, psize);
	if (round % 2) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = ERR_WRS, .max_sge = 1 } };

		r.srq = ibv_create_srq(pd, &sa);
	}
	if (!r.cq || !r.lbuf || !r.pbuf || (round % 2 && !r.srq))
		goto setup_failed;
	memset(r.lbuf, 0xee, ERR_WRS * ERR_SLOT);
	memset(r.pbuf, 0x5a, psize);
	r.lmr = ibv_reg_mr(pd, r.lbuf, ERR_WRS * ERR_SLOT, IBV_ACCESS_LOCAL_WRITE);
	r.pmr = ibv_reg_mr(pd, r.pbuf, psize, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_ATOMIC);
	r.v = err_qp(&r, NULL);
	r.p = err_qp(&r, r.srq);
	if (!r.lmr || !r.pmr || !r.v || !r.p ||
	    forged_connect(r.v, r.p->qp_num, 0, 0, 7) || forged_connect(r.p, r.v->qp_num, 0, 0, 7))
		goto setup_failed;
	if (pthread_create(&t, NULL, err_mover, &r))
		goto setup_failed;
	posted = err_post(&r, round);
	pthread_join(t, NULL);
	for (int i = 0; i < ERR_WRS; i++)
		flushed_at[i] = -1;
	/* Every posted send WR completes exactly once, in order, within 10 s. */
	end = now() + 10;
	while (now() < end) {
		struct ibv_wc wc;
		int n = ibv_poll_cq(r.cq, 1, &wc);

		if (n <= 0) {
			if (done == posted && now() > end - 9.5)
				break;
			continue;
		}
		if (wc.wr_id & ERR_PEER_BIT) {
			int j = (int)(wc.wr_id & 0xffff);

			if (j >= ERR_WRS || peer_seen[j]++) {
				printf("# round %d: receive %d completed twice\n", round, j);
				bad++;
			}
			if (wc.status == IBV_WC_WR_FLUSH_ERR)
				p_flushed = 1;
			else if (wc.status == IBV_WC_SUCCESS && p_flushed) {
				printf("# round %d: receive %d succeeded after a flush\n", round, j);
				bad++;
			}
			continue;
		}
		int i = (int)(wc.wr_id & 0xffff);

		if ((wc.wr_id >> 16) != (uint64_t)round || i >= ERR_WRS || seen[i]++) {
			printf("# round %d: send wr_id %#llx completed twice or unknown\n", round,
			       (unsigned long long)wc.wr_id);
			bad++;
			continue;
		}
		done++;
		if (wc.status == IBV_WC_WR_FLUSH_ERR) {
			v_flushed = 1;
			flushed_at[i] = done;
			memcpy(snap[i], r.lbuf + i * ERR_SLOT, ERR_SLOT);
		} else if (wc.status == IBV_WC_SUCCESS && v_flushed) {
			printf("# round %d: send %d succeeded after a flush\n", round, i);
			bad++;
		}
	}
	if (done != posted) {
		printf("# round %d: %d send completions for %d posted\n", round, done, posted);
		bad++;
	}
	/* The buffers handed back by flush completions stay as they were. */
	usleep(100 * 1000);
	for (int i = 0; i < ERR_WRS; i++) {
		if (flushed_at[i] >= 0 && i % 3 && memcmp(snap[i], r.lbuf + i * ERR_SLOT, ERR_SLOT)) {
			printf("# round %d: the buffer of flushed WR %d changed after its completion\n",
			       round, i);
			bad++;
		}
	}
	err_round_free(&r);
	return bad;
setup_failed:
	printf("# round %d: setup failed\n", round);
	err_round_free(&r);
	return 1;
}

static void err_race(void)
{
	const char *env = getenv("ERR_ROUNDS");
	int bad = 0, rounds = env ? atoi(env) : ERR_ROUNDS_DEFAULT;

	srand(env ? (unsigned int)time(NULL) : 0x5eed);
	for (int round = 0; round < rounds; round++)
		bad += err_round_run(round);
	CHECK(!bad, "%d rounds of ERR racing SEND, READ and atomics (RQ and SRQ): each WR "
		    "completes once, in order, no buffer changes after its flush (%d violations)",
	      rounds, bad);
}

#endif /* RRXE_VERBS_ATTACK_ERR_H */
