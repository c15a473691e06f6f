// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_odp_stall: on-demand-paging faults that cannot complete must not wedge anything. FILE
 * is a file of at least 16 MiB on a FUSE mount whose server never answers a READ
 * (tests/verbs/fuse_stall). In order:
 *
 * 1. A child registers an ODP MR over a mapping of FILE and prefetches it (ibv_advise_mr,
 *    PREFETCH with the flush flag: synchronous). The fault waits for the server; the child is
 *    killed with SIGKILL and must be gone promptly (the wait is killable).
 * 2. A child prefetches (PREFETCH_NO_FAULT: no I/O at all) 4 095 ranges of a 1 GiB anonymous
 *    ODP MR, 4 TiB of walking in one call; it is killed after a second and must be gone
 *    promptly (the call checks for a fatal signal between its pieces).
 * 3. Two connected RC QPs of DEVICE; A's MR is ODP over another part of FILE. An RDMA WRITE
 *    from it stalls: the requester waits for a fault that waits for the server. Then the QPs,
 *    MRs, PD, CQs and the device context are destroyed and the mapping is unmapped: every step
 *    must return promptly although the fault is still stuck.
 *
 * The caller (tests/selftests/odp_stall.sh) then deletes the device and unloads the module,
 * kills the server, and checks that everything unwinds.
 *
 * Usage: verbs_odp_stall DEVICE GID_INDEX FILE
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "rc.h"
#include "testenv.h"

/* See verbs_odp.c: the kernel's ADVISE_MR method as libibverbs exports it. */
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
		      struct ibv_sge *sg_list, uint32_t num_sge);

#define MIB (1UL << 20)
/* A step that waits on nothing may take this long under TCG on the debug kernel. */
#define PROMPT_MS 10000
#define BIG_LEN (1UL << 30)
#define BIG_SGES 4095

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Maps `len` bytes of FILE at `off`, read-only and shared (the page cache's pages). */
static void *map_file(const char *file, size_t len, off_t off)
{
	int fd = open(file, O_RDONLY);
	void *p;

	if (fd < 0)
		return NULL;
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, off);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* The child's end of the pipe it says "about to block" on; -1 in the parent. */
static int about_to_block = -1;

/* In the child: the setup is done, the call that should block comes next. */
static void say_about_to_block(void)
{
	char c = 'b';

	if (write(about_to_block, &c, 1) != 1)
		_exit(40);
}

/*
 * Runs `fn` in a child; kills it with SIGKILL `ms` milliseconds after it says it is about to
 * make the call that blocks (if it still runs: then `*blocked` is set) and reaps it. The clock
 * starts at that word, not at the fork: on the debug kernel under TCG the child's setup alone
 * can take seconds, and a kill during the setup would test nothing. The milliseconds from the
 * kill to the reaping; -1 if the child was not gone after PROMPT_MS, or never got to the call
 * within SETUP_MS.
 */
#define SETUP_MS 60000
static long kill_after(int (*fn)(int, char **), int argc, char **argv, long ms, int *blocked,
		       int *status)
{
	int fds[2];
	pid_t pid;
	long t, start;
	char c;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fds[0]);
		about_to_block = fds[1];
		_exit(fn(argc, argv));
	}
	close(fds[1]);
	*blocked = 1;
	start = now_ms();
	while (now_ms() - start < SETUP_MS) {
		struct timeval tv = { .tv_usec = 20000 };
		fd_set rd;

		FD_ZERO(&rd);
		FD_SET(fds[0], &rd);
		if (select(fds[0] + 1, &rd, NULL, NULL, &tv) > 0)
			break;
	}
	/* EOF (the child exited during its setup) or the word. */
	if (now_ms() - start >= SETUP_MS || read(fds[0], &c, 1) != 1) {
		close(fds[0]);
		printf("# the child never got to the call (setup failed or took over %d s)\n",
		       SETUP_MS / 1000);
		kill(pid, SIGKILL);
		waitpid(pid, status, 0);
		*blocked = 0;
		return -1;
	}
	close(fds[0]);
	start = now_ms();
	while (now_ms() - start < ms) {
		if (waitpid(pid, status, WNOHANG) == pid) {
			*blocked = 0;
			return 0;
		}
		usleep(20000);
	}
	kill(pid, SIGKILL);
	t = now_ms();
	while (now_ms() - t < PROMPT_MS) {
		if (waitpid(pid, status, WNOHANG) == pid)
			return now_ms() - t;
		usleep(20000);
	}
	return -1;
}

/* The child of step 1: prefetches 1 MiB of FILE; returns only if the call does. */
static int advise_file(int argc, char **argv)
{
	struct ibv_mr *mr;
	struct ibv_sge sge;
	void *p;
	int r = test_setup(argc, argv);

	if (r)
		return 10 + r;
	p = map_file(argv[3], MIB, 0);
	if (!p)
		return 20;
	mr = ibv_reg_mr(pd, p, MIB, IBV_ACCESS_ON_DEMAND);
	if (!mr)
		return 21;
	sge = (struct ibv_sge){ .addr = (uintptr_t)p, .length = MIB, .lkey = mr->lkey };
	say_about_to_block();
	r = ibv_cmd_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
	printf("# advise_mr over the stalled file returned %d\n", r);
	return 30;
}

/* The child of step 2: 4 095 x 1 GiB of PREFETCH_NO_FAULT; returns only if the call does. */
static int advise_big(int argc, char **argv)
{
	static struct ibv_sge sges[BIG_SGES];
	struct ibv_mr *mr;
	void *p;
	int r = test_setup(argc, argv);

	if (r)
		return 10 + r;
	p = mmap(NULL, BIG_LEN, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return 20;
	mr = ibv_reg_mr(pd, p, BIG_LEN, IBV_ACCESS_ON_DEMAND);
	if (!mr)
		return 21;
	for (int i = 0; i < BIG_SGES; i++)
		sges[i] = (struct ibv_sge){ .addr = (uintptr_t)p, .length = BIG_LEN,
					    .lkey = mr->lkey };
	say_about_to_block();
	r = ibv_cmd_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, IBV_ADVISE_MR_FLAG_FLUSH,
			      sges, BIG_SGES);
	printf("# advise_mr of 4095 x 1 GiB returned %d\n", r);
	return 30;
}

/* Runs `what` (0 for success), checking that it returned within PROMPT_MS. */
#define TIMED(what, desc)                                                                  \
	do {                                                                               \
		long t0_ = now_ms();                                                       \
		int r_ = (what);                                                           \
		long dt_ = now_ms() - t0_;                                                 \
		CHECK(r_ == 0 && dt_ < PROMPT_MS, "%s: %d in %ld ms", desc, r_, dt_);       \
	} while (0)

static void qp_stall(const char *file)
{
	struct ibv_qp_init_attr qi = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 16, .max_recv_wr = 16,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_cq *cqb = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp *qa, *qb;
	struct ibv_mr *amr, *bmr;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_RDMA_WRITE, .num_sge = 1 };
	struct ibv_wc wc;
	uint8_t *abuf = map_file(file, MIB, 8 * MIB);
	uint8_t *bbuf = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long t0;
	int r;

	qi.send_cq = qi.recv_cq = cq;
	qa = ibv_create_qp(pd, &qi);
	qi.send_cq = qi.recv_cq = cqb;
	qb = ibv_create_qp(pd, &qi);
	CHECK(cqb && qa && qb && abuf && bbuf != MAP_FAILED, "QPs, the file's mapping, a buffer");
	if (!cqb || !qa || !qb || !abuf || bbuf == MAP_FAILED)
		return;
	amr = ibv_reg_mr(pd, abuf, MIB, IBV_ACCESS_ON_DEMAND);
	bmr = ibv_reg_mr(pd, bbuf, MIB, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(amr && bmr, "ODP MR over the file, ordinary MR over anonymous memory");
	if (!amr || !bmr)
		return;
	CHECK(rc_connect(qa, qb->qp_num, &gid, gid_index) == 0 &&
		      rc_connect(qb, qa->qp_num, &gid, gid_index) == 0,
	      "connect");
	sge = (struct ibv_sge){ .addr = (uintptr_t)abuf, .length = 65536, .lkey = amr->lkey };
	wr.sg_list = &sge;
	wr.wr.rdma.remote_addr = (uintptr_t)bbuf;
	wr.wr.rdma.rkey = bmr->rkey;
	CHECK(post_signaled(qa, &wr) == 0, "post an RDMA WRITE of 64 KiB from the file");
	r = wait_wc_for(cq, &wc, 3);
	if (r == 0)
		printf("# a completion arrived: status %d (%s)\n", wc.status,
		       ibv_wc_status_str(wc.status));
	CHECK(r != 0, "the WRITE waits for the fault (no completion in 3 s)");

	t0 = now_ms();
	TIMED(ibv_destroy_qp(qa), "destroy the QP whose fault is stuck");
	TIMED(ibv_destroy_qp(qb), "destroy its peer");
	TIMED(ibv_dereg_mr(amr), "deregister the ODP MR the stuck fault is in");
	TIMED(ibv_dereg_mr(bmr), "deregister the other MR");
	TIMED(ibv_destroy_cq(cqb) || ibv_destroy_cq(cq), "destroy the CQs");
	TIMED(ibv_dealloc_pd(pd), "deallocate the PD");
	TIMED(ibv_close_device(ctx), "close the device");
	TIMED(munmap(abuf, MIB) || munmap(bbuf, MIB), "unmap the file");
	CHECK(now_ms() - t0 < PROMPT_MS, "the teardown took %ld ms", now_ms() - t0);
}

int main(int argc, char **argv)
{
	int blocked, status = 0;
	long dt;

	if (argc < 4) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX FILE\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	dt = kill_after(advise_file, argc, argv, 3000, &blocked, &status);
	if (!blocked)
		printf("# the child exited by itself: status %#x\n", status);
	CHECK(blocked && dt >= 0,
	      "advise_mr waiting for a stalled FUSE READ: blocked, killed, gone in %ld ms", dt);

	dt = kill_after(advise_big, argc, argv, 1000, &blocked, &status);
	if (!blocked)
		printf("# the child exited by itself: status %#x (the call was not long enough "
		       "to test the kill)\n", status);
	CHECK(dt >= 0, "advise_mr of 4095 x 1 GiB (NO_FAULT) killed after 1 s: gone in %ld ms",
	      dt);

	if (test_setup(argc, argv))
		return 1;
	qp_stall(argv[3]);
	printf("# verbs_odp_stall: %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
