/* SPDX-License-Identifier: GPL-2.0 */
/*
 * verbs_attack's flush_deep: the longest stretch a flush keeps its CPU from everything else.
 *
 * A QP in ERR whose mapped send ring user space fills in one store (the producer index moved
 * to a full ring: 2^N - 1 WQEs, N = 20 by default, the device's limit) and one doorbell that
 * flushes them all. A SCHED_FIFO probe thread on the same CPU wakes every 200 us and records
 * how late it ran: a timer interrupt is held off while interrupts are disabled, and the probe's
 * preemption while preemption is (a spinlock held), so its worst lateness is the longest such
 * section of the doorbell (with the preemptible test kernel). Its lateness on an idle CPU is
 * measured first. rrxe flushes in chunks under its ring lock, so the worst lateness must stay
 * far below the time the whole flush takes. FLUSH_DEEP_LOG2 (environment) sets N.
 *
 * The C rxe run only reports: its flush runs in a work item, not in the doorbell. Uses
 * verbs_attack.c's to_err().
 */
#ifndef RRXE_VERBS_ATTACK_FLUSH_H
#define RRXE_VERBS_ATTACK_FLUSH_H

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "attack.h"
#include "raw_ring.h"

/*
 * Flushes measured before the lateness check fails: the guest's vCPU is a host thread, and a
 * busy host can stop it for tens of milliseconds in any one of them.
 */
#define FLUSH_ATTEMPTS 3

/* What the probe thread shares with the test. */
struct probe {
	volatile int stop, measuring;
	double idle_max, busy_max; /* the worst lateness, seconds: before / during the flush */
	long wakeups;
};

static int pin_to_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void *probe_thread(void *arg)
{
	struct probe *p = arg;
	struct sched_param sp = { .sched_priority = 50 };
	struct timespec t;

	if (pin_to_cpu0() || sched_setscheduler(0, SCHED_FIFO, &sp)) {
		p->idle_max = p->busy_max = -1;
		return NULL;
	}
	clock_gettime(CLOCK_MONOTONIC, &t);
	while (!p->stop) {
		double late;

		t.tv_nsec += 200 * 1000;
		if (t.tv_nsec >= 1000000000) {
			t.tv_nsec -= 1000000000;
			t.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
		late = now() - (t.tv_sec + t.tv_nsec / 1e9);
		if (p->measuring && late > p->busy_max)
			p->busy_max = late;
		else if (!p->measuring && late > p->idle_max)
			p->idle_max = late;
		/* Late by more than a period: the next deadline is from now, not in the past. */
		if (late > 200e-6)
			clock_gettime(CLOCK_MONOTONIC, &t);
		p->wakeups++;
	}
	return NULL;
}

/* One measured flush of a full ring; 1 when the worst lateness is within the limit. */
static int flush_once(struct lp *l, struct rxe_queue_buf *sq, int attempt)
{
	struct timespec d = { 0, 300 * 1000 * 1000 };
	struct probe p = { 0 };
	double t0, bell, drained;
	uint32_t prod;
	pthread_t t;
	int e, ok;

	if (pthread_create(&t, NULL, probe_thread, &p)) {
		CHECK(0, "probe started");
		return 1;
	}
	nanosleep(&d, NULL);
	/* A full ring: the producer one slot behind the consumer. */
	prod = (__atomic_load_n(&sq->consumer_index, __ATOMIC_ACQUIRE) + sq->index_mask) &
	       sq->index_mask;
	__atomic_store_n(&sq->producer_index, prod, __ATOMIC_RELEASE);
	p.measuring = 1;
	t0 = now();
	e = doorbell(l->qp);
	bell = now() - t0;
	nanosleep(&d, NULL);
	p.measuring = 0;
	/* The C rxe flushes from a work item: wait for it (10 s at most). */
	while (__atomic_load_n(&sq->consumer_index, __ATOMIC_ACQUIRE) != prod && now() - t0 < 10)
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	drained = now() - t0;
	p.stop = 1;
	pthread_join(t, NULL);
	printf("# flush %d of %u WQEs: doorbell %.3f s (%s), ring empty after %.3f s; probe: %ld "
	       "wakeups, worst lateness idle %.3f ms, during the flush %.3f ms\n",
	       attempt, sq->index_mask, bell, e ? strerror(e) : "ok", drained, p.wakeups,
	       p.idle_max * 1e3, p.busy_max * 1e3);
	CHECK(p.idle_max >= 0, "the probe ran SCHED_FIFO on CPU 0");
	if (strict)
		CHECK(!e && __atomic_load_n(&sq->consumer_index, __ATOMIC_ACQUIRE) == prod,
		      "the doorbell flushed every WQE");
	ok = p.busy_max < 0.02 + p.idle_max && p.busy_max < bell / 4;
	if (strict && (ok || attempt == FLUSH_ATTEMPTS))
		CHECK(ok, "the flush kept CPU 0 at most %.3f ms at a time (limit idle + 20 ms, and a "
		      "quarter of the doorbell's %.3f s; attempt %d of %d)", p.busy_max * 1e3, bell,
		      attempt, FLUSH_ATTEMPTS);
	return ok || !strict;
}

static void flush_deep(void)
{
	const char *env = getenv("FLUSH_DEEP_LOG2");
	int log2 = env ? atoi(env) : 20;
	struct ibv_qp_cap cap = { .max_send_wr = (1u << log2) - 1, .max_recv_wr = 16,
				  .max_send_sge = 1, .max_recv_sge = 16 };
	struct rxe_queue_buf *sq;
	struct lp l;
	int attempt;

	/* Send slots of 256 bytes, receive slots of 512: no CQ of this process has either. */
	if (lp_create(&l, 0, cap)) {
		CHECK(0, "an RC QP with a send queue of 2^%d - 1 WRs", log2);
		lp_destroy(&l);
		return;
	}
	sq = find_ring(slot_log2(sizeof(struct rxe_send_wqe) +
				 MAX(l.cap.max_send_sge * sizeof(struct rxe_sge),
				     l.cap.max_inline_data)), NULL);
	CHECK(sq && sq->index_mask >= (1u << log2) - 1, "its send ring is mapped: %u slots",
	      sq ? sq->index_mask + 1 : 0);
	if (!sq || to_err(l.qp) < 0) {
		CHECK(0, "the QP to ERR");
		lp_destroy(&l);
		return;
	}
	lp_drain(&l);
	if (pin_to_cpu0()) {
		CHECK(0, "pinned to CPU 0");
		lp_destroy(&l);
		return;
	}
	/* A real long section shows in every attempt; the host taking the vCPU away, in one. */
	for (attempt = 1; attempt <= FLUSH_ATTEMPTS; attempt++)
		if (flush_once(&l, sq, attempt))
			break;
	lp_drain(&l);
	lp_destroy(&l);
}

#endif /* RRXE_VERBS_ATTACK_FLUSH_H */
