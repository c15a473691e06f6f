/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The move to ERR racing the data path of kernel QPs (issue #33, finding 3; the kernel half of
 * verbs_attack's err_race, tests/verbs/attack_err.h). Each round connects two kernel RC QPs
 * of the device, V and P: P fast-registers its buffer and posts receives on its receive queue
 * or on an SRQ, V posts a deep send queue of SENDs, RDMA READs and FETCH_ADDs (one at a time
 * or as one chain), and a kthread moves V (and in some rounds P, before or after V) to ERR
 * after a random delay, while those are in flight (and, in the rounds that move P, while half
 * of P's receives are still being posted). Completions come through ib_cqe callbacks
 * from a CQ polled directly (ib_process_cq_direct), from softirq (irq_poll) or from a work
 * queue, by round. Checked, as the user-space test does:
 *
 * - every work request completes exactly once (after ib_drain_qp, every posted send and every
 *   receive of P's receive queue has completed; no completion comes twice or for a WR never
 *   posted);
 * - a queue's completions come in order (V's sends and P's receive queue by index, the SENDs
 *   P received by the SEND's index), so none completes with success after a flush or another
 *   error of its queue;
 * - a buffer handed back by a flush completion never changes afterwards (a snapshot taken in
 *   the completion handler, compared after the QPs are destroyed and the CQ freed);
 *
 * and what a success hands back: a READ's buffer holds the remote data, a FETCH_ADD's the value
 * before it (no two the same), a receive one whole SEND. Some rounds destroy the QPs right after
 * the move to ERR, without waiting or draining (teardown under traffic: then "at most once").
 * err_rounds= sets the rounds (default 40), err_seed= the seed of the delays (default fixed;
 * kverbs.sh passes a random one when ERR_ROUNDS is set, as make soak does for verbs_attack).
 * A self-check first feeds the completion handlers forged completions (one twice, a success
 * after a flush, one out of order, a buffer changed after its flush, a SEND received twice)
 * and requires each to be reported. Included by rrxe_kverbs_test.c.
 */
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/prandom.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

static int err_rounds = 40;
module_param(err_rounds, int, 0444);
MODULE_PARM_DESC(err_rounds, "Rounds of the ERR race on kernel QPs (default 40)");
static uint err_seed = 0x5eed;
module_param(err_seed, uint, 0444);
MODULE_PARM_DESC(err_seed, "Seed of the ERR race's random delays");

#define ERR_WRS 48
#define ERR_SLOT 1024
#define ERR_SEND_LEN 256
/* Both buffers: ERR_WRS slots; P's also the READ source and the FETCH_ADD word after them. */
#define ERR_BUF (64 * 1024)
#define ERR_READ_OFF (ERR_WRS * ERR_SLOT)
#define ERR_ATOMIC_OFF (ERR_READ_OFF + ERR_SLOT)
#define ERR_READ_BYTE 0x5a
#define ERR_LOCAL_BYTE 0xee

struct err_swr {
	struct ib_cqe cqe;
	union {
		struct ib_send_wr wr;
		struct ib_rdma_wr rdma;
		struct ib_atomic_wr atomic;
	} u;
	struct ib_sge sge;
};

struct err_rwr {
	struct ib_cqe cqe;
	struct ib_recv_wr wr;
	struct ib_sge sge;
};

/* What the completion handlers saw in a round (under err_state.lock). */
struct err_track {
	u8 seen[ERR_WRS], pseen[ERR_WRS];
	bool flushed[ERR_WRS], pflushed[ERR_WRS];
	bool v_err, p_err, reg_done;
	int last, plast, last_send;
	int done, ok, flushes, pdone, pok, atomics_ok;
	u32 atomic_olds;
	int reg_status;
	int bad;
	/* V's send completions in the order they came: index, and 'f' flushed, '+' success. */
	int ntrace;
	char trace[ERR_WRS * 5 + 16];
};

struct err_state {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_srq *srq;
	struct ib_qp *v, *p;
	struct ib_mr *mr;
	struct scatterlist sg;
	bool sg_mapped;
	u8 *lbuf, *pbuf;
	u8 (*snap)[ERR_SLOT], (*psnap)[ERR_SLOT];
	struct err_swr sw[ERR_WRS];
	struct err_rwr rw[ERR_WRS];
	struct ib_cqe reg_cqe;
	struct completion mover_done, go;
	/* The round: set before it starts. */
	int round, posted, pposted, mover_ret;
	/* The mover waits for V's send `trigger` to be posted, if >= 0, then delay_us. */
	int trigger;
	unsigned int delay_us;
	enum ib_poll_context poll;
	bool peer_too, peer_first, chain, quick;
	spinlock_t lock;
	struct err_track t;
};

/* A violation: counted, and the first few of a round printed. */
#define err_bad(r, fmt, ...)                                                                 \
	do {                                                                                 \
		if ((r)->t.bad++ < 6)                                                        \
			pr_info("kverbs: err_race: %s %d: " fmt "\n",                         \
				(r)->round < 0 ? "self-check (expected), step" : "round",    \
				(r)->round < 0 ? -(r)->round : (r)->round, ##__VA_ARGS__);   \
	} while (0)

/* Called with r->lock held, for a send that completed with success. */
static void err_send_success(struct err_state *r, int i, struct ib_wc *wc)
{
	u8 *slot = r->lbuf + i * ERR_SLOT;
	u64 old;

	r->t.ok++;
	switch (i % 3) {
	case 0:
		if (wc->opcode != IB_WC_SEND)
			err_bad(r, "SEND %d completed with opcode %d", i, wc->opcode);
		break;
	case 1:
		if (wc->opcode != IB_WC_RDMA_READ || memchr_inv(slot, ERR_READ_BYTE, ERR_SLOT))
			err_bad(r, "READ %d succeeded (opcode %d) without the remote data", i,
				wc->opcode);
		break;
	default:
		old = *(u64 *)slot;
		if (wc->opcode != IB_WC_FETCH_ADD || old >= ERR_WRS / 3 ||
		    (r->t.atomic_olds & BIT(old)))
			err_bad(r, "FETCH_ADD %d succeeded (opcode %d) returning %llu (seen: %#x)",
				i, wc->opcode, old, r->t.atomic_olds);
		else
			r->t.atomic_olds |= BIT(old);
		r->t.atomics_ok++;
		break;
	}
}

static void err_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct err_state *r = cq->cq_context;
	int i = container_of(wc->wr_cqe, struct err_swr, cqe) - r->sw;
	unsigned long flags;

	spin_lock_irqsave(&r->lock, flags);
	if (i < 0 || i >= ERR_WRS || r->t.seen[i]++) {
		err_bad(r, "send %d completed twice (status %d)", i, wc->status);
		goto out;
	}
	r->t.done++;
	if (r->t.ntrace < sizeof(r->t.trace) - 6)
		r->t.ntrace += scnprintf(r->t.trace + r->t.ntrace,
					 sizeof(r->t.trace) - r->t.ntrace, " %d%c", i,
					 wc->status == IB_WC_SUCCESS ? '+' :
					 wc->status == IB_WC_WR_FLUSH_ERR ? 'f' : 'e');
	if (i <= r->t.last)
		err_bad(r, "send %d completed after send %d: out of order", i, r->t.last);
	r->t.last = i;
	if (wc->status == IB_WC_SUCCESS) {
		if (r->t.v_err)
			err_bad(r, "send %d succeeded after a flush or error of its queue", i);
		err_send_success(r, i, wc);
	} else {
		r->t.v_err = true;
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			err_bad(r, "send %d failed with status %d, not a flush", i, wc->status);
		} else {
			r->t.flushes++;
			r->t.flushed[i] = true;
			memcpy(r->snap[i], r->lbuf + i * ERR_SLOT, ERR_SLOT);
		}
	}
out:
	spin_unlock_irqrestore(&r->lock, flags);
}

static void err_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct err_state *r = cq->cq_context;
	int j = container_of(wc->wr_cqe, struct err_rwr, cqe) - r->rw;
	unsigned long flags;
	u8 *slot;
	int s;

	spin_lock_irqsave(&r->lock, flags);
	if (j < 0 || j >= ERR_WRS || r->t.pseen[j]++) {
		err_bad(r, "receive %d completed twice (status %d)", j, wc->status);
		goto out;
	}
	r->t.pdone++;
	/* An SRQ's receives need not be taken in the order posted. */
	if (!r->srq && j <= r->t.plast)
		err_bad(r, "receive %d completed after receive %d: out of order", j, r->t.plast);
	r->t.plast = j;
	slot = r->pbuf + j * ERR_SLOT;
	if (wc->status == IB_WC_SUCCESS) {
		r->t.pok++;
		if (r->t.p_err)
			err_bad(r, "receive %d succeeded after a flush or error of its queue", j);
		/* It holds one whole SEND (SEND i fills its 256 bytes with i), later than the last. */
		s = slot[0];
		if (wc->opcode != IB_WC_RECV || wc->byte_len != ERR_SEND_LEN || s % 3 ||
		    s >= ERR_WRS || memchr_inv(slot, s, ERR_SEND_LEN))
			err_bad(r, "receive %d (opcode %d, %u bytes) holds no whole SEND", j,
				wc->opcode, wc->byte_len);
		else if (s <= r->t.last_send)
			err_bad(r, "receive %d holds SEND %d after SEND %d: repeated or reordered",
				j, s, r->t.last_send);
		else
			r->t.last_send = s;
	} else {
		r->t.p_err = true;
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			err_bad(r, "receive %d failed with status %d, not a flush", j, wc->status);
		} else {
			r->t.pflushed[j] = true;
			memcpy(r->psnap[j], slot, ERR_SLOT);
		}
	}
out:
	spin_unlock_irqrestore(&r->lock, flags);
}

static void err_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct err_state *r = cq->cq_context;
	unsigned long flags;

	spin_lock_irqsave(&r->lock, flags);
	r->t.reg_status = wc->status;
	r->t.reg_done = true;
	spin_unlock_irqrestore(&r->lock, flags);
}

/* The buffers handed back by flush completions: as they were when the flush was polled. */
static void err_check_buffers(struct err_state *r)
{
	int i;

	for (i = 0; i < ERR_WRS; i++) {
		if (r->t.flushed[i] && memcmp(r->snap[i], r->lbuf + i * ERR_SLOT, ERR_SLOT))
			err_bad(r, "the buffer of flushed send %d changed after its completion", i);
		if (r->t.pflushed[i] && memcmp(r->psnap[i], r->pbuf + i * ERR_SLOT, ERR_SLOT))
			err_bad(r, "the buffer of flushed receive %d changed after its completion", i);
	}
}

static void err_track_reset(struct err_state *r)
{
	memset(&r->t, 0, sizeof(r->t));
	r->t.last = r->t.plast = r->t.last_send = -1;
}

static bool err_reg_cond(struct err_state *r)
{
	return READ_ONCE(r->t.reg_done);
}

static bool err_sends_cond(struct err_state *r)
{
	return READ_ONCE(r->t.done) >= r->posted;
}

/* Waits up to `ms` for `cond`, polling the CQ when it is polled directly. */
static bool err_wait(struct err_state *r, bool (*cond)(struct err_state *), unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	for (;;) {
		if (r->poll == IB_POLL_DIRECT)
			ib_process_cq_direct(r->cq, -1);
		if (cond(r))
			return true;
		if (time_after(jiffies, end))
			return false;
		usleep_range(200, 500);
	}
}

static int err_mover(void *arg)
{
	struct err_state *r = arg;
	struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };

	if (r->trigger >= 0) {
		wait_for_completion(&r->go);
		udelay(r->delay_us);
	} else if (r->delay_us) {
		usleep_range(r->delay_us, r->delay_us + 20);
	}
	if (r->peer_too && r->peer_first)
		r->mover_ret |= ib_modify_qp(r->p, &a, IB_QP_STATE);
	r->mover_ret |= ib_modify_qp(r->v, &a, IB_QP_STATE);
	if (r->peer_too && !r->peer_first)
		r->mover_ret |= ib_modify_qp(r->p, &a, IB_QP_STATE);
	kthread_complete_and_exit(&r->mover_done, 0);
}

/* P's receives from `from` to `to` (on its receive queue or its SRQ): how many were posted. */
static int err_post_recvs(struct err_state *r, int from, int to)
{
	const struct ib_recv_wr *bad;
	int j;

	for (j = from; j < to; j++) {
		struct err_rwr *w = &r->rw[j];

		w->cqe.done = err_recv_done;
		w->sge = (struct ib_sge){ .addr = (uintptr_t)(r->pbuf + j * ERR_SLOT),
					  .length = ERR_SLOT, .lkey = r->pd->local_dma_lkey };
		w->wr = (struct ib_recv_wr){ .wr_cqe = &w->cqe, .sg_list = &w->sge, .num_sge = 1 };
		if (r->srq ? ib_post_srq_recv(r->srq, &w->wr, &bad) : ib_post_recv(r->p, &w->wr, &bad))
			break;
	}
	return j - from;
}

/* V's send queue: SEND, READ, FETCH_ADD, ...; one post each or one chain. How many posted. */
static int err_post_sends(struct err_state *r)
{
	const struct ib_send_wr *bad;
	int i, ret = 0;

	for (i = 0; i < ERR_WRS; i++) {
		struct err_swr *w = &r->sw[i];
		struct ib_send_wr *wr = &w->u.wr;

		memset(&w->u, 0, sizeof(w->u));
		w->cqe.done = err_send_done;
		w->sge = (struct ib_sge){ .addr = (uintptr_t)(r->lbuf + i * ERR_SLOT),
					  .length = ERR_SLOT, .lkey = r->pd->local_dma_lkey };
		wr->wr_cqe = &w->cqe;
		wr->sg_list = &w->sge;
		wr->num_sge = 1;
		wr->send_flags = IB_SEND_SIGNALED;
		if (r->chain && i + 1 < ERR_WRS)
			wr->next = &r->sw[i + 1].u.wr;
		switch (i % 3) {
		case 0:
			wr->opcode = IB_WR_SEND;
			w->sge.length = ERR_SEND_LEN;
			break;
		case 1:
			wr->opcode = IB_WR_RDMA_READ;
			w->u.rdma.remote_addr = r->mr->iova + ERR_READ_OFF;
			w->u.rdma.rkey = r->mr->rkey;
			break;
		default:
			wr->opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
			w->sge.length = 8;
			w->u.atomic.remote_addr = r->mr->iova + ERR_ATOMIC_OFF;
			w->u.atomic.rkey = r->mr->rkey;
			w->u.atomic.compare_add = 1;
			break;
		}
	}
	if (r->chain) {
		complete(&r->go);
		ret = ib_post_send(r->v, &r->sw[0].u.wr, &bad);
		if (!ret)
			return ERR_WRS;
		for (i = 0; i < ERR_WRS && bad != &r->sw[i].u.wr; i++)
			;
		pr_info("kverbs: err_race: round %d: post_send of the chain: %d at WR %d\n",
			r->round, ret, i);
		return i;
	}
	for (i = 0; i < ERR_WRS; i++) {
		ret = ib_post_send(r->v, &r->sw[i].u.wr, &bad);
		if (ret) {
			pr_info("kverbs: err_race: round %d: post_send of WR %d: %d\n", r->round,
				i, ret);
			break;
		}
		if (i == r->trigger)
			complete(&r->go);
		/* P's second half of receives, posted while P may be moving to ERR. */
		if (r->pposted < ERR_WRS && i % 2)
			r->pposted += err_post_recvs(r, r->pposted, r->pposted + 1);
	}
	return i;
}

static struct ib_qp *err_qp(struct err_state *r, struct ib_srq *srq)
{
	struct ib_qp_init_attr ia = {
		.event_handler = qp_event,
		.send_cq = r->cq, .recv_cq = r->cq, .srq = srq,
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_ALL_WR,
		/* Room for the drain's WRs. */
		.cap = { .max_send_wr = ERR_WRS + 2, .max_recv_wr = srq ? 0 : ERR_WRS + 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_qp *qp = ib_create_qp(r->pd, &ia);

	return IS_ERR(qp) ? NULL : qp;
}

/* Fast-registers P's buffer for remote READ and atomics (REG_MR on P). */
static int err_register(struct err_state *r)
{
	struct ib_reg_wr reg = {
		.wr = { .wr_cqe = &r->reg_cqe, .opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED },
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_ATOMIC,
	};
	const struct ib_send_wr *bad;
	struct ib_mr *mr;

	mr = ib_alloc_mr(r->pd, IB_MR_TYPE_MEM_REG, ERR_BUF / PAGE_SIZE);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	r->mr = mr;
	sg_init_one(&r->sg, r->pbuf, ERR_BUF);
	if (ib_dma_map_sg(r->ibdev, &r->sg, 1, DMA_BIDIRECTIONAL) != 1)
		return -ENOMEM;
	r->sg_mapped = true;
	if (ib_map_mr_sg(mr, &r->sg, 1, NULL, PAGE_SIZE) != 1)
		return -EINVAL;
	reg.mr = mr;
	reg.key = mr->rkey;
	r->reg_cqe.done = err_reg_done;
	if (ib_post_send(r->p, &reg.wr, &bad))
		return -EIO;
	if (!err_wait(r, err_reg_cond, 2000) || r->t.reg_status != IB_WC_SUCCESS)
		return -EIO;
	return 0;
}

/*
 * Runs until every posted send has completed, then drains both QPs: afterwards every send and
 * every receive of P's receive queue has completed exactly once.
 */
static void err_complete_all(struct err_state *r)
{
	unsigned long flags;
	int i;

	if (!err_wait(r, err_sends_cond, 10000))
		err_bad(r, "%d send completions within 10 s for %d posted", READ_ONCE(r->t.done),
			r->posted);
	ib_drain_qp(r->v);
	ib_drain_qp(r->p);
	if (r->poll == IB_POLL_DIRECT)
		ib_process_cq_direct(r->cq, -1);
	spin_lock_irqsave(&r->lock, flags);
	if (r->t.done != r->posted)
		err_bad(r, "%d send completions for %d posted", r->t.done, r->posted);
	for (i = 0; i < ERR_WRS; i++) {
		if (i >= r->posted && r->t.seen[i])
			err_bad(r, "send %d completed but was never posted", i);
		if (!r->srq && r->t.pseen[i] != (i < r->pposted))
			err_bad(r, "receive %d completed %d times", i, r->t.pseen[i]);
	}
	spin_unlock_irqrestore(&r->lock, flags);
}

static void err_round_free(struct err_state *r)
{
	if (r->v)
		ib_destroy_qp(r->v);
	if (r->p)
		ib_destroy_qp(r->p);
	r->v = r->p = NULL;
	/* Completions still in a direct CQ: any for a WR that already completed is a repeat. */
	if (r->cq && r->poll == IB_POLL_DIRECT)
		ib_process_cq_direct(r->cq, -1);
	if (r->srq)
		ib_destroy_srq(r->srq);
	r->srq = NULL;
	if (r->mr)
		ib_dereg_mr(r->mr);
	r->mr = NULL;
	if (r->sg_mapped)
		ib_dma_unmap_sg(r->ibdev, &r->sg, 1, DMA_BIDIRECTIONAL);
	r->sg_mapped = false;
	/* After this no handler runs: ib_free_cq stops the softirq or work poller. */
	if (r->cq)
		ib_free_cq(r->cq);
	r->cq = NULL;
}

static noinline_for_stack int err_round(struct err_state *r, struct rnd_state *rnd,
					 union ib_gid *gid, int gidx, const u8 *mac)
{
	static const enum ib_poll_context polls[] = { IB_POLL_DIRECT, IB_POLL_SOFTIRQ,
						       IB_POLL_WORKQUEUE };
	struct ib_srq_init_attr sia = { .attr = { .max_wr = ERR_WRS, .max_sge = 1 },
					.srq_type = IB_SRQT_BASIC };
	struct task_struct *mover;
	int i, round = r->round;
	u64 word;

	r->poll = polls[round % 3];
	r->peer_too = round % 4 == 3;
	r->peer_first = r->peer_too && (prandom_u32_state(rnd) & 1);
	r->chain = round % 5 == 1;
	r->quick = round % 7 == 6;
	/*
	 * Two rounds in three the move follows the post of a random send by up to 40 us, where
	 * the queue is being posted whatever the machine's speed; else it comes after a random
	 * delay from the start, mostly short (a fast kernel posts the queue in some 100 us), some
	 * long (the debug kernel).
	 */
	r->trigger = round % 3 == 2 ? -1 : prandom_u32_state(rnd) % ERR_WRS;
	if (r->trigger >= 0)
		r->delay_us = prandom_u32_state(rnd) % 40;
	else
		r->delay_us = prandom_u32_state(rnd) % (round % 2 ? 1000 : 5000);
	r->mover_ret = 0;
	r->posted = r->pposted = 0;
	err_track_reset(r);
	init_completion(&r->mover_done);
	init_completion(&r->go);
	for (i = 0; i < ERR_WRS; i++)
		memset(r->lbuf + i * ERR_SLOT, i % 3 ? ERR_LOCAL_BYTE : i, ERR_SLOT);
	memset(r->pbuf, ERR_READ_BYTE, ERR_BUF);
	*(u64 *)(r->pbuf + ERR_ATOMIC_OFF) = 0;

	r->cq = ib_alloc_cq(r->ibdev, r, 4 * ERR_WRS, 0, r->poll);
	if (IS_ERR(r->cq)) {
		r->cq = NULL;
		goto setup_failed;
	}
	if (round % 2) {
		r->srq = ib_create_srq(r->pd, &sia);
		if (IS_ERR(r->srq)) {
			r->srq = NULL;
			goto setup_failed;
		}
	}
	r->v = err_qp(r, NULL);
	r->p = err_qp(r, r->srq);
	if (!r->v || !r->p || connect_qp(r->v, r->p->qp_num, gid, gidx, mac) ||
	    connect_qp(r->p, r->v->qp_num, gid, gidx, mac) || err_register(r))
		goto setup_failed;
	/*
	 * In rounds that move P to ERR too, half of its receives are posted among V's sends
	 * (racing the move); 16 receives take all the SENDs.
	 */
	r->pposted = err_post_recvs(r, 0, r->peer_too ? ERR_WRS / 2 : ERR_WRS);
	if (r->pposted != (r->peer_too ? ERR_WRS / 2 : ERR_WRS))
		goto setup_failed;

	mover = kthread_run(err_mover, r, "kverbs_err");
	if (IS_ERR(mover))
		goto setup_failed;
	r->posted = err_post_sends(r);
	complete(&r->go);	/* if the trigger was not posted */
	wait_for_completion(&r->mover_done);
	if (r->mover_ret)
		err_bad(r, "modify_qp(ERR) failed: %d", r->mover_ret);

	if (!r->quick)
		err_complete_all(r);
	err_round_free(r);
	/* No handler runs now; the QPs are gone: nothing may change a flushed WR's buffer. */
	err_check_buffers(r);
	word = *(u64 *)(r->pbuf + ERR_ATOMIC_OFF);
	if (word < r->t.atomics_ok || word > ERR_WRS / 3)
		err_bad(r, "the FETCH_ADD word is %llu after %d successful of %d", word,
			r->t.atomics_ok, ERR_WRS / 3);
	if (round < 6 || r->t.bad)
		pr_info("kverbs: err_race: round %d (%s, %s CQ%s%s%s, ERR %u us after %s): %d sends posted: %d succeeded, %d flushed; %d receives completed, %d with data; %d violations\n",
			round, round % 2 ? "SRQ" : "RQ",
			r->poll == IB_POLL_DIRECT ? "direct" :
			r->poll == IB_POLL_SOFTIRQ ? "softirq" : "workqueue",
			r->chain ? ", chained" : "",
			r->peer_too ? (r->peer_first ? ", peer to ERR first" : ", peer to ERR too") : "",
			r->quick ? ", destroyed at once" : "", r->delay_us,
			r->trigger >= 0 ? (r->chain ? "the chain's post" : "a send's post") : "the start",
			r->posted, r->t.ok,
			r->t.flushes, r->t.pdone, r->t.pok, r->t.bad);
	if (r->t.bad)
		pr_info("kverbs: err_race: round %d: sends in completion order (+ success, f flush, e error):%s\n",
			round, r->t.trace);
	return r->t.bad;

setup_failed:
	pr_info("kverbs: err_race: round %d: setup failed\n", round);
	err_round_free(r);
	return r->t.bad + 1;
}

/* Forged completions into the handlers: each kind of violation must be counted. */
static noinline_for_stack bool err_selfcheck(struct err_state *r)
{
	struct ib_cq *cq = kzalloc(sizeof(*cq), GFP_KERNEL);
	struct ib_wc wc = {};
	bool ok = true;

	if (!cq)
		return false;
	cq->cq_context = r;
#define ERR_SEND(i, st, op)                                                           \
	do {                                                                          \
		wc = (struct ib_wc){ .wr_cqe = &r->sw[i].cqe, .status = st, .opcode = op }; \
		err_send_done(cq, &wc);                                               \
	} while (0)
#define ERR_EXPECT(n)                                                                 \
	do {                                                                          \
		ok &= r->t.bad == (n);                                                \
		r->round--;                                                           \
		err_track_reset(r);                                                   \
	} while (0)
	r->round = -1;
	err_track_reset(r);
	for (int i = 0; i < ERR_WRS; i++)
		memset(r->lbuf + i * ERR_SLOT, i % 3 ? ERR_LOCAL_BYTE : i, ERR_SLOT);
	memset(r->pbuf, ERR_READ_BYTE, ERR_BUF);
	/* A clean sequence: SEND and READ succeed, FETCH_ADD and SEND flushed: nothing. */
	memset(r->lbuf + ERR_SLOT, ERR_READ_BYTE, ERR_SLOT);
	ERR_SEND(0, IB_WC_SUCCESS, IB_WC_SEND);
	ERR_SEND(1, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	ERR_SEND(2, IB_WC_WR_FLUSH_ERR, 0);
	ERR_SEND(3, IB_WC_WR_FLUSH_ERR, 0);
	err_check_buffers(r);
	ERR_EXPECT(0);
	/* A WR completing twice. */
	ERR_SEND(0, IB_WC_SUCCESS, IB_WC_SEND);
	ERR_SEND(0, IB_WC_SUCCESS, IB_WC_SEND);
	ERR_EXPECT(1);
	/* A success after a flush. */
	ERR_SEND(0, IB_WC_WR_FLUSH_ERR, 0);
	ERR_SEND(3, IB_WC_SUCCESS, IB_WC_SEND);
	ERR_EXPECT(1);
	/* Out of order. */
	ERR_SEND(3, IB_WC_WR_FLUSH_ERR, 0);
	ERR_SEND(0, IB_WC_WR_FLUSH_ERR, 0);
	ERR_EXPECT(1);
	/* A READ's buffer written after its flush completion (a late response). */
	ERR_SEND(4, IB_WC_WR_FLUSH_ERR, 0);
	memset(r->lbuf + 4 * ERR_SLOT, ERR_READ_BYTE, 8);
	err_check_buffers(r);
	ERR_EXPECT(1);
	/* A READ completing with success without its data. */
	memset(r->lbuf + 7 * ERR_SLOT, ERR_LOCAL_BYTE, ERR_SLOT);
	ERR_SEND(7, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	ERR_EXPECT(1);
	/* One SEND received twice. */
	memset(r->pbuf, 3, ERR_SEND_LEN);
	memset(r->pbuf + ERR_SLOT, 3, ERR_SEND_LEN);
	wc = (struct ib_wc){ .wr_cqe = &r->rw[0].cqe, .opcode = IB_WC_RECV,
			     .byte_len = ERR_SEND_LEN };
	err_recv_done(cq, &wc);
	wc.wr_cqe = &r->rw[1].cqe;
	err_recv_done(cq, &wc);
	ERR_EXPECT(1);
	/* A receive's buffer written after its flush completion. */
	wc = (struct ib_wc){ .wr_cqe = &r->rw[5].cqe, .status = IB_WC_WR_FLUSH_ERR };
	err_recv_done(cq, &wc);
	memset(r->pbuf + 5 * ERR_SLOT, 6, ERR_SEND_LEN);
	err_check_buffers(r);
	ERR_EXPECT(1);
#undef ERR_SEND
#undef ERR_EXPECT
	kfree(cq);
	return ok;
}

static noinline_for_stack void err_race(struct ib_device *ibdev, struct ib_pd *pd)
{
	struct err_state *r;
	struct rnd_state rnd;
	union ib_gid gid;
	u8 mac[ETH_ALEN] = {};
	int gidx, round, bad = 0, mixed = 0, ok = 0, flushes = 0, recvs = 0;
	unsigned long start = jiffies;

	gidx = roce_v2_ipv4_gid(ibdev, &gid, mac);
	if (gidx < 0) {
		CHECK(0, "err_race: an IPv4 RoCE v2 GID");
		return;
	}
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r) {
		CHECK(0, "err_race: allocate its state");
		return;
	}
	r->ibdev = ibdev;
	r->pd = pd;
	spin_lock_init(&r->lock);
	r->lbuf = kmalloc(ERR_BUF, GFP_KERNEL);
	r->pbuf = kmalloc(ERR_BUF, GFP_KERNEL);
	r->snap = vmalloc(ERR_WRS * ERR_SLOT);
	r->psnap = vmalloc(ERR_WRS * ERR_SLOT);
	if (!r->lbuf || !r->pbuf || !r->snap || !r->psnap) {
		CHECK(0, "err_race: allocate its buffers");
		goto out;
	}
	CHECK(err_selfcheck(r), "err_race: self-check: the handlers report a WR completed twice, a success after a flush, out of order, a buffer changed after its flush, a READ without data, a SEND received twice");

	prandom_seed_state(&rnd, err_seed);
	for (round = 0; round < err_rounds; round++) {
		r->round = round;
		bad += err_round(r, &rnd, &gid, gidx, mac);
		mixed += r->t.ok && r->t.flushes;
		ok += r->t.ok;
		flushes += r->t.flushes;
		recvs += r->t.pok;
	}
	pr_info("kverbs: err_race: seed %#x, %u ms: sends %d succeeded, %d flushed, %d received; ERR landed inside the send queue (some succeeded, some flushed) in %d of %d rounds\n",
		err_seed, jiffies_to_msecs(jiffies - start), ok, flushes, recvs, mixed,
		err_rounds);
	CHECK(!bad, "err_race: %d rounds of ERR racing SEND, READ and FETCH_ADD of kernel QPs (RQ and SRQ; direct, softirq and workqueue CQs): each WR completes once, in order, none succeeds after a flush, no buffer changes after its flush (%d violations)",
	      err_rounds, bad);
out:
	kfree(r->lbuf);
	kfree(r->pbuf);
	vfree(r->snap);
	vfree(r->psnap);
	kfree(r);
}
