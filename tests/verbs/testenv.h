/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The common setup of the verbs programs that take `DEVICE GID_INDEX [--rxe-compatible]`:
 * the opened device, its GID, a PD and a CQ, and whether the checks where rrxe is stricter
 * than the C rxe run (off with --rxe-compatible, for the oracle run).
 */
#ifndef RRXE_VERBS_TESTENV_H
#define RRXE_VERBS_TESTENV_H

#include <stdlib.h>

#include "common.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static union ibv_gid gid;
static int gid_index;
static int strict = 1;

/* Parses the arguments and creates the context, PD and CQ; 0, or the exit status to use. */
static inline int test_setup(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX [--rxe-compatible]\n", argv[0]);
		return 2;
	}
	strict = !(argc > 3 && !strcmp(argv[3], "--rxe-compatible"));
	gid_index = atoi(argv[2]);
	ctx = open_device(argv[1]);
	CHECK(ctx, "open %s", argv[1]);
	if (!ctx)
		return 1;
	CHECK(ibv_query_gid(ctx, 1, gid_index, &gid) == 0, "GID %d", gid_index);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	CHECK(pd && cq, "PD and CQ");
	return pd && cq ? 0 : 1;
}

#endif /* RRXE_VERBS_TESTENV_H */
