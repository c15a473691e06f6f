// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_fuzz: the operations through libibverbs/librxe, run with F.lock held.
 *
 * librxe trusts its callers, so what reaches user-space memory stays valid: inline SGEs point
 * into our own buffers, UD sends name a pool AH, BIND_MW a pool MW and MR, num_sge never passes
 * our SGE arrays, and no object is used after librxe freed it. What only reaches the kernel is
 * random.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz.h"

static int op_alloc_pd(void)
{
	struct obj *o = free_slot(K_PD);
	struct ibv_pd *pd;

	if (!o)
		return -1;
	pd = ibv_alloc_pd(F.ctx);
	if (!pd)
		return 0;
	*o = (struct obj){ .state = LIVE, .p = pd, .handle = pd->handle };
	return 1;
}

static int op_create_cq(void)
{
	struct obj *o = free_slot(K_CQ);
	struct ibv_cq *cq;
	int cqe = PICK(1, 1, 2, 1 + below(64), 256, 4096, below(1024), F.attr.max_cqe,
		       F.attr.max_cqe + 1, 0, -1);

	if (!o)
		return -1;
	snap();
	cq = ibv_create_cq(F.ctx, cqe, NULL, chance(50) ? F.ch : NULL,
			   chance(90) ? 0 : PICK(1, -1, below(64)));
	if (!cq)
		return 0;
	*o = (struct obj){ .state = LIVE, .p = cq, .handle = cq->handle };
	rings_created(o, K_CQ);
	return 1;
}

static int op_resize_cq(void)
{
	struct obj *o = pick_ring(K_CQ);
	struct ibv_cq *cq = o ? o->p : NULL;
	int err;

	if (!o)
		return -1;
	snap();
	err = ibv_resize_cq(cq, PICK(1, cq->cqe / 2, cq->cqe * 2, below(4096), F.attr.max_cqe,
				     F.attr.max_cqe + 1, 0));
	ring_remapped(o, K_CQ);
	return !err;
}

static int op_poll_cq(void)
{
	struct obj *o = pick_ring(K_CQ);
	struct ibv_wc wc[64];

	if (!o)
		return -1;
	return ibv_poll_cq(o->p, 1 + below(64), wc) >= 0;
}

static int op_req_notify_cq(void)
{
	struct obj *o = pick(K_CQ, 1);

	return o ? !ibv_req_notify_cq(o->p, below(2)) : -1;
}

/* A completion event, if one is there (the channel is non-blocking), acknowledged at once. */
static int op_get_cq_event(void)
{
	struct ibv_cq *cq;
	void *cq_ctx;

	if (!F.ch)
		return -1;
	if (ibv_get_cq_event(F.ch, &cq, &cq_ctx))
		return 0;
	ibv_ack_cq_events(cq, 1);
	return 1;
}

static int op_async_event(void)
{
	struct ibv_async_event ev;

	if (ibv_get_async_event(F.ctx, &ev))
		return 0;
	ibv_ack_async_event(&ev);
	return 1;
}

/* A span of a live ring past its header page (an MR over memory the kernel shares). */
static int ring_span(uint8_t **addr, size_t *len)
{
	struct obj *o = pick_ring(PICK(K_CQ, K_QP, K_SRQ));
	struct ring *r = o ? &o->ring[below(2)] : NULL;

	if (!r || !r->q || r->len <= pg)
		return 0;
	*addr = (uint8_t *)r->q + pg;
	*len = r->len - pg;
	return 1;
}

static int op_reg_mr(void)
{
	struct obj *pd = pick(K_PD, 1), *o = free_slot(K_MR);
	struct ibv_mr *mr;
	uint8_t *buf, *addr;
	size_t len, off, rlen;
	int owned = 0;

	if (!pd || !o)
		return -1;
	if (F.compat || !chance(8) || !ring_span(&buf, &len)) {
		len = (1 + below(16)) * pg;
		buf = mmap(NULL, len + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
		if (buf == MAP_FAILED)
			return -1;
		owned = 1;
		/* A guard page: registering past the end fails instead of pinning our heap. */
		if (mprotect(buf + len, pg, PROT_NONE)) {
			munmap(buf, len + pg);
			return -1;
		}
	}
	off = chance(60) ? 0 : below(len);
	rlen = PICK(len - off, len - off, 1 + below(len - off), 1, 0, len - off + pg, 1ull << 40);
	/* Past a ring there is no guard: what follows may be ours, and RDMA would write it. */
	rlen = owned || rlen <= len - off ? rlen : len - off;
	addr = chance(97) ? buf + off : (uint8_t *)(uintptr_t)PICK(0, KADDR);
	mr = ibv_reg_mr(pd->p, addr, rlen, random_access());
	if (!mr) {
		if (owned && munmap(buf, len + pg))
			perror("munmap");
		return 0;
	}
	*o = (struct obj){ .state = LIVE, .p = mr, .handle = mr->handle, .buf = buf,
			   .buf_len = len, .owned = owned };
	return 1;
}

static int op_alloc_mw(void)
{
	struct obj *pd = pick(K_PD, 1), *o = free_slot(K_MW);
	struct ibv_mw *mw;

	if (!pd || !o)
		return -1;
	mw = ibv_alloc_mw(pd->p, PICK(IBV_MW_TYPE_1, IBV_MW_TYPE_2, IBV_MW_TYPE_2, 0, 3));
	if (!mw)
		return 0;
	*o = (struct obj){ .state = LIVE, .p = mw, .handle = mw->handle };
	return 1;
}

static int op_bind_mw(void)
{
	struct obj *q = pick(K_QP, 1), *w = pick(K_MW, 1), *m = pick(K_MR, 1);
	struct ibv_mw_bind b = { .wr_id = r64() };

	if (!q || !w || !m)
		return -1;
	b.send_flags = chance(70) ? IBV_SEND_SIGNALED : 0;
	bind_info(&b.bind_info, m);
	return !ibv_bind_mw(q->p, w->p, &b);
}

static int op_create_ah(void)
{
	struct obj *pd = pick(K_PD, 1), *o = free_slot(K_AH);
	struct ibv_ah_attr a;
	struct ibv_ah *ah;

	if (!pd || !o)
		return -1;
	random_ah_attr(&a);
	ah = ibv_create_ah(pd->p, &a);
	if (!ah)
		return 0;
	*o = (struct obj){ .state = LIVE, .p = ah, .handle = ah->handle };
	return 1;
}

static int op_create_srq(void)
{
	struct obj *pd = pick(K_PD, 1), *o = free_slot(K_SRQ);
	struct ibv_srq_init_attr a = { 0 };
	struct ibv_srq *srq;

	if (!pd || !o)
		return -1;
	a.attr.max_wr = chance(80) ? 1 + below(256) : r_depth(F.attr.max_srq_wr);
	a.attr.max_sge = chance(80) ? below(5) : r_size(F.attr.max_srq_sge);
	a.attr.srq_limit = PICK(0, 0, below(a.attr.max_wr + 1), (uint32_t)r64());
	snap();
	srq = ibv_create_srq(pd->p, &a);
	if (!srq)
		return 0;
	*o = (struct obj){ .state = LIVE, .p = srq, .handle = srq->handle };
	o->cap.max_recv_sge = a.attr.max_sge;
	rings_created(o, K_SRQ);
	return 1;
}

static int op_modify_srq(void)
{
	struct obj *o = pick_ring(K_SRQ);
	struct ibv_srq_attr a;
	int mask = PICK(IBV_SRQ_MAX_WR, IBV_SRQ_LIMIT, IBV_SRQ_LIMIT,
			IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT, 0, (uint32_t)r64());
	int err;

	if (!o)
		return -1;
	a.max_wr = chance(80) ? 1 + below(512) : r_depth(F.attr.max_srq_wr);
	a.max_sge = below(8);
	a.srq_limit = chance(80) ? below(a.max_wr + 1) : (uint32_t)r64();
	snap();
	err = ibv_modify_srq(o->p, &a, mask);
	if (mask & IBV_SRQ_MAX_WR)
		ring_remapped(o, K_SRQ);
	return !err;
}

static int op_query_srq(void)
{
	struct obj *o = pick(K_SRQ, 1);
	struct ibv_srq_attr a;

	return o ? !ibv_query_srq(o->p, &a) : -1;
}

static int op_post_srq_recv(void)
{
	struct obj *o = pick_ring(K_SRQ);
	struct ibv_recv_wr wr[MAXWR], *bad;

	if (!o)
		return -1;
	recv_chain(wr, o->cap.max_recv_sge);
	return !ibv_post_srq_recv(o->p, wr, &bad);
}

static int op_create_qp(void)
{
	struct obj *pd = pick(K_PD, 1), *scq = pick(K_CQ, 1), *o = free_slot(K_QP);
	struct obj *rcq = chance(60) ? scq : pick(K_CQ, 1), *srq = chance(25) ? pick(K_SRQ, 1) : NULL;
	struct ibv_qp_init_attr a = { 0 };
	struct ibv_qp *qp;

	if (!pd || !scq || !rcq || !o)
		return -1;
	a.qp_type = chance(95) ? PICK(IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD) :
				 PICK(IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND, 0, 77);
	a.send_cq = scq->p;
	a.recv_cq = rcq->p;
	a.srq = srq ? srq->p : NULL;
	a.sq_sig_all = chance(30);
	random_cap(&a.cap, chance(8));
	snap();
	qp = ibv_create_qp(pd->p, &a);
	if (!qp)
		return 0;
	*o = (struct obj){ .state = LIVE, .p = qp, .handle = qp->handle, .qpt = a.qp_type,
			   .qpn = qp->qp_num, .cap = a.cap, .has_srq = !!srq };
	rings_created(o, K_QP);
	return 1;
}

static int op_modify_qp(void)
{
	struct obj *o = pick(K_QP, 1);
	struct ibv_qp_attr a;
	int mask;

	if (!o)
		return -1;
	random_qp_attr(&a, &mask);
	return !ibv_modify_qp(o->p, &a, mask);
}

/*
 * RESET, INIT, RTR, RTS (or stopping at INIT or RTR) towards the QP itself or another pool QP,
 * with valid but random path parameters: this is what gets traffic flowing.
 */
static int op_connect_qp(void)
{
	struct obj *o = pick(K_QP, 0), *d;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	int stop = chance(80) ? 3 : 1 + below(2), ud, rc, mask;

	if (!o)
		return -1;
	d = chance(50) ? o : pick(K_QP, 1);
	d = d ? d : o;
	ud = o->qpt == IBV_QPT_UD;
	rc = o->qpt == IBV_QPT_RC;
	if (ibv_modify_qp(o->p, &a, IBV_QP_STATE))
		return 0;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY };
	a.qp_access_flags = chance(80) ? IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						 IBV_ACCESS_REMOTE_ATOMIC : random_access();
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	       (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
	if (ibv_modify_qp(o->p, &a, mask))
		return 0;
	if (stop == 1)
		return 1;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = 1 + below(5),
				  .dest_qp_num = d->qpn, .rq_psn = base_psn,
				  .max_dest_rd_atomic = below(17), .min_rnr_timer = below(32) };
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = F.gid;
	a.ah_attr.grh.sgid_index = F.gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	mask = IBV_QP_STATE;
	if (!ud)
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (rc)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	if (ibv_modify_qp(o->p, &a, mask))
		return 0;
	if (stop == 2)
		return 1;
	/* Timeouts from 8 us (retry storms) up; rnr_retry 7 retries forever. */
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS,
				  .sq_psn = chance(90) ? base_psn : below(1 << 24),
				  .timeout = PICK(1, 2, 4, 8, 14, 14, 0), .retry_cnt = below(8),
				  .rnr_retry = below(8), .max_rd_atomic = below(17) };
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (rc)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	return !ibv_modify_qp(o->p, &a, mask);
}

static int op_query_qp(void)
{
	struct obj *o = pick(K_QP, 1);
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	if (!o)
		return -1;
	return !ibv_query_qp(o->p, &a, PICK(IBV_QP_STATE, 0x1ffffff, 0, (uint32_t)r64()), &i);
}

static int op_post_send(void)
{
	struct obj *o = pick(K_QP, 1);
	struct ibv_send_wr wr[MAXWR], *bad;
	int n = chance(85) ? 1 + below(3) : 1 + below(MAXWR);

	if (!o || (o->qpt == IBV_QPT_UD && !pick(K_AH, 1)))
		return -1;
	memset(wr, 0, sizeof(wr));
	for (int i = 0; i < n; i++) {
		send_wr(o, &wr[i], i);
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	return !ibv_post_send(o->p, wr, &bad);
}

static int op_post_recv(void)
{
	struct obj *o = pick(K_QP, 1);
	struct ibv_recv_wr wr[MAXWR], *bad;

	if (!o)
		return -1;
	recv_chain(wr, o->cap.max_recv_sge);
	return !ibv_post_recv(o->p, wr, &bad);
}

/* The last multicast attachments, to detach them again (QP checked against the pool). */
static struct {
	void *qp;
	union ibv_gid gid;
	uint16_t lid;
} mc[4];

static int qp_in_pool(void *p)
{
	for (int i = 0; i < POOL; i++)
		if (F.pool[K_QP][i].state != FREE && F.pool[K_QP][i].p == p)
			return 1;
	return 0;
}

static int op_attach_mcast(void)
{
	struct obj *o = pick(K_QP, 1);
	union ibv_gid g = { .raw = { 0xff, 0x0e } };
	uint16_t lid = chance(90) ? 0 : below(65536);
	int i = below(4);

	if (!o)
		return -1;
	g.raw[15] = below(8);
	if (chance(20))
		for (int j = 0; j < 16; j++)
			g.raw[j] = r64();
	if (ibv_attach_mcast(o->p, &g, lid))
		return 0;
	mc[i].qp = o->p;
	mc[i].gid = g;
	mc[i].lid = lid;
	return 1;
}

static int op_detach_mcast(void)
{
	int i = below(4);
	struct obj *o = pick(K_QP, 1);

	if (mc[i].qp && qp_in_pool(mc[i].qp) && chance(80)) {
		int err = ibv_detach_mcast(mc[i].qp, &mc[i].gid, mc[i].lid);

		mc[i].qp = NULL;
		return !err;
	}
	if (!o)
		return -1;
	return !ibv_detach_mcast(o->p, &mc[i].gid, below(2));
}

static int op_query(void)
{
	struct ibv_device_attr d;
	struct ibv_port_attr p;
	union ibv_gid g;
	uint16_t k;

	switch (below(4)) {
	case 0: return !ibv_query_device(F.ctx, &d);
	case 1: return !ibv_query_port(F.ctx, PICK(1, 1, 0, 2, 255), &p);
	case 2: return !ibv_query_gid(F.ctx, 1, PICK(0, F.gid_index, below(300)), &g);
	default: return !ibv_query_pkey(F.ctx, 1, PICK(0, 1, below(70)), &k);
	}
}

/* mmap of the uverbs file at random offsets (pending rings of raw-created objects among them). */
static int op_mmap_fd(void)
{
	size_t len = chance(95) ? (1 + below(16)) * pg : 1ul << 30;
	off_t off = chance(80) ? (off_t)(below(64) * pg) : (off_t)((r64() >> 20) & ~(pg - 1));
	void *p = mmap(NULL, len, PICK(PROT_READ | PROT_WRITE, PROT_READ, PROT_WRITE,
				       PROT_READ | PROT_WRITE | PROT_EXEC),
		       chance(90) ? MAP_SHARED : MAP_PRIVATE, F.ctx->cmd_fd, off);

	if (p == MAP_FAILED)
		return 0;
	/* Deliberately untouched: whose ring it is, we do not know. */
	if (munmap(p, len))
		perror("munmap");
	return 1;
}

/*
 * fork(): the child shares the uverbs file and the ring mappings; it rings a doorbell (or not)
 * and exits, closing its copies. Waits up to 2 s for it.
 */
static int op_fork(void)
{
	struct obj *q = pick(K_QP, 1);
	uint32_t h = q && chance(50) ? q->handle : NO_HANDLE;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 0;
	if (!pid) {
		if (h != NO_HANDLE)
			doorbell_handle(h); /* errors are expected */
		_exit(0);
	}
	for (int i = 0; i < 2000; i++) {
		pid_t r = waitpid(pid, NULL, WNOHANG);

		if (r)
			return r == pid;
		usleep(1000);
	}
	return 0; /* left for init to reap */
}

/* Closes the device with everything alive and opens it again. */
static int op_reopen(void)
{
	if (!chance(30))
		return -1;
	ctx_forget();
	if (ctx_open())
		_exit(2);
	return 1;
}

static int op_dealloc_pd(void) { return destroy(K_PD); }
static int op_destroy_cq(void) { return destroy(K_CQ); }
static int op_dereg_mr(void) { return destroy(K_MR); }
static int op_dealloc_mw(void) { return destroy(K_MW); }
static int op_destroy_ah(void) { return destroy(K_AH); }
static int op_destroy_srq(void) { return destroy(K_SRQ); }
static int op_destroy_qp(void) { return destroy(K_QP); }

const struct op verbs_ops[] = {
	{ "alloc_pd", 3, op_alloc_pd },		{ "dealloc_pd", 1, op_dealloc_pd },
	{ "create_cq", 4, op_create_cq },	{ "destroy_cq", 2, op_destroy_cq },
	{ "resize_cq", 3, op_resize_cq },	{ "poll_cq", 10, op_poll_cq },
	{ "req_notify_cq", 3, op_req_notify_cq }, { "get_cq_event", 2, op_get_cq_event },
	{ "async_event", 2, op_async_event },	{ "reg_mr", 4, op_reg_mr },
	{ "dereg_mr", 2, op_dereg_mr },		{ "alloc_mw", 2, op_alloc_mw },
	{ "dealloc_mw", 1, op_dealloc_mw },	{ "bind_mw", 2, op_bind_mw },
	{ "create_ah", 3, op_create_ah },	{ "destroy_ah", 1, op_destroy_ah },
	{ "create_srq", 3, op_create_srq },	{ "destroy_srq", 1, op_destroy_srq },
	{ "modify_srq", 3, op_modify_srq },	{ "query_srq", 1, op_query_srq },
	{ "post_srq_recv", 4, op_post_srq_recv }, { "create_qp", 5, op_create_qp },
	{ "destroy_qp", 2, op_destroy_qp },	{ "modify_qp", 8, op_modify_qp },
	{ "connect_qp", 6, op_connect_qp },	{ "query_qp", 3, op_query_qp },
	{ "post_send", 12, op_post_send },	{ "post_recv", 6, op_post_recv },
	{ "attach_mcast", 1, op_attach_mcast },	{ "detach_mcast", 1, op_detach_mcast },
	{ "query", 2, op_query },		{ "mmap_fd", 1, op_mmap_fd },
	{ "fork", 1, op_fork },			{ "reopen", 1, op_reopen },
};
const int n_verbs_ops = sizeof(verbs_ops) / sizeof(verbs_ops[0]);
