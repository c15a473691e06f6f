/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel RC data transfer between two QPs of the device (loopback through the packet pipeline),
 * the way ULPs (NVMe-oF, rdma_rw) use it: SEND into a posted receive, fast registration
 * (IB_WR_REG_MR) of the target buffer, RDMA WRITE, RDMA READ and FETCH_ADD against it, local
 * invalidation, and the remote access error that follows it. Included by rrxe_kverbs_test.c.
 */
#include <rdma/ib_cache.h>
#include <linux/etherdevice.h>
#include <linux/inet.h>

/* Polls one completion (up to 2 s); returns its status, or -1 on timeout. */
static int poll_one(struct ib_cq *cq, struct ib_wc *wc)
{
	int i;

	for (i = 0; i < 2000; i++) {
		if (ib_poll_cq(cq, 1, wc) == 1) {
			pr_info("kverbs: transfer wc wr_id %llu status %d opcode %d len %u\n",
				wc->wr_id, wc->status, wc->opcode, wc->byte_len);
			return wc->status;
		}
		usleep_range(500, 1000);
	}
	pr_info("kverbs: transfer: no completion within 2 s\n");
	return -1;
}

/*
 * The index of an IPv4 RoCE v2 GID of port 1, or -1; `mac` gets its netdev's address (kernel
 * consumers resolve the destination MAC themselves: here, the device's own).
 */
static int roce_v2_ipv4_gid(struct ib_device *ibdev, union ib_gid *gid, u8 *mac)
{
	struct net_device *ndev;
	int i;

	for (i = 0; i < 16; i++) {
		const struct ib_gid_attr *a = rdma_get_gid_attr(ibdev, 1, i);

		if (IS_ERR(a))
			continue;
		if (a->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((struct in6_addr *)a->gid.raw)) {
			*gid = a->gid;
			rcu_read_lock();
			ndev = rdma_read_gid_attr_ndev_rcu(a);
			if (!IS_ERR(ndev))
				ether_addr_copy(mac, ndev->dev_addr);
			rcu_read_unlock();
			rdma_put_gid_attr(a);
			return i;
		}
		rdma_put_gid_attr(a);
	}
	return -1;
}

/* Connects `qp` to QP `dest` of the device (RTS), its address vector at `static_rate`. */
static int connect_qp_at(struct ib_qp *qp, u32 dest, union ib_gid *gid, int sgid_index,
			 const u8 *mac, u8 static_rate)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT, .port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
				   IB_ACCESS_REMOTE_ATOMIC,
	};
	int ret;

	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			   IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = dest;
	a.rq_psn = 100;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, gid, 0, sgid_index, 64, 0);
	ether_addr_copy(a.ah_attr.roce.dmac, mac);
	a.ah_attr.static_rate = static_rate;
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
			   IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 100;
	a.max_rd_atomic = 4;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			    IB_QP_RNR_RETRY | IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC);
}

static int connect_qp(struct ib_qp *qp, u32 dest, union ib_gid *gid, int sgid_index,
		      const u8 *mac)
{
	return connect_qp_at(qp, dest, gid, sgid_index, mac, IB_RATE_PORT_CURRENT);
}

#define XFER 5000

/*
 * Atomics on fast-registered memory (a word in the second page of `dst`, registered as `mr`),
 * and the refusal of a kernel ATOMIC_WRITE. Not inlined: the debug kernel's stack frame limit.
 */
static noinline_for_stack void transfer_atomics(struct ib_qp *qa, struct ib_pd *pd,
						struct ib_cq *cq, struct ib_mr *mr, u8 *dst,
						u8 *back, u8 *src)
{
	u64 *word = (u64 *)(dst + PAGE_SIZE + 8), *old = (u64 *)back;
	struct ib_sge ss = { .addr = (uintptr_t)back, .length = 8, .lkey = pd->local_dma_lkey };
	struct ib_atomic_wr w = {
		.wr = { .wr_id = 8, .opcode = IB_WR_ATOMIC_FETCH_AND_ADD, .sg_list = &ss,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = mr->iova + PAGE_SIZE + 8, .compare_add = 5, .rkey = mr->rkey,
	};
	const struct ib_send_wr *bad;
	struct ib_wc wc;
	int ok;

	*word = 37;
	*old = 0;
	ok = ib_post_send(qa, &w.wr, &bad) == 0 && poll_one(cq, &wc) == IB_WC_SUCCESS &&
	     wc.wr_id == 8 && wc.opcode == IB_WC_FETCH_ADD;
	CHECK(ok && *old == 37 && *word == 42,
	      "transfer: FETCH_ADD on fast-registered memory (returned %llu, now %llu)",
	      (unsigned long long)*old, (unsigned long long)*word);

	/* The kernel API has no operand for ATOMIC_WRITE: refused, not sent with garbage. */
	if (strict) {
		struct ib_sge as = { .addr = (uintptr_t)src, .length = 8,
				     .lkey = pd->local_dma_lkey };
		struct ib_rdma_wr aw = {
			.wr = { .wr_id = 9, .opcode = IB_WR_ATOMIC_WRITE, .sg_list = &as,
				.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
			.remote_addr = mr->iova + PAGE_SIZE, .rkey = mr->rkey,
		};

		CHECK(ib_post_send(qa, &aw.wr, &bad) == -EOPNOTSUPP,
		      "transfer: a kernel IB_WR_ATOMIC_WRITE is refused with EOPNOTSUPP");
	}
}

/*
 * How a ULP reuses the MRs of its pool (ib_srp): the LOCAL_INV of the old key, then the
 * key bumped with ib_update_fast_reg_key and the REG_MR posted, before either ran. The
 * LOCAL_INV names the MR by its old key: the key a driver checks is the one of the last
 * registration it executed, not ib_mr's (rrxe failed this with a local protection error
 * and moved the QP to ERR, as SRP found).
 */
static noinline_for_stack void transfer_key_reuse(struct ib_qp *qa, struct ib_qp *qb,
						  struct ib_pd *pd, struct ib_cq *cq,
						  struct ib_mr *mr, void *dst, void *src,
						  union ib_gid *gid, int gidx, const u8 *mac)
{
	const struct ib_send_wr *bad;
	struct ib_wc wc;
	bool ok;
	u32 old = mr->rkey;
	struct ib_reg_wr reg = {
		.wr = { .wr_id = 21, .opcode = IB_WR_REG_MR, .send_flags = IB_SEND_SIGNALED },
		.mr = mr,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			  IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC,
	};
	struct ib_send_wr inv = { .wr_id = 20, .opcode = IB_WR_LOCAL_INV,
				  .send_flags = IB_SEND_SIGNALED,
				  .ex.invalidate_rkey = old, .next = &reg.wr };
	struct ib_sge ss = { .addr = (uintptr_t)src, .length = XFER,
			     .lkey = pd->local_dma_lkey };
	struct ib_rdma_wr w = {
		.wr = { .wr_id = 22, .opcode = IB_WR_RDMA_WRITE, .sg_list = &ss,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = mr->iova + 8,
	};
	int st1, st2;
	u64 id1, id2;

	ib_update_fast_reg_key(mr, ib_inc_rkey(old));
	reg.key = mr->rkey;
	CHECK(ib_post_send(qb, &inv, &bad) == 0, "transfer: LOCAL_INV and REG_MR of a new key posted");
	st1 = poll_one(cq, &wc);
	id1 = wc.wr_id;
	st2 = st1 == IB_WC_SUCCESS ? poll_one(cq, &wc) : -1;
	id2 = wc.wr_id;
	CHECK(st1 == IB_WC_SUCCESS && id1 == 20 && st2 == IB_WC_SUCCESS && id2 == 21,
	      "transfer: the LOCAL_INV of the old key and the REG_MR complete (%d, %d)",
	      st1, st2);
	memset(dst, 0, 2 * PAGE_SIZE);
	w.rkey = mr->rkey;
	ok = ib_post_send(qa, &w.wr, &bad) == 0 && poll_one(cq, &wc) == IB_WC_SUCCESS &&
	     wc.wr_id == 22;
	CHECK(ok && !memcmp(src, dst + 8, XFER),
	      "transfer: RDMA WRITE through the new key arrives intact");
	/*
	 * And the old key is dead: a driver that found MRs by index alone would take it. The
	 * remote access error moves both QPs to ERR; they are connected again for what follows.
	 */
	w.wr.wr_id = 23;
	w.rkey = old;
	CHECK(ib_post_send(qa, &w.wr, &bad) == 0 && poll_one(cq, &wc) == IB_WC_REM_ACCESS_ERR &&
	      wc.wr_id == 23, "transfer: a WRITE through the old key fails with a remote access error");
	CHECK(to_state(qa, IB_QPS_RESET) == 0 && to_state(qb, IB_QPS_RESET) == 0 &&
	      connect_qp(qa, qb->qp_num, gid, gidx, mac) == 0 &&
	      connect_qp(qb, qa->qp_num, gid, gidx, mac) == 0, "transfer: both QPs connected again");
}

static void transfer(struct ib_device *ibdev, struct ib_pd *pd)
{
	struct ib_qp_init_attr ia = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2,
			 .max_recv_sge = 2 },
	};
	const struct ib_send_wr *bad;
	const struct ib_recv_wr *rbad;
	struct ib_qp *qa = NULL, *qb = NULL;
	struct ib_mr *mr = NULL;
	struct scatterlist sg;
	union ib_gid gid;
	u8 mac[ETH_ALEN] = {};
	struct ib_cq *cq;
	struct ib_wc wc;
	u8 *src, *dst, *back;
	int gidx, i, ok;

	gidx = roce_v2_ipv4_gid(ibdev, &gid, mac);
	CHECK(gidx >= 0, "transfer: an IPv4 RoCE v2 GID (index %d)", gidx);
	if (gidx < 0)
		return;
	cq = ib_alloc_cq(ibdev, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(cq))
		return;
	ia.send_cq = ia.recv_cq = cq;
	src = kmalloc(2 * PAGE_SIZE, GFP_KERNEL);
	dst = kzalloc(2 * PAGE_SIZE, GFP_KERNEL);
	back = kzalloc(2 * PAGE_SIZE, GFP_KERNEL);
	if (!src || !dst || !back)
		goto out;
	for (i = 0; i < XFER; i++)
		src[i] = i * 7 + 3;
	qa = ib_create_qp(pd, &ia);
	qb = ib_create_qp(pd, &ia);
	CHECK(!IS_ERR(qa) && !IS_ERR(qb), "transfer: two RC QPs");
	if (IS_ERR(qa) || IS_ERR(qb))
		goto out;
	CHECK(connect_qp(qa, qb->qp_num, &gid, gidx, mac) == 0 &&
	      connect_qp(qb, qa->qp_num, &gid, gidx, mac) == 0, "transfer: connect them (RTS)");

	/* SEND of 5000 bytes in two SGEs into one receive buffer. */
	{
		struct ib_sge rs = { .addr = (uintptr_t)dst, .length = 2 * PAGE_SIZE,
				     .lkey = pd->local_dma_lkey };
		struct ib_recv_wr rwr = { .wr_id = 1, .sg_list = &rs, .num_sge = 1 };
		struct ib_sge ss[2] = {
			{ .addr = (uintptr_t)src, .length = 1000, .lkey = pd->local_dma_lkey },
			{ .addr = (uintptr_t)src + 1000, .length = XFER - 1000,
			  .lkey = pd->local_dma_lkey },
		};
		struct ib_send_wr swr = { .wr_id = 2, .opcode = IB_WR_SEND_WITH_IMM,
					  .sg_list = ss, .num_sge = 2,
					  .send_flags = IB_SEND_SIGNALED,
					  .ex.imm_data = cpu_to_be32(0x1234) };
		int got_send = 0, got_recv = 0;

		CHECK(ib_post_recv(qb, &rwr, &rbad) == 0, "transfer: post a receive");
		CHECK(ib_post_send(qa, &swr, &bad) == 0, "transfer: post SEND_WITH_IMM (5000 B)");
		for (i = 0; i < 2 && poll_one(cq, &wc) == IB_WC_SUCCESS; i++) {
			if (wc.wr_id == 2 && wc.opcode == IB_WC_SEND)
				got_send = 1;
			if (wc.wr_id == 1 && wc.opcode == IB_WC_RECV && wc.byte_len == XFER &&
			    (wc.wc_flags & IB_WC_WITH_IMM) && be32_to_cpu(wc.ex.imm_data) == 0x1234)
				got_recv = 1;
		}
		CHECK(got_send && got_recv, "transfer: send and receive completions");
		CHECK(!memcmp(src, dst, XFER), "transfer: the data arrived intact");
	}

	/* Fast registration of the target buffer on qb, then RDMA WRITE and READ from qa. */
	mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 2);
	CHECK(!IS_ERR(mr), "transfer: alloc an FRWR MR");
	if (IS_ERR(mr)) {
		mr = NULL;
		goto out;
	}
	memset(dst, 0, 2 * PAGE_SIZE);
	sg_init_one(&sg, dst, 2 * PAGE_SIZE);
	CHECK(ib_dma_map_sg(ibdev, &sg, 1, DMA_BIDIRECTIONAL) == 1 &&
	      ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE) == 1, "transfer: map the target buffer");
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	{
		struct ib_reg_wr reg = {
			.wr = { .wr_id = 3, .opcode = IB_WR_REG_MR, .send_flags = IB_SEND_SIGNALED },
			.mr = mr, .key = mr->rkey,
			.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
				  IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC,
		};

		CHECK(ib_post_send(qb, &reg.wr, &bad) == 0 && poll_one(cq, &wc) == IB_WC_SUCCESS &&
		      wc.wr_id == 3 && wc.opcode == IB_WC_REG_MR,
		      "transfer: REG_MR completes as IB_WC_REG_MR");
	}
	{
		struct ib_sge ss = { .addr = (uintptr_t)src, .length = XFER,
				     .lkey = pd->local_dma_lkey };
		struct ib_rdma_wr w = {
			.wr = { .wr_id = 4, .opcode = IB_WR_RDMA_WRITE, .sg_list = &ss,
				.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
			.remote_addr = mr->iova + 100, .rkey = mr->rkey,
		};

		ok = ib_post_send(qa, &w.wr, &bad) == 0 && poll_one(cq, &wc) == IB_WC_SUCCESS &&
		     wc.wr_id == 4;
		CHECK(ok, "transfer: RDMA WRITE of 5000 B into the fast-registered MR");
		CHECK(!memcmp(src, dst + 100, XFER), "transfer: the written data is intact");
	}
	{
		struct ib_sge ss = { .addr = (uintptr_t)back, .length = XFER,
				     .lkey = pd->local_dma_lkey };
		struct ib_rdma_wr w = {
			.wr = { .wr_id = 5, .opcode = IB_WR_RDMA_READ, .sg_list = &ss,
				.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
			.remote_addr = mr->iova + 100, .rkey = mr->rkey,
		};

		ok = ib_post_send(qa, &w.wr, &bad) == 0 && poll_one(cq, &wc) == IB_WC_SUCCESS &&
		     wc.wr_id == 5 && wc.opcode == IB_WC_RDMA_READ;
		CHECK(ok, "transfer: RDMA READ of 5000 B back");
		CHECK(!memcmp(src, back, XFER), "transfer: the read data is intact");
	}
	/*
	 * A SEND into a receive buffer named by the fast-registered MR's lkey: between two QPs of
	 * one device it must arrive whole (issue #33, finding 8: the direct loopback path failed
	 * it with a local protection error instead of leaving it to packets).
	 */
	{
		struct ib_sge rs = { .addr = mr->iova, .length = XFER, .lkey = mr->lkey };
		struct ib_recv_wr rwr = { .wr_id = 18, .sg_list = &rs, .num_sge = 1 };
		struct ib_sge ss = { .addr = (uintptr_t)src, .length = XFER,
				     .lkey = pd->local_dma_lkey };
		struct ib_send_wr swr = { .wr_id = 19, .opcode = IB_WR_SEND, .sg_list = &ss,
					  .num_sge = 1, .send_flags = IB_SEND_SIGNALED };
		int got_send = 0, got_recv = 0;

		memset(dst, 0, 2 * PAGE_SIZE);
		CHECK(ib_post_recv(qb, &rwr, &rbad) == 0 && ib_post_send(qa, &swr, &bad) == 0,
		      "transfer: SEND into a fast-registered receive buffer posted");
		for (i = 0; i < 2 && poll_one(cq, &wc) == IB_WC_SUCCESS; i++) {
			got_send |= wc.wr_id == 19 && wc.opcode == IB_WC_SEND;
			got_recv |= wc.wr_id == 18 && wc.opcode == IB_WC_RECV && wc.byte_len == XFER;
		}
		CHECK(got_send && got_recv && !memcmp(src, dst, XFER),
		      "transfer: SEND of 5000 B into a fast-registered receive buffer arrives intact");
	}
	transfer_atomics(qa, pd, cq, mr, dst, back, src);
	transfer_key_reuse(qa, qb, pd, cq, mr, dst, src, &gid, gidx, mac);
	{
		struct ib_send_wr inv = { .wr_id = 6, .opcode = IB_WR_LOCAL_INV,
					  .send_flags = IB_SEND_SIGNALED,
					  .ex.invalidate_rkey = mr->rkey };
		struct ib_sge ss = { .addr = (uintptr_t)src, .length = 64,
				     .lkey = pd->local_dma_lkey };
		struct ib_rdma_wr w = {
			.wr = { .wr_id = 7, .opcode = IB_WR_RDMA_WRITE, .sg_list = &ss,
				.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
			.remote_addr = mr->iova, .rkey = mr->rkey,
		};

		CHECK(ib_post_send(qb, &inv, &bad) == 0 && poll_one(cq, &wc) == IB_WC_SUCCESS &&
		      wc.wr_id == 6, "transfer: LOCAL_INV completes");
		CHECK(ib_post_send(qa, &w.wr, &bad) == 0 &&
		      poll_one(cq, &wc) == IB_WC_REM_ACCESS_ERR && wc.wr_id == 7,
		      "transfer: a WRITE to the invalidated rkey fails with a remote access error");
	}
out:
	if (mr)
		ib_dereg_mr(mr);
	if (!IS_ERR_OR_NULL(qa))
		ib_destroy_qp(qa);
	if (!IS_ERR_OR_NULL(qb))
		ib_destroy_qp(qb);
	kfree(src);
	kfree(dst);
	kfree(back);
	ib_free_cq(cq);
}
