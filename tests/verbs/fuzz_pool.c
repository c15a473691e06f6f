// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_fuzz: the object pool (which objects a worker has, the rings librxe mapped for them,
 * the handles of raw-created and destroyed ones), random attributes and work requests, and the
 * device context.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

static uint8_t inline_src[4096];
static struct ibv_sge sg[MAXWR][MAXSGE];
uint32_t base_psn;
size_t pg;

uint32_t r_size(uint32_t max)
{
	switch (below(12)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return max;
	case 3: return max + 1;
	case 4: return 1u << below(32);
	case 5: return (uint32_t)r64();
	case 6: return 2;
	default: return 1 + below(max < 256 ? (max ? max : 1) : 256);
	}
}

/*
 * A queue depth for a device maximum of `max`: what may be granted stays at 4096 entries or
 * fewer (rrxe allows 2^20 WRs: a ring of those would take hundreds of MB of a 2 GB guest), else
 * one to refuse (max + 1, huge ones).
 */
uint32_t r_depth(uint32_t max)
{
	uint32_t big = max < 4096 ? max : 4096;

	switch (below(8)) {
	case 0: return 0;
	case 1: return big;
	case 2: return max + 1;
	case 3: return PICK(0x80000000u, 0xffffffffu, max + 1 + below(1 << 20));
	default: return 1 + below(big < 256 ? (big ? big : 1) : 256);
	}
}

/* A random LIVE (or, with `zombies`, also ZOMBIE) object of `kind`, or NULL. */
struct obj *pick(int kind, int zombies)
{
	struct obj *c[POOL];
	int n = 0;

	for (int i = 0; i < POOL; i++) {
		struct obj *o = &F.pool[kind][i];

		if (o->state == LIVE || (zombies && o->state == ZOMBIE))
			c[n++] = o;
	}
	return n ? c[below(n)] : NULL;
}

/* An object whose rings librxe still has (posting or polling through it is safe). */
struct obj *pick_ring(int kind)
{
	struct obj *o = pick(kind, 1);

	return o && !o->broken ? o : NULL;
}

struct obj *free_slot(int kind)
{
	for (int i = 0; i < POOL; i++)
		if (F.pool[kind][i].state == FREE)
			return &F.pool[kind][i];
	return NULL;
}

uint32_t pick_handle(int kind)
{
	int r = below(100);
	struct obj *o;

	if (r < 55 && (o = pick(kind, 1)))
		return o->handle;
	if (r < 70)
		for (int i = 0; i < 4; i++) {
			int j = below(NRAW);

			if (F.raw[j].kind == kind)
				return F.raw[j].handle;
		}
	if (r < 80 && F.nstale[kind])
		return F.stale[kind][below(F.nstale[kind] < NSTALE ? F.nstale[kind] : NSTALE)];
	if (r < 87 && (o = pick(below(NKINDS), 1)))
		return o->handle;
	return r < 95 ? below(32) : (uint32_t)r64();
}

static void push_stale(int kind, uint32_t handle)
{
	F.stale[kind][F.nstale[kind]++ % NSTALE] = handle;
}

void mark_destroyed(int kind, uint32_t handle)
{
	for (int i = 0; i < POOL; i++)
		if (F.pool[kind][i].state == LIVE && F.pool[kind][i].handle == handle)
			F.pool[kind][i].state = ZOMBIE;
	for (int i = 0; i < NRAW; i++)
		if (F.raw[i].kind == kind && F.raw[i].handle == handle)
			F.raw[i].kind = -1;
	push_stale(kind, handle);
}

void raw_created(int kind, uint32_t handle)
{
	F.raw[F.nraw % NRAW].kind = kind;
	F.raw[F.nraw++ % NRAW].handle = handle;
}

/* --- rings: which uverbs mappings an object has (diffs of /proc/self/maps) --- */

struct mapping {
	unsigned long start, end, pgoff;
};
#define NMAP 256
static struct mapping before[NMAP], after[NMAP];
static int nbefore, nafter;

static int uverbs_maps(struct mapping *m)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	while (f && n < NMAP && fgets(line, sizeof(line), f))
		if (strstr(line, "uverbs") &&
		    sscanf(line, "%lx-%lx %*s %lx", &m[n].start, &m[n].end, &m[n].pgoff) == 3)
			n++;
	if (f)
		fclose(f);
	return n;
}

void snap(void)
{
	nbefore = uverbs_maps(before);
}

static int in(const struct mapping *m, int n, unsigned long start, unsigned long end,
	      unsigned long pgoff)
{
	for (int i = 0; i < n; i++)
		if (m[i].start == start && m[i].end == end && m[i].pgoff == pgoff)
			return 1;
	return 0;
}

/* Mappings that appeared since snap(), up to two (into `out`); refreshes after[]. */
static int appeared(struct mapping *out)
{
	int n = 0;

	nafter = uverbs_maps(after);
	for (int i = 0; i < nafter && n < 2; i++)
		if (!in(before, nbefore, after[i].start, after[i].end, after[i].pgoff))
			out[n++] = after[i];
	return n;
}

static void ring_set(struct ring *r, const struct mapping *m, int kind, uint32_t qp_handle)
{
	r->q = (struct rxe_queue_buf *)m->start;
	r->len = m->end - m->start;
	r->pgoff = m->pgoff;
	r->log2 = r->q->log2_elem_size;
	r->mask = r->q->index_mask;
	r->kind = kind;
	r->qp_handle = qp_handle;
}

/* After a create: the object's new rings. A QP's larger slots are its send ring. */
void rings_created(struct obj *o, int kind)
{
	struct mapping m[2];
	int n = appeared(m);

	if (kind == K_QP && n == 2) {
		struct rxe_queue_buf *a = (void *)m[0].start, *b = (void *)m[1].start;
		int sq = b->log2_elem_size > a->log2_elem_size, rq = !sq;

		if (a->log2_elem_size == b->log2_elem_size) {
			ring_set(&o->ring[0], &m[0], RING_QP, o->handle);
			ring_set(&o->ring[1], &m[1], RING_QP, o->handle);
		} else {
			ring_set(&o->ring[0], &m[sq], RING_SQ, o->handle);
			ring_set(&o->ring[1], &m[rq], RING_RQ, NO_HANDLE);
		}
	} else if (n >= 1) {
		ring_set(&o->ring[0], &m[0], kind == K_CQ ? RING_CQ : kind == K_SRQ ? RING_SRQ :
					      RING_SQ, kind == K_QP ? o->handle : NO_HANDLE);
	}
}

/* After a resize (librxe unmaps the old ring and maps the new one): follow it. */
void ring_remapped(struct obj *o, int kind)
{
	struct mapping m[2];
	int n = appeared(m);
	struct ring *r = &o->ring[0];

	if (r->q && in(after, nafter, (unsigned long)r->q, (unsigned long)r->q + r->len,
		       r->pgoff))
		return;
	memset(r, 0, sizeof(*r));
	if (n)
		ring_set(r, &m[0], kind == K_CQ ? RING_CQ : RING_SRQ, NO_HANDLE);
	else
		o->broken = 1;
}

static void release(int kind, struct obj *o)
{
	push_stale(kind, o->handle);
	if (o->owned && munmap(o->buf, o->buf_len + pg))
		perror("munmap");
	memset(o, 0, sizeof(*o));
}

int destroy(int kind)
{
	struct obj *o = pick(kind, 0);
	int err = 0;

	if (!o)
		return -1;
	switch (kind) {
	case K_PD: err = ibv_dealloc_pd(o->p); break;
	case K_CQ: err = ibv_destroy_cq(o->p); break;
	case K_MR: err = ibv_dereg_mr(o->p); break;
	case K_MW: err = ibv_dealloc_mw(o->p); break;
	case K_AH: err = ibv_destroy_ah(o->p); break;
	case K_SRQ: err = ibv_destroy_srq(o->p); break;
	case K_QP: err = ibv_destroy_qp(o->p); break;
	}
	if (err)
		return 0;
	release(kind, o);
	return 1;
}

/* --- random attributes --- */

unsigned int random_access(void)
{
	unsigned int a = 0;

	a |= chance(60) ? IBV_ACCESS_LOCAL_WRITE : 0;
	a |= chance(40) ? IBV_ACCESS_REMOTE_WRITE : 0;
	a |= chance(40) ? IBV_ACCESS_REMOTE_READ : 0;
	a |= chance(30) ? IBV_ACCESS_REMOTE_ATOMIC : 0;
	a |= chance(30) ? IBV_ACCESS_MW_BIND : 0;
	a |= chance(4) ? IBV_ACCESS_ZERO_BASED : 0;
	a |= chance(3) ? IBV_ACCESS_ON_DEMAND : 0;
	a |= chance(5) ? IBV_ACCESS_RELAXED_ORDERING : 0;
	a |= chance(3) ? 1u << below(32) : 0;
	return a;
}

void random_ah_attr(struct ibv_ah_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->is_global = chance(92);
	a->port_num = PICK(1, 1, 1, 1, 1, 0, 2, 255);
	a->grh.sgid_index = chance(80) ? (uint64_t)F.gid_index : PICK(0, 1, 2, 255, below(256));
	a->grh.hop_limit = PICK(64, 64, 1, 0, 255, below(256));
	a->grh.traffic_class = chance(80) ? 0 : below(256);
	a->grh.flow_label = chance(80) ? 0 : (uint32_t)r64();
	a->dlid = chance(80) ? 0 : below(65536);
	a->sl = chance(80) ? 0 : below(16);
	a->static_rate = chance(90) ? 0 : below(32);
	a->src_path_bits = chance(90) ? 0 : below(256);
	switch (below(10)) {
	case 6: /* link-local: the MAC comes from the GID, no resolution */
		for (int i = 0; i < 16; i++)
			a->grh.dgid.raw[i] = r64();
		a->grh.dgid.raw[0] = 0xfe;
		a->grh.dgid.raw[1] = 0x80;
		break;
	case 7: /* the slirp gateway, 10.0.2.2 (answers ARP) */
		a->grh.dgid = F.gid;
		a->grh.dgid.raw[15] = 2;
		break;
	case 8:
		for (int i = 0; i < 16; i++)
			a->grh.dgid.raw[i] = r64();
		break;
	case 9: /* multicast */
		a->grh.dgid.raw[0] = 0xff;
		a->grh.dgid.raw[1] = 0x0e;
		a->grh.dgid.raw[15] = below(256);
		break;
	default:
		a->grh.dgid = F.gid;
	}
}

uint32_t dest_qpn(void)
{
	struct obj *q = pick(K_QP, 1);

	if (q && chance(60))
		return q->qpn;
	return PICK(0, 1, 0xffffff, below(256), (uint32_t)r64());
}

void random_cap(struct ibv_qp_cap *c, int big)
{
	c->max_send_wr = big ? r_depth(F.attr.max_qp_wr) : 1 + below(64);
	c->max_recv_wr = big ? r_depth(F.attr.max_qp_wr) : 1 + below(64);
	c->max_send_sge = chance(85) ? below(5) : r_size(F.attr.max_sge);
	/* at most 5 receive SGEs keep receive slots smaller than send slots (see rings_created) */
	c->max_recv_sge = chance(85) ? below(6) : r_size(F.attr.max_sge);
	c->max_inline_data = PICK(0, 0, 16, 64, below(512), r_size(4096));
}

void random_qp_attr(struct ibv_qp_attr *a, int *mask)
{
	int m = chance(85) ? IBV_QP_STATE : 0;

	for (int b = 1; b <= 25; b++)
		m |= chance(12) ? 1 << b : 0;
	if (chance(3))
		m = (int)r64();
	memset(a, 0, sizeof(*a));
	a->qp_state = chance(90) ? below(7) : below(256);
	a->cur_qp_state = below(8);
	a->path_mtu = PICK(1, 2, 3, 4, 5, 0, 6, below(256));
	a->path_mig_state = below(4);
	a->qkey = chance(60) ? QKEY : (uint32_t)r64();
	a->rq_psn = chance(70) ? below(1 << 24) : (uint32_t)r64();
	a->sq_psn = chance(70) ? below(1 << 24) : (uint32_t)r64();
	a->dest_qp_num = dest_qpn();
	a->qp_access_flags = random_access();
	random_cap(&a->cap, chance(10));
	random_ah_attr(&a->ah_attr);
	random_ah_attr(&a->alt_ah_attr);
	a->pkey_index = PICK(0, 0, 0, 1, below(65536));
	a->alt_pkey_index = PICK(0, 1, below(65536));
	a->en_sqd_async_notify = below(2);
	a->sq_draining = below(2);
	a->max_rd_atomic = PICK(0, 1, 4, 16, 255, below(256));
	a->max_dest_rd_atomic = PICK(0, 1, 4, 16, 255, below(256));
	a->min_rnr_timer = below(32);
	a->port_num = PICK(1, 1, 1, 0, 2, 255);
	a->timeout = PICK(1, 2, 14, 0, 31, below(256));
	a->retry_cnt = chance(90) ? below(8) : below(256);
	a->rnr_retry = chance(90) ? below(8) : below(256);
	a->alt_port_num = PICK(1, 0, 2);
	a->alt_timeout = below(32);
	a->rate_limit = chance(90) ? 0 : (uint32_t)r64();
	*mask = m;
}

/* A remote address and its rkey: mostly inside one of our MRs or MWs, misaligned at times. */
uint64_t remote_addr(uint32_t *rkey)
{
	struct obj *m = pick(K_MR, 1), *w = pick(K_MW, 1);
	struct ibv_mr *mr = m ? m->p : NULL;
	uint64_t in = mr ? (uintptr_t)mr->addr + below(mr->length + 64) : 0;
	int r = below(10);

	if (mr && r < 6) {
		*rkey = chance(90) ? mr->rkey : mr->lkey;
		return in;
	}
	if (w && r < 8) {
		*rkey = ((struct ibv_mw *)w->p)->rkey;
		return mr ? in : r64();
	}
	*rkey = chance(50) ? (uint32_t)r64() : below(4096);
	return PICK(0, r64(), KADDR, in);
}

/* An SGE; with `readable`, over memory librxe may read (inline data is copied by it). */
void sge_fill(struct ibv_sge *s, int readable)
{
	struct obj *m = pick(K_MR, 1);
	struct ibv_mr *mr = m ? m->p : NULL;
	uint64_t off;

	s->lkey = mr && chance(85) ? mr->lkey : PICK(0, (uint32_t)r64(), mr ? mr->rkey : 1);
	if (readable) {
		if (m && m->owned) {
			off = below(m->buf_len);
			s->addr = (uintptr_t)m->buf + off;
			s->length = below((m->buf_len - off < 512 ? m->buf_len - off : 512) + 1);
		} else {
			off = below(sizeof(inline_src));
			s->addr = (uintptr_t)inline_src + off;
			s->length = below(sizeof(inline_src) - off + 1);
		}
		return;
	}
	if (!mr) {
		s->addr = PICK(0, KADDR, r64());
		s->length = r_size(4096);
		return;
	}
	off = below(mr->length + 1);
	s->addr = (uintptr_t)mr->addr + off;
	switch (below(10)) {
	case 6: s->length = mr->length - off + 1 + below(4096); break;
	case 7: s->length = PICK(0, 0x80000000u, 0xffffffffu); break;
	case 8: s->addr = PICK(0, KADDR, r64()); s->length = below(4096); break;
	case 9: s->addr = (uintptr_t)mr->addr - 1 - below(4096); s->length = below(8192); break;
	default: s->length = below(mr->length - off + 1);
	}
}

/* --- random work requests (SGE arrays: sg[WR][SGE]) --- */

void bind_info(struct ibv_mw_bind_info *b, struct obj *m)
{
	struct ibv_mr *mr = m->p;
	uint64_t off = below(mr->length + 1);

	b->mr = mr;
	b->addr = chance(90) ? (uintptr_t)mr->addr + off : r64();
	b->length = chance(90) ? below(mr->length - off + 1) : r64();
	b->mw_access_flags = random_access();
}

/* A chain of receive WRs in `wr` (up to MAXWR), SGEs up to `max_sge` + 1 each. */
void recv_chain(struct ibv_recv_wr *wr, uint32_t max_sge)
{
	int n = chance(80) ? 1 + below(3) : 1 + below(MAXWR);

	memset(wr, 0, sizeof(*wr) * MAXWR);
	for (int i = 0; i < n; i++) {
		int ns = chance(85) ? (int)below((max_sge < MAXSGE - 1 ? max_sge : MAXSGE - 1) + 2) :
				      (int)PICK(-1, MAXSGE, below(MAXSGE + 1));

		for (int j = 0; j < ns; j++)
			sge_fill(&sg[i][j], 0);
		wr[i] = (struct ibv_recv_wr){ .wr_id = r64(), .sg_list = sg[i], .num_sge = ns,
					      .next = i + 1 < n ? &wr[i + 1] : NULL };
	}
}

/* Fills send WR `w`, of a chain on QP `o` (its SGE array is sg[i]); a UD QP needs an AH. */
void send_wr(struct obj *o, struct ibv_send_wr *w, int i)
{
	struct obj *mw = pick(K_MW, 1), *mr = pick(K_MR, 1), *ah = pick(K_AH, 1);
	int ns;

	w->wr_id = r64();
	w->opcode = PICK(IBV_WR_SEND, IBV_WR_SEND, IBV_WR_SEND, IBV_WR_SEND_WITH_IMM,
			 IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
			 IBV_WR_RDMA_READ, IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
			 IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_BIND_MW, IBV_WR_LOCAL_INV,
			 IBV_WR_SEND_WITH_INV, IBV_WR_TSO, below(32), 0xff);
	w->send_flags = (chance(60) ? IBV_SEND_SIGNALED : 0) |
			(chance(10) ? IBV_SEND_SOLICITED : 0) | (chance(15) ? IBV_SEND_INLINE : 0) |
			(chance(10) ? IBV_SEND_FENCE : 0) | (chance(3) ? IBV_SEND_IP_CSUM : 0) |
			(chance(3) ? 1u << below(32) : 0);
	w->imm_data = r64();
	ns = chance(85) ? (int)below((o->cap.max_send_sge < MAXSGE - 1 ? o->cap.max_send_sge :
					MAXSGE - 1) + 2) : (int)PICK(-1, MAXSGE, below(MAXSGE + 1));
	for (int j = 0; j < ns; j++)
		sge_fill(&sg[i][j], !!(w->send_flags & IBV_SEND_INLINE));
	w->sg_list = sg[i];
	w->num_sge = ns;
	switch (w->opcode) {
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w->wr.atomic.remote_addr = remote_addr(&w->wr.atomic.rkey);
		w->wr.atomic.remote_addr &= chance(80) ? ~7ull : ~0ull;
		w->wr.atomic.compare_add = r64();
		w->wr.atomic.swap = r64();
		break;
	case IBV_WR_BIND_MW:
		if (!mw || !mr) {
			w->opcode = IBV_WR_SEND;
			break;
		}
		/* librxe wants no SGE and no immediate data with it */
		if (chance(70)) {
			w->num_sge = 0;
			w->imm_data = 0;
		}
		w->bind_mw.mw = mw->p;
		w->bind_mw.rkey = chance(70) ? ibv_inc_rkey(((struct ibv_mw *)mw->p)->rkey) :
					       (uint32_t)r64();
		bind_info(&w->bind_mw.bind_info, mr);
		break;
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
		w->invalidate_rkey = mw && chance(50) ? ((struct ibv_mw *)mw->p)->rkey :
			mr && chance(50) ? ((struct ibv_mr *)mr->p)->rkey : (uint32_t)r64();
		break;
	default:
		w->wr.rdma.remote_addr = remote_addr(&w->wr.rdma.rkey);
	}
	/* librxe reads wr.ud.ah (over wr.rdma) of every WR of a UD QP: always a pool AH. */
	if (o->qpt == IBV_QPT_UD && ah) {
		w->wr.ud.ah = ah->p;
		w->wr.ud.remote_qpn = chance(97) ? dest_qpn() : 1;
		w->wr.ud.remote_qkey = chance(80) ? QKEY : (uint32_t)r64();
	}
}

/* --- the device context --- */

/* Opens the RDMA device called `name`, or returns NULL (also when there is no device at all). */
struct ibv_context *fuzz_open(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *c = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!c && !strcmp(ibv_get_device_name(list[i]), name))
			c = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return c;
}

int ctx_open(void)
{
	F.ctx = fuzz_open(F.dev);
	if (!F.ctx)
		return -1;
	pg = sysconf(_SC_PAGESIZE);
	if (ibv_query_gid(F.ctx, 1, F.gid_index, &F.gid) || ibv_query_device(F.ctx, &F.attr))
		return -1;
	F.ch = ibv_create_comp_channel(F.ctx);
	/* Never block on an event: both event files non-blocking. */
	if (fcntl(F.ctx->async_fd, F_SETFL, O_NONBLOCK) ||
	    (F.ch && fcntl(F.ch->fd, F_SETFL, O_NONBLOCK)))
		return -1;
	base_psn = chance(20) ? 0xffffff - below(64) : below(1 << 24);
	return 0;
}

static void orphan(struct ring *r)
{
	struct ring *slot = &F.orphan[F.norphan++ % NORPHAN];

	if (slot->q && munmap(slot->q, slot->len))
		perror("munmap orphan ring");
	*slot = *r;
	slot->qp_handle = NO_HANDLE;
}

/*
 * Closes the device with every object still alive (the kernel tears them down at close while
 * their rings stay mapped: those are scribbled on as orphans) and forgets the pool.
 */
void ctx_forget(void)
{
	for (int k = 0; k < NKINDS; k++)
		for (int i = 0; i < POOL; i++)
			for (int j = 0; j < 2; j++)
				if (F.pool[k][i].ring[j].q)
					orphan(&F.pool[k][i].ring[j]);
	/* EBUSY while CQs use it: then close its file ourselves (the struct is leaked). */
	if (F.ch && ibv_destroy_comp_channel(F.ch))
		close(F.ch->fd);
	F.ch = NULL;
	if (ibv_close_device(F.ctx))
		perror("ibv_close_device");
	F.ctx = NULL;
	for (int k = 0; k < NKINDS; k++)
		for (int i = 0; i < POOL; i++)
			if (F.pool[k][i].owned && munmap(F.pool[k][i].buf, F.pool[k][i].buf_len + pg))
				perror("munmap");
	memset(F.pool, 0, sizeof(F.pool));
	memset(F.raw, 0xff, sizeof(F.raw));
}

/* Destroys every live object, children first, and closes the device (an orderly exit). */
void pool_teardown(void)
{
	static const int order[] = { K_QP, K_SRQ, K_MW, K_AH, K_MR, K_CQ, K_PD };

	for (unsigned int k = 0; k < sizeof(order) / sizeof(order[0]); k++)
		for (int n = 0; n < POOL; n++)
			if (destroy(order[k]) < 0)
				break;
	ctx_forget();
}
