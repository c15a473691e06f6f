// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_fuzz: a seeded, time-bounded uverbs fuzzer. The kernel must not crash, leak or hang
 * (the harness checks the log); this program only checks that the device still carries a SEND
 * at the end.
 *
 * The parent keeps FUZZ_WORKERS (default 2) worker processes running until the deadline,
 * SIGKILLing each after 50-1500 ms (or letting it tear down in order, one in four) and starting
 * another, so half-used objects with work pending are torn down by process exit. Each worker
 * opens the device and loops over random operations (fuzz_ops.c, fuzz_raw.c) on a pool of its
 * objects: creating and destroying PDs, CQs, MRs, MWs, AHs, SRQs and QPs with random
 * attributes, moving QPs through random states, posting random work requests, polling, raw
 * uverbs write() commands with valid, stale and random handles. Meanwhile its scribbler thread
 * writes random bytes, WQEs and producer/consumer indices into the mapped rings of its live CQs,
 * QPs and SRQs (with --rxe-compatible, the C rxe oracle, CQ rings only: C rxe reads user WQEs
 * unchecked) and rings the send doorbell.
 *
 * Reproducible choices: worker generation g of slot s (of N) takes seed SEED + g * N + s, and
 * its lifetime from that seed; every generation is printed. FUZZ_WORKERS=1 and the printed seed
 * replay one worker (FUZZ_NOKILL=1: none is killed, each runs to the deadline).
 *
 * Usage: verbs_fuzz DEVICE GID_INDEX SEED SECONDS [--rxe-compatible]
 * Prints "# fuzz: N iterations, M distinct operations reached, K worker generations" and the
 * calls and successes of every operation. Exits by SECONDS + 10 (alarm); 0 unless the fuzzer
 * broke (fork failed, a worker could not set up or died of a signal other than our SIGKILL, a
 * worker did not die within 4 s of SIGKILL, the device stopped opening) or the final SEND
 * failed.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "rc.h"
#include "fuzz.h"

#define MAX_WORKERS 16

struct fuzz F;
struct stats *S;

static const char *const scrib_names[] = { "scribble_bytes", "scribble_slot", "scribble_index",
					   "scribble_wqe", "scribble_header", "doorbell" };
enum { SC_BYTES, SC_SLOT, SC_INDEX, SC_WQE, SC_HEADER, SC_DOORBELL, N_SC };
#define SC(x) (n_verbs_ops + n_raw_ops + (x)) /* the scribbler's entries in the report */
static int nops, stop_scribbler;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void sleep_us(long us)
{
	struct timespec t = { us / 1000000, us % 1000000 * 1000 };

	nanosleep(&t, NULL); /* an interruption only shortens a pause */
}

static const struct op *op_at(int i)
{
	return i < n_verbs_ops ? &verbs_ops[i] : &raw_ops[i - n_verbs_ops];
}

static const char *op_name(int i)
{
	return i < n_verbs_ops + n_raw_ops ? op_at(i)->name :
					     scrib_names[i - n_verbs_ops - n_raw_ops];
}

void count(int op, int ok)
{
	__atomic_fetch_add(&S->calls[op], 1, __ATOMIC_RELAXED);
	if (ok)
		__atomic_fetch_add(&S->ok[op], 1, __ATOMIC_RELAXED);
}

/* --- the scribbler thread: its own random numbers, F.lock while it touches a ring --- */

static uint64_t srnd(uint64_t *s, uint64_t n)
{
	return n ? rnd_s(s) % n : 0;
}

static struct ring *scrib_pick(uint64_t *rs)
{
	static const int kinds[] = { K_CQ, K_QP, K_SRQ };
	struct ring *c[3 * POOL * 2 + NORPHAN];
	int n = 0;

	for (int k = 0; k < 3; k++)
		for (int i = 0; i < POOL; i++) {
			struct obj *o = &F.pool[kinds[k]][i];

			for (int j = 0; j < 2 && o->state != FREE && !o->broken; j++)
				if (o->ring[j].q && (!F.compat || o->ring[j].kind == RING_CQ))
					c[n++] = &o->ring[j];
		}
	for (int i = 0; i < NORPHAN; i++)
		if (F.orphan[i].q && (!F.compat || F.orphan[i].kind == RING_CQ))
			c[n++] = &F.orphan[i];
	return n ? c[srnd(rs, n)] : NULL;
}

/* A plausible WQE (send or receive, by the ring) at the producer index, then published. */
static void scrib_wqe(struct ring *r, uint64_t *rs, uint8_t *slot, size_t size)
{
	struct obj *m = &F.pool[K_MR][srnd(rs, POOL)];
	struct ibv_mr *mr = m->state != FREE ? m->p : NULL;
	int send = (r->kind == RING_SQ || (r->kind == RING_QP && srnd(rs, 2))) &&
		   size >= sizeof(struct rxe_send_wqe);
	struct rxe_dma_info *d = send ? &((struct rxe_send_wqe *)slot)->dma :
					&((struct rxe_recv_wqe *)slot)->dma;
	uint32_t room, ns = srnd(rs, 4), len = 0;
	const uint32_t bad[] = { 0xffffffff, 0, (uint32_t)rnd_s(rs) };

	if (size < sizeof(struct rxe_recv_wqe))
		return;
	room = (size - ((uint8_t *)d->sge - slot)) / sizeof(struct rxe_sge);
	memset(slot, 0, size);
	if (send) {
		struct rxe_send_wqe *w = (void *)slot;

		w->wr.wr_id = rnd_s(rs);
		w->wr.opcode = srnd(rs, 10) ? srnd(rs, 16) : (uint32_t)rnd_s(rs);
		w->wr.send_flags = srnd(rs, 32);
		w->wr.wr.rdma.remote_addr = mr ? (uintptr_t)mr->addr + srnd(rs, mr->length + 1) :
						 rnd_s(rs);
		w->wr.wr.rdma.rkey = mr && srnd(rs, 4) ? mr->rkey : (uint32_t)rnd_s(rs);
		w->iova = w->wr.wr.rdma.remote_addr;
		if (!srnd(rs, 4)) {
			w->wr.wr.ud.remote_qpn = srnd(rs, 64);
			w->wr.wr.ud.ah_num = srnd(rs, 8);
		}
	} else {
		((struct rxe_recv_wqe *)slot)->wr_id = rnd_s(rs);
	}
	for (uint32_t i = 0; i < ns && i < room; i++) {
		d->sge[i].addr = mr ? (uintptr_t)mr->addr + srnd(rs, mr->length + 1) : rnd_s(rs);
		d->sge[i].length = srnd(rs, 8) ? srnd(rs, 4097) : (uint32_t)rnd_s(rs);
		d->sge[i].lkey = mr && srnd(rs, 8) ? mr->lkey : (uint32_t)rnd_s(rs);
		len += d->sge[i].length;
	}
	d->num_sge = srnd(rs, 10) ? ns : srnd(rs, 4) ? bad[srnd(rs, 3)] : room + 1;
	d->length = srnd(rs, 8) ? len : (uint32_t)rnd_s(rs);
	d->resid = srnd(rs, 8) ? d->length : (uint32_t)rnd_s(rs);
	d->cur_sge = srnd(rs, 10) ? 0 : (uint32_t)rnd_s(rs);
	d->sge_offset = srnd(rs, 10) ? 0 : (uint32_t)rnd_s(rs);
	__atomic_store_n(&r->q->producer_index, (r->q->producer_index + 1) & r->mask,
			 __ATOMIC_RELEASE);
}

/* One write into ring `r` (its shape as created: the header may be scribbled on too). */
static void scribble(struct ring *r, uint64_t *rs)
{
	size_t hdr = offsetof(struct rxe_queue_buf, data), size = (size_t)1 << (r->log2 & 15);
	uint8_t *base = (uint8_t *)r->q, *slot;
	size_t off = hdr + ((r->q->producer_index & r->mask) << (r->log2 & 15));
	int what = srnd(rs, 16);

	if (r->len <= hdr + 8)
		return;
	slot = off + size <= r->len ? base + off : NULL;
	if (what < 4) {
		for (int n = 1 + srnd(rs, 16); n; n--)
			((uint64_t *)base)[(hdr + srnd(rs, r->len - hdr - 8)) / 8] = rnd_s(rs);
		count(SC(SC_BYTES), 1);
	} else if (what < 6 && slot) {
		for (size_t i = 0; i + 8 <= size; i += 8)
			*(uint64_t *)(slot + i) = rnd_s(rs);
		count(SC(SC_SLOT), 1);
	} else if (what < 10) {
		uint32_t *idx = srnd(rs, 2) ? &r->q->producer_index : &r->q->consumer_index;
		uint32_t v = srnd(rs, 2) ? *idx + srnd(rs, 2 * (r->mask + 1ull)) : rnd_s(rs);

		__atomic_store_n(idx, v, __ATOMIC_RELEASE);
		count(SC(SC_INDEX), 1);
	} else if (what < 15 && slot && r->kind != RING_CQ) {
		scrib_wqe(r, rs, slot, size);
		count(SC(SC_WQE), 1);
	} else if (what == 15) {
		/* The header words librxe trusts: restored before F.lock is dropped. */
		r->q->log2_elem_size = rnd_s(rs);
		r->q->index_mask = rnd_s(rs);
		if (r->qp_handle != NO_HANDLE)
			count(SC(SC_DOORBELL), !doorbell_handle(r->qp_handle));
		sleep_us(srnd(rs, 200));
		r->q->log2_elem_size = r->log2;
		r->q->index_mask = r->mask;
		count(SC(SC_HEADER), 1);
	}
}

static void *scribbler(void *arg)
{
	uint64_t rs = *(uint64_t *)arg;

	while (!__atomic_load_n(&stop_scribbler, __ATOMIC_RELAXED) && now() < F.deadline) {
		struct ring *r;

		sleep_us(50 + srnd(&rs, 2000));
		__atomic_store_n(&F.scribbler_waiting, 1, __ATOMIC_RELAXED);
		pthread_mutex_lock(&F.lock);
		__atomic_store_n(&F.scribbler_waiting, 0, __ATOMIC_RELAXED);
		r = F.ctx ? scrib_pick(&rs) : NULL;
		for (int n = 1 + srnd(&rs, 4); r && n; n--)
			scribble(r, &rs);
		if (r && r->qp_handle != NO_HANDLE && srnd(&rs, 10) < 7)
			count(SC(SC_DOORBELL), !doorbell_handle(r->qp_handle));
		pthread_mutex_unlock(&F.lock);
	}
	return NULL;
}

/* --- a worker process --- */

static void run_op(int i)
{
	int r;

	pthread_mutex_lock(&F.lock);
	r = op_at(i)->fn();
	pthread_mutex_unlock(&F.lock);
	if (r >= 0)
		count(i, r);
	__atomic_fetch_add(&S->iterations, 1, __ATOMIC_RELAXED);
	/* Let a waiting scribbler in (bounded: about a millisecond). */
	for (int n = 0; n < 100 && __atomic_load_n(&F.scribbler_waiting, __ATOMIC_RELAXED); n++)
		sleep_us(10);
}

static int run_named(const char *name)
{
	for (int i = 0; i < n_verbs_ops; i++)
		if (!strcmp(verbs_ops[i].name, name)) {
			run_op(i);
			return 0;
		}
	return -1;
}

/* 0 (done), 2 (the device would not open), 3 (the fuzzer could not set up). */
static int worker(uint64_t seed, double deadline, pid_t parent)
{
	static const char *const boot[] = { "alloc_pd", "create_cq", "create_cq", "reg_mr",
					    "reg_mr", "create_qp", "create_qp", "connect_qp",
					    "connect_qp", "create_ah", "create_srq" };
	uint64_t sseed = seed ^ 0x5c7a8b1e0f3d2a49ULL;
	int total = 0;
	pthread_t t;

	signal(SIGALRM, SIG_DFL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		return 3;
	alarm((unsigned int)(deadline - now()) + 8); /* the parent kills it sooner */
	F.rng = seed;
	F.deadline = deadline;
	memset(F.raw, 0xff, sizeof(F.raw));
	if (ctx_open())
		return 2;
	if (scratch_init() || pthread_mutex_init(&F.lock, NULL))
		return 3;
	for (unsigned int i = 0; i < sizeof(boot) / sizeof(boot[0]); i++)
		if (run_named(boot[i]))
			return 3;
	if (pthread_create(&t, NULL, scribbler, &sseed))
		return 3;
	for (int i = 0; i < n_verbs_ops + n_raw_ops; i++)
		total += op_at(i)->weight;
	while (now() < F.deadline) {
		int w = below(total), i = 0;

		while (w >= op_at(i)->weight)
			w -= op_at(i++)->weight;
		run_op(i);
	}
	__atomic_store_n(&stop_scribbler, 1, __ATOMIC_RELAXED);
	if (pthread_join(t, NULL))
		return 3;
	/* Half the orderly exits destroy everything; the others leave it to the exit. */
	if (chance(50))
		pool_teardown();
	return 0;
}

/* --- the parent --- */

static struct slot {
	pid_t pid;
	unsigned int gen;	/* generations started in this slot */
	uint64_t seed;
	double kill_at;		/* SIGKILL then (an orderly worker: 3 s after its own deadline) */
	int orderly, killed;
} slots[MAX_WORKERS];
static int nworkers, broken, no_device;

static void backstop(int sig)
{
	static const char msg[] = "# FAIL: verbs_fuzz overran its time (SECONDS + 10)\n";

	(void)sig;
	for (int i = 0; i < nworkers; i++)
		if (slots[i].pid > 0)
			kill(slots[i].pid, SIGKILL);
	if (write(1, msg, sizeof(msg) - 1) < 0) {
		/* nothing left to tell it with */
	}
	_exit(1);
}

static int spawn(struct slot *s, int idx, uint64_t seed0, double deadline, const char *dev,
		 int gidx, int compat, int nokill)
{
	uint64_t seed = seed0 + (uint64_t)s->gen * nworkers + idx, k = seed;
	unsigned int life = 50 + rnd_s(&k) % 1451;
	double t = now(), wdl;
	pid_t parent = getpid();

	s->orderly = nokill || rnd_s(&k) % 4 == 0;
	wdl = nokill || !s->orderly || t + life / 1e3 > deadline ? deadline : t + life / 1e3;
	s->kill_at = s->orderly ? wdl + 3 : t + life / 1e3;
	s->seed = seed;
	s->killed = 0;
	printf("# worker %d.%u: seed %llu, %s after %u ms\n", idx, s->gen,
	       (unsigned long long)seed, s->orderly ? "exits by itself" : "SIGKILL", nokill ?
	       (unsigned int)((deadline - t) * 1e3) : life);
	fflush(stdout);
	s->gen++;
	s->pid = fork();
	if (s->pid < 0) {
		perror("fork");
		return -1;
	}
	if (!s->pid) {
		F.dev = dev;
		F.gid_index = gidx;
		F.compat = compat;
		_exit(worker(seed, wdl, parent));
	}
	return 0;
}

static unsigned int user_crashes;

/* A signal a worker's own code raises when the state it reads from its mappings is garbage. */
static int user_fault(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT;
}

static void reaped(struct slot *s, int st)
{
	const char *why = NULL;

	no_device = WIFEXITED(st) && WEXITSTATUS(st) == 2 ? no_device + 1 : 0;
	if (no_device) {
		printf("# worker seed %llu: could not open the device\n",
		       (unsigned long long)s->seed);
		if (no_device == 20)
			why = "the device did not open for 20 workers in a row";
	} else if (WIFEXITED(st) && WEXITSTATUS(st)) {
		why = "could not set up";
	} else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && s->killed && s->orderly) {
		/* Slow (a debug kernel under TCG), not necessarily stuck: SIGKILL ended it. */
		printf("# worker seed %llu: still tearing down at its kill time, killed\n",
		       (unsigned long long)s->seed);
	} else if (WIFSIGNALED(st) && user_fault(WTERMSIG(st))) {
		/*
		 * The scribbler writes librxe's mapped queues (their index masks, indices and
		 * slots), which librxe trusts: the worker's own library may crash on them. That
		 * is user space hurting itself; the kernel's health is judged by the kernel log
		 * (the harness) and by the final SEND.
		 */
		printf("# worker seed %llu: crashed in user space (%s): scribbled library state\n",
		       (unsigned long long)s->seed, strsignal(WTERMSIG(st)));
		user_crashes++;
	} else if (WIFSIGNALED(st) && (WTERMSIG(st) != SIGKILL || !s->killed)) {
		why = strsignal(WTERMSIG(st));
	}
	if (why) {
		printf("# FAIL: worker seed %llu: %s (replay: FUZZ_WORKERS=1 with this seed)\n",
		       (unsigned long long)s->seed, why);
		broken = 1;
	}
	s->pid = 0;
}

static void reap(int flags)
{
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, flags)) > 0)
		for (int i = 0; i < nworkers; i++)
			if (slots[i].pid == pid)
				reaped(&slots[i], st);
}

/* Up to `n` completions polled from `cq` within 3 s. */
static int polled(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	double end = now() + 3;
	int got = 0, r;

	while (got < n && now() < end)
		if ((r = ibv_poll_cq(cq, n - got, wc + got)) >= 0)
			got += r;
		else
			break;
	return got;
}

/* The device after the fuzz: an RC QP connected to itself carries one SEND intact. */
static int sanity(const char *dev, int gidx)
{
	struct ibv_context *c = fuzz_open(dev);
	struct ibv_pd *p = c ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *q = c ? ibv_create_cq(c, 16, NULL, NULL, 0) : NULL;
	static uint8_t buf[8192];
	struct ibv_mr *mr = p ? ibv_reg_mr(p, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC, .send_cq = q, .recv_cq = q,
				       .cap = { 4, 4, 1, 1, 0 } };
	struct ibv_qp *qp = p && q ? ibv_create_qp(p, &ia) : NULL;
	struct ibv_sge ss = { (uintptr_t)buf, 4096, mr ? mr->lkey : 0 };
	struct ibv_sge rs = { (uintptr_t)buf + 4096, 4096, mr ? mr->lkey : 0 };
	struct ibv_send_wr swr = { .wr_id = 1, .sg_list = &ss, .num_sge = 1,
				   .opcode = IBV_WR_SEND };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rs, .num_sge = 1 }, *rbad;
	union ibv_gid gid;
	struct ibv_wc wc[2];
	int ok = 0;

	for (int i = 0; i < 4096; i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	if (qp && mr && !ibv_query_gid(c, 1, gidx, &gid) &&
	    !rc_connect(qp, qp->qp_num, &gid, gidx) && !ibv_post_recv(qp, &rwr, &rbad) &&
	    !post_signaled(qp, &swr) && polled(q, wc, 2) == 2)
		ok = wc[0].status == IBV_WC_SUCCESS && wc[1].status == IBV_WC_SUCCESS &&
		     wc[0].wr_id + wc[1].wr_id == 3 && !memcmp(buf, buf + 4096, 4096);
	CHECK(ok, "after the fuzz: a SEND on a new RC QP connected to itself arrives intact");
	if (qp && ibv_destroy_qp(qp))
		ok = 0;
	if (mr && ibv_dereg_mr(mr))
		ok = 0;
	if (q && ibv_destroy_cq(q))
		ok = 0;
	if (p && ibv_dealloc_pd(p))
		ok = 0;
	if (c && ibv_close_device(c))
		ok = 0;
	return ok;
}

int main(int argc, char **argv)
{
	const char *env = getenv("FUZZ_WORKERS");
	int compat = 0, nokill = getenv("FUZZ_NOKILL") && atoi(getenv("FUZZ_NOKILL"));
	unsigned int gens = 0, reached = 0, seconds;
	uint64_t seed;
	double deadline, t0;
	struct sigaction sa = { .sa_handler = backstop };

	if (argc < 5) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX SEED SECONDS [--rxe-compatible]\n",
			argv[0]);
		return 2;
	}
	compat = argc > 5 && !strcmp(argv[5], "--rxe-compatible");
	seed = strtoull(argv[3], NULL, 0);
	seconds = atoi(argv[4]) > 0 ? atoi(argv[4]) : 1;
	nworkers = env && atoi(env) > 0 ? atoi(env) : 2;
	nworkers = nworkers > MAX_WORKERS ? MAX_WORKERS : nworkers;
	nops = n_verbs_ops + n_raw_ops + N_SC;
	if (nops > NOPS_MAX) {
		fprintf(stderr, "%d operations, room for %d\n", nops, NOPS_MAX);
		return 1;
	}
	S = mmap(NULL, sizeof(*S), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (S == MAP_FAILED || sigaction(SIGALRM, &sa, NULL)) {
		perror("setup");
		return 1;
	}
	alarm(seconds + 10);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# verbs_fuzz %s, GID %s, seed %llu, %u s, %d workers%s%s\n", argv[1], argv[2],
	       (unsigned long long)seed, seconds, nworkers, compat ? ", rxe-compatible" : "",
	       nokill ? ", no kills" : "");
	deadline = now() + seconds;
	while (now() < deadline) {
		for (int i = 0; i < nworkers && !broken; i++)
			if (!slots[i].pid && spawn(&slots[i], i, seed, deadline, argv[1],
						    atoi(argv[2]), compat, nokill))
				broken = 1;
		if (broken)
			break;
		reap(WNOHANG);
		for (int i = 0; i < nworkers; i++)
			if (slots[i].pid && !slots[i].killed && now() >= slots[i].kill_at) {
				kill(slots[i].pid, SIGKILL);
				slots[i].killed = 1;
			}
		sleep_us(2000);
	}
	/*
	 * The deadline: orderly workers get 1.5 s to finish their teardown, then whoever is left
	 * is killed and has 4 s to die (then it is stuck in the kernel). The report and the
	 * final SEND (3 s at most) fit in what is left of SECONDS + 10.
	 */
	t0 = now();
	for (int left = 1; left && now() < t0 + 5.5; sleep_us(2000)) {
		reap(WNOHANG);
		left = 0;
		for (int i = 0; i < nworkers; i++) {
			if (slots[i].pid && !slots[i].killed &&
			    (!slots[i].orderly || now() >= t0 + 1.5)) {
				kill(slots[i].pid, SIGKILL);
				slots[i].killed = 1;
			}
			left += slots[i].pid != 0;
		}
	}
	for (int i = 0; i < nworkers; i++) {
		gens += slots[i].gen;
		if (slots[i].pid) {
			printf("# FAIL: worker seed %llu does not die after SIGKILL (stuck in the "
			       "kernel?)\n", (unsigned long long)slots[i].seed);
			broken = 1;
		}
	}
	for (int i = 0; i < nops; i++)
		reached += S->calls[i] > 0;
	printf("# fuzz: %llu iterations, %u distinct operations reached, %u worker generations "
	       "(%u crashed in user space)\n",
	       (unsigned long long)S->iterations, reached, gens, user_crashes);
	for (int i = 0; i < nops; i++)
		printf("# %-22s %9llu calls %9llu ok\n", op_name(i),
		       (unsigned long long)S->calls[i], (unsigned long long)S->ok[i]);
	if (!S->iterations) {
		printf("# FAIL: no worker ran an operation\n");
		broken = 1;
	}
	if (!sanity(argv[1], atoi(argv[2])))
		broken = 1;
	return broken;
}
