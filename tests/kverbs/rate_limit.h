/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Send rate limits the way a kernel consumer sets them: IB_QP_RATE_LIMIT (kbit/s) on an RC QP
 * in RTS, changed on the fly, then lifted; the static rate of the address vector kept and
 * reported back. Streams of SENDs between two QPs of the device (through the packet
 * pipeline: a limited QP never takes the direct path) are timed and must keep within 10 % of
 * the limit; an unlimited run first measures the device, and the limits (8 and 4 Mbit/s, or a
 * quarter and an eighth of that where the device is slower: the debug kernel) stay below it,
 * so the check can fail. C rxe refuses IB_QP_RATE_LIMIT (EOPNOTSUPP): strict only. Included by
 * rrxe_kverbs_test.c after transfer.h.
 */
#include <linux/ktime.h>

#define RL_MSG 65536
#define RL_DEPTH 8

/*
 * Streams `total` bytes of SENDs of RL_MSG from qa to qb (RL_DEPTH in flight, receives kept
 * posted), every completion checked; returns the payload rate in kbit/s, or 0 on failure.
 */
static u64 rl_stream(struct ib_qp *qa, struct ib_qp *qb, struct ib_cq *cq, struct ib_pd *pd,
		     u8 *src, u8 *dst, u64 total)
{
	struct ib_sge ss = { .addr = (uintptr_t)src, .length = RL_MSG,
			     .lkey = pd->local_dma_lkey };
	struct ib_sge rs = { .addr = (uintptr_t)dst, .length = RL_MSG,
			     .lkey = pd->local_dma_lkey };
	struct ib_send_wr swr = { .wr_id = 1, .opcode = IB_WR_SEND, .sg_list = &ss, .num_sge = 1,
				  .send_flags = IB_SEND_SIGNALED };
	struct ib_recv_wr rwr = { .wr_id = 2, .sg_list = &rs, .num_sge = 1 };
	const struct ib_send_wr *bad;
	const struct ib_recv_wr *rbad;
	u64 n = total / RL_MSG, posted = 0, sent = 0, received = 0;
	ktime_t t0, deadline;
	struct ib_wc wc[8];
	int i, got;

	for (i = 0; i < RL_DEPTH; i++)
		if (ib_post_recv(qb, &rwr, &rbad))
			return 0;
	t0 = ktime_get();
	deadline = ktime_add_ms(t0, 20000);
	while (sent < n || received < n) {
		while (posted < n && posted - sent < RL_DEPTH) {
			if (ib_post_send(qa, &swr, &bad))
				return 0;
			posted++;
		}
		got = ib_poll_cq(cq, ARRAY_SIZE(wc), wc);
		for (i = 0; i < got; i++) {
			if (wc[i].status != IB_WC_SUCCESS) {
				pr_info("kverbs: rate: wr_id %llu status %d\n", wc[i].wr_id,
					wc[i].status);
				return 0;
			}
			if (wc[i].wr_id == 1) {
				sent++;
			} else if (wc[i].byte_len == RL_MSG) {
				received++;
				if (received + RL_DEPTH <= n && ib_post_recv(qb, &rwr, &rbad))
					return 0;
			}
		}
		if (ktime_after(ktime_get(), deadline)) {
			pr_info("kverbs: rate: %llu of %llu sent in 20 s\n", sent, n);
			return 0;
		}
		if (!got)
			usleep_range(100, 200);
	}
	return div64_u64(n * RL_MSG * 8 * USEC_PER_SEC,
			 max_t(u64, ktime_us_delta(ktime_get(), t0), 1) * 1000);
}

/*
 * Whether `kbps` is within 10 % of `limit`. Under KASAN (the debug kernel, under TCG) a paced
 * QP's timer wakes come milliseconds late, more than the pacer makes up: there the limit must
 * hold (never 10 % above) and the rate reach a quarter of it.
 */
static bool rl_near(u64 kbps, u32 limit)
{
	u64 low = IS_ENABLED(CONFIG_KASAN) ? (u64)limit * 10 / 4 : (u64)limit * 9;

	return kbps * 10 >= low && kbps * 10 <= (u64)limit * 11;
}

/* The bytes a stream at `kbps` sends in about a second: whole messages, at least two. */
static u64 rl_bytes(u32 kbps)
{
	return max_t(u64, 2, (u64)kbps * 1000 / 8 / RL_MSG) * RL_MSG;
}

static int rl_set(struct ib_qp *qp, u32 kbps)
{
	struct ib_qp_attr a = { .rate_limit = kbps };

	return ib_modify_qp(qp, &a, IB_QP_RATE_LIMIT);
}

static noinline_for_stack void rate_limit(struct ib_device *ibdev, struct ib_pd *pd)
{
	struct ib_qp_init_attr ia = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ib_qp *qa = NULL, *qb = NULL;
	struct ib_qp_init_attr qia;
	struct ib_qp_attr qa_attr;
	u8 mac[ETH_ALEN] = {};
	u64 fast, slow, slower, lifted;
	u32 lim;
	union ib_gid gid;
	struct ib_cq *cq;
	u8 *src, *dst;
	int gidx;

	if (!strict)
		return;
	gidx = roce_v2_ipv4_gid(ibdev, &gid, mac);
	if (gidx < 0)
		return;
	cq = ib_alloc_cq(ibdev, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(cq))
		return;
	ia.send_cq = ia.recv_cq = cq;
	src = kzalloc(RL_MSG, GFP_KERNEL);
	dst = kzalloc(RL_MSG, GFP_KERNEL);
	if (!src || !dst)
		goto out;
	qa = ib_create_qp(pd, &ia);
	qb = ib_create_qp(pd, &ia);
	if (IS_ERR(qa) || IS_ERR(qb) || connect_qp(qa, qb->qp_num, &gid, gidx, mac) ||
	    connect_qp(qb, qa->qp_num, &gid, gidx, mac)) {
		CHECK(0, "rate: two connected RC QPs");
		goto out;
	}
	/*
	 * Unlimited: how fast this device goes. The limits are below a quarter of that (8 Mbit/s
	 * on the fast kernel; less where KASAN and TCG slow everything), so they are real ones,
	 * and each stream takes about a second.
	 */
	fast = rl_stream(qa, qb, cq, pd, src, dst, 4 << 20);
	lim = min_t(u64, 8000, fast / 4);
	CHECK(lim >= 200, "rate: unlimited, %llu kbit/s (limits of %u and %u kbit/s below it)", fast,
	      lim, lim / 2);
	if (lim < 200)
		goto out;

	CHECK(rl_set(qa, lim) == 0, "rate: IB_QP_RATE_LIMIT %u kbit/s in RTS", lim);
	CHECK(ib_query_qp(qa, &qa_attr, IB_QP_RATE_LIMIT, &qia) == 0 &&
	      qa_attr.rate_limit == lim, "rate: Query QP reports the limit (%u)",
	      qa_attr.rate_limit);
	slow = rl_stream(qa, qb, cq, pd, src, dst, rl_bytes(lim));
	CHECK(rl_near(slow, lim), "rate: limited to %u kbit/s, sent at %llu kbit/s", lim, slow);

	CHECK(rl_set(qa, lim / 2) == 0, "rate: the limit changed to %u kbit/s", lim / 2);
	slower = rl_stream(qa, qb, cq, pd, src, dst, rl_bytes(lim / 2));
	CHECK(rl_near(slower, lim / 2), "rate: limited to %u kbit/s, sent at %llu kbit/s", lim / 2,
	      slower);

	CHECK(rl_set(qa, 0) == 0, "rate: the limit lifted (0)");
	lifted = rl_stream(qa, qb, cq, pd, src, dst, 4 << 20);
	CHECK(lifted >= 2 * lim, "rate: unlimited again, %llu kbit/s", lifted);

	/*
	 * A static rate is kept and reported (2.5 Gb/s: more than this device reaches here); the
	 * address vector is set in RTR, so qa connects again.
	 */
	{
		struct ib_qp_attr a;

		CHECK(to_state(qa, IB_QPS_RESET) == 0 &&
		      connect_qp_at(qa, qb->qp_num, &gid, gidx, mac, IB_RATE_2_5_GBPS) == 0,
		      "rate: connected again at a static rate of 2.5 Gb/s");
		memset(&a, 0, sizeof(a));
		CHECK(ib_query_qp(qa, &a, IB_QP_AV, &qia) == 0 &&
		      a.ah_attr.static_rate == IB_RATE_2_5_GBPS,
		      "rate: Query QP reports the static rate (%u)", a.ah_attr.static_rate);
	}
out:
	if (!IS_ERR_OR_NULL(qa))
		ib_destroy_qp(qa);
	if (!IS_ERR_OR_NULL(qb))
		ib_destroy_qp(qb);
	kfree(src);
	kfree(dst);
	ib_free_cq(cq);
}
