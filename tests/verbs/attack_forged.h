/* SPDX-License-Identifier: GPL-2.0 */
/*
 * verbs_attack's subtests on forged answers: a local user makes a responder of its own answer
 * into a victim's connection, at a PSN it chooses, and checks that no completion of the victim
 * lies afterwards. Included once, by verbs_attack.c (after attack.h).
 *
 * The victim is an RC pair V -> P on the device (PSNs from 0). The attacker has two QPs: A, a
 * responder whose destination is V (its answers go to V's QPN, from the device's own address,
 * so V's address checks pass), and B, a requester connected to A, both starting at a PSN the
 * attacker picks ahead of V's. B's READ, atomic or SEND makes A answer with a READ response,
 * an atomic ACK or an ACK at that PSN, to V. No peer answers a PSN that was never sent: the
 * answer must change nothing, and V's next SEND must really reach P, with its data, before V
 * completes it. A driver that took such an answer as an acknowledgement completed the SEND
 * with success without sending it (issue #33, finding 1). forged_read_short answers a READ
 * with a response that does not fit its place in it (finding 6).
 */
#ifndef RRXE_VERBS_ATTACK_FORGED_H
#define RRXE_VERBS_ATTACK_FORGED_H

#include <stdlib.h>

#define FORGED_AHEAD 16

/* One attempt's objects. */
struct forged {
	struct ibv_cq *cq;
	struct ibv_qp *v, *p, *a, *b;
	struct ibv_mr *amr;
	uint64_t *abuf;
};

static struct ibv_qp *forged_qp(struct ibv_cq *c)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC, .send_cq = c, .recv_cq = c,
				       .cap = { .max_send_wr = 16, .max_recv_wr = 16,
						.max_send_sge = 1, .max_recv_sge = 1 } };

	return ibv_create_qp(pd, &ia);
}

/* RESET to RTS towards `dest` on this device, receiving from `rq_psn`, sending from `sq_psn`. */
static int forged_connect(struct ibv_qp *qp, uint32_t dest, uint32_t rq_psn, uint32_t sq_psn,
			  uint8_t retry_cnt)
{
	return rc_connect_psn(qp, dest, &gid, gid_index, 4, rq_psn, sq_psn, retry_cnt);
}

/* A hardware counter of the device, or -1. */
static long long forged_counter(const char *name)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 ibv_get_device_name(ctx->device), name);
	return read_file(path, buf, sizeof(buf)) > 0 ? atoll(buf) : -1;
}

/* Posts a receive of `len` bytes at `buf` (in `mr`) on `qp`. */
static int forged_recv(struct ibv_qp *qp, uint64_t id, void *buf, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* V sends `len` bytes of sbuf to P (which has a receive posted at rbuf): both completions. */
static int forged_send(struct forged *f, uint64_t id, uint32_t len, unsigned int seed)
{
	struct ibv_sge sge = { .addr = (uintptr_t)sbuf, .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;
	int got_send = 0, got_recv = 0, ok = 1;
	struct ibv_wc wc;

	fill(sbuf, len, seed);
	memset(rbuf, 0, len);
	if (forged_recv(f->p, id | 1ULL << 63, rbuf, len))
		return 0;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(f->v, &wr, &bad))
		return 0;
	while (!(got_send && got_recv)) {
		if (wait_wc_for(f->cq, &wc, 5)) {
			printf("# no completion: V's SEND %s, P's receive %s\n",
			       got_send ? "completed" : "missing", got_recv ? "completed" : "missing");
			return 0;
		}
		if (wc.wr_id == id && wc.qp_num == f->v->qp_num) {
			got_send = 1;
			ok &= wc.status == IBV_WC_SUCCESS;
			if (wc.status != IBV_WC_SUCCESS)
				printf("# V's SEND: %s\n", ibv_wc_status_str(wc.status));
		} else if (wc.wr_id == (id | 1ULL << 63)) {
			got_recv = 1;
			ok &= wc.status == IBV_WC_SUCCESS && wc.byte_len == len;
			if (wc.status != IBV_WC_SUCCESS)
				printf("# P's receive: %s\n", ibv_wc_status_str(wc.status));
			/* A completion at P is the proof: V's success must not come first alone. */
		}
	}
	if (ok && memcmp(sbuf, rbuf, len)) {
		printf("# P received other bytes than V sent\n");
		ok = 0;
	}
	return ok;
}

static void forged_destroy(struct forged *f)
{
	struct ibv_qp *qps[] = { f->b, f->a, f->p, f->v };

	for (size_t i = 0; i < sizeof(qps) / sizeof(qps[0]); i++)
		if (qps[i])
			ibv_destroy_qp(qps[i]);
	if (f->amr)
		ibv_dereg_mr(f->amr);
	free(f->abuf);
	if (f->cq)
		ibv_destroy_cq(f->cq);
}

/*
 * One forgery: `kind` is the attacker's request from B (IBV_WR_RDMA_READ, an atomic, or
 * IBV_WR_SEND for a plain ACK), whose answer from A reaches V at a PSN FORGED_AHEAD past V's
 * next one.
 */
static void forged_answer(enum ibv_wr_opcode kind, const char *what)
{
	struct forged f = { 0 };
	struct ibv_sge sge = { .length = 8 };
	struct ibv_send_wr wr = { .wr_id = 0xa77ac4, .sg_list = &sge, .num_sge = 1,
				  .opcode = kind, .send_flags = IBV_SEND_SIGNALED }, *bad;
	uint32_t ahead;
	long long unsent = forged_counter("drop_response_unsent"), after;

	f.cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	f.abuf = aligned_alloc(4096, 4096);
	f.amr = f.abuf ? ibv_reg_mr(pd, f.abuf, 4096, IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_ATOMIC) : NULL;
	if (f.cq) {
		f.v = forged_qp(f.cq);
		f.p = forged_qp(f.cq);
		f.a = forged_qp(f.cq);
		f.b = forged_qp(f.cq);
	}
	CHECK(f.amr && f.v && f.p && f.a && f.b, "%s: CQ, QPs and the attacker's MR", what);
	if (!(f.amr && f.v && f.p && f.a && f.b))
		goto out;
	memset(f.abuf, 0, 4096);
	/* V has sent one SEND (PSN 0) when the forged answer comes: its next PSN is 1. */
	ahead = 1 + FORGED_AHEAD;
	CHECK(!forged_connect(f.v, f.p->qp_num, 0, 0, 7) &&
	      !forged_connect(f.p, f.v->qp_num, 0, 0, 7) &&
	      !forged_connect(f.a, f.v->qp_num, ahead, 0, 7) &&
	      !forged_connect(f.b, f.a->qp_num, 0, ahead, 1),
	      "%s: victim V->P, attacker B->A answering to V, attacker PSN %u", what, ahead);
	CHECK(forged_send(&f, 1, 64, 1), "%s: V's first SEND reaches P", what);
	if (kind == IBV_WR_SEND && forged_recv(f.a, 2, rbuf + BUF_SIZE / 2, 64))
		CHECK(0, "%s: A's receive", what);
	sge.addr = (uintptr_t)sbuf;
	sge.lkey = mr->lkey;
	wr.wr.rdma.remote_addr = (uintptr_t)f.abuf;
	wr.wr.rdma.rkey = f.amr->rkey;
	wr.wr.atomic.remote_addr = (uintptr_t)f.abuf;
	wr.wr.atomic.rkey = f.amr->rkey;
	wr.wr.atomic.compare_add = 1;
	CHECK(!ibv_post_send(f.b, &wr, &bad), "%s: B's request posted", what);
	/* A answers V at once (loopback); give it time, then V sends on. */
	usleep(300 * 1000);
	for (int i = 0; i < 4; i++)
		CHECK(forged_send(&f, 10 + i, 512, 10 + i),
		      "%s: V's SEND %d after the forged answer reaches P with its data", what, i);
	after = forged_counter("drop_response_unsent");
	if (strict && unsent >= 0)
		CHECK(after > unsent, "%s: the answer counted as for a PSN never sent (%lld -> %lld)",
		      what, unsent, after);
out:
	forged_destroy(&f);
}

static void forged_read_resp(void)
{
	forged_answer(IBV_WR_RDMA_READ, "READ response");
}

static void forged_atomic_ack(void)
{
	forged_answer(IBV_WR_ATOMIC_FETCH_AND_ADD, "atomic ACK");
}

static void forged_ack(void)
{
	forged_answer(IBV_WR_SEND, "ACK");
}

/*
 * A READ response that does not fit its place in the READ (finding 6): V's READ of 4 KiB (four
 * responses at MTU 1024) goes to a QP that no longer exists, so only the attacker answers: B's
 * READ of 1 KiB at V's READ PSN makes A send one READ RESPONSE ONLY to V. A response that ends
 * the message at the first of four places would complete V's READ with 3 KiB never written.
 * The READ must not complete with success (it ends with a retry error: nobody else answers).
 */
static void forged_read_short(void)
{
	struct forged f = { 0 };
	struct ibv_qp *z;
	struct ibv_sge vsge = { .addr = (uintptr_t)rbuf, .length = 4096, .lkey = mr->lkey };
	struct ibv_send_wr vwr = { .wr_id = 0x5ead, .sg_list = &vsge, .num_sge = 1,
				   .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_sge bsge = { .addr = (uintptr_t)sbuf, .length = 1024, .lkey = mr->lkey };
	struct ibv_send_wr bwr = { .wr_id = 0xa77ac4, .sg_list = &bsge, .num_sge = 1,
				   .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	long long before = forged_counter("drop_response_length"), after;
	struct ibv_wc wc;
	int got = 0;

	f.cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	f.abuf = aligned_alloc(4096, 4096);
	f.amr = f.abuf ? ibv_reg_mr(pd, f.abuf, 4096, IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_READ) : NULL;
	z = f.cq ? forged_qp(f.cq) : NULL;
	if (f.cq) {
		f.v = forged_qp(f.cq);
		f.a = forged_qp(f.cq);
		f.b = forged_qp(f.cq);
	}
	CHECK(f.amr && z && f.v && f.a && f.b, "short READ response: CQ, QPs and MR");
	if (!(f.amr && z && f.v && f.a && f.b)) {
		if (z)
			ibv_destroy_qp(z);
		goto out;
	}
	memset(f.abuf, 0x42, 4096);
	memset(rbuf, 0xee, 4096);
	/* V towards Z, which is then destroyed: nobody answers V but the attacker. */
	CHECK(!forged_connect(f.v, z->qp_num, 0, 0, 3) && !ibv_destroy_qp(z) &&
	      !forged_connect(f.a, f.v->qp_num, 0, 0, 7) &&
	      !forged_connect(f.b, f.a->qp_num, 0, 0, 1),
	      "short READ response: V towards a QP gone, A answering to V at V's READ PSN");
	vwr.wr.rdma.remote_addr = 0x10000;
	vwr.wr.rdma.rkey = 0x1234;
	bwr.wr.rdma.remote_addr = (uintptr_t)f.abuf;
	bwr.wr.rdma.rkey = f.amr->rkey;
	CHECK(!ibv_post_send(f.v, &vwr, &bad), "short READ response: V's READ of 4 KiB posted");
	usleep(20 * 1000);
	CHECK(!ibv_post_send(f.b, &bwr, &bad), "short READ response: B's READ of 1 KiB posted");
	for (double end = now() + 10; now() < end && !got;) {
		if (ibv_poll_cq(f.cq, 1, &wc) == 1 && wc.wr_id == vwr.wr_id)
			got = 1;
	}
	CHECK(got && wc.status != IBV_WC_SUCCESS,
	      "short READ response: V's READ does not complete with success (%s; bytes 1024.. %s)",
	      got ? ibv_wc_status_str(wc.status) : "no completion",
	      rbuf[1024] == 0xee ? "never written" : "written");
	after = forged_counter("drop_response_length");
	if (strict && before >= 0)
		CHECK(after > before, "short READ response: counted as not fitting (%lld -> %lld)",
		      before, after);
out:
	forged_destroy(&f);
}

#endif /* RRXE_VERBS_ATTACK_FORGED_H */
