/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of verbs_attack: a kernel address to aim at, legacy uverbs POST_* write()s with work
 * requests built by hand, and an RC QP connected to itself (separate send and receive CQs,
 * optionally on an SRQ) with its transfer checks. Uses the globals of testenv.h.
 */
#ifndef RRXE_VERBS_ATTACK_H
#define RRXE_VERBS_ATTACK_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "rc.h"
#include "testenv.h"

#define BUF_SIZE (64 * 1024)
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Registered buffers: data is sent from sbuf and lands in rbuf. */
static uint8_t *sbuf, *rbuf;
static struct ibv_mr *mr;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 13 + (i >> 8));
}

/* Up to `len` - 1 bytes of file `path`, NUL-terminated; the length read, or -1. */
static int read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return (int)n;
}

/*
 * A kernel address user space must never get the content of, described in `how`: linux_banner
 * when /proc/kallsyms lists it (CONFIG_KALLSYMS_ALL; its text starts like /proc/version, and
 * `*banner` is set), else the first kernel text symbol, else (no CONFIG_KALLSYMS, as in the
 * fast test kernel) the kernel's read-only data: its offset from the code in /proc/iomem, added
 * to x86-64's default _text (0xffffffff81000000: no KASLR, the default PHYSICAL_START). 0 when
 * none is known.
 */
static uint64_t find_kernel_address(int *banner, const char **how)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	unsigned long long a, e, text = 0, code = 0;
	char line[512], name[256], type;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || !(a >> 63))
			continue;
		if (!strcmp(name, "linux_banner")) {
			fclose(f);
			*banner = 1;
			*how = "linux_banner";
			return a;
		}
		if (!text && (type == 'T' || type == 't'))
			text = a;
	}
	if (f)
		fclose(f);
	if (text) {
		*how = "the first kernel text symbol";
		return text;
	}
	f = fopen("/proc/iomem", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, " %llx-%llx", &a, &e) != 2 || !a)
			continue;
		if (strstr(line, ": Kernel code"))
			code = a;
		if (strstr(line, ": Kernel rodata") && code && a > code) {
			fclose(f);
			*how = "the kernel's rodata (/proc/iomem, no KASLR)";
			return 0xffffffff81000000ULL + (a - code);
		}
	}
	if (f)
		fclose(f);
	*how = "none found";
	return 0;
}

/* find_kernel_address(), looked up once (reading kallsyms is slow on the debug kernel). */
static uint64_t kernel_address(int *banner, const char **how)
{
	static int looked, is_banner;
	static const char *found_how;
	static uint64_t addr;

	if (!looked++)
		addr = find_kernel_address(&is_banner, &found_how);
	*banner = is_banner;
	*how = found_how;
	return addr;
}

/* POST_SEND, POST_RECV and POST_SRQ_RECV share this command layout. */
_Static_assert(sizeof(struct ib_uverbs_post_send) == sizeof(struct ib_uverbs_post_recv) &&
		       sizeof(struct ib_uverbs_post_send) == sizeof(struct ib_uverbs_post_srq_recv),
	       "post command layouts");

/*
 * write()s the legacy uverbs command `command` (IB_USER_VERBS_CMD_POST_*) for the QP or SRQ
 * `handle` with one work request of `wqe_size` bytes and `nsge` SGEs, as ib_uverbs_post_send()
 * and ib_uverbs_unmarshall_recv() read them: header, command, WQEs, SGEs; sizes in 4-byte
 * words. 0 when the kernel accepted it, else the errno.
 */
static int post_raw(uint32_t command, uint32_t handle, const void *wqe, uint32_t wqe_size,
		    const struct ib_uverbs_sge *sge, uint32_t nsge)
{
	uint64_t buf[128];
	uint8_t *p = (uint8_t *)buf;
	struct ib_uverbs_post_send_resp resp = { 0 };
	struct ib_uverbs_cmd_hdr h = { .command = command };
	struct ib_uverbs_post_send c = { .response = (uintptr_t)&resp, .qp_handle = handle,
					 .wr_count = 1, .sge_count = nsge, .wqe_size = wqe_size };
	size_t len = sizeof(h) + sizeof(c) + wqe_size + nsge * sizeof(*sge);
	ssize_t n;

	if (len > sizeof(buf) || len % 4)
		return EINVAL;
	h.in_words = len / 4;
	h.out_words = sizeof(resp) / 4;
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), &c, sizeof(c));
	memcpy(p + sizeof(h) + sizeof(c), wqe, wqe_size);
	if (nsge)
		memcpy(p + sizeof(h) + sizeof(c) + wqe_size, sge, nsge * sizeof(*sge));
	n = write(ctx->cmd_fd, buf, len);
	if (n < 0)
		return errno;
	return n == (ssize_t)len ? 0 : EIO;
}

/* An RC QP connected to itself. */
struct lp {
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_qp_cap cap; /* as created (rounded up by the driver) */
};

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &i) ? -1 : (int)a.qp_state;
}

/* RESET to RTS towards itself with path MTU `mtu` (otherwise as rc_connect). */
static int lp_connect(struct lp *l, enum ibv_mtu mtu)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	if (ibv_modify_qp(l->qp, &a, IBV_QP_STATE))
		return -1;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						     IBV_ACCESS_REMOTE_READ };
	if (ibv_modify_qp(l->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					     IBV_QP_ACCESS_FLAGS))
		return -1;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = mtu,
				  .dest_qp_num = l->qp->qp_num, .max_dest_rd_atomic = 4,
				  .min_rnr_timer = 1 };
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(l->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
				  .rnr_retry = 7, .max_rd_atomic = 4 };
	return ibv_modify_qp(l->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
						IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						IBV_QP_MAX_QP_RD_ATOMIC);
}

static void lp_destroy(struct lp *l)
{
	if (l->qp && ibv_destroy_qp(l->qp))
		CHECK(0, "destroy QP %u", l->qp->qp_num);
	if (l->srq && ibv_destroy_srq(l->srq))
		CHECK(0, "destroy SRQ");
	if (l->scq && ibv_destroy_cq(l->scq))
		CHECK(0, "destroy send CQ");
	if (l->rcq && ibv_destroy_cq(l->rcq))
		CHECK(0, "destroy receive CQ");
	memset(l, 0, sizeof(*l));
}

/* Creates and connects (MTU 1024) a QP with capacities `cap`, on a new SRQ if `with_srq`. */
static int lp_create(struct lp *l, int with_srq, struct ibv_qp_cap cap)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC, .cap = cap };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };

	memset(l, 0, sizeof(*l));
	l->scq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	l->rcq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (with_srq) {
		l->srq = ibv_create_srq(pd, &sa);
		ia.srq = l->srq;
		ia.cap.max_recv_wr = ia.cap.max_recv_sge = 0;
	}
	if (!l->scq || !l->rcq || (with_srq && !l->srq))
		return -1;
	ia.send_cq = l->scq;
	ia.recv_cq = l->rcq;
	l->qp = ibv_create_qp(pd, &ia);
	if (!l->qp)
		return -1;
	l->cap = ia.cap;
	return lp_connect(l, IBV_MTU_1024);
}

/* Drops whatever both CQs hold. */
static void lp_drain(struct lp *l)
{
	struct ibv_wc wc[16];

	for (int i = 0; i < 1000 && (ibv_poll_cq(l->scq, 16, wc) > 0 ||
				     ibv_poll_cq(l->rcq, 16, wc) > 0); i++)
		;
}

/* A receive of `len` bytes into `buf`, on the SRQ if the QP has one. */
static int lp_recv(struct lp *l, uint64_t id, void *buf, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (l->srq)
		return ibv_post_srq_recv(l->srq, &wr, &bad);
	return ibv_post_recv(l->qp, &wr, &bad);
}

/*
 * A SEND of `len` pattern bytes from sbuf, received by WR `id` into `dst` (posted here when
 * `post`, else already posted): 1 when both sides complete and the bytes arrive intact.
 */
static int roundtrip(struct lp *l, uint64_t id, uint8_t *dst, uint32_t len, int post)
{
	struct ibv_sge sge = { .addr = (uintptr_t)sbuf, .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id + 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND };
	struct ibv_wc wc;

	fill(sbuf, len, (unsigned int)id);
	if (post) {
		memset(dst, 0, len);
		if (lp_recv(l, id, dst, len))
			return 0;
	}
	if (post_signaled(l->qp, &wr) || !expect(l->scq, id + 1, IBV_WC_SUCCESS, IBV_WC_SEND))
		return 0;
	if (wait_wc(l->rcq, &wc)) {
		printf("# no receive completion\n");
		return 0;
	}
	if (wc.wr_id != id || wc.status != IBV_WC_SUCCESS || wc.byte_len != len ||
	    memcmp(dst, sbuf, len)) {
		printf("# receive: wr_id %#llx status %s byte_len %u, data %s\n",
		       (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status), wc.byte_len,
		       memcmp(dst, sbuf, len) ? "differs" : "intact");
		return 0;
	}
	return 1;
}

/* log2 of a ring slot holding `bytes` (rxe_queue_init: a power of two, at least 64). */
static unsigned int slot_log2(size_t bytes)
{
	unsigned int l = 6;

	while ((1ul << l) < bytes)
		l++;
	return l;
}

#endif /* RRXE_VERBS_ATTACK_H */
