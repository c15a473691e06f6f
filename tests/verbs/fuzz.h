/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the parts of verbs_fuzz: verbs_fuzz.c (processes, scribbler, report), fuzz_pool.c
 * (object pool, random attributes, device context), fuzz_ops.c (operations through
 * libibverbs/librxe) and fuzz_raw.c (raw uverbs write() commands).
 *
 * One worker process holds one `struct fuzz` (F): its device context, a pool of the objects it
 * created through libibverbs (with the librxe rings each one has mapped), the handles of objects
 * created by raw commands, and handles of destroyed objects. The main thread runs one operation
 * at a time holding F.lock; the scribbler thread takes it to write into one ring.
 */
#ifndef RRXE_VERBS_FUZZ_H
#define RRXE_VERBS_FUZZ_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

/* Object kinds of the pool (and of raw-created handles). */
enum kind { K_PD, K_CQ, K_MR, K_MW, K_AH, K_SRQ, K_QP, NKINDS };

#define POOL 8		/* objects per kind */
#define NRAW 32		/* remembered handles of raw-created objects */
#define NSTALE 8	/* remembered handles of destroyed objects, per kind */
#define NORPHAN 48	/* rings kept mapped after their context was closed */
#define NOPS_MAX 96	/* operations in the report */
#define MAXWR 8		/* work requests in a chain */
#define MAXSGE 32	/* SGEs a work request may name */
#define QKEY 0x11110000u /* the Q_Key of UD QPs connected by connect_qp */
#define KADDR 0xffff888000000000ULL /* a kernel address (the direct map) */
#define NO_HANDLE 0xffffffffu

/* Object states. ZOMBIE: a raw destroy command removed the kernel object behind librxe. */
enum { FREE, LIVE, ZOMBIE };

/* What a mapped ring is. RING_QP: one of a QP's two rings, which one unknown (equal slots). */
enum ring_kind { RING_CQ, RING_SQ, RING_RQ, RING_SRQ, RING_QP };

/* A ring librxe mapped: the whole mapping, and its shape as the kernel created it. */
struct ring {
	struct rxe_queue_buf *q;	/* start of the mapping (NULL: none) */
	size_t len;
	unsigned long pgoff;
	uint32_t log2, mask;
	int kind;
	uint32_t qp_handle;		/* RING_SQ: the QP to ring the doorbell of */
};

struct obj {
	int state;
	int broken;		/* librxe lost the ring in a failed remap: destroy only */
	uint32_t handle;
	void *p;		/* the libibverbs object */
	struct ring ring[2];
	/* MR: a mapping of its own (with a PROT_NONE guard page after it), or inside a ring */
	uint8_t *buf;
	size_t buf_len;		/* usable bytes at buf */
	int owned;		/* buf is ours to munmap (buf_len + a page) */
	/* QP */
	enum ibv_qp_type qpt;
	uint32_t qpn;
	struct ibv_qp_cap cap;
	int has_srq;
};

struct fuzz {
	const char *dev;
	int gid_index;
	int compat;			/* --rxe-compatible */
	double deadline;		/* CLOCK_MONOTONIC seconds */
	uint64_t rng;			/* the main thread's choices */
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	union ibv_gid gid;
	struct ibv_device_attr attr;
	uint8_t *scratch;		/* where raw commands point the kernel's responses */
	size_t scratch_len;
	struct obj pool[NKINDS][POOL];
	struct { int kind; uint32_t handle; } raw[NRAW];
	int nraw;
	uint32_t stale[NKINDS][NSTALE];
	int nstale[NKINDS];
	struct ring orphan[NORPHAN];
	int norphan;
	pthread_mutex_t lock;
	int scribbler_waiting;		/* the scribbler wants the lock: the main thread yields */
};

extern struct fuzz F;

/* An operation: returns 1 (it succeeded), 0 (refused, an error) or -1 (nothing to do it on). */
struct op {
	const char *name;
	int weight;
	int (*fn)(void);
};

extern const struct op verbs_ops[];
extern const int n_verbs_ops;
extern const struct op raw_ops[];
extern const int n_raw_ops;

/* Counts shared by all workers (MAP_SHARED), reported by the parent. */
struct stats {
	uint64_t iterations;
	uint64_t calls[NOPS_MAX];
	uint64_t ok[NOPS_MAX];
};

extern struct stats *S;
void count(int op, int ok);

/* splitmix64 */
static inline uint64_t rnd_s(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The main thread's random numbers. */
static inline uint64_t r64(void) { return rnd_s(&F.rng); }
static inline uint32_t below(uint32_t n) { return n ? (uint32_t)(r64() % n) : 0; }
static inline int chance(int pct) { return (int)below(100) < pct; }
/* One of the (integer) arguments, at random. */
#define PICK(...)                                                                         \
	({                                                                                  \
		const uint64_t _v[] = { __VA_ARGS__ };                                      \
		_v[below(sizeof(_v) / sizeof(_v[0]))];                                      \
	})

/* A value of interest up to `max`: bounds, around them, powers of two, or anything. */
uint32_t r_size(uint32_t max);
uint32_t r_depth(uint32_t max);

/* Pool (fuzz_pool.c). */
extern size_t pg;		/* the page size */
extern uint32_t base_psn;	/* the PSN connect_qp starts QPs at */
struct obj *pick(int kind, int zombies);
struct obj *pick_ring(int kind);
struct obj *free_slot(int kind);
uint32_t pick_handle(int kind);
void mark_destroyed(int kind, uint32_t handle);
void raw_created(int kind, uint32_t handle);
void snap(void);
void rings_created(struct obj *o, int kind);
void ring_remapped(struct obj *o, int kind);
int destroy(int kind);
unsigned int random_access(void);
void random_ah_attr(struct ibv_ah_attr *a);
uint32_t dest_qpn(void);
void random_cap(struct ibv_qp_cap *c, int big);
void random_qp_attr(struct ibv_qp_attr *a, int *mask);
uint64_t remote_addr(uint32_t *rkey);
void sge_fill(struct ibv_sge *s, int readable);
void bind_info(struct ibv_mw_bind_info *b, struct obj *m);
void recv_chain(struct ibv_recv_wr *wr, uint32_t max_sge);
void send_wr(struct obj *o, struct ibv_send_wr *w, int i);
struct ibv_context *fuzz_open(const char *name);
int ctx_open(void);
void ctx_forget(void);
void pool_teardown(void);

/* Raw commands (fuzz_raw.c). */
int doorbell_handle(uint32_t qp_handle);
int scratch_init(void);

#endif /* RRXE_VERBS_FUZZ_H */
