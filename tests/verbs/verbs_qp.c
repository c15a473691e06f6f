// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_qp: queue pairs through the stock rxe provider: creation and capability rounding,
 * over-limit capabilities, the IBA state machine (every transition RC/UC/UD take, illegal
 * transitions, missing and out-of-range attributes, the QP unchanged after a failed modify),
 * query_qp, PD with live children, destroy.
 *
 * Usage: verbs_qp DEVICE GID_INDEX [--rxe-compatible]
 *   GID_INDEX: the IPv4 RoCE v2 GID of port 1; --rxe-compatible skips the checks where rrxe is
 *   stricter than the C rxe (for the oracle run).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "testenv.h"


/*
 * Checks where rrxe follows the IBA more strictly than the C rxe (which accepts them): P_Key
 * index beyond the one-entry table, max_dest_rd_atomic above the device limit, retry_cnt above
 * 7, min_rnr_timer above 31, and SQD->RTS right after entering SQD (rxe drains
 * asynchronously). Off for the oracle run (`strict`, testenv.h).
 */

static struct ibv_qp *create(enum ibv_qp_type type, uint32_t swr, uint32_t rwr, uint32_t ssge,
			     uint32_t rsge, uint32_t inl)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = type,
		.cap = { .max_send_wr = swr, .max_recv_wr = rwr, .max_send_sge = ssge,
			 .max_recv_sge = rsge, .max_inline_data = inl },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	if (qp)
		printf("# qp %u type %d: send_wr %u recv_wr %u send_sge %u recv_sge %u inline %u\n",
		       qp->qp_num, type, a.cap.max_send_wr, a.cap.max_recv_wr, a.cap.max_send_sge,
		       a.cap.max_recv_sge, a.cap.max_inline_data);
	return qp;
}

static enum ibv_qp_state state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &i))
		return -1;
	return a.qp_state;
}

static int to_init(struct ibv_qp *qp, int extra_mask)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
				 .qkey = 0x11111111 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(qp, &a, mask | extra_mask);
}

static void av(struct ibv_qp_attr *a)
{
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.dgid = gid;
	a->ah_attr.grh.sgid_index = gid_index;
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.port_num = 1;
}

static int to_rtr(struct ibv_qp *qp, int drop_mask, struct ibv_qp_attr *over)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
				 .dest_qp_num = qp->qp_num, .rq_psn = 0x123456,
				 .max_dest_rd_atomic = 4, .min_rnr_timer = 12 };
	int mask = IBV_QP_STATE;

	av(&a);
	if (over)
		a = *over;
	if (qp->qp_type == IBV_QPT_RC)
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	else if (qp->qp_type == IBV_QPT_UC)
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	return ibv_modify_qp(qp, &a, mask & ~drop_mask);
}

static int to_rts(struct ibv_qp *qp, struct ibv_qp_attr *over)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS, .sq_psn = 0xabcdef, .timeout = 14,
				 .retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 4 };
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (over)
		a = *over;
	if (qp->qp_type == IBV_QPT_RC)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, mask);
}

static int to(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static void capabilities(void)
{
	struct ibv_qp *qp;

	qp = create(IBV_QPT_RC, 10, 10, 2, 2, 0);
	CHECK(qp, "create RC QP (10/10 WRs, 2/2 SGEs)");
	if (qp) {
		CHECK(qp->qp_num >= 16 && qp->qp_num < (1 << 20), "QPN %u in 16..2^20", qp->qp_num);
		CHECK(state(qp) == IBV_QPS_RESET, "new QP is in RESET");
		CHECK(ibv_destroy_qp(qp) == 0, "destroy");
	}
	qp = create(IBV_QPT_RC, 1, 1, 1, 1, 100);
	CHECK(qp, "create RC QP with 100 B inline");
	if (qp)
		ibv_destroy_qp(qp);
	qp = create(IBV_QPT_RC, 1 << 20, 1, 1, 1, 0);
	CHECK(qp, "max_send_wr = 2^20 (max_qp_wr)");
	if (qp)
		ibv_destroy_qp(qp);
	errno = 0;
	CHECK(!create(IBV_QPT_RC, (1 << 20) + 1, 1, 1, 1, 0), "max_send_wr above max_qp_wr refused");
	CHECK(!create(IBV_QPT_RC, 1, (1 << 20) + 1, 1, 1, 0), "max_recv_wr above max_qp_wr refused");
	CHECK(!create(IBV_QPT_RC, 1, 1, 33, 1, 0), "33 send SGEs refused");
	CHECK(!create(IBV_QPT_RC, 1, 1, 1, 33, 0), "33 recv SGEs refused");
	CHECK(!create(IBV_QPT_RC, 1, 1, 1, 1, 513), "513 B inline refused");
	qp = create(IBV_QPT_UD, 0, 4, 1, 1, 0);
	CHECK(qp, "UD QP with no send WRs");
	if (qp)
		ibv_destroy_qp(qp);
	CHECK(!create(IBV_QPT_RAW_PACKET, 4, 4, 1, 1, 0), "raw packet QP refused");
}

static void rc_uc_machine(enum ibv_qp_type type, const char *name)
{
	struct ibv_qp *qp = create(type, 16, 16, 1, 1, 0);
	struct ibv_qp_attr a, bad;
	struct ibv_qp_init_attr ia;

	CHECK(qp, "%s: create", name);
	if (!qp)
		return;
	CHECK(to(qp, IBV_QPS_RTS) != 0 && state(qp) == IBV_QPS_RESET, "%s: RESET->RTS refused", name);
	CHECK(to(qp, IBV_QPS_ERR) != 0 && state(qp) == IBV_QPS_RESET, "%s: RESET->ERR refused", name);
	CHECK(ibv_modify_qp(qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT }, IBV_QP_STATE) != 0,
	      "%s: RESET->INIT without PKEY/PORT/ACCESS refused", name);
	CHECK(to_init(qp, IBV_QP_DEST_QPN) != 0 && state(qp) == IBV_QPS_RESET,
	      "%s: RESET->INIT with an illegal attribute (DEST_QPN) refused", name);
	bad = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 2,
				    .qp_access_flags = 0 };
	CHECK(ibv_modify_qp(qp, &bad, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					 IBV_QP_ACCESS_FLAGS) != 0, "%s: port 2 refused", name);
	bad.port_num = 1;
	bad.pkey_index = 1;
	if (strict)
		CHECK(ibv_modify_qp(qp, &bad, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						 IBV_QP_ACCESS_FLAGS) != 0,
		      "%s: pkey index 1 refused", name);
	CHECK(to_init(qp, 0) == 0 && state(qp) == IBV_QPS_INIT, "%s: RESET->INIT", name);
	CHECK(to_init(qp, 0) == 0 && state(qp) == IBV_QPS_INIT, "%s: INIT->INIT", name);
	CHECK(to_rts(qp, NULL) != 0 && state(qp) == IBV_QPS_INIT, "%s: INIT->RTS refused", name);
	CHECK(to_rtr(qp, IBV_QP_DEST_QPN, NULL) != 0 && state(qp) == IBV_QPS_INIT,
	      "%s: INIT->RTR without DEST_QPN refused, still INIT", name);
	CHECK(to_rtr(qp, IBV_QP_AV, NULL) != 0, "%s: INIT->RTR without AV refused", name);
	bad = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = 7,
				    .dest_qp_num = qp->qp_num, .max_dest_rd_atomic = 1 };
	av(&bad);
	CHECK(to_rtr(qp, 0, &bad) != 0, "%s: path MTU 7 refused", name);
	if (type == IBV_QPT_RC) {
		bad.path_mtu = IBV_MTU_1024;
		bad.max_dest_rd_atomic = 200;
		if (strict)
			CHECK(to_rtr(qp, 0, &bad) != 0, "%s: max_dest_rd_atomic 200 refused", name);
		bad.max_dest_rd_atomic = 1;
		bad.min_rnr_timer = 32;
		if (strict)
			CHECK(to_rtr(qp, 0, &bad) != 0, "%s: min_rnr_timer 32 refused", name);
	}
	CHECK(state(qp) == IBV_QPS_INIT, "%s: still INIT after refused modifies", name);
	CHECK(to_rtr(qp, 0, NULL) == 0 && state(qp) == IBV_QPS_RTR, "%s: INIT->RTR", name);
	if (type == IBV_QPT_RC) {
		bad = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 32, .retry_cnt = 7,
					    .rnr_retry = 7, .max_rd_atomic = 1 };
		CHECK(to_rts(qp, &bad) != 0, "%s: timeout 32 refused", name);
		bad.timeout = 14;
		bad.retry_cnt = 8;
		if (strict)
			CHECK(to_rts(qp, &bad) != 0, "%s: retry_cnt 8 refused", name);
		bad.retry_cnt = 7;
		bad.max_rd_atomic = 129;
		CHECK(to_rts(qp, &bad) != 0, "%s: max_rd_atomic 129 refused", name);
	}
	CHECK(to_rts(qp, NULL) == 0 && state(qp) == IBV_QPS_RTS, "%s: RTR->RTS", name);

	memset(&a, 0, sizeof(a));
	CHECK(ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RQ_PSN | IBV_QP_DEST_QPN |
				   IBV_QP_PATH_MTU | IBV_QP_AV | IBV_QP_CAP, &ia) == 0,
	      "%s: query", name);
	CHECK(a.qp_state == IBV_QPS_RTS && a.sq_psn == 0xabcdef && a.rq_psn == 0x123456 &&
		      a.dest_qp_num == qp->qp_num && a.path_mtu == IBV_MTU_1024,
	      "%s: query: state %d sq_psn %#x rq_psn %#x dest %u mtu %d", name, a.qp_state,
	      a.sq_psn, a.rq_psn, a.dest_qp_num, a.path_mtu);
	CHECK(a.ah_attr.is_global && !memcmp(&a.ah_attr.grh.dgid, &gid, 16) &&
		      a.ah_attr.grh.sgid_index == gid_index && a.ah_attr.grh.hop_limit == 64,
	      "%s: query: address vector", name);
	if (type == IBV_QPT_RC) {
		CHECK(ibv_query_qp(qp, &a, IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					   IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC |
					   IBV_QP_MIN_RNR_TIMER, &ia) == 0 &&
			      a.timeout == 14 && a.retry_cnt == 7 && a.rnr_retry == 7 &&
			      a.max_rd_atomic == 4 && a.max_dest_rd_atomic == 4 &&
			      a.min_rnr_timer == 12,
		      "%s: query: timeout %u retry %u rnr %u rd_atomic %u/%u rnr_timer %u", name,
		      a.timeout, a.retry_cnt, a.rnr_retry, a.max_rd_atomic, a.max_dest_rd_atomic,
		      a.min_rnr_timer);
	}
	CHECK(ia.cap.max_send_wr >= 16 && ia.cap.max_recv_wr >= 16, "%s: query: caps", name);
	CHECK(to(qp, IBV_QPS_RTR) != 0 && state(qp) == IBV_QPS_RTS, "%s: RTS->RTR refused", name);
	CHECK(to(qp, IBV_QPS_RTS) == 0, "%s: RTS->RTS", name);
	CHECK(to(qp, IBV_QPS_SQD) == 0 && state(qp) == IBV_QPS_SQD, "%s: RTS->SQD", name);
	if (strict)
		CHECK(to(qp, IBV_QPS_RTS) == 0 && state(qp) == IBV_QPS_RTS, "%s: SQD->RTS", name);
	CHECK(to(qp, IBV_QPS_ERR) == 0 && state(qp) == IBV_QPS_ERR, "%s: RTS->ERR", name);
	CHECK(to(qp, IBV_QPS_RTS) != 0 && state(qp) == IBV_QPS_ERR, "%s: ERR->RTS refused", name);
	CHECK(to(qp, IBV_QPS_RESET) == 0 && state(qp) == IBV_QPS_RESET, "%s: ERR->RESET", name);
	CHECK(to_init(qp, 0) == 0, "%s: RESET->INIT again", name);
	CHECK(ibv_destroy_qp(qp) == 0, "%s: destroy", name);
}

static void ud_machine(void)
{
	struct ibv_qp *qp = create(IBV_QPT_UD, 16, 16, 1, 1, 0);

	CHECK(qp, "UD: create");
	if (!qp)
		return;
	CHECK(to_init(qp, IBV_QP_ACCESS_FLAGS) != 0, "UD: ACCESS_FLAGS illegal at RESET->INIT");
	CHECK(to_init(qp, 0) == 0 && state(qp) == IBV_QPS_INIT, "UD: RESET->INIT (QKEY)");
	CHECK(to_rtr(qp, 0, NULL) == 0 && state(qp) == IBV_QPS_RTR, "UD: INIT->RTR");
	CHECK(to_rts(qp, NULL) == 0 && state(qp) == IBV_QPS_RTS, "UD: RTR->RTS");
	CHECK(ibv_destroy_qp(qp) == 0, "UD: destroy");
}

/* The IBA transitions (qp_state_table): anything else must fail and leave the QP unchanged. */
static int legal(enum ibv_qp_state from, enum ibv_qp_state to)
{
	if (to == IBV_QPS_RESET)
		return 1;
	if (to == IBV_QPS_ERR)
		return from != IBV_QPS_RESET;
	switch (from) {
	case IBV_QPS_RESET:
		return to == IBV_QPS_INIT;
	case IBV_QPS_INIT:
		return to == IBV_QPS_INIT || to == IBV_QPS_RTR;
	case IBV_QPS_RTR:
		return to == IBV_QPS_RTS;
	case IBV_QPS_RTS:
		return to == IBV_QPS_RTS || to == IBV_QPS_SQD;
	case IBV_QPS_SQD:
		return to == IBV_QPS_SQD || to == IBV_QPS_RTS;
	case IBV_QPS_SQE:
		return to == IBV_QPS_RTS;
	default:
		return 0;
	}
}

/* Brings a new QP of `type` to `s` (RESET, INIT, RTR, RTS, SQD or ERR). */
static struct ibv_qp *qp_in(enum ibv_qp_type type, enum ibv_qp_state s)
{
	struct ibv_qp *qp = create(type, 4, 4, 1, 1, 0);
	int ok = qp != NULL;

	if (ok && s != IBV_QPS_RESET)
		ok = !to_init(qp, 0);
	if (ok && s != IBV_QPS_RESET && s != IBV_QPS_INIT && s != IBV_QPS_ERR)
		ok = !to_rtr(qp, 0, NULL);
	if (ok && (s == IBV_QPS_RTS || s == IBV_QPS_SQD))
		ok = !to_rts(qp, NULL);
	if (ok && (s == IBV_QPS_SQD || s == IBV_QPS_ERR))
		ok = !to(qp, s);
	if (!ok && qp) {
		ibv_destroy_qp(qp);
		qp = NULL;
	}
	return qp;
}

/* Every illegal transition from every reachable state, per QP type, with only the state. */
static void illegal_transitions(void)
{
	static const enum ibv_qp_state from[] = { IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR,
						  IBV_QPS_RTS, IBV_QPS_SQD, IBV_QPS_ERR };
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
	int tried = 0, refused = 0;

	for (unsigned int t = 0; t < 3; t++) {
		for (unsigned int f = 0; f < 6; f++) {
			if (!strict && from[f] == IBV_QPS_SQD)
				continue; /* rxe drains SQD asynchronously */
			for (int to_s = IBV_QPS_RESET; to_s <= IBV_QPS_ERR; to_s++) {
				struct ibv_qp *qp;

				if (legal(from[f], to_s))
					continue;
				qp = qp_in(types[t], from[f]);
				if (!qp) {
					CHECK(0, "type %d: reach state %d", types[t], from[f]);
					continue;
				}
				tried++;
				if (to(qp, to_s) != 0 && state(qp) == from[f])
					refused++;
				else
					printf("# type %d: %d -> %d accepted\n", types[t], from[f], to_s);
				ibv_destroy_qp(qp);
			}
		}
	}
	CHECK(tried > 0 && refused == tried,
	      "every illegal transition (RC, UC, UD) refused, QP unchanged (%d/%d)", refused, tried);
}

int main(int argc, char **argv)
{
	struct ibv_qp *qp;

	int ret = test_setup(argc, argv);

	if (ret)
		return ret;

	capabilities();
	rc_uc_machine(IBV_QPT_RC, "RC");
	rc_uc_machine(IBV_QPT_UC, "UC");
	ud_machine();
	illegal_transitions();

	qp = create(IBV_QPT_RC, 4, 4, 1, 1, 0);
	CHECK(qp, "QP for the PD test");
	errno = 0;
	CHECK(ibv_dealloc_pd(pd) == EBUSY, "dealloc of a PD with a live QP: EBUSY");
	CHECK(ibv_destroy_cq(cq) == EBUSY, "destroy of a CQ with a live QP: EBUSY");
	if (qp)
		CHECK(ibv_destroy_qp(qp) == 0, "destroy QP");

	/* QPNs are not reused at once. */
	struct ibv_qp *q1 = create(IBV_QPT_RC, 1, 1, 1, 1, 0);
	uint32_t n1 = q1 ? q1->qp_num : 0;
	if (q1)
		ibv_destroy_qp(q1);
	struct ibv_qp *q2 = create(IBV_QPT_RC, 1, 1, 1, 1, 0);
	CHECK(q2 && q2->qp_num != n1, "a destroyed QPN is not handed out again at once");
	if (q2)
		ibv_destroy_qp(q2);

	/* Left behind on purpose: closing the device cleans up. */
	create(IBV_QPT_RC, 8, 8, 1, 1, 0);
	create(IBV_QPT_UD, 8, 8, 1, 1, 0);
	CHECK(ibv_close_device(ctx) == 0, "close device with live QPs");
	printf("# verbs_qp: %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
