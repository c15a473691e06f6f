// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_fuzz: raw uverbs commands, write()n to the uverbs file as librxe's doorbell is (the
 * legacy write ABI: struct ib_uverbs_cmd_hdr, then the command; the extended ones with struct
 * ib_uverbs_ex_cmd_hdr), with handles of our own objects, of raw-created ones, stale or random
 * ones, random attributes, and lengths that at times do not match.
 *
 * What the kernel writes back goes where we say, so every user address in a command is one the
 * kernel may write (the scratch area, 8+ MB with PROT_NONE guards) or cannot (NULL, a kernel
 * address, an unmapped page). Memory registered by REG_MR is inside our MR buffers. Objects
 * created here carry the address of a dummy libibverbs object as their user handle: their
 * async events are acknowledged through it (its mutex and condition variable).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

#define CMD(x) IB_USER_VERBS_CMD_##x
#define EX(x) (IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_##x)
#define ASYNC_DUMMY { .mutex = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER }

static struct ibv_cq dummy_cq = ASYNC_DUMMY;
static struct ibv_qp dummy_qp = ASYNC_DUMMY;
static struct ibv_srq dummy_srq = ASYNC_DUMMY;
static struct ibv_wq dummy_wq = ASYNC_DUMMY;
static uint64_t cmdbuf[4096];
static uint64_t ex_resp;	/* the response address of the last extended command */

int scratch_init(void)
{
	size_t len = 8u << 20, need = ((size_t)F.attr.max_cqe + 2) * sizeof(struct ib_uverbs_wc);
	uint8_t *p;

	if (need + (1u << 20) > len)
		len = (need + (1u << 20) + pg - 1) & ~(pg - 1);
	p = mmap(NULL, len + 2 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED || mprotect(p + pg, len, PROT_READ | PROT_WRITE))
		return -1;
	F.scratch = p + pg;
	F.scratch_len = len;
	return 0;
}

static uint64_t resp_addr(void)
{
	if (chance(92))
		return (uintptr_t)F.scratch + 8 * below(16);
	return PICK(0, KADDR, 0x1000, (uintptr_t)F.scratch + F.scratch_len - 8);
}

static int in_scratch(uint64_t a)
{
	return a >= (uintptr_t)F.scratch && a + 64 <= (uintptr_t)F.scratch + F.scratch_len;
}

/* Memory for REG_MR/REREG_MR: inside one of our MR buffers mostly, else never ours. */
static uint64_t mr_start(__u64 *len)
{
	struct obj *m = pick(K_MR, 1);

	if (m && m->owned && chance(75)) {
		uint64_t off = below(m->buf_len);

		*len = chance(80) ? 1 + below(m->buf_len - off) : m->buf_len - off + pg;
		return (uintptr_t)m->buf + off;
	}
	*len = r_size(1 << 20);
	return PICK(0, KADDR, 0x1000, 0x7ffffffff000ull);
}

/*
 * Writes command `cmd` with the `len`-byte body (a multiple of 8), `drv_in` bytes of random
 * driver data after it and room announced for `out` response bytes and `drv_out` of driver
 * response (extended commands: response at a fresh resp_addr()). Length fields are off at
 * times. 1 when write() took it all.
 */
static int issue(uint32_t cmd, const void *body, size_t len, size_t out, size_t drv_in,
		 size_t drv_out)
{
	int ex = !!(cmd & IB_USER_VERBS_CMD_FLAG_EXTENDED);
	struct ib_uverbs_cmd_hdr h = { .command = cmd };
	struct ib_uverbs_ex_cmd_hdr x = { 0 };
	size_t hl = sizeof(h) + (ex ? sizeof(x) : 0), total = hl + len + drv_in, count = total;
	uint8_t *b = (uint8_t *)cmdbuf;

	if (total + 8 > sizeof(cmdbuf))
		return 0;
	memcpy(b + hl, body, len);
	for (size_t i = 0; i < drv_in; i++)
		b[hl + len + i] = chance(50) ? 0 : r64();
	if (ex) {
		h.in_words = len / 8;
		h.out_words = out / 8;
		x.provider_in_words = drv_in / 8;
		x.provider_out_words = drv_out / 8;
		x.response = ex_resp = out || drv_out || chance(5) ? resp_addr() : 0;
		x.cmd_hdr_reserved = chance(3) ? (uint32_t)r64() : 0;
		memcpy(b + sizeof(h), &x, sizeof(x));
	} else {
		h.in_words = total / 4;
		h.out_words = (out + drv_out) / 4;
	}
	if (chance(6))
		h.in_words = PICK(0, h.in_words - 1, h.in_words + 1, 0xffff, below(65536));
	if (chance(6))
		h.out_words = PICK(0, h.out_words - 1, h.out_words + 1, 0xffff);
	memcpy(b, &h, sizeof(h));
	if (chance(3))
		count = PICK(total - 4, total + 8, sizeof(h), below(total + 1));
	errno = 0;
	return write(F.ctx->cmd_fd, b, count) == (ssize_t)count;
}

static size_t drv(void)
{
	return chance(85) ? 0 : 8 * below(5);
}

/* After a create: remember the handle (the first word of every create response). */
static int created(int kind, uint64_t resp, int ok)
{
	if (ok && in_scratch(resp))
		raw_created(kind, *(uint32_t *)(uintptr_t)resp);
	return ok;
}

/*
 * After a destroy: the handle is gone. EFAULT too: the kernel destroys before it writes the
 * response (a later libibverbs destroy of a reused handle would wait for the wrong events).
 */
static int destroyed(int kind, uint32_t handle, int ok)
{
	if (ok || errno == EFAULT)
		mark_destroyed(kind, handle);
	return ok;
}

static void uverbs_ah_attr(struct ib_uverbs_ah_attr *u)
{
	struct ibv_ah_attr a;

	random_ah_attr(&a);
	memcpy(u->grh.dgid, a.grh.dgid.raw, 16);
	u->grh.flow_label = a.grh.flow_label;
	u->grh.sgid_index = a.grh.sgid_index;
	u->grh.hop_limit = a.grh.hop_limit;
	u->grh.traffic_class = a.grh.traffic_class;
	u->dlid = a.dlid;
	u->sl = a.sl;
	u->src_path_bits = a.src_path_bits;
	u->static_rate = a.static_rate;
	u->is_global = a.is_global;
	u->port_num = a.port_num;
}

static void qp_dest(struct ib_uverbs_qp_dest *d, const struct ibv_ah_attr *a)
{
	memcpy(d->dgid, a->grh.dgid.raw, 16);
	d->flow_label = a->grh.flow_label;
	d->dlid = a->dlid;
	d->sgid_index = a->grh.sgid_index;
	d->hop_limit = a->grh.hop_limit;
	d->traffic_class = a->grh.traffic_class;
	d->sl = a->sl;
	d->src_path_bits = a->src_path_bits;
	d->static_rate = a->static_rate;
	d->is_global = a->is_global;
	d->port_num = a->port_num;
}

static void modify_body(struct ib_uverbs_modify_qp *c)
{
	struct ibv_qp_attr a;
	int mask;

	random_qp_attr(&a, &mask);
	qp_dest(&c->dest, &a.ah_attr);
	qp_dest(&c->alt_dest, &a.alt_ah_attr);
	c->qp_handle = pick_handle(K_QP);
	c->attr_mask = mask;
	c->qkey = a.qkey;
	c->rq_psn = a.rq_psn;
	c->sq_psn = a.sq_psn;
	c->dest_qp_num = a.dest_qp_num;
	c->qp_access_flags = a.qp_access_flags;
	c->pkey_index = a.pkey_index;
	c->alt_pkey_index = a.alt_pkey_index;
	c->qp_state = a.qp_state;
	c->cur_qp_state = a.cur_qp_state;
	c->path_mtu = a.path_mtu;
	c->path_mig_state = a.path_mig_state;
	c->en_sqd_async_notify = a.en_sqd_async_notify;
	c->max_rd_atomic = a.max_rd_atomic;
	c->max_dest_rd_atomic = a.max_dest_rd_atomic;
	c->min_rnr_timer = a.min_rnr_timer;
	c->port_num = a.port_num;
	c->timeout = a.timeout;
	c->retry_cnt = a.retry_cnt;
	c->rnr_retry = a.rnr_retry;
	c->alt_port_num = a.alt_port_num;
	c->alt_timeout = a.alt_timeout;
}

/* Create-QP fields shared by CREATE_QP and EX_CREATE_QP (same layout from user_handle on). */
#define QP_FIELDS(c)                                                                      \
	do {                                                                                \
		struct ibv_qp_cap cap;                                                      \
		random_cap(&cap, chance(10));                                               \
		(c)->user_handle = (uintptr_t)&dummy_qp;                                    \
		(c)->pd_handle = pick_handle(K_PD);                                         \
		(c)->send_cq_handle = pick_handle(K_CQ);                                    \
		(c)->recv_cq_handle = chance(60) ? (c)->send_cq_handle : pick_handle(K_CQ); \
		(c)->srq_handle = pick_handle(K_SRQ);                                       \
		(c)->max_send_wr = cap.max_send_wr;                                         \
		(c)->max_recv_wr = cap.max_recv_wr;                                         \
		(c)->max_send_sge = cap.max_send_sge;                                       \
		(c)->max_recv_sge = cap.max_recv_sge;                                       \
		(c)->max_inline_data = cap.max_inline_data;                                 \
		(c)->sq_sig_all = below(2);                                                 \
		(c)->qp_type = chance(90) ? PICK(2, 2, 3, 4) : PICK(1, 8, 9, 10, 255, below(256)); \
		(c)->is_srq = chance(25);                                                   \
	} while (0)

static uint32_t cq_size(void)
{
	return chance(80) ? 1 + below(512) : r_size(F.attr.max_cqe);
}

static int comp_channel(void)
{
	/* Never our channel: its events are read with the user handle taken as an ibv_cq. */
	return PICK(-1, -1, -1, F.ctx->cmd_fd, 1000);
}

/*
 * POST_SEND, POST_RECV and POST_SRQ_RECV: a chain of `wqe_size`-byte WRs (at times another size
 * than announced) with their SGEs, counts announced right or not.
 */
static int raw_post(uint32_t cmd, int kind)
{
	uint8_t body[8192];
	struct ib_uverbs_post_send *c = (void *)body;
	size_t wsz = cmd == CMD(POST_SEND) ? sizeof(struct ib_uverbs_send_wr) :
					     sizeof(struct ib_uverbs_recv_wr);
	uint32_t n = chance(85) ? 1 + below(4) : below(32), nsge = 0;
	size_t stride = chance(85) ? wsz : wsz + 8 * below(4), len = sizeof(*c);

	/* C rxe takes receive WRs of user QPs into their rings unchecked: none for it. */
	if (F.compat && cmd != CMD(POST_SEND))
		n = 0;
	memset(body, 0, sizeof(body));
	for (uint32_t i = 0; i < n && len + stride + 4 * 16 <= sizeof(body) - 256; i++) {
		struct ib_uverbs_send_wr *w = (void *)(body + len);
		uint32_t ns = chance(90) ? below(4) : PICK(0xffffffff, 1000, below(64));

		w->wr_id = r64();
		w->num_sge = ns;
		if (cmd == CMD(POST_SEND)) {
			w->opcode = chance(90) ? below(14) : (uint32_t)r64();
			w->send_flags = chance(90) ? below(32) : (uint32_t)r64();
			w->ex.imm_data = r64();
			w->wr.rdma.remote_addr = remote_addr(&w->wr.rdma.rkey);
			if (chance(30)) {
				w->wr.ud.ah = pick_handle(K_AH);
				w->wr.ud.remote_qpn = dest_qpn();
				w->wr.ud.remote_qkey = chance(80) ? QKEY : (uint32_t)r64();
			}
		}
		len += stride;
		nsge += ns < 4 ? ns : 0;
	}
	for (uint32_t i = 0; i < nsge && len + 16 <= sizeof(body); i++, len += 16) {
		struct ibv_sge s;
		struct ib_uverbs_sge *u = (void *)(body + len);

		sge_fill(&s, 0);
		*u = (struct ib_uverbs_sge){ .addr = s.addr, .length = s.length, .lkey = s.lkey };
	}
	c->response = resp_addr();
	c->qp_handle = pick_handle(kind);
	c->wr_count = chance(90) ? n : PICK(0, n + 1, 0xffffffff, below(1 << 16));
	c->sge_count = chance(90) ? nsge : PICK(0, nsge + 1, 0xffffffff, below(1 << 16));
	/* The core kmallocs wqe_size even for no WR: a huge one warns in the page allocator. */
	c->wqe_size = chance(90) ? stride : PICK(0, wsz - 8, wsz + 1, below(1 << 12));
	return issue(cmd, body, (len + 7) & ~7ul, sizeof(struct ib_uverbs_post_send_resp), 0, 0);
}

static int raw_post_send(void) { return raw_post(CMD(POST_SEND), K_QP); }
static int raw_post_recv(void) { return raw_post(CMD(POST_RECV), K_QP); }
static int raw_post_srq_recv(void) { return raw_post(CMD(POST_SRQ_RECV), K_SRQ); }

#define SIMPLE(name, command, type, resp_type, ...)                                         \
	static int name(void)                                                               \
	{                                                                                   \
		type c = { __VA_ARGS__ };                                                   \
		return issue(command, &c, sizeof(c), sizeof(resp_type), drv(), 0);          \
	}

SIMPLE(raw_get_context, CMD(GET_CONTEXT), struct ib_uverbs_get_context,
       struct ib_uverbs_get_context_resp, .response = resp_addr())
SIMPLE(raw_query_device, CMD(QUERY_DEVICE), struct ib_uverbs_query_device,
       struct ib_uverbs_query_device_resp, .response = resp_addr())
SIMPLE(raw_query_port, CMD(QUERY_PORT), struct ib_uverbs_query_port,
       struct ib_uverbs_query_port_resp, .response = resp_addr(),
       .port_num = PICK(1, 1, 0, 2, 255))
SIMPLE(raw_query_qp, CMD(QUERY_QP), struct ib_uverbs_query_qp, struct ib_uverbs_query_qp_resp,
       .response = resp_addr(), .qp_handle = pick_handle(K_QP),
       .attr_mask = PICK(1, 0x1ffffff, (uint32_t)r64()))
SIMPLE(raw_query_srq, CMD(QUERY_SRQ), struct ib_uverbs_query_srq,
       struct ib_uverbs_query_srq_resp, .response = resp_addr(),
       .srq_handle = pick_handle(K_SRQ))
SIMPLE(raw_poll_cq, CMD(POLL_CQ), struct ib_uverbs_poll_cq, struct ib_uverbs_poll_cq_resp,
       .response = resp_addr(), .cq_handle = pick_handle(K_CQ),
       .ne = PICK(0, 1, below(64), below(1024), 0xffffffff))
SIMPLE(raw_req_notify_cq, CMD(REQ_NOTIFY_CQ), struct ib_uverbs_req_notify_cq, char[0],
       .cq_handle = pick_handle(K_CQ), .solicited_only = PICK(0, 1, (uint32_t)r64()))

#define CREATE(name, kind, command, type, resp_type, drv_resp, ...)                         \
	static int name(void)                                                               \
	{                                                                                   \
		type c = { .response = resp_addr(), __VA_ARGS__ };                          \
		return created(kind, c.response,                                            \
			       issue(command, &c, sizeof(c), sizeof(resp_type), drv(),      \
				     chance(90) ? sizeof(drv_resp) : 8 * below(4)));        \
	}

CREATE(raw_alloc_pd, K_PD, CMD(ALLOC_PD), struct ib_uverbs_alloc_pd,
       struct ib_uverbs_alloc_pd_resp, char[0])
CREATE(raw_alloc_mw, K_MW, CMD(ALLOC_MW), struct ib_uverbs_alloc_mw,
       struct ib_uverbs_alloc_mw_resp, char[0], .pd_handle = pick_handle(K_PD),
       .mw_type = PICK(1, 2, 2, 0, 3, 255))
CREATE(raw_create_cq, K_CQ, CMD(CREATE_CQ), struct ib_uverbs_create_cq,
       struct ib_uverbs_create_cq_resp, struct rxe_create_cq_resp,
       .user_handle = (uintptr_t)&dummy_cq, .cqe = cq_size(),
       .comp_vector = chance(90) ? 0 : (uint32_t)r64(), .comp_channel = comp_channel())
CREATE(raw_create_srq, K_SRQ, CMD(CREATE_SRQ), struct ib_uverbs_create_srq,
       struct ib_uverbs_create_srq_resp, struct rxe_create_srq_resp,
       .user_handle = (uintptr_t)&dummy_srq, .pd_handle = pick_handle(K_PD),
       .max_wr = chance(80) ? 1 + below(256) : r_depth(F.attr.max_srq_wr),
       .max_sge = chance(80) ? below(5) : r_size(F.attr.max_srq_sge),
       .srq_limit = chance(80) ? 0 : (uint32_t)r64())

#define DESTROY(name, kind, command, type, resp_type, field, ...)                           \
	static int name(void)                                                               \
	{                                                                                   \
		type c = { .field = pick_handle(kind), __VA_ARGS__ };                       \
		return destroyed(kind, c.field,                                             \
				 issue(command, &c, sizeof(c), sizeof(resp_type), drv(), 0)); \
	}

DESTROY(raw_dealloc_pd, K_PD, CMD(DEALLOC_PD), struct ib_uverbs_dealloc_pd, char[0], pd_handle)
DESTROY(raw_dereg_mr, K_MR, CMD(DEREG_MR), struct ib_uverbs_dereg_mr, char[0], mr_handle)
DESTROY(raw_dealloc_mw, K_MW, CMD(DEALLOC_MW), struct ib_uverbs_dealloc_mw, char[0], mw_handle)
DESTROY(raw_destroy_ah, K_AH, CMD(DESTROY_AH), struct ib_uverbs_destroy_ah, char[0], ah_handle)
DESTROY(raw_destroy_cq, K_CQ, CMD(DESTROY_CQ), struct ib_uverbs_destroy_cq,
	struct ib_uverbs_destroy_cq_resp, cq_handle, .response = resp_addr())
DESTROY(raw_destroy_qp, K_QP, CMD(DESTROY_QP), struct ib_uverbs_destroy_qp,
	struct ib_uverbs_destroy_qp_resp, qp_handle, .response = resp_addr())
DESTROY(raw_destroy_srq, K_SRQ, CMD(DESTROY_SRQ), struct ib_uverbs_destroy_srq,
	struct ib_uverbs_destroy_srq_resp, srq_handle, .response = resp_addr())

static int raw_create_ah(void)
{
	struct ib_uverbs_create_ah c = { .response = resp_addr(), .user_handle = r64(),
					 .pd_handle = pick_handle(K_PD) };

	uverbs_ah_attr(&c.attr);
	return created(K_AH, c.response,
		       issue(CMD(CREATE_AH), &c, sizeof(c), sizeof(struct ib_uverbs_create_ah_resp),
			     drv(), chance(90) ? sizeof(struct rxe_create_ah_resp) : 0));
}

static int raw_reg_mr(void)
{
	struct ib_uverbs_reg_mr c = { .response = resp_addr(), .pd_handle = pick_handle(K_PD),
				      .access_flags = random_access() };

	c.start = mr_start(&c.length);
	c.hca_va = chance(70) ? c.start : r64();
	return created(K_MR, c.response,
		       issue(CMD(REG_MR), &c, sizeof(c), sizeof(struct ib_uverbs_reg_mr_resp), drv(),
			     0));
}

static int raw_create_qp(void)
{
	struct ib_uverbs_create_qp c = { .response = resp_addr() };

	QP_FIELDS(&c);
	return created(K_QP, c.response,
		       issue(CMD(CREATE_QP), &c, sizeof(c), sizeof(struct ib_uverbs_create_qp_resp),
			     drv(), chance(90) ? sizeof(struct rxe_create_qp_resp) : 0));
}

static int raw_modify_qp(void)
{
	struct ib_uverbs_modify_qp c = { 0 };

	modify_body(&c);
	return issue(CMD(MODIFY_QP), &c, sizeof(c), 0, drv(), 0);
}

static int raw_resize_cq(void)
{
	struct ib_uverbs_resize_cq c = { .response = resp_addr(), .cq_handle = pick_handle(K_CQ),
					 .cqe = cq_size() };

	return issue(CMD(RESIZE_CQ), &c, sizeof(c), sizeof(struct ib_uverbs_resize_cq_resp), drv(),
		     chance(90) ? sizeof(struct rxe_resize_cq_resp) : 0);
}

static int raw_rereg_mr(void)
{
	struct ib_uverbs_rereg_mr c = { .response = resp_addr(), .mr_handle = pick_handle(K_MR),
					.flags = PICK(1, 2, 4, 7, 0, (uint32_t)r64()),
					.pd_handle = pick_handle(K_PD),
					.access_flags = random_access() };

	c.start = mr_start(&c.length);
	c.hca_va = chance(70) ? c.start : r64();
	return issue(CMD(REREG_MR), &c, sizeof(c), sizeof(struct ib_uverbs_rereg_mr_resp), drv(),
		     0);
}

/* MODIFY_SRQ with librxe's driver data: where the kernel writes the new ring's mminfo. */
static int raw_modify_srq(void)
{
	struct {
		struct ib_uverbs_modify_srq c;
		struct rxe_modify_srq_cmd d;
	} b = { .c = { .srq_handle = pick_handle(K_SRQ),
		       .attr_mask = PICK(1, 2, 3, 0, (uint32_t)r64()),
		       .max_wr = chance(80) ? 1 + below(512) : r_depth(F.attr.max_srq_wr),
		       .srq_limit = chance(80) ? below(512) : (uint32_t)r64() },
		.d = { .mmap_info_addr = resp_addr() } };

	return issue(CMD(MODIFY_SRQ), &b, chance(90) ? sizeof(b) : sizeof(b.c), 0, 0, 0);
}

static int raw_comp_channel(void)
{
	struct ib_uverbs_create_comp_channel c = { .response = resp_addr() };
	int ok = issue(CMD(CREATE_COMP_CHANNEL), &c, sizeof(c),
		       sizeof(struct ib_uverbs_create_comp_channel_resp), 0, 0);
	int fd = ok && in_scratch(c.response) ? *(int *)(uintptr_t)c.response : -1;

	/* The new event file: close it (never one of ours). */
	if (fd > 2 && fd != F.ctx->cmd_fd && fd != F.ctx->async_fd && (!F.ch || fd != F.ch->fd))
		close(fd);
	return ok;
}

static int raw_mcast(void)
{
	struct ib_uverbs_attach_mcast c = { .gid = { 0xff, 0x0e }, .qp_handle = pick_handle(K_QP),
					    .mlid = chance(90) ? 0 : below(65536) };

	c.gid[15] = below(8);
	if (chance(20))
		for (int i = 0; i < 16; i++)
			c.gid[i] = r64();
	return issue(chance(50) ? CMD(ATTACH_MCAST) : CMD(DETACH_MCAST), &c, sizeof(c), 0, drv(),
		     0);
}

/* Commands rxe has no method for (XRC, unimplemented numbers, past the table), random bodies. */
static int raw_unsupported(void)
{
	uint64_t body[16];
	uint32_t cmd = PICK(CMD(OPEN_XRCD), CMD(CLOSE_XRCD), CMD(CREATE_XSRQ), CMD(OPEN_QP),
			    CMD(MODIFY_AH), CMD(QUERY_AH), CMD(REG_SMR), CMD(QUERY_MR),
			    CMD(BIND_MW), CMD(PEEK_CQ), 41 + below(215),
			    IB_USER_VERBS_CMD_FLAG_EXTENDED | (58 + below(198)),
			    0x40000000u | below(64));

	for (int i = 0; i < 16; i++)
		body[i] = r64();
	body[0] = resp_addr();
	/* user_handle of CREATE_XSRQ and OPEN_QP; OPEN_XRCD's fd: none */
	body[1] = cmd == CMD(OPEN_XRCD) ? 0xffffffffull :
		  cmd == CMD(CREATE_XSRQ) ? (uintptr_t)&dummy_srq : (uintptr_t)&dummy_qp;
	return issue(cmd, body, 8 * (1 + below(16)), 8 * below(8), 0, 0);
}

static int raw_ex_query_device(void)
{
	struct ib_uverbs_ex_query_device c = { .comp_mask = chance(80) ? 0 : (uint32_t)r64() };

	return issue(EX(QUERY_DEVICE), &c, sizeof(c),
		     chance(80) ? sizeof(struct ib_uverbs_ex_query_device_resp) : 8 * below(50),
		     0, 0);
}

static int raw_ex_create_cq(void)
{
	struct ib_uverbs_ex_create_cq c = { .user_handle = (uintptr_t)&dummy_cq, .cqe = cq_size(),
					    .comp_channel = comp_channel(),
					    .comp_mask = chance(80) ? 0 : (uint32_t)r64(),
					    .flags = chance(70) ? 0 : below(4) };

	return created(K_CQ, ex_resp,
		       issue(EX(CREATE_CQ), &c, sizeof(c),
			     sizeof(struct ib_uverbs_ex_create_cq_resp), 0,
			     chance(90) ? sizeof(struct rxe_create_cq_resp) : 0));
}

static int raw_ex_create_qp(void)
{
	struct ib_uverbs_ex_create_qp c = { .comp_mask = chance(80) ? 0 : PICK(1, (uint32_t)r64()),
					    .create_flags = chance(80) ? 0 : (uint32_t)r64(),
					    .rwq_ind_tbl_handle = below(8),
					    .source_qpn = chance(90) ? 0 : (uint32_t)r64() };

	QP_FIELDS(&c);
	return created(K_QP, ex_resp,
		       issue(EX(CREATE_QP), &c, (sizeof(c) + 7) & ~7ul,
			     sizeof(struct ib_uverbs_ex_create_qp_resp), 0,
			     chance(90) ? sizeof(struct rxe_create_qp_resp) : 0));
}

static int raw_ex_modify_qp(void)
{
	struct ib_uverbs_ex_modify_qp c = { .rate_limit = chance(80) ? 0 : (uint32_t)r64() };

	modify_body(&c.base);
	return issue(EX(MODIFY_QP), &c, sizeof(c),
		     chance(50) ? sizeof(struct ib_uverbs_ex_modify_qp_resp) : 0, 0, 0);
}

static int raw_ex_modify_cq(void)
{
	struct ib_uverbs_ex_modify_cq c = { .cq_handle = pick_handle(K_CQ),
					    .attr_mask = PICK(1, 0, (uint32_t)r64()),
					    .attr = { below(65536), below(65536) } };

	return issue(EX(MODIFY_CQ), &c, sizeof(c), 0, 0, 0);
}

/* Flows, WQs, indirection tables (rxe has none): plausible bodies, handles of ours. */
static int raw_ex_other(void)
{
	uint64_t body[16];
	struct ib_uverbs_ex_create_wq *wq = (void *)body;
	uint32_t cmd = PICK(EX(CREATE_FLOW), EX(DESTROY_FLOW), EX(CREATE_WQ), EX(MODIFY_WQ),
			    EX(DESTROY_WQ), EX(CREATE_RWQ_IND_TBL), EX(DESTROY_RWQ_IND_TBL));

	for (int i = 0; i < 16; i++)
		body[i] = chance(50) ? 0 : r64();
	((uint32_t *)body)[1] = pick_handle(K_QP);
	if (cmd == EX(CREATE_WQ)) {
		wq->user_handle = (uintptr_t)&dummy_wq;
		wq->pd_handle = pick_handle(K_PD);
		wq->cq_handle = pick_handle(K_CQ);
	}
	return issue(cmd, body, 8 * (1 + below(16)), 8 * below(6), 0, 0);
}

/* librxe's doorbell: POST_SEND with no work request. 0, or the errno. */
int doorbell_handle(uint32_t qp_handle)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} c = { .hdr = { .command = CMD(POST_SEND), .in_words = sizeof(c) / 4 } };
	struct ib_uverbs_post_send_resp resp;

	c.hdr.out_words = sizeof(resp) / 4;
	c.cmd.response = (uintptr_t)&resp;
	c.cmd.qp_handle = qp_handle;
	c.cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
	return write(F.ctx->cmd_fd, &c, sizeof(c)) == sizeof(c) ? 0 : errno;
}

const struct op raw_ops[] = {
	{ "raw_get_context", 1, raw_get_context },	{ "raw_query_device", 1, raw_query_device },
	{ "raw_query_port", 1, raw_query_port },	{ "raw_alloc_pd", 1, raw_alloc_pd },
	{ "raw_dealloc_pd", 1, raw_dealloc_pd },	{ "raw_create_ah", 1, raw_create_ah },
	{ "raw_destroy_ah", 1, raw_destroy_ah },	{ "raw_reg_mr", 1, raw_reg_mr },
	{ "raw_rereg_mr", 1, raw_rereg_mr },		{ "raw_dereg_mr", 1, raw_dereg_mr },
	{ "raw_alloc_mw", 1, raw_alloc_mw },		{ "raw_dealloc_mw", 1, raw_dealloc_mw },
	{ "raw_comp_channel", 1, raw_comp_channel },	{ "raw_create_cq", 2, raw_create_cq },
	{ "raw_resize_cq", 1, raw_resize_cq },		{ "raw_destroy_cq", 1, raw_destroy_cq },
	{ "raw_poll_cq", 2, raw_poll_cq },		{ "raw_req_notify_cq", 1, raw_req_notify_cq },
	{ "raw_create_qp", 2, raw_create_qp },		{ "raw_query_qp", 1, raw_query_qp },
	{ "raw_modify_qp", 3, raw_modify_qp },		{ "raw_destroy_qp", 1, raw_destroy_qp },
	{ "raw_post_send", 3, raw_post_send },		{ "raw_post_recv", 2, raw_post_recv },
	{ "raw_post_srq_recv", 1, raw_post_srq_recv },	{ "raw_mcast", 1, raw_mcast },
	{ "raw_create_srq", 1, raw_create_srq },	{ "raw_modify_srq", 2, raw_modify_srq },
	{ "raw_query_srq", 1, raw_query_srq },		{ "raw_destroy_srq", 1, raw_destroy_srq },
	{ "raw_unsupported", 2, raw_unsupported },	{ "raw_ex_query_device", 1, raw_ex_query_device },
	{ "raw_ex_create_cq", 1, raw_ex_create_cq },	{ "raw_ex_create_qp", 1, raw_ex_create_qp },
	{ "raw_ex_modify_qp", 1, raw_ex_modify_qp },	{ "raw_ex_modify_cq", 1, raw_ex_modify_cq },
	{ "raw_ex_other", 1, raw_ex_other },
};
const int n_raw_ops = sizeof(raw_ops) / sizeof(raw_ops[0]);
