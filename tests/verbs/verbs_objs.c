// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_objs: the verbs objects other than CQs and the QP state machine, through the stock rxe
 * provider (librxe): device and port queries, address handles, shared receive queues (resize,
 * limit, ring capacity, attached QPs), memory windows, memory regions (keys, access rules,
 * pinning, re-registration), multicast attach/detach, PDs with live children, cleanup on close.
 *
 * Usage: verbs_objs DEVICE GID_INDEX [--rxe-compatible]
 *   GID_INDEX: the IPv4 RoCE v2 GID of port 1; --rxe-compatible skips the checks where rrxe is
 *   stricter than the C rxe (for the oracle run).
 *
 * Re-registration: librxe (rdma-core 44 up to current) has no rereg_mr, so ibv_rereg_mr() never
 * reaches the kernel (libibverbs' stub answers IBV_REREG_MR_ERR_CMD, errno EOPNOTSUPP); that is
 * checked as such. The driver's rereg_user_mr is then exercised with the uverbs write command
 * IB_USER_VERBS_CMD_REREG_MR on the context's public cmd_fd (what ibv_cmd_rereg_mr would send).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "testenv.h"


static struct ibv_device_attr_ex dev;
/*
 * Checks where rrxe follows the IBA more strictly than the C rxe (which accepts them): an SRQ
 * created with srq_limit above its max_wr (rxe stores and arms such a limit, although the
 * limit is only meaningful through modify_srq and ibv_create_srq documents it as irrelevant).
 * Off for the oracle run (`strict`, testenv.h).
 */

#define KIB 1024

/* The address vector of verbs_qp.c: loop back to our own GID. */
static void av(struct ibv_ah_attr *a, const union ibv_gid *dgid, int sgid_index)
{
	memset(a, 0, sizeof(*a));
	a->is_global = 1;
	a->grh.dgid = *dgid;
	a->grh.sgid_index = sgid_index;
	a->grh.hop_limit = 64;
	a->port_num = 1;
}

static struct ibv_ah *ah_to(struct ibv_pd *p, const union ibv_gid *dgid, int sgid_index)
{
	struct ibv_ah_attr a;

	av(&a, dgid, sgid_index);
	return ibv_create_ah(p, &a);
}

static struct ibv_qp *create_qp(enum ibv_qp_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.qp_type = type,
		.cap = { .max_send_wr = 4, .max_recv_wr = srq ? 0 : 4, .max_send_sge = 1,
			 .max_recv_sge = srq ? 0 : 1 },
	};

	return ibv_create_qp(pd, &a);
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
				 .qkey = 0x11111111 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(qp, &a, mask);
}

static int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
				 .dest_qp_num = qp->qp_num, .rq_psn = 0x123456,
				 .max_dest_rd_atomic = 4, .min_rnr_timer = 12 };
	int mask = IBV_QP_STATE;
	int ret;

	av(&a.ah_attr, &gid, gid_index);
	if (qp->qp_type == IBV_QPT_RC)
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	ret = ibv_modify_qp(qp, &a, mask);
	if (ret)
		return ret;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 0xabcdef, .timeout = 14,
				  .retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 4 };
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (qp->qp_type == IBV_QPT_RC)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, mask);
}

static enum ibv_qp_state state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &i))
		return -1;
	return a.qp_state;
}

/* ---------------------------------------------------------------------------------------- */

static void device(void)
{
	struct ibv_port_attr pa;
	struct ibv_gid_entry ge;
	struct ibv_device_attr *a = &dev.orig_attr;

	memset(&dev, 0, sizeof(dev));
	CHECK(ibv_query_device_ex(ctx, NULL, &dev) == 0, "query_device_ex");
	printf("# max_srq %d max_srq_wr %d max_srq_sge %d max_mr %d max_mw %d max_ah %d "
	       "max_mcast_grp %d max_mcast_qp_attach %d max_total_mcast_qp_attach %d "
	       "cap_flags %#x\n", a->max_srq, a->max_srq_wr, a->max_srq_sge, a->max_mr, a->max_mw,
	       a->max_ah, a->max_mcast_grp, a->max_mcast_qp_attach, a->max_total_mcast_qp_attach,
	       a->device_cap_flags);
	CHECK(a->phys_port_cnt == 1, "one port");
	CHECK(a->max_srq_wr == 1 << 20 && a->max_srq_sge == 27,
	      "max_srq_wr %d (2^20), max_srq_sge %d (27)", a->max_srq_wr, a->max_srq_sge);
	CHECK(a->max_srq > 0 && a->max_mr > 0 && a->max_mw > 0 && a->max_ah > 0 && a->max_pd > 0,
	      "SRQs, MRs, MWs, AHs and PDs advertised");
	CHECK(a->max_mcast_grp == 8192 && a->max_mcast_qp_attach == 56,
	      "max_mcast_grp %d (8192), max_mcast_qp_attach %d (56)", a->max_mcast_grp,
	      a->max_mcast_qp_attach);
	CHECK((a->device_cap_flags & (IBV_DEVICE_SRQ_RESIZE | IBV_DEVICE_MEM_WINDOW |
				      IBV_DEVICE_MEM_WINDOW_TYPE_2B | IBV_DEVICE_MEM_MGT_EXTENSIONS)) ==
		      (IBV_DEVICE_SRQ_RESIZE | IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B |
		       IBV_DEVICE_MEM_MGT_EXTENSIONS),
	      "cap flags: SRQ_RESIZE, MEM_WINDOW, MEM_WINDOW_TYPE_2B, MEM_MGT_EXTENSIONS");

	memset(&pa, 0, sizeof(pa));
	CHECK(ibv_query_port(ctx, 1, &pa) == 0, "query_port 1");
	CHECK(pa.state == IBV_PORT_ACTIVE, "port ACTIVE (%d)", pa.state);
	CHECK(pa.link_layer == IBV_LINK_LAYER_ETHERNET, "link layer Ethernet (%d)", pa.link_layer);
	CHECK(pa.gid_tbl_len == 1024, "gid_tbl_len %d (1024)", pa.gid_tbl_len);
	CHECK(pa.max_mtu == IBV_MTU_4096, "max_mtu 4096 (%d)", pa.max_mtu);
	errno = 0;
	CHECK(ibv_query_port(ctx, 2, &pa) != 0, "query_port 2 refused");
	CHECK(ibv_query_gid_ex(ctx, 1, gid_index, &ge, 0) == 0 && ge.gid_type == IBV_GID_TYPE_ROCE_V2 &&
		      !memcmp(&ge.gid, &gid, 16),
	      "GID %d is RoCE v2 (type %u)", gid_index, ge.gid_type);
	/* The port is RoCE v2 only (RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP): no RoCE v1 entries. */
	int v1 = 0, valid = 0;
	for (int i = 0; i < 16; i++)
		if (!ibv_query_gid_ex(ctx, 1, i, &ge, 0)) {
			valid++;
			v1 += ge.gid_type != IBV_GID_TYPE_ROCE_V2;
		}
	CHECK(valid >= 2 && !v1, "GIDs 0..15: %d valid, all RoCE v2 (%d not)", valid, v1);
}

/* ---------------------------------------------------------------------------------------- */

static void address_handles(void)
{
	struct ibv_ah *ah, *many[100];
	struct ibv_ah_attr a;
	struct ibv_gid_entry ge;
	struct ibv_pd *p;
	union ibv_gid mgid = { .raw = { [10] = 0xff, [11] = 0xff, 239, 1, 1, 1 } };
	int n;

	ah = ah_to(pd, &gid, gid_index);
	CHECK(ah, "create AH to our own GID (GRH, sgid %d, hop limit 64)", gid_index);
	if (ah)
		CHECK(ibv_destroy_ah(ah) == 0, "destroy AH");

	for (n = 0; n < 100; n++)
		if (!(many[n] = ah_to(pd, &gid, gid_index)))
			break;
	CHECK(n == 100, "100 AHs (%d created)", n);
	int bad = 0;
	while (n--)
		bad += ibv_destroy_ah(many[n]) != 0;
	CHECK(!bad, "destroy 100 AHs");

	ah = ah_to(pd, &mgid, gid_index);
	CHECK(ah, "AH to the multicast GID ::ffff:239.1.1.1");
	if (ah)
		ibv_destroy_ah(ah);

	errno = 0;
	CHECK(!ah_to(pd, &gid, 2000), "AH with sgid_index 2000 (beyond the table) refused");
	errno = 0;
	if (ibv_query_gid_ex(ctx, 1, 1000, &ge, 0) != 0)
		CHECK(!ah_to(pd, &gid, 1000), "AH with sgid_index 1000 (empty entry) refused");
	av(&a, &gid, gid_index);
	a.is_global = 0;
	errno = 0;
	CHECK(!ibv_create_ah(pd, &a), "AH without GRH refused on RoCE");
	av(&a, &gid, gid_index);
	a.port_num = 2;
	errno = 0;
	CHECK(!ibv_create_ah(pd, &a), "AH on port 2 refused");


	p = ibv_alloc_pd(ctx);
	ah = p ? ah_to(p, &gid, gid_index) : NULL;
	CHECK(ah, "AH on a second PD");
	if (ah) {
		CHECK(ibv_dealloc_pd(p) == EBUSY, "dealloc of a PD with a live AH: EBUSY");
		CHECK(ibv_destroy_ah(ah) == 0, "destroy AH");
	}
	if (p)
		CHECK(ibv_dealloc_pd(p) == 0, "dealloc the PD once the AH is gone");
}

/* ---------------------------------------------------------------------------------------- */

static int post_srq(struct ibv_srq *srq, int nsge, struct ibv_mr *mr)
{
	struct ibv_sge sge[4];
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = sge, .num_sge = nsge }, *bad = NULL;

	for (int i = 0; i < nsge; i++)
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)mr->addr + i * 64, .length = 64,
					   .lkey = mr->lkey };
	return ibv_post_srq_recv(srq, &wr, &bad);
}

/* Post single-SGE WRs until the ring refuses one (ENOMEM); the number accepted. */
static int fill_srq(struct ibv_srq *srq, struct ibv_mr *mr)
{
	int n = 0, ret = 0;

	while (n < (1 << 12) && (ret = post_srq(srq, 1, mr)) == 0)
		n++;
	return ret == ENOMEM ? n : -1;
}

static int srq_query(struct ibv_srq *srq, struct ibv_srq_attr *a)
{
	memset(a, 0, sizeof(*a));
	return ibv_query_srq(srq, a);
}

static int srq_modify(struct ibv_srq *srq, int mask, uint32_t max_wr, uint32_t limit)
{
	struct ibv_srq_attr a = { .max_wr = max_wr, .srq_limit = limit };

	return ibv_modify_srq(srq, &a, mask);
}

static void srqs(void)
{
	struct ibv_srq_init_attr ia = { .attr = { .max_wr = 16, .max_sge = 2, .srq_limit = 0 } };
	struct ibv_srq_init_attr_ex iax;
	struct ibv_srq_attr a;
	struct ibv_srq *srq, *s2;
	struct ibv_qp *qp;
	struct ibv_pd *p;
	struct ibv_mr *mr;
	char *buf = calloc(1, 4 * KIB);
	uint32_t cap;
	int n, ret;

	mr = ibv_reg_mr(pd, buf, 4 * KIB, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr, "MR for the receive WRs");
	if (!mr)
		return;

	srq = ibv_create_srq(pd, &ia);
	CHECK(srq, "create SRQ (16 WRs, 2 SGEs, limit 0)");
	if (!srq)
		return;
	printf("# SRQ: max_wr %u max_sge %u\n", ia.attr.max_wr, ia.attr.max_sge);
	CHECK(ia.attr.max_wr >= 16 && ia.attr.max_sge >= 2, "create returns max_wr %u >= 16",
	      ia.attr.max_wr);
	CHECK(srq_query(srq, &a) == 0 && a.max_wr >= 16 && a.max_sge == 2 && a.srq_limit == 0,
	      "query: max_wr %u max_sge %u limit %u", a.max_wr, a.max_sge, a.srq_limit);
	cap = a.max_wr;

	CHECK(srq_modify(srq, IBV_SRQ_LIMIT, 0, 4) == 0, "modify: limit 4");
	CHECK(srq_query(srq, &a) == 0 && a.srq_limit == 4, "query: limit %u", a.srq_limit);
	ret = srq_modify(srq, IBV_SRQ_LIMIT, 0, cap + 1);
	CHECK(ret != 0, "modify: limit %u above max_wr %u refused (%d)", cap + 1, cap, ret);
	CHECK(srq_query(srq, &a) == 0 && a.srq_limit == 4 && a.max_wr == cap,
	      "query: limit still 4 (%u), max_wr %u", a.srq_limit, a.max_wr);

	CHECK(srq_modify(srq, IBV_SRQ_MAX_WR, 64, 0) == 0, "modify: resize to 64");
	CHECK(srq_query(srq, &a) == 0 && a.max_wr >= 64 && a.srq_limit == 4 && a.max_sge == 2,
	      "query: max_wr %u, limit %u, max_sge %u", a.max_wr, a.srq_limit, a.max_sge);
	ret = srq_modify(srq, IBV_SRQ_MAX_WR, (1 << 20) + 1, 0);
	CHECK(ret != 0, "modify: resize to 2^20+1 (above max_srq_wr) refused (%d)", ret);
	ret = srq_modify(srq, IBV_SRQ_MAX_WR, 0, 0);
	CHECK(ret != 0, "modify: resize to 0 refused (%d)", ret);
	ret = srq_modify(srq, IBV_SRQ_MAX_WR, 2, 0);
	CHECK(ret != 0, "modify: resize to 2, below the limit 4, refused (%d)", ret);
	CHECK(srq_query(srq, &a) == 0 && a.max_wr >= 64, "query: still max_wr %u", a.max_wr);
	CHECK(srq_modify(srq, IBV_SRQ_MAX_WR, 8, 0) == 0, "modify: resize down to 8 (empty)");
	CHECK(srq_query(srq, &a) == 0 && a.max_wr >= 8 && a.srq_limit == 4,
	      "query: max_wr %u, limit %u", a.max_wr, a.srq_limit);
	cap = a.max_wr;

	/* Posting is user space: the ring the kernel sized holds exactly max_wr WRs. */
	CHECK(post_srq(srq, 2, mr) == 0, "post_srq_recv with 2 SGEs");
	ret = post_srq(srq, 3, mr);
	CHECK(ret == EINVAL, "post_srq_recv with 3 SGEs (max_sge 2) refused: EINVAL (%d)", ret);
	n = fill_srq(srq, mr);
	CHECK(n + 1 == (int)cap, "ring holds max_wr %u WRs (%d + 1 posted, then ENOMEM)", cap, n);
	ret = srq_modify(srq, IBV_SRQ_MAX_WR, 4, 0);
	CHECK(ret != 0, "modify: resize to 4 with %u WRs posted refused (%d)", cap, ret);
	CHECK(srq_query(srq, &a) == 0 && a.max_wr == cap, "query: max_wr still %u", a.max_wr);
	CHECK(srq_modify(srq, IBV_SRQ_MAX_WR, 64, 0) == 0, "modify: grow to 64 with %u WRs posted",
	      cap);
	CHECK(srq_query(srq, &a) == 0 && a.max_wr >= 64, "query: max_wr %u", a.max_wr);
	n = fill_srq(srq, mr);
	CHECK(n + cap == a.max_wr, "the posted WRs moved: %d more fit (max_wr %u, %u posted)", n,
	      a.max_wr, cap);

	/* An RC QP on the SRQ. */
	qp = create_qp(IBV_QPT_RC, srq);
	CHECK(qp, "create RC QP on the SRQ");
	if (qp) {
		struct ibv_recv_wr wr = { .wr_id = 1 }, *bad;

		CHECK(to_init(qp) == 0 && to_rts(qp) == 0 && state(qp) == IBV_QPS_RTS,
		      "SRQ QP: RESET->INIT->RTR->RTS");
		CHECK(ibv_post_recv(qp, &wr, &bad) != 0, "post_recv on a QP with an SRQ refused");
		CHECK(ibv_destroy_srq(srq) == EBUSY, "destroy of an SRQ with a QP: EBUSY");
		CHECK(ibv_destroy_qp(qp) == 0, "destroy the SRQ's QP");
	}
	p = ibv_alloc_pd(ctx);
	s2 = p ? ibv_create_srq(p, &(struct ibv_srq_init_attr){ .attr = { .max_wr = 4,
									   .max_sge = 1 } })
	       : NULL;
	CHECK(s2, "SRQ on a second PD");
	if (s2) {
		CHECK(ibv_dealloc_pd(p) == EBUSY, "dealloc of a PD with a live SRQ: EBUSY");
		CHECK(ibv_destroy_srq(s2) == 0, "destroy that SRQ");
	}
	if (p)
		CHECK(ibv_dealloc_pd(p) == 0, "dealloc the PD once the SRQ is gone");
	CHECK(ibv_destroy_srq(srq) == 0, "destroy SRQ (with WRs posted)");

	/* Creation limits. */
	errno = 0;
	ia = (struct ibv_srq_init_attr){ .attr = { .max_wr = 16, .max_sge = 28 } };
	CHECK(!ibv_create_srq(pd, &ia), "SRQ with 28 SGEs (max_srq_sge 27) refused");
	ia = (struct ibv_srq_init_attr){ .attr = { .max_wr = (1 << 20) + 1, .max_sge = 1 } };
	CHECK(!ibv_create_srq(pd, &ia), "SRQ with 2^20+1 WRs refused");
	ia = (struct ibv_srq_init_attr){ .attr = { .max_wr = 0, .max_sge = 1 } };
	CHECK(!ibv_create_srq(pd, &ia), "SRQ with 0 WRs refused");
	ia = (struct ibv_srq_init_attr){ .attr = { .max_wr = 1 << 20, .max_sge = 27 } };
	srq = ibv_create_srq(pd, &ia);
	CHECK(srq, "SRQ with 2^20 WRs and 27 SGEs");
	if (srq)
		ibv_destroy_srq(srq);
	ia = (struct ibv_srq_init_attr){ .attr = { .max_wr = 16, .max_sge = 1, .srq_limit = 8 } };
	srq = ibv_create_srq(pd, &ia);
	CHECK(srq && srq_query(srq, &a) == 0, "SRQ created with srq_limit 8");
	if (srq) {
		printf("# srq_limit after create with 8: %u\n", a.srq_limit);
		ibv_destroy_srq(srq);
	}
	ia = (struct ibv_srq_init_attr){ .attr = { .max_wr = 4, .max_sge = 1, .srq_limit = 100 } };
	srq = ibv_create_srq(pd, &ia);
	if (strict)
		CHECK(!srq, "SRQ created with srq_limit 100 above max_wr 4 refused");
	else if (srq)
		printf("# SRQ with srq_limit 100 > max_wr 4 accepted (rxe)\n");
	if (srq)
		ibv_destroy_srq(srq);

	/* The extended create: basic works, tag matching is not supported. */
	memset(&iax, 0, sizeof(iax));
	iax.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
	iax.srq_type = IBV_SRQT_BASIC;
	iax.pd = pd;
	iax.attr.max_wr = 8;
	iax.attr.max_sge = 1;
	srq = ibv_create_srq_ex(ctx, &iax);
	CHECK(srq, "create_srq_ex basic");
	if (srq)
		CHECK(ibv_destroy_srq(srq) == 0, "destroy it");
	iax.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ |
			IBV_SRQ_INIT_ATTR_TM;
	iax.srq_type = IBV_SRQT_TM;
	iax.cq = cq;
	iax.tm_cap.max_num_tags = 1;
	iax.tm_cap.max_ops = 1;
	errno = 0;
	srq = ibv_create_srq_ex(ctx, &iax);
	CHECK(!srq, "tag-matching SRQ refused");
	if (srq)
		ibv_destroy_srq(srq);
	ibv_dereg_mr(mr);
	free(buf);
}

/* ---------------------------------------------------------------------------------------- */

static void memory_windows(void)
{
	struct ibv_mw *mw1, *mw2, *mws[16];
	struct ibv_pd *p;
	int n, dup = 0;

	mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	CHECK(mw1 && mw1->type == IBV_MW_TYPE_1 && mw1->rkey >> 8,
	      "alloc type 1 MW (rkey %#x)", mw1 ? mw1->rkey : 0);
	mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	CHECK(mw2 && mw2->type == IBV_MW_TYPE_2 && mw2->rkey >> 8,
	      "alloc type 2 MW (rkey %#x)", mw2 ? mw2->rkey : 0);
	CHECK(mw1 && mw2 && mw1->rkey >> 8 != mw2->rkey >> 8, "MWs have different indices");
	if (mw1)
		CHECK(ibv_dealloc_mw(mw1) == 0, "dealloc type 1 MW");
	if (mw2)
		CHECK(ibv_dealloc_mw(mw2) == 0, "dealloc type 2 MW");
	errno = 0;
	mw1 = ibv_alloc_mw(pd, (enum ibv_mw_type)3);
	CHECK(!mw1, "MW type 3 refused");
	if (mw1)
		ibv_dealloc_mw(mw1);

	for (n = 0; n < 16; n++)
		if (!(mws[n] = ibv_alloc_mw(pd, n & 1 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2)))
			break;
	CHECK(n == 16, "16 MWs (%d)", n);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			dup += mws[i]->rkey == mws[j]->rkey;
	CHECK(!dup, "16 distinct MW rkeys");
	int bad = 0;
	while (n--)
		bad += ibv_dealloc_mw(mws[n]) != 0;
	CHECK(!bad, "dealloc 16 MWs");

	p = ibv_alloc_pd(ctx);
	mw1 = p ? ibv_alloc_mw(p, IBV_MW_TYPE_2) : NULL;
	CHECK(mw1, "MW on a second PD");
	if (mw1) {
		CHECK(ibv_dealloc_pd(p) == EBUSY, "dealloc of a PD with a live MW: EBUSY");
		CHECK(ibv_dealloc_mw(mw1) == 0, "dealloc MW");
	}
	if (p)
		CHECK(ibv_dealloc_pd(p) == 0, "dealloc the PD once the MW is gone");
}

/* ---------------------------------------------------------------------------------------- */

/*
 * ibv_cmd_rereg_mr by hand: IB_USER_VERBS_CMD_REREG_MR on the uverbs file. 0 or an errno;
 * the new keys in *lkey and *rkey.
 */
static int raw_rereg(struct ibv_mr *mr, int flags, struct ibv_pd *p, void *addr, size_t len,
		     int access, uint32_t *lkey, uint32_t *rkey)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_rereg_mr cmd;
	} req;
	struct ib_uverbs_rereg_mr_resp resp = { 0 };

	memset(&req, 0, sizeof(req));
	req.hdr.command = IB_USER_VERBS_CMD_REREG_MR;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	req.cmd.mr_handle = mr->handle;
	req.cmd.flags = flags;
	req.cmd.start = (uintptr_t)addr;
	req.cmd.length = len;
	req.cmd.hca_va = (uintptr_t)addr;
	req.cmd.pd_handle = p ? p->handle : 0;
	req.cmd.access_flags = access;
	if (write(ctx->cmd_fd, &req, sizeof(req)) != sizeof(req))
		return errno;
	if (lkey)
		*lkey = resp.lkey;
	if (rkey)
		*rkey = resp.rkey;
	return 0;
}

static void memory_regions(void)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	const size_t len = 64 * KIB;
	char *buf = malloc(len), *page, *ro;
	struct ibv_mr *mr, *mr2, *mrs[16];
	struct ibv_pd *pa, *pb, *pc;
	uint32_t lk = 0, rk = 0;
	int n, ret, dup = 0;

	mr = ibv_reg_mr(pd, buf, len, rw);
	CHECK(mr, "register 64 KiB (LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ)");
	if (!mr)
		return;
	printf("# MR: lkey %#x rkey %#x\n", mr->lkey, mr->rkey);
	CHECK(mr->lkey == mr->rkey, "lkey == rkey (rxe keys: index << 8 | key)");
	CHECK(mr->lkey >> 8 != 0, "key index %u is not 0", mr->lkey >> 8);
	CHECK(mr->addr == buf && mr->length == len && mr->pd == pd, "addr, length and PD recorded");
	mr2 = ibv_reg_mr(pd, buf, len, rw);
	CHECK(mr2 && mr2->lkey >> 8 != mr->lkey >> 8 && mr2->rkey != mr->rkey,
	      "the same buffer registered twice: different keys (%#x)", mr2 ? mr2->lkey : 0);
	CHECK(ibv_dealloc_pd(pd) == EBUSY, "dealloc of a PD with live MRs: EBUSY");
	if (mr2)
		CHECK(ibv_dereg_mr(mr2) == 0, "dereg the second MR");

	errno = 0;
	CHECK(!ibv_reg_mr(pd, buf, len, IBV_ACCESS_REMOTE_WRITE) && errno == EINVAL,
	      "REMOTE_WRITE without LOCAL_WRITE refused: EINVAL");
	errno = 0;
	CHECK(!ibv_reg_mr(pd, buf, len, IBV_ACCESS_REMOTE_ATOMIC) && errno == EINVAL,
	      "REMOTE_ATOMIC without LOCAL_WRITE refused: EINVAL");
	mr2 = ibv_reg_mr(pd, buf, len, 0);
	CHECK(mr2, "register with no access flags (local read)");
	if (mr2)
		ibv_dereg_mr(mr2);
	mr2 = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	CHECK(mr2, "register with MW_BIND");
	if (mr2)
		ibv_dereg_mr(mr2);
	mr2 = ibv_reg_mr(pd, buf + 1, 4 * KIB - 2, rw);
	CHECK(mr2, "register an unaligned range (buf + 1, 4094 B)");
	if (mr2)
		ibv_dereg_mr(mr2);

	/* Length 0: the core pins the pages the range touches; none at a page boundary. */
	page = mmap(NULL, 2 * 4 * KIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(page != MAP_FAILED, "mmap 2 pages");
	if (page == MAP_FAILED)
		return;
	memset(page, 1, 8 * KIB);
	errno = 0;
	mr2 = ibv_reg_mr(pd, page, 0, IBV_ACCESS_LOCAL_WRITE);
	CHECK(!mr2, "0-byte MR at a page boundary refused");
	if (mr2)
		ibv_dereg_mr(mr2);
	mr2 = ibv_reg_mr(pd, page + 100, 0, IBV_ACCESS_LOCAL_WRITE);
	printf("# 0-byte MR inside a page: %s (errno %d)\n", mr2 ? "registered" : "refused",
	       mr2 ? 0 : errno);
	if (mr2)
		ibv_dereg_mr(mr2);
	/* Pinning: unmapped memory, write access to read-only memory. */
	munmap(page + 4 * KIB, 4 * KIB);
	errno = 0;
	mr2 = ibv_reg_mr(pd, page + 4 * KIB, 4 * KIB, IBV_ACCESS_LOCAL_WRITE);
	CHECK(!mr2, "MR over unmapped memory refused (errno %d)", errno);
	if (mr2)
		ibv_dereg_mr(mr2);
	ro = page;
	CHECK(mprotect(ro, 4 * KIB, PROT_READ) == 0, "mprotect a page read-only");
	errno = 0;
	mr2 = ibv_reg_mr(pd, ro, 4 * KIB, IBV_ACCESS_LOCAL_WRITE);
	CHECK(!mr2, "LOCAL_WRITE MR over read-only memory refused (errno %d)", errno);
	if (mr2)
		ibv_dereg_mr(mr2);
	mr2 = ibv_reg_mr(pd, ro, 4 * KIB, IBV_ACCESS_REMOTE_READ);
	CHECK(mr2, "REMOTE_READ MR over read-only memory");
	if (mr2) {
		ret = raw_rereg(mr2, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				IBV_ACCESS_LOCAL_WRITE, NULL, NULL);
		CHECK(ret == EACCES, "rereg (uverbs) of a read-only MR to LOCAL_WRITE: EACCES (%d)",
		      ret);
		CHECK(ibv_dereg_mr(mr2) == 0, "dereg the read-only MR");
	}
	munmap(page, 4 * KIB);

	/* 16 MRs. */
	for (n = 0; n < 16; n++)
		if (!(mrs[n] = ibv_reg_mr(pd, buf + n * 4 * KIB, 4 * KIB, rw)))
			break;
	CHECK(n == 16, "16 MRs (%d)", n);
	for (int i = 0; i < n; i++) {
		dup += mrs[i]->lkey >> 8 == mr->lkey >> 8;
		for (int j = 0; j < i; j++)
			dup += mrs[i]->lkey >> 8 == mrs[j]->lkey >> 8;
	}
	CHECK(!dup, "16 distinct key indices");
	int bad = 0;
	while (n--)
		bad += ibv_dereg_mr(mrs[n]) != 0;
	CHECK(!bad, "dereg 16 MRs");

	/* ibv_rereg_mr: librxe has no rereg_mr, libibverbs' stub answers for it. */
	pb = ibv_alloc_pd(ctx);
	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pb, NULL, 0, 0);
	CHECK(ret == IBV_REREG_MR_ERR_CMD && errno == EOPNOTSUPP && mr->pd == pd,
	      "ibv_rereg_mr(CHANGE_PD): not in librxe (%d)", ret);
	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_LOCAL_WRITE);
	CHECK(ret == IBV_REREG_MR_ERR_CMD && errno == EOPNOTSUPP,
	      "ibv_rereg_mr(CHANGE_ACCESS): not in librxe (%d)", ret);
	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf, len / 2, 0);
	CHECK(ret == IBV_REREG_MR_ERR_CMD && errno == EOPNOTSUPP && mr->length == len,
	      "ibv_rereg_mr(CHANGE_TRANSLATION): not in librxe (%d)", ret);
	errno = 0;
	ret = ibv_rereg_mr(mr, 1 << 5, NULL, NULL, 0, 0);
	CHECK(ret == IBV_REREG_MR_ERR_INPUT && errno == EINVAL, "ibv_rereg_mr(unknown flag): input");
	if (pb)
		CHECK(ibv_dealloc_pd(pb) == 0, "the PD offered to ibv_rereg_mr is free");

	/* The driver's rereg_user_mr, through the uverbs command. */
	pa = ibv_alloc_pd(ctx);
	pb = ibv_alloc_pd(ctx);
	pc = ibv_alloc_pd(ctx);
	CHECK(pa && pb && pc, "three more PDs");
	if (!pa || !pb || !pc)
		return;
	mr2 = ibv_reg_mr(pa, buf, len, rw);
	CHECK(mr2, "MR on PD A");
	if (!mr2)
		return;
	ret = raw_rereg(mr2, IBV_REREG_MR_CHANGE_PD, pb, NULL, 0, 0, &lk, &rk);
	CHECK(ret == 0, "rereg (uverbs) CHANGE_PD to B (%d): keys %#x/%#x (were %#x/%#x)", ret, lk,
	      rk, mr2->lkey, mr2->rkey);
	if (!ret) {
		mr2->pd = pb;
		mr2->lkey = lk;
		mr2->rkey = rk;
		CHECK(ibv_dealloc_pd(pa) == 0, "PD A is free after the MR moved");
		pa = NULL;
		CHECK(ibv_dealloc_pd(pb) == EBUSY, "PD B holds the MR: EBUSY");
	}
	ret = raw_rereg(mr2, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, &lk, &rk);
	CHECK(ret == 0, "rereg (uverbs) CHANGE_ACCESS to LOCAL_WRITE|REMOTE_READ (%d)", ret);
	ret = raw_rereg(mr2, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_REMOTE_WRITE,
			NULL, NULL);
	CHECK(ret == EINVAL, "rereg (uverbs) CHANGE_ACCESS to REMOTE_WRITE alone: EINVAL (%d)", ret);
	ret = raw_rereg(mr2, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf, len / 2, 0, NULL, NULL);
	CHECK(ret == EOPNOTSUPP, "rereg (uverbs) CHANGE_TRANSLATION: EOPNOTSUPP (%d)", ret);
	ret = raw_rereg(mr2, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS, NULL, buf,
			len / 2, IBV_ACCESS_LOCAL_WRITE, NULL, NULL);
	CHECK(ret == EOPNOTSUPP, "rereg (uverbs) CHANGE_TRANSLATION|ACCESS: EOPNOTSUPP (%d)", ret);
	ret = raw_rereg(mr2, 0, NULL, NULL, 0, 0, NULL, NULL);
	CHECK(ret == EINVAL, "rereg (uverbs) with no flags: EINVAL (%d)", ret);
	ret = raw_rereg(mr2, IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS, pc, NULL, 0, rw,
			&lk, &rk);
	CHECK(ret == 0, "rereg (uverbs) CHANGE_PD|CHANGE_ACCESS to C (%d)", ret);
	if (!ret) {
		mr2->pd = pc;
		CHECK(ibv_dealloc_pd(pb) == 0, "PD B is free after the MR moved on");
		pb = NULL;
		CHECK(ibv_dealloc_pd(pc) == EBUSY, "PD C holds the MR: EBUSY");
	}
	CHECK(ibv_dereg_mr(mr2) == 0, "dereg the re-registered MR");
	bad = 0;
	if (pa)
		bad += ibv_dealloc_pd(pa) != 0;
	if (pb)
		bad += ibv_dealloc_pd(pb) != 0;
	CHECK(!bad && ibv_dealloc_pd(pc) == 0, "dealloc the PDs");

	CHECK(ibv_dereg_mr(mr) == 0, "dereg the first MR");
	free(buf);
}

/* ---------------------------------------------------------------------------------------- */

static void multicast(void)
{
	union ibv_gid mgid = { .raw = { [10] = 0xff, [11] = 0xff, 239, 1, 1, 1 } };
	union ibv_gid mgid2 = { .raw = { [10] = 0xff, [11] = 0xff, 239, 1, 1, 2 } };
	union ibv_gid mgid6 = { .raw = { 0xff, 0x0e, [15] = 1 } };
	struct ibv_qp *ud, *ud2, *rc, **qps;
	int max = dev.orig_attr.max_mcast_qp_attach, n, ret, bad;

	ud = create_qp(IBV_QPT_UD, NULL);
	ud2 = create_qp(IBV_QPT_UD, NULL);
	rc = create_qp(IBV_QPT_RC, NULL);
	CHECK(ud && ud2 && rc, "two UD QPs and an RC QP");
	if (!ud || !ud2 || !rc)
		return;
	CHECK(to_init(ud) == 0, "UD QP to INIT");
	CHECK(to_init(ud2) == 0 && to_rts(ud2) == 0, "second UD QP to RTS");

	CHECK(ibv_attach_mcast(ud, &mgid, 0) == 0, "attach the INIT UD QP to ::ffff:239.1.1.1");
	CHECK(ibv_attach_mcast(ud, &mgid, 0) == 0, "attach again: no-op");
	CHECK(ibv_attach_mcast(ud2, &mgid, 0) == 0, "attach the RTS UD QP to the same group");
	CHECK(ibv_attach_mcast(ud, &mgid2, 0) == 0, "attach the INIT UD QP to ::ffff:239.1.1.2");
	CHECK(ibv_attach_mcast(ud, &mgid6, 0) == 0, "attach the INIT UD QP to ff0e::1");
	ret = ibv_attach_mcast(rc, &mgid, 0);
	CHECK(ret == EINVAL, "attach of an RC QP refused: EINVAL (%d)", ret);
	ret = ibv_attach_mcast(ud, &gid, 0);
	CHECK(ret == EINVAL, "attach to a unicast GID refused: EINVAL (%d)", ret);
	ret = ibv_detach_mcast(ud2, &mgid2, 0);
	CHECK(ret == EINVAL, "detach from a group never attached: EINVAL (%d)", ret);
	ret = ibv_destroy_qp(ud);
	CHECK(ret == EBUSY, "destroy of a QP with attachments: EBUSY (%d)", ret);
	CHECK(ibv_detach_mcast(ud, &mgid, 0) == 0, "detach the INIT UD QP");
	ret = ibv_detach_mcast(ud, &mgid, 0);
	CHECK(ret == EINVAL, "detach again: EINVAL (%d)", ret);
	CHECK(ibv_detach_mcast(ud, &mgid2, 0) == 0 && ibv_detach_mcast(ud, &mgid6, 0) == 0,
	      "detach the other groups");
	CHECK(ibv_destroy_qp(ud) == 0, "destroy the UD QP");
	CHECK(ibv_detach_mcast(ud2, &mgid, 0) == 0, "detach the RTS UD QP (last member)");
	CHECK(ibv_attach_mcast(ud2, &mgid, 0) == 0 && ibv_detach_mcast(ud2, &mgid, 0) == 0,
	      "attach and detach again: the group was recreated");
	CHECK(ibv_destroy_qp(rc) == 0, "destroy the RC QP");

	/* max_mcast_qp_attach members per group. */
	if (max <= 0 || max > 256) {
		printf("# max_mcast_qp_attach %d: member limit check skipped\n", max);
		CHECK(ibv_destroy_qp(ud2) == 0, "destroy the second UD QP");
		return;
	}
	qps = calloc(max + 1, sizeof(*qps));
	for (n = 0; n <= max; n++)
		if (!(qps[n] = create_qp(IBV_QPT_UD, NULL)))
			break;
	CHECK(n == max + 1, "%d UD QPs (%d)", max + 1, n);
	if (n == max + 1) {
		bad = 0;
		for (int i = 0; i < max; i++)
			bad += ibv_attach_mcast(qps[i], &mgid, 0) != 0;
		CHECK(!bad, "%d QPs attached to one group", max);
		ret = ibv_attach_mcast(qps[max], &mgid, 0);
		CHECK(ret != 0, "member %d refused (%d)", max + 1, ret);
		CHECK(ibv_attach_mcast(qps[max], &mgid2, 0) == 0, "... but it joins another group");
		CHECK(ibv_attach_mcast(ud2, &mgid2, 0) == 0, "a second member of that group");
		bad = 0;
		for (int i = 0; i < max; i++)
			bad += ibv_detach_mcast(qps[i], &mgid, 0) != 0;
		CHECK(!bad, "detach %d members", max);
		CHECK(ibv_detach_mcast(qps[max], &mgid2, 0) == 0, "detach the last one");
	}
	bad = 0;
	while (n--)
		bad += ibv_destroy_qp(qps[n]) != 0;
	CHECK(!bad, "destroy the UD QPs");
	free(qps);
	/* ud2 stays attached to mgid2: closing the device detaches it. */
}

int main(int argc, char **argv)
{
	union ibv_gid mgid = { .raw = { [10] = 0xff, [11] = 0xff, 239, 1, 1, 3 } };
	struct ibv_qp *qp;
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 8, .max_sge = 1 } };
	static char buf[4 * KIB];

	int ret = test_setup(argc, argv);

	if (ret)
		return ret;

	device();
	address_handles();
	srqs();
	memory_windows();
	memory_regions();
	multicast();

	/* Left behind on purpose: closing the device cleans up. */
	ah_to(pd, &gid, gid_index);
	ibv_create_srq(pd, &sia);
	ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	qp = create_qp(IBV_QPT_UD, NULL);
	CHECK(qp && ibv_attach_mcast(qp, &mgid, 0) == 0, "a UD QP left attached");
	CHECK(ibv_close_device(ctx) == 0, "close device with live AH, SRQ, MW, MR, attached QP");
	printf("# verbs_objs: %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
