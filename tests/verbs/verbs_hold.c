// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_hold DEVICE SECONDS: open DEVICE, create a PD and a CQ (its ring mapped), then sleep.
 * Used to test teardown while a verbs user is alive.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "common.h"

int main(int argc, char **argv)
{
	struct ibv_context *ctx;

	if (argc < 3)
		return 2;
	ctx = open_device(argv[1]);
	if (!ctx || !ibv_alloc_pd(ctx) || !ibv_create_cq(ctx, 64, NULL, NULL, 0)) {
		perror("verbs_hold");
		return 1;
	}
	sleep(atoi(argv[2]));
	return 0;
}
