/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RC helpers shared by the transfer tests: connecting a QP to a peer QP (RESET to RTS) and
 * waiting for an expected completion.
 */
#ifndef RRXE_VERBS_RC_H
#define RRXE_VERBS_RC_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

/* Newer than rdma-core 44's headers (kernel uapi values). */
#define ACCESS_FLUSH_GLOBAL (1 << 8)
#define ACCESS_FLUSH_PERSISTENT (1 << 9)
/* IB_UVERBS_DEVICE_FLUSH_PERSISTENT (rdma-core 44 has no name for it). */
#define DEVICE_FLUSH_PERSISTENT (1ULL << 39)
#define WC_FLUSH 8
#define FLUSH_GLOBAL 1
#define FLUSH_RANGE 0
#define FLUSH_MR 1

/* The remote rights the transfer tests give their QPs. */
#define RC_QP_ACCESS \
	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
	 ACCESS_FLUSH_GLOBAL)

/*
 * Takes `qp` through RESET, INIT, RTR and RTS towards QP `dest_qpn` at `dgid`, receiving from
 * PSN `rq_psn` and sending from `sq_psn` (MTU 1024, four READ/atomic credits out,
 * `dest_rd_atomic` responder resources, `retry_cnt` transport retries).
 */
static inline int rc_connect_psn(struct ibv_qp *qp, uint32_t dest_qpn, const union ibv_gid *dgid,
				 int sgid_index, uint8_t dest_rd_atomic, uint32_t rq_psn,
				 uint32_t sq_psn, uint8_t retry_cnt)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = RC_QP_ACCESS;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				      IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = dest_rd_atomic;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *dgid;
	a.ah_attr.grh.sgid_index = sgid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				      IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = 14;
	a.retry_cnt = retry_cnt;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
					 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					 IBV_QP_MAX_QP_RD_ATOMIC);
}

/* rc_connect_psn() with PSNs 0 and seven retries. */
static inline int rc_connect_rd(struct ibv_qp *qp, uint32_t dest_qpn, const union ibv_gid *dgid,
				int sgid_index, uint8_t dest_rd_atomic)
{
	return rc_connect_psn(qp, dest_qpn, dgid, sgid_index, dest_rd_atomic, 0, 0, 7);
}

/* rc_connect_rd() with four responder resources. */
static inline int rc_connect(struct ibv_qp *qp, uint32_t dest_qpn, const union ibv_gid *dgid,
			     int sgid_index)
{
	return rc_connect_rd(qp, dest_qpn, dgid, sgid_index, 4);
}

/* Waits up to `secs` seconds for one completion on `c`; 0 when one arrived. */
static inline int wait_wc_for(struct ibv_cq *c, struct ibv_wc *wc, int secs)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = ibv_poll_cq(c, 1, wc);

		if (n)
			return n == 1 ? 0 : -1;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > secs)
			return -1;
	}
}

static inline int wait_wc(struct ibv_cq *c, struct ibv_wc *wc)
{
	return wait_wc_for(c, wc, 5);
}

/*
 * Waits for the completion of `wr_id` on `c`; 1 when its status is `status` and, for a
 * success, its opcode is `opcode`. Prints what arrived otherwise.
 */
static inline int expect(struct ibv_cq *c, uint64_t wr_id, enum ibv_wc_status status,
			 int opcode)
{
	struct ibv_wc wc;

	if (wait_wc(c, &wc)) {
		printf("# no completion for wr_id %#llx\n", (unsigned long long)wr_id);
		return 0;
	}
	if (wc.wr_id != wr_id || wc.status != status ||
	    (status == IBV_WC_SUCCESS && (int)wc.opcode != opcode)) {
		printf("# wr_id %#llx: status %d (%s) opcode %d, wanted wr_id %#llx status %d "
		       "opcode %d\n",
		       (unsigned long long)wc.wr_id, wc.status, ibv_wc_status_str(wc.status),
		       wc.opcode, (unsigned long long)wr_id, status, opcode);
		return 0;
	}
	return 1;
}

/* Posts `wr` signaled. */
static inline int post_signaled(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	wr->send_flags |= IBV_SEND_SIGNALED;
	return ibv_post_send(qp, wr, &bad);
}

#endif /* RRXE_VERBS_RC_H */
