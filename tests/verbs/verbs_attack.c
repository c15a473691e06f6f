// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_attack: a user process attacking the driver through the uverbs ABI and its mapped
 * rings, each attack a subtest that names a bug it must not find:
 *
 *   kchain_send      a legacy POST_SEND write() with a work request (not librxe's zero-WR
 *                    doorbell) to a user QP, whose inline SGE names a kernel address: the
 *                    kernel must not send kernel memory (refused, or ignored as rxe does), and
 *                    the QP keeps working.
 *   kchain_recv      the same with POST_RECV: kernel memory must not become a receive buffer.
 *   kchain_srq       the same with POST_SRQ_RECV to a user SRQ.
 *   query_qp_alt     ibv_query_qp of an RC QP in RTS, 1000 times with the slab churned in
 *                    between: the alternate path and the static rate, never set, come back
 *                    zero (ib_uverbs_query_qp copies out a kmalloc'ed, unzeroed ib_qp_attr).
 *   flush_lockup     ERR while one thread keeps the producer indices of the mapped send and
 *                    receive rings just behind the kernel's consumer and another rings the
 *                    doorbell: every flush ends (no syscall takes a second), the QP is
 *                    destroyed cleanly.
 *   wc_byte_len_imm  RDMA WRITE_WITH_IMM of several packets (10000 bytes at MTU 1024, and 512
 *                    inline bytes at MTU 256, which rrxe never sends by direct loopback): the
 *                    receive completion's byte_len is the length written (IBA; rxe too).
 *   bad_recv_wqe     a receive WQE written into the mapped receive ring with num_sge above the
 *                    QP's max_recv_sge (and 0xffffffff), then a SEND: the QP reports an error
 *                    (error completion or ERR), it does not drop the WQE and answer RNR.
 *                    rrxe only: the C rxe reads user receive WQEs unchecked.
 *   destroy_retrying, mw_bind_dereg, ah_other_pd
 *                    object lifetimes and ownership (attack_races.h).
 *   qp_ring          RC QPs connected in a ring, whose crossed ACKs make each delivery
 *                    start the next QP's sends: no nesting per hop (attack_pipeline.h).
 *   flush_deep       one doorbell flushing a full send ring of 2^20 - 1 WQEs: how long it
 *                    keeps its CPU from an RT thread at a time (attack_flush.h).
 *   forged_read_resp, forged_atomic_ack, forged_ack
 *                    a responder of the attacker's answers into a victim's connection at a
 *                    PSN the victim never sent: the victim's next SENDs must reach its peer
 *                    before they complete (attack_forged.h).
 *   forged_read_short
 *                    a READ RESPONSE ONLY of 1 KiB answering a READ of 4 KiB: the READ must
 *                    not complete with success (attack_forged.h).
 *   err_race         modify_qp(ERR) racing SENDs, READs and atomics to a peer on its RQ or an
 *                    SRQ: each WR completes once, in order, and no buffer changes after its
 *                    flush completion (attack_err.h).
 *
 * Usage: verbs_attack DEVICE GID_INDEX [--rxe-compatible] [SUBTEST...]
 *   Runs the named subtests (default: all), each ending with a "# ok: subtest NAME" or
 *   "# FAIL ...: subtest NAME" line; exits 1 if any check failed. --rxe-compatible (the oracle
 *   run) skips bad_recv_wqe, moves flush_lockup's QP to ERR before the race starts, and lets a
 *   receive chain be accepted if it then fails harmlessly. Needs root (/proc/kallsyms
 *   addresses, /proc/iomem).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "raw_ring.h"
#include "attack.h"

/* The first 16 bytes of /proc/version: linux_banner starts with them. */
static char version[17];

/*
 * A QP whose send ring (4 SGEs: 512-byte slots) and receive ring (8 SGEs: 256-byte slots) have
 * slot sizes no CQ (64 bytes in rrxe, 128 in rxe) or SRQ of this process has.
 */
static const struct ibv_qp_cap ring_cap = { .max_send_wr = 64, .max_recv_wr = 64,
					    .max_send_sge = 4, .max_recv_sge = 8 };

static void kchain_send(void)
{
	struct ibv_qp_cap cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
				  .max_recv_sge = 1, .max_inline_data = 128 };
	struct ib_uverbs_send_wr wr = { .wr_id = 0xbad, .num_sge = 1,
					.opcode = IB_UVERBS_WR_SEND,
					.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED };
	struct ib_uverbs_sge sge = { .length = 64, .lkey = 0 };
	const char *how = "none";
	struct ibv_wc wc = { 0 };
	struct lp l;
	int banner, err, got;

	sge.addr = kernel_address(&banner, &how);
	CHECK(sge.addr, "a kernel address: %#llx, %s", (unsigned long long)sge.addr, how);
	if (!sge.addr)
		return;
	if (lp_create(&l, 0, cap)) {
		CHECK(0, "QP with 128 bytes of inline data, connected to itself");
		lp_destroy(&l);
		return;
	}
	memset(rbuf, 0, 4096);
	CHECK(!lp_recv(&l, 0x11, rbuf, 4096), "receive posted into a zeroed buffer");
	err = post_raw(IB_USER_VERBS_CMD_POST_SEND, l.qp->handle, &wr, sizeof(wr), &sge, 1);
	printf("# POST_SEND of an inline SEND from the kernel address: %s\n",
	       err ? strerror(err) : "accepted");
	got = !err && !wait_wc_for(l.rcq, &wc, 1);
	if (got)
		printf("# received: status %s, byte_len %u, \"%.16s\"\n",
		       ibv_wc_status_str(wc.status), wc.byte_len, (char *)rbuf);
	CHECK(!got, "no receive completion: the kernel sent nothing from the kernel address");
	CHECK(!memmem(rbuf, 4096, version, 16),
	      "the receive buffer holds no kernel memory (%s; /proc/version starts \"%s\")",
	      banner ? "linux_banner" : "content unknown", version);
	lp_drain(&l);
	CHECK(qp_state(l.qp) == IBV_QPS_RTS, "the QP is still in RTS");
	if (got)
		lp_recv(&l, 0x11, rbuf, 4096);
	CHECK(roundtrip(&l, 0x11, rbuf, 256, 0), "a normal SEND still arrives intact");
	lp_destroy(&l);
}

/*
 * A receive chain aimed at kernel memory through `command` ("what") for `handle`: refused (or,
 * for the oracle, accepted and then failing without data), and the QP or SRQ still receives.
 */
static void kchain_recv_common(const char *what, int with_srq, uint32_t command)
{
	struct ibv_qp_cap cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
				  .max_recv_sge = 1 };
	struct ib_uverbs_recv_wr wr = { .wr_id = 0xbad, .num_sge = 1 };
	struct ib_uverbs_sge sge = { .length = 64, .lkey = 0 };
	char before[512] = "", after[512] = "";
	const char *how = "none";
	struct ibv_wc wc = { 0 };
	struct lp l;
	int banner, err;

	sge.addr = kernel_address(&banner, &how);
	CHECK(sge.addr && read_file("/proc/version", before, sizeof(before)) > 0,
	      "a kernel address: %#llx, %s", (unsigned long long)sge.addr, how);
	if (!sge.addr)
		return;
	if (lp_create(&l, with_srq, cap)) {
		CHECK(0, "%s: QP connected to itself", what);
		lp_destroy(&l);
		return;
	}
	err = post_raw(command, with_srq ? l.srq->handle : l.qp->handle, &wr, sizeof(wr), &sge, 1);
	printf("# %s of a receive into the kernel address: %s\n", what,
	       err ? strerror(err) : "accepted");
	CHECK(err || !strict, "%s with work requests for a user %s refused", what,
	      with_srq ? "SRQ" : "QP");
	if (!err) {
		/* Accepted (rxe-compatible run): the chained receive comes first and must fail. */
		struct ibv_sge s = { .addr = (uintptr_t)sbuf, .length = 64, .lkey = mr->lkey };
		struct ibv_send_wr sw = { .wr_id = 0x20, .sg_list = &s, .num_sge = 1,
					  .opcode = IBV_WR_SEND }, *bad;

		CHECK(!ibv_post_send(l.qp, &sw, &bad) && !wait_wc(l.rcq, &wc) &&
			      wc.wr_id == 0xbad && wc.status != IBV_WC_SUCCESS,
		      "%s: the chained receive completes in error (%s)", what,
		      ibv_wc_status_str(wc.status));
		lp_drain(&l);
		CHECK(!lp_connect(&l, IBV_MTU_1024), "%s: reconnected", what);
	}
	CHECK(roundtrip(&l, 0x22, rbuf, 256, 1), "%s: a normal receive still gets a SEND intact",
	      what);
	CHECK(read_file("/proc/version", after, sizeof(after)) > 0 && !strcmp(before, after),
	      "%s: /proc/version unchanged", what);
	lp_destroy(&l);
}

static void kchain_recv(void)
{
	kchain_recv_common("POST_RECV", 0, IB_USER_VERBS_CMD_POST_RECV);
}

static void kchain_srq(void)
{
	kchain_recv_common("POST_SRQ_RECV", 1, IB_USER_VERBS_CMD_POST_SRQ_RECV);
}

/* The first field of a query result the driver never set that is not zero, or NULL. */
static const char *stale_field(const struct ibv_qp_attr *a)
{
	static const uint8_t zero[16];
	const struct ibv_ah_attr *p = &a->ah_attr, *x = &a->alt_ah_attr;

	if (p->static_rate || p->sl || p->dlid || p->src_path_bits)
		return "ah_attr (static_rate, sl, dlid, src_path_bits)";
	if (memcmp(x->grh.dgid.raw, zero, 16))
		return "alt_ah_attr.grh.dgid";
	if (x->grh.flow_label || x->grh.sgid_index || x->grh.hop_limit || x->grh.traffic_class)
		return "alt_ah_attr.grh";
	if (x->dlid || x->sl || x->src_path_bits || x->static_rate || x->port_num)
		return "alt_ah_attr (dlid, sl, src_path_bits, static_rate, port_num)";
	if (a->alt_pkey_index || a->alt_port_num || a->alt_timeout)
		return "alt_pkey_index, alt_port_num or alt_timeout";
	return NULL;
}

/* Creates and destroys a PD, a CQ, an MR and an AH: kernel allocations of assorted sizes. */
static int churn(void)
{
	struct ibv_ah_attr av = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = gid, .sgid_index = gid_index, .hop_limit = 64 } };
	struct ibv_pd *p = ibv_alloc_pd(ctx);
	struct ibv_cq *c = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_mr *m = ibv_reg_mr(pd, sbuf, 4096, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_ah *ah = ibv_create_ah(pd, &av);
	int ok = p && c && m && ah;

	if (ah && ibv_destroy_ah(ah))
		ok = 0;
	if (m && ibv_dereg_mr(m))
		ok = 0;
	if (c && ibv_destroy_cq(c))
		ok = 0;
	if (p && ibv_dealloc_pd(p))
		ok = 0;
	return ok;
}

static void query_qp_alt(void)
{
	static const uint32_t sizes[] = { 216, 224, 232, 240, 256 };
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
				  .max_recv_sge = 1 };
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	uint8_t spray[256];
	int stale = 0, churn_errs = 0, sprayed = 0, first = -1, i;
	const char *field = NULL;
	struct lp l;

	if (lp_create(&l, 0, cap)) {
		CHECK(0, "QP in RTS");
		lp_destroy(&l);
		return;
	}
	/* A POST_SEND whose WQE (copied into a kmalloc'ed buffer) is refused: num_sge 0x5a5a5a5a. */
	memset(spray, 0x5a, sizeof(spray));
	for (i = 0; i < 1000; i++) {
		if (i % 10 == 0 && !churn())
			churn_errs++;
		sprayed += post_raw(IB_USER_VERBS_CMD_POST_SEND, l.qp->handle, spray,
				    sizes[i % 5], NULL, 0) == EINVAL;
		memset(&a, 0xa5, sizeof(a));
		memset(&ia, 0xa5, sizeof(ia));
		if (ibv_query_qp(l.qp, &a, i % 2 ? IBV_QP_ALT_PATH | IBV_QP_AV | IBV_QP_STATE :
						  IBV_QP_RATE_LIMIT - 1, &ia)) {
			CHECK(0, "query %d", i);
			break;
		}
		const char *f = stale_field(&a);

		if (f && !stale++) {
			first = i;
			field = f;
			printf("# query %d: alt_ah_attr sl %u static_rate %u port %u is_global %u "
			       "dlid %#x; alt_pkey_index %u alt_port_num %u alt_timeout %u; "
			       "ah_attr static_rate %u\n",
			       i, a.alt_ah_attr.sl, a.alt_ah_attr.static_rate, a.alt_ah_attr.port_num,
			       a.alt_ah_attr.is_global, a.alt_ah_attr.dlid, a.alt_pkey_index,
			       a.alt_port_num, a.alt_timeout, a.ah_attr.static_rate);
		}
	}
	CHECK(!churn_errs && sprayed == 1000,
	      "slab churned: 100 rounds of PD, CQ, MR and AH (%d failed), 1000 refused POST_SENDs "
	      "of 0x5a (%d refused with EINVAL)", churn_errs, sprayed);
	CHECK(i == 1000 && !stale,
	      "%d queries in RTS: the alternate path and static rate are zero (%d not; first %d, %s)",
	      i, stale, first, field ? field : "-");
	lp_destroy(&l);
}

/* flush_lockup's threads: until `end`, keep the rings full / ring the doorbell. */
struct race {
	struct ibv_qp *qp;
	struct rxe_queue_buf *sq, *rq;
	uint32_t sq_mask, rq_mask;
	double end;
	double bell_max; /* the longest doorbell write(), seconds */
	long bells, bell_errs, scribbles;
};

static void *scribbler(void *arg)
{
	struct race *r = arg;
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	while (now() < r->end) {
		for (int i = 0; i < 256; i++) {
			uint32_t c;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/*
			 * 1 + (0 .. mask / 4) slots ahead of the consumer: always a few WQEs posted,
			 * never more than the ring holds, so a flush that re-reads the producer
			 * index keeps finding more for as long as this runs.
			 */
			c = __atomic_load_n(&r->sq->consumer_index, __ATOMIC_ACQUIRE);
			__atomic_store_n(&r->sq->producer_index,
					 (c + 1 + (uint32_t)(x & (r->sq_mask >> 2))) & r->sq_mask,
					 __ATOMIC_RELEASE);
			c = __atomic_load_n(&r->rq->consumer_index, __ATOMIC_ACQUIRE);
			__atomic_store_n(&r->rq->producer_index,
					 (c + 1 + (uint32_t)((x >> 32) & (r->rq_mask >> 2))) &
						 r->rq_mask,
					 __ATOMIC_RELEASE);
		}
		r->scribbles += 256;
	}
	return NULL;
}

static void *bell_ringer(void *arg)
{
	struct race *r = arg;

	while (now() < r->end) {
		double t0 = now();
		int e = doorbell(r->qp);
		double dt = now() - t0;

		if (dt > r->bell_max)
			r->bell_max = dt;
		r->bells++;
		r->bell_errs += e != 0;
	}
	return NULL;
}

/* Moves `qp` to ERR; how long that took, or -1 on failure. */
static double to_err(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	double t0 = now();

	return ibv_modify_qp(qp, &a, IBV_QP_STATE) ? -1 : now() - t0;
}

/*
 * The race runs for 3 s; rrxe's QP goes to ERR 100 ms into it. The oracle's goes to ERR first:
 * the C rxe's requester reads the ring unchecked in RTS (hence verbs_hostile is rrxe-only).
 */
static void flush_lockup(void)
{
	struct timespec end, d = { 0, 100 * 1000 * 1000 };
	double modify_time = 0, destroy_time, t0;
	struct race r = { 0 };
	int started = 0, st = -1;
	pthread_t t[2];
	struct lp l;

	if (lp_create(&l, 0, ring_cap)) {
		CHECK(0, "QP in RTS");
		lp_destroy(&l);
		return;
	}
	r.qp = l.qp;
	r.sq = find_ring(slot_log2(sizeof(struct rxe_send_wqe) +
				   MAX(l.cap.max_send_sge * sizeof(struct rxe_sge),
				       l.cap.max_inline_data)), NULL);
	r.rq = find_ring(slot_log2(sizeof(struct rxe_recv_wqe) +
				   l.cap.max_recv_sge * sizeof(struct rxe_sge)), NULL);
	CHECK(r.sq && r.rq && r.sq != r.rq, "the send and receive rings are mapped");
	if (!r.sq || !r.rq || r.sq == r.rq) {
		lp_destroy(&l);
		return;
	}
	r.sq_mask = r.sq->index_mask;
	r.rq_mask = r.rq->index_mask;
	if (!strict)
		modify_time = to_err(l.qp);
	r.end = now() + 3;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 3;
	if (!pthread_create(&t[0], NULL, scribbler, &r))
		started = 1 + !pthread_create(&t[1], NULL, bell_ringer, &r);
	CHECK(started == 2, "producer and doorbell threads started");
	if (started == 2 && strict) {
		nanosleep(&d, NULL);
		modify_time = to_err(l.qp);
	}
	/* Bounded: EINTR is the only error, and nothing here takes signals. */
	for (int i = 0; i < 100 && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL) ==
					   EINTR; i++)
		;
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	st = qp_state(l.qp);
	printf("# %ld producer writes, %ld doorbells (%ld failed), longest doorbell %.3f s, "
	       "modify to ERR %.3f s\n", r.scribbles, r.bells, r.bell_errs, r.bell_max,
	       modify_time);
	CHECK(modify_time >= 0 && st == IBV_QPS_ERR, "the QP moved to ERR %s the race",
	      strict ? "during" : "before");
	lp_drain(&l);
	t0 = now();
	lp_destroy(&l);
	destroy_time = now() - t0;
	CHECK(r.bell_max < 1 && modify_time < 1 && destroy_time < 1,
	      "every flush is bounded: longest doorbell %.3f s, modify %.3f s, destroy %.3f s "
	      "(limit 1 s)", r.bell_max, modify_time, destroy_time);
}

/* WRITE_WITH_IMM of `len` bytes at path MTU `mtu`, `flags` (IBV_SEND_INLINE or 0). */
static void write_imm(struct lp *l, enum ibv_mtu mtu, uint32_t len, unsigned int flags)
{
	struct ibv_sge sge = { .addr = (uintptr_t)sbuf, .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0x60, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .send_flags = flags,
				  .imm_data = htonl(0x1234abcd) };
	uint8_t *dst = rbuf + 16384;
	struct ibv_wc wc = { 0 };

	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = mr->rkey;
	fill(sbuf, len, len);
	memset(dst, 0, len);
	if (lp_connect(l, mtu) || lp_recv(l, 0x61, rbuf, 16)) {
		CHECK(0, "connect (MTU %d) and post a receive", 128 << mtu);
		return;
	}
	CHECK(!post_signaled(l->qp, &wr) && expect(l->scq, 0x60, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE),
	      "%u-byte%s WRITE_WITH_IMM at MTU %d completes", len, flags ? " inline" : "",
	      128 << mtu);
	CHECK(!wait_wc(l->rcq, &wc) && wc.wr_id == 0x61 && wc.status == IBV_WC_SUCCESS &&
		      wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && (wc.wc_flags & IBV_WC_WITH_IMM) &&
		      wc.imm_data == htonl(0x1234abcd) && !memcmp(dst, sbuf, len),
	      "its receive completion: RECV_RDMA_WITH_IMM, the immediate, the data (status %s, "
	      "opcode %d)", ibv_wc_status_str(wc.status), wc.opcode);
	CHECK(wc.byte_len == len, "byte_len %u is the length written (%u)", wc.byte_len, len);
}

static void wc_byte_len_imm(void)
{
	struct ibv_qp_cap cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
				  .max_recv_sge = 1, .max_inline_data = 512 };
	struct lp l;

	if (lp_create(&l, 0, cap)) {
		CHECK(0, "QP with 512 bytes of inline data");
		lp_destroy(&l);
		return;
	}
	write_imm(&l, IBV_MTU_1024, 10000, 0);
	/* Inline data is never sent by rrxe's direct loopback path: the packet path reports it. */
	write_imm(&l, IBV_MTU_256, 512, IBV_SEND_INLINE);
	lp_destroy(&l);
}

/* A receive WQE with `num_sge` SGEs written into the ring, then a SEND: an error, not RNR. */
static void bad_recv(uint32_t num_sge_over)
{
	struct lp l;
	struct rxe_queue_buf *rq;
	struct rxe_recv_wqe *w;
	struct ibv_sge sge = { .addr = (uintptr_t)sbuf, .length = 64, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0x70, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;
	int completed = 0, state = -1;
	struct ibv_wc wc = { 0 };
	uint32_t n;

	if (lp_create(&l, 0, ring_cap)) {
		CHECK(0, "QP in RTS");
		lp_destroy(&l);
		return;
	}
	n = num_sge_over ? l.cap.max_recv_sge + num_sge_over : 0xffffffff;
	rq = find_ring(slot_log2(sizeof(struct rxe_recv_wqe) +
				 l.cap.max_recv_sge * sizeof(struct rxe_sge)), NULL);
	CHECK(rq, "the receive ring is mapped");
	if (!rq) {
		lp_destroy(&l);
		return;
	}
	w = (struct rxe_recv_wqe *)next_slot(rq);
	w->wr_id = 0xbad;
	w->dma.num_sge = n;
	w->dma.length = w->dma.resid = 4096;
	w->dma.sge[0].addr = (uintptr_t)rbuf;
	w->dma.sge[0].length = 4096;
	w->dma.sge[0].lkey = mr->lkey;
	publish(rq);
	CHECK(!ibv_post_send(l.qp, &wr, &bad), "SEND posted onto a receive WQE with num_sge %#x "
	      "(max_recv_sge %u)", n, l.cap.max_recv_sge);
	for (double end = now() + 3; now() < end;) {
		struct timespec d = { 0, 10 * 1000 * 1000 };

		while (!completed && ibv_poll_cq(l.rcq, 1, &wc) == 1)
			completed = wc.wr_id == 0xbad;
		state = qp_state(l.qp);
		if ((completed && wc.status != IBV_WC_SUCCESS) || state == IBV_QPS_ERR)
			break;
		nanosleep(&d, NULL);
	}
	CHECK((completed && wc.status != IBV_WC_SUCCESS) || state == IBV_QPS_ERR,
	      "num_sge %#x: an error (receive completion: %s; QP state %d)", n,
	      completed ? ibv_wc_status_str(wc.status) : "none", state);
	lp_destroy(&l);
}

static void bad_recv_wqe(void)
{
	bad_recv(1);
	bad_recv(0);
}

#include "attack_races.h"
#include "attack_pipeline.h"
#include "attack_forged.h"
#include "attack_err.h"
#include "attack_flush.h"

static const struct {
	const char *name;
	void (*run)(void);
	int rrxe_only;
} subtests[] = {
	{ "kchain_send", kchain_send, 0 },   { "kchain_recv", kchain_recv, 0 },
	{ "kchain_srq", kchain_srq, 0 },     { "query_qp_alt", query_qp_alt, 0 },
	{ "flush_lockup", flush_lockup, 0 }, { "wc_byte_len_imm", wc_byte_len_imm, 0 },
	{ "bad_recv_wqe", bad_recv_wqe, 1 }, { "destroy_retrying", destroy_retrying, 0 },
	/* C rxe lets such a bind take a reference to the region being deregistered: its dereg
	 * then waits 50 s, WARNs and faults (seen on 7.2). */
	{ "mw_bind_dereg", mw_bind_dereg, 1 }, { "ah_other_pd", ah_other_pd, 0 },
	{ "qp_ring", qp_ring, 0 },           { "flush_deep", flush_deep, 0 },
	{ "forged_read_resp", forged_read_resp, 0 }, { "forged_atomic_ack", forged_atomic_ack, 0 },
	{ "forged_ack", forged_ack, 0 },   { "forged_read_short", forged_read_short, 0 },
	{ "err_race", err_race, 0 },
};
#define N_SUBTESTS (int)(sizeof(subtests) / sizeof(subtests[0]))

int main(int argc, char **argv)
{
	int run[N_SUBTESTS] = { 0 }, named = 0, r;

	for (int i = 3; i < argc; i++) {
		int j = 0;

		if (!strcmp(argv[i], "--rxe-compatible"))
			continue;
		while (j < N_SUBTESTS && strcmp(argv[i], subtests[j].name))
			j++;
		if (j == N_SUBTESTS) {
			fprintf(stderr, "%s: no subtest %s\n", argv[0], argv[i]);
			return 2;
		}
		run[j] = named = 1;
	}
	r = test_setup(argc, argv);
	if (r)
		return r;
	strict = 1;
	for (int i = 3; i < argc; i++)
		strict &= strcmp(argv[i], "--rxe-compatible") != 0;
	sbuf = aligned_alloc(4096, 2 * BUF_SIZE);
	rbuf = sbuf ? sbuf + BUF_SIZE : NULL;
	mr = sbuf ? ibv_reg_mr(pd, sbuf, 2 * BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
						IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) : NULL;
	CHECK(mr && read_file("/proc/version", version, sizeof(version)) == 16,
	      "buffers registered; /proc/version starts \"%s\"", version);
	if (!mr)
		return 1;
	for (int i = 0; i < N_SUBTESTS; i++) {
		int before = failures;

		if (named && !run[i])
			continue;
		printf("# subtest %s\n", subtests[i].name);
		if (subtests[i].rrxe_only && !strict) {
			printf("# SKIP subtest %s: rrxe only\n", subtests[i].name);
			continue;
		}
		subtests[i].run();
		CHECK(failures == before, "subtest %s", subtests[i].name);
	}
	CHECK(!ibv_dereg_mr(mr), "buffers deregistered");
	printf("# verbs_attack: %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
