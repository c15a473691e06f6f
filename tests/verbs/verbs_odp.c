// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_odp: on-demand-paging MRs (IBV_ACCESS_ON_DEMAND) between two connected RC QPs of one
 * device, every transfer checked byte for byte. Both buffers are anonymous mappings registered
 * before they are touched, so every direction faults: the responder writing (WRITE, SEND into
 * a receive), reading (READ) and updating (atomics) pages that are not present, the requester
 * gathering a payload and the completer scattering a READ response into absent pages. Then
 * the pages are dropped under the registration (madvise MADV_DONTNEED: the kernel invalidates
 * them, they read back as zero) and the transfers run again; part of a buffer is unmapped (the
 * access fails with an error completion instead of hanging), mapped again at the same address
 * (transfers work again); ibv_advise_mr prefetches (sync, async, no-fault); and a thread drops
 * the responder's pages in a loop while WRITEs run (invalidation racing the data path).
 *
 * Usage: verbs_odp DEVICE GID_INDEX [--rxe-compatible]
 * ODP_RACE_ROUNDS (default 300) sets the WRITEs of that race (the debug kernel's short form).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "rc.h"
#include "testenv.h"

#define BUF_SIZE (256 * 1024)
#define ODP_ACCESS                                                                        \
	(IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |        \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/*
 * The kernel's ADVISE_MR method, as libibverbs exports it to providers (infiniband/driver.h is
 * not installed). rdma-core 44's librxe has no advise_mr op, so ibv_advise_mr() fails with
 * EOPNOTSUPP before reaching the kernel; newer librxe versions call exactly this.
 */
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
		      struct ibv_sge *sg_list, uint32_t num_sge);

static struct ibv_qp *qa, *qb;
static struct ibv_cq *cqb;
static uint8_t *abuf, *bbuf;
static struct ibv_mr *amr, *bmr;

static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9));
}

static int same_as_pattern(const uint8_t *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)(seed * 131 + i * 7 + (i >> 9)))
			return 0;
	return 1;
}

static int all_zero(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return 0;
	return 1;
}

static int connect_pair(void)
{
	struct ibv_wc wc[16];
	int r = rc_connect(qa, qb->qp_num, &gid, gid_index) ||
		rc_connect(qb, qa->qp_num, &gid, gid_index);

	while (ibv_poll_cq(cq, 16, wc) > 0 || ibv_poll_cq(cqb, 16, wc) > 0)
		;
	return r;
}

/* Posts one request from A of `len` bytes at abuf + off to bbuf + roff; waits for it. */
static int rdma(uint64_t id, enum ibv_wr_opcode op, size_t off, size_t roff, uint32_t len,
		enum ibv_wc_status status)
{
	struct ibv_sge sge = { .addr = (uintptr_t)abuf + off, .length = len, .lkey = amr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .opcode = op, .sg_list = &sge, .num_sge = 1 };

	wr.wr.rdma.remote_addr = (uintptr_t)bbuf + roff;
	wr.wr.rdma.rkey = bmr->rkey;
	if (post_signaled(qa, &wr))
		return 0;
	return expect(cq, id, status, op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE);
}

/* A SEND of `len` bytes from abuf into a receive of bbuf; both completions checked. */
static int send_recv(uint64_t id, uint32_t len)
{
	struct ibv_sge rs = { .addr = (uintptr_t)bbuf, .length = len, .lkey = bmr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = id, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_sge ss = { .addr = (uintptr_t)abuf, .length = len, .lkey = amr->lkey };
	struct ibv_send_wr swr = { .wr_id = id, .opcode = IBV_WR_SEND, .sg_list = &ss,
				   .num_sge = 1 };

	if (ibv_post_recv(qb, &rwr, &rbad) || post_signaled(qa, &swr))
		return 0;
	return expect(cq, id, IBV_WC_SUCCESS, IBV_WC_SEND) &&
	       expect(cqb, id, IBV_WC_SUCCESS, IBV_WC_RECV);
}

/*
 * A SEND of `len` bytes (pattern `seed`) from a plain (pinned) registration into a receive of
 * B's ODP buffer: a sender the direct loopback path can read, a receiver it cannot reach
 * without faulting. The message must arrive whole (issue #33, finding 8: the direct path
 * failed it with a local protection error at the receiver instead of leaving it to packets).
 */
static int send_plain_into_odp(uint64_t id, uint32_t len, unsigned int seed)
{
	static uint8_t *plain;
	static struct ibv_mr *pmr;
	struct ibv_sge rs = { .addr = (uintptr_t)bbuf, .length = len, .lkey = bmr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = id, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_sge ss = { .length = len };
	struct ibv_send_wr swr = { .wr_id = id, .opcode = IBV_WR_SEND, .sg_list = &ss,
				   .num_sge = 1 };

	if (!plain) {
		plain = map(BUF_SIZE);
		pmr = plain ? ibv_reg_mr(pd, plain, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE) : NULL;
	}
	if (!pmr)
		return 0;
	fill(plain, len, seed);
	ss.addr = (uintptr_t)plain;
	ss.lkey = pmr->lkey;
	if (ibv_post_recv(qb, &rwr, &rbad) || post_signaled(qa, &swr))
		return 0;
	return expect(cq, id, IBV_WC_SUCCESS, IBV_WC_SEND) &&
	       expect(cqb, id, IBV_WC_SUCCESS, IBV_WC_RECV) && same_as_pattern(bbuf, len, seed);
}

/* A FETCH_ADD of `add` on the word at bbuf + roff, the old value landing at abuf + off. */
static int fetch_add(uint64_t id, size_t off, size_t roff, uint64_t add)
{
	struct ibv_sge sge = { .addr = (uintptr_t)abuf + off, .length = 8, .lkey = amr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .sg_list = &sge, .num_sge = 1 };

	wr.wr.atomic.remote_addr = (uintptr_t)bbuf + roff;
	wr.wr.atomic.compare_add = add;
	wr.wr.atomic.rkey = bmr->rkey;
	if (post_signaled(qa, &wr))
		return 0;
	return expect(cq, id, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD);
}

static volatile int dropping;

/* Drops B's pages under the registration until told to stop. */
static void *dropper(void *arg)
{
	unsigned long *rounds = arg;

	while (dropping) {
		madvise(bbuf, BUF_SIZE, MADV_DONTNEED);
		(*rounds)++;
		usleep(200);
	}
	return NULL;
}

/* rrxe's count of page faults the data path waited for (-1 where there is none). */
static long odp_faults(void)
{
	char path[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/odp_faults",
		 ibv_get_device_name(ctx->device));
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void advise(void)
{
	long before;
	struct ibv_sge sge = { .addr = (uintptr_t)bbuf, .length = BUF_SIZE, .lkey = bmr->lkey };
	struct ibv_sge bad = { .addr = (uintptr_t)bbuf, .length = 64, .lkey = bmr->lkey ^ 0x100 };
	int r;

	madvise(bbuf, BUF_SIZE, MADV_DONTNEED);
	r = ibv_cmd_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH, &sge,
			  1);
	CHECK(r == 0, "advise_mr: synchronous PREFETCH_WRITE of 256 KiB (%d)", r);
	r = ibv_cmd_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1);
	CHECK(r == 0, "advise_mr: asynchronous PREFETCH (%d)", r);
	r = ibv_cmd_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, IBV_ADVISE_MR_FLAG_FLUSH,
			  &sge, 1);
	CHECK(r == 0, "advise_mr: PREFETCH_NO_FAULT (%d)", r);
	r = ibv_cmd_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH, &bad,
			  1);
	CHECK(r != 0, "advise_mr: a wrong lkey is refused (%d)", r);
	fill(abuf, BUF_SIZE, 9);
	/* Both sides present: the payload (A, for reading) and the target (B, for writing). */
	struct ibv_sge both[2] = {
		{ .addr = (uintptr_t)abuf, .length = BUF_SIZE, .lkey = amr->lkey },
		{ .addr = (uintptr_t)bbuf, .length = BUF_SIZE, .lkey = bmr->lkey },
	};
	r = ibv_cmd_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, IBV_ADVISE_MR_FLAG_FLUSH,
			      both, 2);
	CHECK(r == 0, "advise_mr: two ranges (%d)", r);
	before = odp_faults();
	CHECK(rdma(90, IBV_WR_RDMA_WRITE, 0, 0, BUF_SIZE, IBV_WC_SUCCESS) &&
		      same_as_pattern(bbuf, BUF_SIZE, 9),
	      "WRITE after a prefetch");
	if (strict && before >= 0)
		CHECK(odp_faults() == before, "no page fault after the prefetch (%ld, %ld)", before,
		      odp_faults());
}

static void race(void)
{
	pthread_t t;
	unsigned long rounds = 0;
	const char *env = getenv("ODP_RACE_ROUNDS");
	int rounds_max = env ? atoi(env) : 300;
	int ok = 1, n;

	if (rounds_max < 1)
		rounds_max = 300;
	dropping = 1;
	if (pthread_create(&t, NULL, dropper, &rounds)) {
		CHECK(0, "dropper thread");
		return;
	}
	for (n = 0; n < rounds_max && ok; n++) {
		fill(abuf, 65536, n);
		ok = rdma(1000 + n, IBV_WR_RDMA_WRITE, 0, (n % 4) * 65536, 65536, IBV_WC_SUCCESS);
		if (ok && n % 3 == 0)
			ok = rdma(2000 + n, IBV_WR_RDMA_READ, 65536, (n % 4) * 65536, 65536,
				  IBV_WC_SUCCESS);
	}
	dropping = 0;
	pthread_join(t, NULL);
	CHECK(ok, "%d WRITEs/READs of 64 KiB while B's pages were dropped %lu times", n, rounds);
	fill(abuf, BUF_SIZE, 77);
	CHECK(rdma(3000, IBV_WR_RDMA_WRITE, 0, 0, BUF_SIZE, IBV_WC_SUCCESS) &&
		      same_as_pattern(bbuf, BUF_SIZE, 77),
	      "after the race: a WRITE of 256 KiB lands whole");
}

int main(int argc, char **argv)
{
	struct ibv_device_attr_ex ax;
	struct ibv_qp_init_attr qi = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 16, .max_recv_wr = 16,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	uint32_t rc_need = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
			   IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC;
	uint64_t word;
	int r = test_setup(argc, argv);

	if (r)
		return r;
	memset(&ax, 0, sizeof(ax));
	CHECK(ibv_query_device_ex(ctx, NULL, &ax) == 0, "query_device_ex");
	if (!(ax.odp_caps.general_caps & IBV_ODP_SUPPORT)) {
		printf("# SKIP: the device has no on-demand paging\n");
		return 4;
	}
	CHECK((ax.odp_caps.per_transport_caps.rc_odp_caps & rc_need) == rc_need,
	      "RC ODP caps %#x", ax.odp_caps.per_transport_caps.rc_odp_caps);
	CHECK(ax.odp_caps.per_transport_caps.ud_odp_caps & IBV_ODP_SUPPORT_SEND,
	      "UD ODP caps %#x", ax.odp_caps.per_transport_caps.ud_odp_caps);
	cqb = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	qi.send_cq = cq;
	qi.recv_cq = cq;
	qa = ibv_create_qp(pd, &qi);
	qi.send_cq = cqb;
	qi.recv_cq = cqb;
	qb = ibv_create_qp(pd, &qi);
	abuf = map(BUF_SIZE);
	bbuf = map(BUF_SIZE);
	CHECK(cqb && qa && qb && abuf && bbuf, "QPs and buffers");
	if (!cqb || !qa || !qb || !abuf || !bbuf)
		return 1;
	/* Registered before a byte is touched: no page is present. */
	amr = ibv_reg_mr(pd, abuf, BUF_SIZE, ODP_ACCESS);
	bmr = ibv_reg_mr(pd, bbuf, BUF_SIZE, ODP_ACCESS);
	CHECK(amr && bmr, "register 2 x 256 KiB with IBV_ACCESS_ON_DEMAND");
	if (!amr || !bmr)
		return 1;
	CHECK(connect_pair() == 0, "connect");

	/* Fresh pages everywhere. */
	CHECK(rdma(1, IBV_WR_RDMA_READ, 0, 0, BUF_SIZE, IBV_WC_SUCCESS) &&
		      all_zero(abuf, BUF_SIZE),
	      "READ 256 KiB of fresh pages into fresh pages (zeros)");
	fill(abuf, BUF_SIZE, 1);
	CHECK(rdma(2, IBV_WR_RDMA_WRITE, 0, 0, BUF_SIZE, IBV_WC_SUCCESS) &&
		      same_as_pattern(bbuf, BUF_SIZE, 1),
	      "WRITE 256 KiB into fresh pages");
	fill(abuf, 65536, 2);
	CHECK(send_recv(3, 65536) && same_as_pattern(bbuf, 65536, 2), "SEND 64 KiB");

	/* The pages dropped under the registration. */
	madvise(abuf, BUF_SIZE, MADV_DONTNEED);
	madvise(bbuf, BUF_SIZE, MADV_DONTNEED);
	CHECK(rdma(4, IBV_WR_RDMA_WRITE, 0, 0, BUF_SIZE, IBV_WC_SUCCESS) &&
		      all_zero(bbuf, BUF_SIZE),
	      "WRITE from dropped pages into dropped pages (zeros)");
	fill(bbuf, BUF_SIZE, 5);
	madvise(abuf, BUF_SIZE, MADV_DONTNEED);
	CHECK(rdma(5, IBV_WR_RDMA_READ, 0, 0, BUF_SIZE, IBV_WC_SUCCESS) &&
		      same_as_pattern(abuf, BUF_SIZE, 5),
	      "READ 256 KiB into dropped pages");
	fill(abuf, 65536, 6);
	madvise(bbuf, BUF_SIZE, MADV_DONTNEED);
	CHECK(send_recv(6, 65536) && same_as_pattern(bbuf, 65536, 6),
	      "SEND 64 KiB into a dropped receive buffer");
	madvise(bbuf, BUF_SIZE, MADV_DONTNEED);
	CHECK(send_plain_into_odp(20, 16384, 20),
	      "SEND 16 KiB from a pinned region into a dropped ODP receive buffer");
	CHECK(send_plain_into_odp(21, 16384, 21),
	      "SEND 16 KiB from a pinned region into a present ODP receive buffer");
	madvise(abuf, BUF_SIZE, MADV_DONTNEED);
	madvise(bbuf, BUF_SIZE, MADV_DONTNEED);
	CHECK(fetch_add(7, 4096, 8192, 5) && fetch_add(8, 4096, 8192, 5), "two FETCH_ADDs");
	memcpy(&word, bbuf + 8192, 8);
	CHECK(word == 10, "the word is 10 (%llu)", (unsigned long long)word);
	memcpy(&word, abuf + 4096, 8);
	CHECK(word == 5, "the second returned 5 (%llu)", (unsigned long long)word);

	/* Part of B unmapped under the registration: an error, not a hang. */
	CHECK(munmap(bbuf + BUF_SIZE - 65536, 65536) == 0, "unmap B's last 64 KiB");
	fill(abuf, 65536, 10);
	CHECK(rdma(10, IBV_WR_RDMA_WRITE, 0, BUF_SIZE - 65536, 65536, IBV_WC_REM_ACCESS_ERR),
	      "WRITE into the unmapped range: remote access error");
	CHECK(connect_pair() == 0, "reconnect");
	CHECK(rdma(11, IBV_WR_RDMA_WRITE, 0, 0, 65536, IBV_WC_SUCCESS) &&
		      same_as_pattern(bbuf, 65536, 10),
	      "WRITE into the mapped part still works");
	/* Mapped again at the same address: the registration follows the new pages. */
	CHECK(mmap(bbuf + BUF_SIZE - 65536, 65536, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED,
	      "map B's last 64 KiB again");
	fill(abuf, 65536, 12);
	CHECK(rdma(12, IBV_WR_RDMA_WRITE, 0, BUF_SIZE - 65536, 65536, IBV_WC_SUCCESS) &&
		      same_as_pattern(bbuf + BUF_SIZE - 65536, 65536, 12),
	      "WRITE into the new mapping");

	advise();
	race();

	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	CHECK(ibv_dereg_mr(amr) == 0 && ibv_dereg_mr(bmr) == 0, "deregister");
	printf("# verbs_odp: %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
