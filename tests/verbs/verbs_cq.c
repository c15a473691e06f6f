// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_cq: completion queues through the stock rxe provider (librxe) and the rxe user ABI:
 * create, the mmap'ed ring, resize, notification arming, destroy, error paths and hostile
 * mmap calls on the uverbs file.
 *
 * Usage: verbs_cq DEVICE     exit 0 when every check passes; prints "# " diagnostics.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "common.h"


/* The offsets of this process's mappings of the uverbs file, from /proc/self/maps. */
static int uverbs_maps(unsigned long long *offs, size_t *lens, int max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	while (f && fgets(line, sizeof(line), f) && n < max) {
		unsigned long start, end;
		unsigned long long off;

		if (!strstr(line, "uverbs"))
			continue;
		if (sscanf(line, "%lx-%lx %*s %llx", &start, &end, &off) == 3) {
			offs[n] = off;
			lens[n] = end - start;
			n++;
		}
	}
	if (f)
		fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	struct ibv_comp_channel *ch;
	struct ibv_context *ctx;
	struct ibv_cq *cq, *cq2;
	struct ibv_wc wc[4];
	struct ibv_pd *pd;

	if (argc < 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	ctx = open_device(argv[1]);
	CHECK(ctx, "open %s", argv[1]);
	if (!ctx)
		return 1;

	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc PD");

	ch = ibv_create_comp_channel(ctx);
	CHECK(ch, "create completion channel");

	cq = ibv_create_cq(ctx, 10, NULL, ch, 0);
	CHECK(cq, "create CQ of 10");
	if (!cq)
		return 1;
	CHECK(cq->cqe >= 10 && cq->cqe < 64, "CQ rounded to %d entries (2^k-1)", cq->cqe);
	CHECK(ibv_poll_cq(cq, 4, wc) == 0, "poll an empty CQ from user space");
	CHECK(ibv_req_notify_cq(cq, 0) == 0, "arm CQ (next completion)");
	CHECK(ibv_req_notify_cq(cq, 1) == 0, "arm CQ (solicited only)");

	/* The ring librxe mapped: exactly one mapping of the uverbs file, one page or more. */
	unsigned long long offs[8];
	size_t lens[8];
	int n = uverbs_maps(offs, lens, 8);
	CHECK(n >= 1, "%d mapping(s) of the uverbs file", n);
	if (n >= 1) {
		void *p = mmap(NULL, lens[0], PROT_READ | PROT_WRITE, MAP_SHARED, ctx->cmd_fd,
			       offs[0]);
		CHECK(p == MAP_FAILED, "a second mmap of offset %#llx is refused", offs[0]);
		if (p != MAP_FAILED)
			munmap(p, lens[0]);
	}
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->cmd_fd, 0x7ff0000000ULL);
	CHECK(p == MAP_FAILED, "mmap of an unknown offset is refused");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, ctx->cmd_fd, 0);
	CHECK(p == MAP_FAILED, "private mmap is refused");

	CHECK(ibv_resize_cq(cq, 100) == 0, "resize CQ to 100");
	CHECK(cq->cqe >= 100 && cq->cqe < 256, "resized CQ has %d entries", cq->cqe);
	CHECK(ibv_poll_cq(cq, 4, wc) == 0, "poll the resized (new ring) CQ");
	CHECK(ibv_resize_cq(cq, 3) == 0, "shrink empty CQ to 3");
	CHECK(ibv_resize_cq(cq, 40000) != 0, "resize above max_cqe fails");
	CHECK(ibv_poll_cq(cq, 4, wc) == 0, "CQ still usable after a failed resize");

	errno = 0;
	cq2 = ibv_create_cq(ctx, 0, NULL, NULL, 0);
	CHECK(!cq2, "CQ of 0 entries is refused");
	cq2 = ibv_create_cq(ctx, 32768, NULL, NULL, 0);
	CHECK(!cq2, "CQ above max_cqe (32767) is refused");
	cq2 = ibv_create_cq(ctx, 32767, NULL, NULL, 0);
	CHECK(cq2, "CQ of max_cqe entries");
	if (cq2)
		CHECK(ibv_destroy_cq(cq2) == 0, "destroy the large CQ");

	/* Many create/destroy cycles: leaks show up in kmemleak. */
	int ok = 1;
	for (int i = 0; i < 200 && ok; i++) {
		cq2 = ibv_create_cq(ctx, 1 + i * 7, NULL, NULL, 0);
		ok = cq2 && ibv_destroy_cq(cq2) == 0;
	}
	CHECK(ok, "200 create/destroy cycles");

	CHECK(ibv_destroy_cq(cq) == 0, "destroy CQ");
	CHECK(ibv_destroy_comp_channel(ch) == 0, "destroy completion channel");
	CHECK(ibv_dealloc_pd(pd) == 0, "dealloc PD");

	/* Leave objects behind: closing the device must clean them up. */
	for (int i = 0; i < 4; i++)
		ibv_create_cq(ctx, 16, NULL, NULL, 0);
	ibv_alloc_pd(ctx);
	CHECK(ibv_close_device(ctx) == 0, "close device with live CQs and PD");

	printf("# verbs_cq: %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
