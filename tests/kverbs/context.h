/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The completion-context rule of Documentation/infiniband/core_locking.rst: a consumer's
 * completion handler is never called from inside its own verb call (post_send, post_recv,
 * poll_cq, req_notify_cq), so a ULP may hold a lock across its verb calls that its handler
 * also takes. This consumer does exactly that with a spinlock (interrupts off, as ULPs do):
 * a handler run inside the call is counted (it returns at once instead of deadlocking), and
 * on the debug kernel lockdep sees the lock taken in both contexts. It also proves the verbs do
 * not sleep: they run with the spinlock held.
 *
 * Two QPs of the device are connected through the packet pipeline; the sender's CQ is armed
 * before every post. Then the sender moves to ERR and posts again: those completions are
 * flushes, written in the post itself. Included by rrxe_kverbs_test.c.
 */
#include <linux/sched.h>
#include <linux/spinlock.h>

static DEFINE_SPINLOCK(ctx_lock);
/* The task inside a verb call with ctx_lock held, or NULL. */
static struct task_struct *ctx_in_verb;
static atomic_t ctx_events, ctx_nested;

static void ctx_comp_handler(struct ib_cq *cq, void *arg)
{
	unsigned long flags;

	if (READ_ONCE(ctx_in_verb) == current) {
		/* Called from inside the verb: taking ctx_lock would deadlock. */
		atomic_inc(&ctx_nested);
		return;
	}
	spin_lock_irqsave(&ctx_lock, flags);
	atomic_inc(&ctx_events);
	spin_unlock_irqrestore(&ctx_lock, flags);
}

/* Enters a verb call the way a ULP does: its lock held, interrupts off. */
#define CTX_ENTER(flags)                                 \
	do {                                             \
		spin_lock_irqsave(&ctx_lock, flags);     \
		WRITE_ONCE(ctx_in_verb, current);        \
	} while (0)
#define CTX_LEAVE(flags)                                 \
	do {                                             \
		WRITE_ONCE(ctx_in_verb, NULL);           \
		spin_unlock_irqrestore(&ctx_lock, flags); \
	} while (0)

/* Polls (under the lock, CQ re-armed each time) until `want` completions; returns how many. */
static int ctx_poll(struct ib_cq *cq, int want, int *errors)
{
	struct ib_wc wc[8];
	unsigned long flags;
	int got = 0, n, i, spins;

	for (spins = 0; got < want && spins < 4000; spins++) {
		CTX_ENTER(flags);
		n = ib_poll_cq(cq, ARRAY_SIZE(wc), wc);
		if (n == 0)
			ib_req_notify_cq(cq, IB_CQ_NEXT_COMP | IB_CQ_REPORT_MISSED_EVENTS);
		CTX_LEAVE(flags);
		for (i = 0; i < n; i++)
			if (wc[i].status != IB_WC_SUCCESS && wc[i].status != IB_WC_WR_FLUSH_ERR)
				(*errors)++;
		got += max(n, 0);
		if (n <= 0)
			usleep_range(200, 500);
	}
	return got;
}

#define CTX_ROUNDS 64

static noinline_for_stack void completion_context(struct ib_device *ibdev, struct ib_pd *pd)
{
	struct ib_cq_init_attr ca = { .cqe = 4 * CTX_ROUNDS };
	struct ib_qp_init_attr ia = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = CTX_ROUNDS, .max_recv_wr = CTX_ROUNDS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	const struct ib_send_wr *bad;
	const struct ib_recv_wr *rbad;
	struct ib_qp *qa = NULL, *qb = NULL;
	struct ib_cq *cq;
	union ib_gid gid;
	u8 mac[ETH_ALEN] = {};
	unsigned long flags;
	int gidx, i, ret = 0, got, errors = 0;
	u8 *buf;

	/*
	 * The oracle (C rxe) skips this: once in 2026-12-02's runs it hung here for good (the
	 * log stops after the CQ is created; the VM ran into its timeout). The likely cause: the
	 * poster holds ctx_lock with interrupts off across rxe's post_send while rxe runs the
	 * handler, which takes ctx_lock, from its own task on the other CPU (not proven).
	 */
	if (!strict) {
		pr_info("kverbs: skip: context: C rxe may call the handler while the poster holds its lock\n");
		return;
	}
	gidx = roce_v2_ipv4_gid(ibdev, &gid, mac);
	if (gidx < 0)
		return;
	atomic_set(&ctx_events, 0);
	atomic_set(&ctx_nested, 0);
	cq = ib_create_cq(ibdev, ctx_comp_handler, NULL, NULL, &ca);
	CHECK(!IS_ERR(cq), "context: a CQ with the consumer's own completion handler");
	if (IS_ERR(cq))
		return;
	buf = kzalloc(2 * PAGE_SIZE, GFP_KERNEL);
	ia.send_cq = ia.recv_cq = cq;
	qa = ib_create_qp(pd, &ia);
	qb = ib_create_qp(pd, &ia);
	if (!buf || IS_ERR(qa) || IS_ERR(qb) ||
	    connect_qp(qa, qb->qp_num, &gid, gidx, mac) ||
	    connect_qp(qb, qa->qp_num, &gid, gidx, mac)) {
		CHECK(0, "context: two connected RC QPs");
		goto out;
	}

	/* SENDs through the pipeline, each posted with the lock held and the CQ armed. */
	for (i = 0; i < CTX_ROUNDS && !ret; i++) {
		struct ib_sge rs = { .addr = (uintptr_t)buf + PAGE_SIZE, .length = 64,
				     .lkey = pd->local_dma_lkey };
		struct ib_recv_wr rwr = { .wr_id = i, .sg_list = &rs, .num_sge = 1 };
		struct ib_sge ss = { .addr = (uintptr_t)buf, .length = 64,
				     .lkey = pd->local_dma_lkey };
		struct ib_send_wr swr = { .wr_id = i, .opcode = IB_WR_SEND, .sg_list = &ss,
					  .num_sge = 1, .send_flags = IB_SEND_SIGNALED };

		CTX_ENTER(flags);
		ib_req_notify_cq(cq, IB_CQ_NEXT_COMP);
		ret = ib_post_recv(qb, &rwr, &rbad);
		if (!ret)
			ret = ib_post_send(qa, &swr, &bad);
		CTX_LEAVE(flags);
		if (!ret && ctx_poll(cq, 2, &errors) != 2)
			ret = -ETIMEDOUT;
	}
	CHECK(!ret && !errors, "context: %d SENDs posted under the consumer's lock (ret %d, %d errors)",
	      CTX_ROUNDS, ret, errors);

	/* In ERR every post completes at once, as a flush. */
	CHECK(ib_modify_qp(qa, &err, IB_QP_STATE) == 0, "context: sender to ERR");
	got = 0;
	for (i = 0; i < 8; i++) {
		struct ib_sge s = { .addr = (uintptr_t)buf, .length = 64,
				    .lkey = pd->local_dma_lkey };
		struct ib_send_wr swr = { .wr_id = 1000 + i, .opcode = IB_WR_SEND, .sg_list = &s,
					  .num_sge = 1, .send_flags = IB_SEND_SIGNALED };
		struct ib_recv_wr rwr = { .wr_id = 2000 + i, .sg_list = &s, .num_sge = 1 };

		CTX_ENTER(flags);
		ib_req_notify_cq(cq, IB_CQ_NEXT_COMP);
		ret = ib_post_send(qa, &swr, &bad);
		if (!ret)
			ret = ib_post_recv(qa, &rwr, &rbad);
		CTX_LEAVE(flags);
		if (ret)
			break;
		got += ctx_poll(cq, 2, &errors);
	}
	CHECK(!ret && got == 16, "context: 8 sends and 8 receives posted in ERR flushed (%d)", got);

	/* Handlers run from the driver's own context (work items): let them finish. */
	for (i = 0; i < 100 && !atomic_read(&ctx_events); i++)
		msleep(10);
	CHECK(atomic_read(&ctx_events) > 0, "context: the handler ran (%d times) outside the verbs",
	      atomic_read(&ctx_events));
	CHECK(atomic_read(&ctx_nested) == 0,
	      "context: never inside the consumer's own verb call (%d times inside)",
	      atomic_read(&ctx_nested));
out:
	if (!IS_ERR_OR_NULL(qa))
		ib_destroy_qp(qa);
	if (!IS_ERR_OR_NULL(qb))
		ib_destroy_qp(qb);
	ib_destroy_cq(cq);
	kfree(buf);
}
