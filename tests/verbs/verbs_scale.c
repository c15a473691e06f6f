// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_scale DEVICE GID_INDEX NQPS: the cost of many QPs, for scripts/bench's scale rows.
 *
 * Creates NQPS RC QPs (16-entry send and receive queues, one SGE, one shared CQ) on DEVICE,
 * connects them in loopback pairs (QP 2i with 2i+1, rc.h's rc_connect(): RESET, INIT, RTR,
 * RTS, path MTU 1024, the port's GID GID_INDEX), then destroys them, and prints what each phase took and what the
 * QPs cost in kernel memory while they existed:
 *
 *   scale: qps N
 *   scale: create_s SECONDS
 *   scale: connect_s SECONDS
 *   scale: destroy_s SECONDS
 *   scale: slab_kib_per_qp KIB        (/proc/meminfo Slab, after creation minus before)
 *   scale: vmalloc_kib_per_qp KIB     (/proc/meminfo VmallocUsed, the same)
 *   scale: memory_kib_per_qp KIB      (/proc/meminfo MemFree, before minus after: everything,
 *                                      the rings' pages too, however they are mapped)
 *   scale: slab_rts_kib_per_qp KIB    (Slab again once every QP is in RTS: what connecting
 *                                      added, the responder's READ/atomic resources for one)
 *   scale: memory_rts_kib_per_qp KIB  (MemFree, the same)
 *
 * The memory figures are the whole kernel's: run it on an otherwise idle guest. Exit status 0
 * when every QP was created, connected and destroyed; 1 otherwise (what failed is printed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "common.h"
#include "rc.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A /proc/meminfo field in KiB, or -1. */
static long meminfo_kib(const char *field)
{
	char line[256];
	size_t n = strlen(field);
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_qp **qps;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	union ibv_gid gid;
	int gid_index, n, made = 0, ok = 1;
	long slab0, vm0, free0, slab1, vm1, free1, slab2 = -1, free2 = -1;
	double t;

	if (argc != 4 || (n = atoi(argv[3])) < 2 || n % 2) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX NQPS (an even number >= 2)\n", argv[0]);
		return 2;
	}
	gid_index = atoi(argv[2]);
	ctx = open_device(argv[1]);
	if (!ctx) {
		fprintf(stderr, "verbs_scale: no device %s\n", argv[1]);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 256, NULL, NULL, 0) : NULL;
	qps = calloc(n, sizeof(*qps));
	if (!pd || !cq || !qps || ibv_query_gid(ctx, 1, gid_index, &gid)) {
		fprintf(stderr, "verbs_scale: setup failed (errno %d)\n", errno);
		return 1;
	}
	slab0 = meminfo_kib("Slab");
	vm0 = meminfo_kib("VmallocUsed");
	free0 = meminfo_kib("MemFree");

	t = now();
	for (; made < n; made++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = cq,
			.recv_cq = cq,
			.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
				 .max_recv_sge = 1 },
			.qp_type = IBV_QPT_RC,
		};

		qps[made] = ibv_create_qp(pd, &ia);
		if (!qps[made]) {
			printf("scale: create failed at QP %d (errno %d)\n", made, errno);
			ok = 0;
			break;
		}
	}
	printf("scale: qps %d\n", made);
	printf("scale: create_s %.3f\n", now() - t);
	slab1 = meminfo_kib("Slab");
	vm1 = meminfo_kib("VmallocUsed");
	free1 = meminfo_kib("MemFree");

	if (ok) {
		t = now();
		for (int i = 0; i < n; i += 2) {
			if (rc_connect(qps[i], qps[i + 1]->qp_num, &gid, gid_index) ||
			    rc_connect(qps[i + 1], qps[i]->qp_num, &gid, gid_index)) {
				printf("scale: connect failed at QP %d (errno %d)\n", i, errno);
				ok = 0;
				break;
			}
		}
		if (ok) {
			printf("scale: connect_s %.3f\n", now() - t);
			slab2 = meminfo_kib("Slab");
			free2 = meminfo_kib("MemFree");
		}
	}

	t = now();
	for (int i = 0; i < made; i++)
		if (ibv_destroy_qp(qps[i])) {
			printf("scale: destroy failed at QP %d (errno %d)\n", i, errno);
			ok = 0;
		}
	if (ok)
		printf("scale: destroy_s %.3f\n", now() - t);
	if (made > 0 && slab0 >= 0 && slab1 >= 0)
		printf("scale: slab_kib_per_qp %.2f\n", (double)(slab1 - slab0) / made);
	if (made > 0 && vm0 >= 0 && vm1 >= 0)
		printf("scale: vmalloc_kib_per_qp %.2f\n", (double)(vm1 - vm0) / made);
	if (made > 0 && free0 >= 0 && free1 >= 0)
		printf("scale: memory_kib_per_qp %.2f\n", (double)(free0 - free1) / made);
	if (made > 0 && slab0 >= 0 && slab2 >= 0)
		printf("scale: slab_rts_kib_per_qp %.2f\n", (double)(slab2 - slab0) / made);
	if (made > 0 && free0 >= 0 && free2 >= 0)
		printf("scale: memory_rts_kib_per_qp %.2f\n", (double)(free0 - free2) / made);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(qps);
	return ok ? 0 : 1;
}
