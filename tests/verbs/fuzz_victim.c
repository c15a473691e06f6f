// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_victim: the live target of packet_fuzz.sh (tests/selftests/packet_fuzz.py plays its
 * peer). On DEVICE it registers three regions the peer may use, a 4 KiB and a 1 MiB one with
 * every remote right (READ, WRITE, atomics, FLUSH to global visibility, window binding) and a
 * 4 KiB one with REMOTE_READ only, binds a type 2 memory window over 1 KiB of the small one to
 * its RC QP, and creates an RC, a UC and a UD QP. The RC and UC QPs are connected (path MTU
 * 1024) to QPs PEER_QPN and PEER_QPN + 1 at PEER_IPV4, which do not exist: the fuzzer sends
 * from that address with a raw socket. Everything it needs (QPNs, the expected and the send
 * PSNs, keys, addresses and lengths, the UD qkey, the MTU) is written to STATE_FILE as
 * KEY=VALUE lines, rewritten atomically with a new "gen" whenever something changes.
 *
 * Then, until SIGTERM or SIGINT (or -t SECONDS), it never blocks: it polls its CQs, counts the
 * completions by QP, kind and status, reposts every receive, keeps a few requests of every kind
 * outstanding on the RC QP (SEND, SEND with immediate, RDMA WRITE with and without immediate,
 * READ, CMP_SWAP, FETCH_ADD, ATOMIC_WRITE, FLUSH) and on the UC QP (SEND, WRITE) so the fuzzer
 * can answer them, rebinds the window after a SEND with invalidate took it, and reconnects a
 * QP that failed (RESET to RTS, fresh PSNs, often next to the 2^24 wrap). On the way out it
 * prints its counters as "# victim ..." lines, a "# victim totals:" line of KEY=VALUE pairs,
 * destroys everything, and exits 0 unless setting up or tearing down failed.
 *
 * The oracle's half (-c STAMPS_FILE): every RC SEND and RDMA WRITE of 8 bytes or more carries
 * a stamp in its first 8 bytes (STAMP_MAGIC, the QP's generation, the work request's
 * sequence number); the stamps of those that completed with success are written to
 * STAMPS_FILE, one per line in hex. The fuzzer lists the stamps it saw on the wire: a success
 * completion whose stamp never went on the wire is a completion that lied (packet_fuzz.sh).
 *
 * The reference model's half (-l LOG_FILE): every connection, send work request posted, move
 * to ERR of its own and completion of the RC and UC QPs, with CLOCK_MONOTONIC times and what
 * the completion delivered (the data a READ or a receive wrote, as FNV-1a hashes of each
 * MTU-sized chunk; an atomic's original value). rrxe-oracle (rust/proto/model) judges it
 * against the fuzzer's trace of the packets both ways (Documentation/testing.rst).
 *
 *   fuzz_victim -d DEVICE -g GID_INDEX -a PEER_IPV4 -o STATE_FILE [-q PEER_QPN] [-s SEED]
 *               [-t SECONDS] [-c STAMPS_FILE] [-l LOG_FILE]
 */
#include <arpa/inet.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "common.h"
#include "raw_ring.h"
#include "rc.h"

#define MTU 1024
#define RQ_DEPTH 64
#define SQ_DEPTH 64
#define SMALL_LEN 4096
#define BIG_LEN (1 << 20)
#define RO_LEN 4096
#define MW_OFF 2048
#define MW_LEN 1024
/* Receive buffers: 4 KiB (every 16th only 64 bytes, every 16th another none at all). */
#define RECV_LEN 4096
#define UD_RECV_LEN (40 + MTU)
#define UD_QKEY 0x11111111u
/*
 * The local region: the receive buffers of the three QPs, then the request buffers, REQ_SLOTS
 * for each of the RC and UC QPs (more than either keeps outstanding: a request's buffer is
 * never rewritten before it completes, so what goes on the wire is what was posted).
 */
#define REQ_OFF (3 * RQ_DEPTH * RECV_LEN)
#define REQ_SLOTS 8
#define REQ_SLOT 8192
#define LOCAL_LEN (REQ_OFF + 2 * REQ_SLOTS * REQ_SLOT)
/* What the victim's own requests address at the (fictitious) peer. */
#define PEER_VA 0x7f0000001000ull
#define PEER_RKEY 0x00c0ffeeu
#define RC_MAX_OUT 6
#define UC_MAX_OUT 4

enum { Q_RC, Q_UC, Q_UD, NQ };
static const char *const qname[NQ] = { "rc", "uc", "ud" };
/* wr_id: kind (4 bits) | QP (4) | generation (24) | slot or sequence (32). */
enum { K_RECV = 1, K_SEND = 2, K_BIND = 3 };
enum { OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ, OP_CAS, OP_FAA, OP_AWRITE,
       OP_FLUSH, NOPS };
static const char *const opname[NOPS] = { "send", "send_imm", "write", "write_imm", "read",
					  "cmp_swap", "fetch_add", "atomic_write", "flush" };
/* The same in the log's words (rrxe-oracle's). */
static const char *const logname[NOPS] = { "send", "send_imm", "write", "write_imm", "read",
					   "cas", "faa", "awrite", "flush" };

struct vqp {
	struct ibv_qp *qp;
	uint32_t gen, rq_psn, sq_psn;
	int need_reset, outstanding, settling;
	uint32_t seq;
	double last_post, last_progress;
	/* Work requests of the current generation: posted, and completed in any way. */
	unsigned long recv_posted, recv_done, send_posted, send_done;
	unsigned long recv_st[32], send_st[32], posted[NOPS], resets, stale, stuck, imm, inv;
	/* Work requests that never completed, not even when the QP was flushed. */
	unsigned long lost_recv, lost_send;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *scq, *rcq;
static struct ibv_mr *small_mr, *big_mr, *ro_mr, *local_mr;
static struct ibv_mw *mw;
static uint8_t *small, *big, *ro, *local;
static struct vqp q[NQ];
static struct rxe_queue_buf *rc_ring;
static int gid_idx, has_aw, mw_valid, mw_binding, mw_failures;
static unsigned long binds_ok, binds_failed;
static union ibv_gid my_gid, peer_gid;
static uint32_t peer_qpn = 0x123456, file_gen;
static const char *state_path, *peer_ip, *log_path;
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static volatile sig_atomic_t stop;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The oracle's stamps (see the top): magic, generation (16 bits), sequence number. */
#define STAMP_MAGIC 0x5374ull
static uint64_t stamped[64]; /* by sequence number modulo 64: at most RC_MAX_OUT out */
static uint64_t *stamps_ok;
static size_t n_stamps_ok, cap_stamps_ok;
static const char *stamps_path;

/*
 * The log for the reference model: what each posted send work request was (by sequence number
 * modulo 64, like the stamps) so its completion can report what it delivered.
 */
static FILE *vlog;
static struct {
	uint32_t seq;
	int op; /* an OP_*, or -1 for a window bind */
	uint32_t len;
	const uint8_t *buf;
} sent[2][64];

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--) {
		h ^= *p++;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* " h1,h2,..." over each MTU-sized chunk of n bytes at p, or " -". */
static void log_chunks(const uint8_t *p, size_t n)
{
	if (!n) {
		fputs(" -", vlog);
		return;
	}
	for (size_t off = 0; off < n; off += MTU)
		fprintf(vlog, "%c%016llx", off ? ',' : ' ',
			(unsigned long long)fnv1a(p + off, n - off < MTU ? n - off : MTU));
}

static uint64_t stamp_of(uint32_t gen, uint32_t seq)
{
	return STAMP_MAGIC << 48 | (uint64_t)(gen & 0xffff) << 32 | seq;
}

/* A stamped work request of the current generation completed with success. */
static void stamp_ok(uint64_t stamp)
{
	if (n_stamps_ok == cap_stamps_ok) {
		size_t cap = cap_stamps_ok ? 2 * cap_stamps_ok : 1024;
		uint64_t *p = realloc(stamps_ok, cap * sizeof(*p));

		if (!p)
			return;
		stamps_ok = p;
		cap_stamps_ok = cap;
	}
	stamps_ok[n_stamps_ok++] = stamp;
}

static uint64_t wrid(int kind, int qi, uint32_t low)
{
	return (uint64_t)kind << 60 | (uint64_t)qi << 56 | (uint64_t)(q[qi].gen & 0xffffff) << 32 |
	       low;
}

/* Half the time right before the 2^24 wrap, so the fuzzer's PSNs cross it. */
static uint32_t pick_psn(void)
{
	return rnd() % 2 ? 0xffffff - rnd() % 48 : rnd() & 0xffffff;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The receive buffer of slot `slot` of QP `qi`: 4 KiB, every 16th 64 bytes, another none. */
static uint32_t recv_len_of(int qi, uint32_t slot)
{
	if (qi == Q_UD)
		return UD_RECV_LEN;
	return slot % 16 == 7 ? 64 : slot % 16 == 15 ? 0 : RECV_LEN;
}

/*
 * A send work request posted on the RC or UC QP (op -1: a window bind) at `t`, taken before the
 * post: the post may send it (under a slow kernel, milliseconds before it returns).
 */
static void log_post(uint64_t t, int qi, uint32_t seq, int op, uint32_t len, const uint8_t *buf)
{
	if (!vlog || qi == Q_UD)
		return;
	sent[qi][seq % 64].seq = seq;
	sent[qi][seq % 64].op = op;
	sent[qi][seq % 64].len = len;
	sent[qi][seq % 64].buf = buf;
	fprintf(vlog, "post %llu %s %u %u %s %u\n", (unsigned long long)t, qname[qi],
		q[qi].gen, seq, op < 0 ? "bind" : logname[op], len);
}

/* A completion of the current generation on the RC or UC QP, and what it delivered. */
static void log_wc(int qi, int kind, const struct ibv_wc *wc)
{
	uint32_t low = (uint32_t)wc->wr_id;

	if (!vlog || qi == Q_UD)
		return;
	fprintf(vlog, "wc %llu %s %u %u %s %d", (unsigned long long)now_ns(), qname[qi], q[qi].gen,
		low, kind == K_RECV ? "recv" : "send", wc->status);
	if (kind == K_RECV) {
		const uint8_t *b = local + (size_t)(qi * RQ_DEPTH + low % RQ_DEPTH) * RECV_LEN;
		uint32_t n = wc->status == IBV_WC_SUCCESS ? wc->byte_len : 0;

		fprintf(vlog, " %u %d %08x %x", n,
			(wc->wc_flags & IBV_WC_WITH_IMM ? 1 : 0) |
				(wc->wc_flags & IBV_WC_WITH_INV ? 2 : 0),
			wc->wc_flags & IBV_WC_WITH_IMM ? ntohl(wc->imm_data) : 0,
			wc->wc_flags & IBV_WC_WITH_INV ? wc->invalidated_rkey : 0);
		log_chunks(b, n <= RECV_LEN ? n : RECV_LEN);
		fprintf(vlog, " %u", recv_len_of(qi, low % RQ_DEPTH));
	} else if (wc->status == IBV_WC_SUCCESS && sent[qi][low % 64].seq == low &&
		   sent[qi][low % 64].buf) {
		int op = sent[qi][low % 64].op;
		const uint8_t *b = sent[qi][low % 64].buf;

		if (op == OP_READ) {
			log_chunks(b, sent[qi][low % 64].len);
		} else if (op == OP_CAS || op == OP_FAA) {
			uint64_t v;

			memcpy(&v, b, sizeof(v));
			fprintf(vlog, " %016llx", (unsigned long long)v);
		} else {
			fputs(" -", vlog);
		}
	} else {
		fputs(" -", vlog);
	}
	fputc('\n', vlog);
}

/* The state file, written whole to a temporary file and renamed over the old one. */
static void write_state(void)
{
	char tmp[4096], ip[INET_ADDRSTRLEN];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", state_path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	inet_ntop(AF_INET, &my_gid.raw[12], ip, sizeof(ip));
	fprintf(f, "gen=%u\nip=%s\npeer_ip=%s\nmtu=%d\n", ++file_gen, ip, peer_ip, MTU);
	for (int i = 0; i < NQ; i++) {
		fprintf(f, "%s_qpn=%u\n%s_gen=%u\n", qname[i], q[i].qp->qp_num, qname[i], q[i].gen);
		if (i == Q_UD)
			continue;
		fprintf(f, "%s_peer_qpn=%u\n%s_rq_psn=%u\n%s_sq_psn=%u\n", qname[i],
			peer_qpn + i, qname[i], q[i].rq_psn, qname[i], q[i].sq_psn);
	}
	fprintf(f, "ud_qkey=%#x\nrecv_len=%d\nud_recv_len=%d\n", UD_QKEY, RECV_LEN, UD_RECV_LEN);
	fprintf(f, "small_addr=%#llx\nsmall_len=%d\nsmall_rkey=%#x\n",
		(unsigned long long)(uintptr_t)small, SMALL_LEN, small_mr->rkey);
	fprintf(f, "big_addr=%#llx\nbig_len=%d\nbig_rkey=%#x\n", (unsigned long long)(uintptr_t)big,
		BIG_LEN, big_mr->rkey);
	fprintf(f, "ro_addr=%#llx\nro_len=%d\nro_rkey=%#x\n", (unsigned long long)(uintptr_t)ro,
		RO_LEN, ro_mr->rkey);
	fprintf(f, "mw_rkey=%#x\nmw_addr=%#llx\nmw_len=%d\n", mw && mw_valid ? mw->rkey : 0,
		(unsigned long long)(uintptr_t)(small + MW_OFF), MW_LEN);
	fprintf(f, "flush=%d\natomic_write=%d\n", rc_ring != NULL, has_aw);
	fclose(f);
	rename(tmp, state_path);
}

static int post_recv(int qi, uint32_t slot)
{
	uint8_t *b = local + (size_t)(qi * RQ_DEPTH + slot) * RECV_LEN;
	struct ibv_sge sge = { .addr = (uintptr_t)b, .length = RECV_LEN, .lkey = local_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wrid(K_RECV, qi, slot), .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	sge.length = recv_len_of(qi, slot);
	if (!sge.length)
		wr.num_sge = 0;
	if (ibv_post_recv(q[qi].qp, &wr, &bad))
		return -1;
	q[qi].recv_posted++;
	return 0;
}

/* Binds the window (again) to the RC QP with the next key. */
static void bind_mw(void)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	uint64_t t = now_ns();

	if (!mw || mw_binding || mw_failures >= 3 || q[Q_RC].need_reset)
		return;
	wr.wr_id = wrid(K_BIND, Q_RC, q[Q_RC].seq);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = small_mr, .addr = (uintptr_t)small + MW_OFF, .length = MW_LEN,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };
	if (ibv_post_send(q[Q_RC].qp, &wr, &bad)) {
		mw_failures++;
		return;
	}
	mw->rkey = wr.bind_mw.rkey;
	log_post(t, Q_RC, q[Q_RC].seq++, -1, 0, NULL);
	mw_binding = 1;
	q[Q_RC].outstanding++;
	q[Q_RC].send_posted++;
}

/* RESET, INIT, RTR and RTS with fresh PSNs, then every receive posted again. */
static int connect_qp(int qi)
{
	struct vqp *v = &q[qi];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	int mask;

	if (ibv_modify_qp(v->qp, &a, IBV_QP_STATE))
		return -1;
	v->gen++;
	v->outstanding = 0;
	v->need_reset = 0;
	v->recv_posted = v->recv_done = v->send_posted = v->send_done = 0;
	if (qi == Q_RC)
		mw_binding = 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (qi == Q_UD) {
		a.qkey = UD_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = qi == Q_RC ? RC_QP_ACCESS : IBV_ACCESS_REMOTE_WRITE;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	if (ibv_modify_qp(v->qp, &a, mask))
		return -1;
	v->rq_psn = pick_psn();
	v->sq_psn = pick_psn();
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (qi != Q_UD) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = peer_qpn + qi;
		a.rq_psn = v->rq_psn;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = peer_gid;
		a.ah_attr.grh.sgid_index = gid_idx;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (qi == Q_RC) {
			a.max_dest_rd_atomic = 4;
			a.min_rnr_timer = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	if (ibv_modify_qp(v->qp, &a, mask))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = v->sq_psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (qi == Q_RC) {
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 4;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	if (ibv_modify_qp(v->qp, &a, mask))
		return -1;
	if (vlog && qi != Q_UD)
		fprintf(vlog, "conn %llu %s %u %u %u %u %d\n", (unsigned long long)now_ns(),
			qname[qi], v->gen, v->qp->qp_num, v->sq_psn, v->rq_psn, MTU);
	for (uint32_t i = 0; i < RQ_DEPTH; i++)
		if (post_recv(qi, i))
			return -1;
	v->last_progress = v->last_post = now_ms();
	if (qi == Q_RC && mw && !mw_valid)
		bind_mw();
	return 0;
}

static void on_wc(const struct ibv_wc *wc);

/* Polls both CQs once; the number of completions handled. */
static int poll_all(void)
{
	struct ibv_wc wc[16];
	int n, total = 0;

	while ((n = ibv_poll_cq(scq, 16, wc)) > 0) {
		for (int i = 0; i < n; i++)
			on_wc(&wc[i]);
		total += n;
	}
	while ((n = ibv_poll_cq(rcq, 16, wc)) > 0) {
		for (int i = 0; i < n; i++)
			on_wc(&wc[i]);
		total += n;
	}
	return total;
}

/*
 * Moves the QP to ERR (if it is not there yet) and collects the completions of the current
 * generation: every work request posted must complete, if only flushed. Those still missing
 * after the flush are counted as lost.
 */
static void settle(int qi)
{
	struct vqp *v = &q[qi];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	v->settling = 1;
	if (vlog && qi != Q_UD)
		fprintf(vlog, "err %llu %s %u\n", (unsigned long long)now_ns(), qname[qi], v->gen);
	ibv_modify_qp(v->qp, &a, IBV_QP_STATE);
	for (int round = 0; round < 50; round++) {
		/*
		 * Receives reposted after the QP failed on its own, but before this process
		 * noticed, are flushed by the next send doorbell (what librxe rings), not by
		 * another move to ERR.
		 */
		if (round % 10 == 0)
			doorbell(v->qp);
		if (v->recv_done >= v->recv_posted && v->send_done >= v->send_posted)
			break;
		if (!poll_all())
			usleep(1000);
	}
	if (v->recv_posted > v->recv_done)
		v->lost_recv += v->recv_posted - v->recv_done;
	if (v->send_posted > v->send_done)
		v->lost_send += v->send_posted - v->send_done;
	v->recv_posted = v->recv_done = v->send_posted = v->send_done = 0;
	v->settling = 0;
}

static void reconnect(int qi)
{
	q[qi].resets++;
	settle(qi);
	if (connect_qp(qi)) {
		/* Tried again on the next round. */
		q[qi].need_reset = 1;
		return;
	}
	write_state();
}

static void on_wc(const struct ibv_wc *wc)
{
	int kind = wc->wr_id >> 60, qi = (wc->wr_id >> 56) & 0xf;
	uint32_t gen = (wc->wr_id >> 32) & 0xffffff, low = (uint32_t)wc->wr_id;
	unsigned int st = wc->status < 32 ? wc->status : 31;
	struct vqp *v;

	if (qi >= NQ)
		return;
	v = &q[qi];
	if (gen != (v->gen & 0xffffff)) {
		/* From before the last reconnect. */
		v->stale++;
		return;
	}
	log_wc(qi, kind, wc);
	if (wc->status != IBV_WC_SUCCESS && wc->status != IBV_WC_WR_FLUSH_ERR && kind != K_RECV)
		v->need_reset = 1;
	if (kind == K_RECV)
		v->recv_done++;
	else
		v->send_done++;
	switch (kind) {
	case K_RECV:
		v->recv_st[st]++;
		if (v->settling)
			break;
		if (wc->status == IBV_WC_WR_FLUSH_ERR) {
			v->need_reset = 1;
			break;
		}
		if (wc->status == IBV_WC_SUCCESS && (wc->wc_flags & IBV_WC_WITH_IMM))
			v->imm++;
		if (wc->status == IBV_WC_SUCCESS && (wc->wc_flags & IBV_WC_WITH_INV)) {
			v->inv++;
			if (mw && mw_valid && wc->invalidated_rkey == mw->rkey) {
				mw_valid = 0;
				write_state();
			}
		}
		if (!v->need_reset && post_recv(qi, low % RQ_DEPTH))
			v->need_reset = 1;
		break;
	case K_SEND:
		v->send_st[st]++;
		v->outstanding--;
		if (wc->status == IBV_WC_SUCCESS)
			v->last_progress = now_ms();
		if (qi == Q_RC && stamped[low % 64] == stamp_of(gen, low)) {
			stamped[low % 64] = 0;
			if (wc->status == IBV_WC_SUCCESS)
				stamp_ok(stamp_of(gen, low));
		}
		break;
	case K_BIND:
		v->outstanding--;
		mw_binding = 0;
		if (wc->status == IBV_WC_SUCCESS) {
			binds_ok++;
			mw_valid = 1;
			mw_failures = 0;
			write_state();
		} else if (wc->status != IBV_WC_WR_FLUSH_ERR) {
			binds_failed++;
			mw_failures++;
		}
		break;
	}
}

static const uint32_t send_lens[] = { 0, 1, MTU - 1, MTU, MTU + 1, 3 * MTU + 17 };
static const uint32_t read_lens[] = { 0, 1, 8, MTU - 1, MTU, MTU + 1, 4 * MTU };

/* One request of a random kind toward the peer on the RC or UC QP. */
static void post_request(int qi)
{
	struct vqp *v = &q[qi];
	uint8_t *buf = local + REQ_OFF + (size_t)(qi * REQ_SLOTS + v->seq % REQ_SLOTS) * REQ_SLOT;
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .lkey = local_mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	int op = qi == Q_RC ? rnd() % NOPS : rnd() % 4;
	uint64_t t = now_ns();
	uint32_t loglen;
	int r;

	wr.wr_id = wrid(K_SEND, qi, v->seq++);
	sge.length = send_lens[rnd() % (sizeof(send_lens) / sizeof(send_lens[0]))];
	memset(buf, 0x40 + op, sge.length);
	switch (op) {
	case OP_SEND:
		wr.opcode = IBV_WR_SEND;
		break;
	case OP_SEND_IMM:
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = htonl(rnd());
		break;
	case OP_WRITE:
	case OP_WRITE_IMM:
		wr.opcode = op == OP_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = htonl(rnd());
		wr.wr.rdma.remote_addr = PEER_VA + (rnd() % 64) * 8;
		wr.wr.rdma.rkey = PEER_RKEY;
		break;
	case OP_READ:
		wr.opcode = IBV_WR_RDMA_READ;
		sge.length = read_lens[rnd() % (sizeof(read_lens) / sizeof(read_lens[0]))];
		wr.wr.rdma.remote_addr = PEER_VA;
		wr.wr.rdma.rkey = PEER_RKEY;
		break;
	case OP_CAS:
	case OP_FAA:
		wr.opcode = op == OP_CAS ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD;
		sge.length = 8;
		wr.wr.atomic.remote_addr = PEER_VA + (rnd() % 64) * 8;
		wr.wr.atomic.rkey = PEER_RKEY;
		wr.wr.atomic.compare_add = rnd();
		wr.wr.atomic.swap = rnd();
		break;
	case OP_AWRITE:
		if (has_aw) {
			struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(v->qp);
			uint8_t value[8];

			for (int i = 0; i < 8; i++)
				value[i] = rnd();
			ibv_wr_start(qx);
			qx->wr_id = wr.wr_id;
			qx->wr_flags = IBV_SEND_SIGNALED;
			ibv_wr_atomic_write(qx, PEER_RKEY, PEER_VA + 8 * (rnd() % 64), value);
			r = ibv_wr_complete(qx);
			goto posted;
		}
		wr.opcode = IBV_WR_SEND;
		op = OP_SEND;
		break;
	case OP_FLUSH:
		if (rc_ring) {
			int whole = rnd() % 4 == 0;

			r = raw_flush(rc_ring, v->qp, wr.wr_id, PEER_RKEY, whole ? 0 : PEER_VA,
				      whole ? 0 : 4096, FLUSH_GLOBAL,
				      whole ? FLUSH_MR : FLUSH_RANGE);
			goto posted;
		}
		wr.opcode = IBV_WR_SEND;
		op = OP_SEND;
		break;
	}
	if (!sge.length)
		wr.num_sge = 0;
	stamped[(uint32_t)wr.wr_id % 64] = 0;
	if (qi == Q_RC && sge.length >= 8 &&
	    (wr.opcode == IBV_WR_SEND || wr.opcode == IBV_WR_SEND_WITH_IMM ||
	     wr.opcode == IBV_WR_RDMA_WRITE || wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM)) {
		uint64_t stamp = stamp_of(v->gen, (uint32_t)wr.wr_id);

		for (int i = 0; i < 8; i++)
			buf[i] = (uint8_t)(stamp >> (56 - 8 * i));
		stamped[(uint32_t)wr.wr_id % 64] = stamp;
	}
	r = ibv_post_send(v->qp, &wr, &bad);
posted:
	if (r) {
		/* A full ring or a QP on its way to ERR: the polling loop finds out which. */
		return;
	}
	if (!v->outstanding)
		v->last_progress = now_ms();
	v->outstanding++;
	v->send_posted++;
	v->posted[op]++;
	loglen = op == OP_AWRITE ? 8 : op == OP_FLUSH ? 0 : sge.length;
	log_post(t, qi, (uint32_t)wr.wr_id, op, loglen, buf);
	v->last_post = now_ms();
}

static int setup(const char *dev)
{
	int rights = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND;
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_RDMA_WRITE,
		/* Four SGEs: 512-byte send slots, which find_ring() tells from the others. */
		.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = RQ_DEPTH, .max_send_sge = 4,
			 .max_recv_sge = 1 },
	};

	ctx = open_device(dev);
	CHECK(ctx, "open %s", dev);
	if (!ctx)
		return -1;
	CHECK(!ibv_query_gid(ctx, 1, gid_idx, &my_gid), "GID %d", gid_idx);
	pd = ibv_alloc_pd(ctx);
	scq = ibv_create_cq(ctx, 4 * SQ_DEPTH, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 4 * RQ_DEPTH, NULL, NULL, 0);
	small = aligned_alloc(4096, SMALL_LEN);
	big = aligned_alloc(4096, BIG_LEN);
	ro = aligned_alloc(4096, RO_LEN);
	local = aligned_alloc(4096, LOCAL_LEN);
	CHECK(pd && scq && rcq && small && big && ro && local, "PD, CQs and buffers");
	if (!pd || !scq || !rcq || !small || !big || !ro || !local)
		return -1;
	for (int i = 0; i < SMALL_LEN; i++)
		small[i] = (uint8_t)(i * 7 + 1);
	for (int i = 0; i < BIG_LEN; i++)
		big[i] = (uint8_t)(i * 13 + 5);
	memset(ro, 0x5a, RO_LEN);
	memset(local, 0, LOCAL_LEN);
	small_mr = ibv_reg_mr(pd, small, SMALL_LEN, rights | ACCESS_FLUSH_GLOBAL);
	if (!small_mr)
		small_mr = ibv_reg_mr(pd, small, SMALL_LEN, rights);
	big_mr = ibv_reg_mr(pd, big, BIG_LEN, rights | ACCESS_FLUSH_GLOBAL);
	if (!big_mr)
		big_mr = ibv_reg_mr(pd, big, BIG_LEN, rights);
	ro_mr = ibv_reg_mr(pd, ro, RO_LEN, IBV_ACCESS_REMOTE_READ);
	local_mr = ibv_reg_mr(pd, local, LOCAL_LEN, IBV_ACCESS_LOCAL_WRITE);
	CHECK(small_mr && big_mr && ro_mr && local_mr, "4 KiB, 1 MiB, read-only and local MRs");
	if (!small_mr || !big_mr || !ro_mr || !local_mr)
		return -1;
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (!mw)
		printf("# victim: no type 2 memory window (errno %d): SEND with invalidate of a "
		       "bound window not covered\n", errno);

	ia.pd = pd;
	ia.send_cq = scq;
	ia.recv_cq = rcq;
	q[Q_RC].qp = ibv_create_qp_ex(ctx, &ia);
	has_aw = q[Q_RC].qp != NULL;
	if (!q[Q_RC].qp) {
		ia.comp_mask = IBV_QP_INIT_ATTR_PD;
		q[Q_RC].qp = ibv_create_qp_ex(ctx, &ia);
	}
	/* The RC send ring for FLUSH (no verb for it in rdma-core 44); the others have 256-byte
	 * send slots and smaller receive slots. */
	rc_ring = q[Q_RC].qp ? find_ring(9, NULL) : NULL;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD;
	ia.cap.max_send_sge = 1;
	ia.qp_type = IBV_QPT_UC;
	q[Q_UC].qp = ibv_create_qp_ex(ctx, &ia);
	ia.qp_type = IBV_QPT_UD;
	q[Q_UD].qp = ibv_create_qp_ex(ctx, &ia);
	CHECK(q[Q_RC].qp && q[Q_UC].qp && q[Q_UD].qp, "RC, UC and UD QPs");
	if (!q[Q_RC].qp || !q[Q_UC].qp || !q[Q_UD].qp)
		return -1;
	if (!rc_ring)
		printf("# victim: RC send ring not found: FLUSH requests not posted\n");
	for (int i = 0; i < NQ; i++) {
		int r = connect_qp(i);

		/* RTR resolves the peer's MAC address: give ARP a few chances. */
		for (int t = 0; r && t < 5; t++) {
			usleep(500 * 1000);
			r = connect_qp(i);
		}
		CHECK(!r, "%s QP %u to RTS", qname[i], q[i].qp->qp_num);
		if (r)
			return -1;
	}
	/* The window's first bind completes before the fuzzer starts. */
	for (double t0 = now_ms(); mw && !mw_valid && mw_failures < 3 && now_ms() - t0 < 5000;) {
		struct ibv_wc wc;

		if (ibv_poll_cq(scq, 1, &wc) == 1)
			on_wc(&wc);
		else if (!mw_binding)
			bind_mw();
		else
			usleep(1000);
		if (q[Q_RC].need_reset)
			reconnect(Q_RC);
	}
	if (mw && !mw_valid)
		printf("# victim: the window could not be bound: not offered to the fuzzer\n");
	return 0;
}

static void print_counts(const char *what, const unsigned long *st)
{
	char line[1024];
	int n = 0;

	for (int i = 0; i < 32; i++)
		if (st[i])
			n += snprintf(line + n, sizeof(line) - n, "%s%s %lu", n ? ", " : "",
				      ibv_wc_status_str(i), st[i]);
	printf("# victim %s: %s\n", what, n ? line : "none");
}

static void report(void)
{
	for (int i = 0; i < NQ; i++) {
		char what[32], line[512];
		int n = 0;

		for (int k = 0; k < NOPS; k++)
			if (q[i].posted[k])
				n += snprintf(line + n, sizeof(line) - n, " %s %lu", opname[k],
					      q[i].posted[k]);
		printf("# victim %s QP %u: %lu reconnects, %lu stale completions, %lu stuck, "
		       "%lu with immediate, %lu with invalidate; posted:%s\n",
		       qname[i], q[i].qp->qp_num, q[i].resets, q[i].stale, q[i].stuck, q[i].imm,
		       q[i].inv, n ? line : " nothing");
		if (q[i].lost_recv || q[i].lost_send)
			printf("# victim %s QP %u: %lu receive and %lu send work requests never "
			       "completed, not even flushed\n", qname[i], q[i].qp->qp_num,
			       q[i].lost_recv, q[i].lost_send);
		snprintf(what, sizeof(what), "%s receives", qname[i]);
		print_counts(what, q[i].recv_st);
		if (i == Q_UD)
			continue;
		snprintf(what, sizeof(what), "%s sends", qname[i]);
		print_counts(what, q[i].send_st);
	}
	printf("# victim window: %lu binds, %lu failed\n", binds_ok, binds_failed);
	printf("# victim totals: rc_recv_ok=%lu rc_send_ok=%lu uc_recv_ok=%lu ud_recv_ok=%lu "
	       "rc_resets=%lu uc_resets=%lu ud_resets=%lu invalidations=%lu lost_wrs=%lu\n",
	       q[Q_RC].recv_st[0], q[Q_RC].send_st[0], q[Q_UC].recv_st[0], q[Q_UD].recv_st[0],
	       q[Q_RC].resets, q[Q_UC].resets, q[Q_UD].resets, q[Q_RC].inv,
	       q[Q_RC].lost_recv + q[Q_RC].lost_send + q[Q_UC].lost_recv + q[Q_UC].lost_send +
		       q[Q_UD].lost_recv + q[Q_UD].lost_send);
}

static int teardown(void)
{
	int bad = 0;

	/* The window first: a type 2 window is bound to the RC QP. */
	if (mw && ibv_dealloc_mw(mw))
		bad |= 1;
	for (int i = 0; i < NQ; i++)
		if (q[i].qp && ibv_destroy_qp(q[i].qp))
			bad |= 2;
	if (ibv_dereg_mr(small_mr) || ibv_dereg_mr(big_mr) || ibv_dereg_mr(ro_mr) ||
	    ibv_dereg_mr(local_mr))
		bad |= 4;
	if (ibv_destroy_cq(scq) || ibv_destroy_cq(rcq))
		bad |= 8;
	if (ibv_dealloc_pd(pd))
		bad |= 16;
	if (ibv_close_device(ctx))
		bad |= 32;
	CHECK(!bad, "teardown: window, QPs, MRs, CQs, PD and context destroyed (%#x)", bad);
	return bad;
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	double t_end, last_query;
	int opt, seconds = 600;
	uint32_t seed = 1;

	while ((opt = getopt(argc, argv, "d:g:a:o:q:s:t:c:l:")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'g': gid_idx = atoi(optarg); break;
		case 'a': peer_ip = optarg; break;
		case 'o': state_path = optarg; break;
		case 'q': peer_qpn = strtoul(optarg, NULL, 0) & 0xfffffe; break;
		case 's': seed = strtoul(optarg, NULL, 0); break;
		case 't': seconds = atoi(optarg); break;
		case 'c': stamps_path = optarg; break;
		case 'l': log_path = optarg; break;
		default: return 2;
		}
	}
	peer_gid.raw[10] = peer_gid.raw[11] = 0xff;
	if (!dev || !state_path || !peer_ip ||
	    inet_pton(AF_INET, peer_ip, &peer_gid.raw[12]) != 1) {
		fprintf(stderr, "usage: %s -d DEVICE -g GID_INDEX -a PEER_IPV4 -o STATE_FILE "
				"[-q PEER_QPN] [-s SEED] [-t SECONDS] [-c STAMPS_FILE] "
				"[-l LOG_FILE]\n", argv[0]);
		return 2;
	}
	rng ^= (uint64_t)seed * 0x2545f4914f6cdd1dull;
	if (!rng)
		rng = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (log_path) {
		vlog = fopen(log_path, "w");
		CHECK(vlog, "the log %s", log_path);
		if (!vlog)
			return 1;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (setup(dev)) {
		printf("# FAIL: setup on %s (errno %d)\n", dev, errno);
		return 1;
	}
	write_state();
	printf("# victim ready: RC QP %u, UC QP %u, UD QP %u, peer %s QPs %#x and %#x\n",
	       q[Q_RC].qp->qp_num, q[Q_UC].qp->qp_num, q[Q_UD].qp->qp_num, peer_ip, peer_qpn,
	       peer_qpn + 1);

	t_end = now_ms() + seconds * 1e3;
	last_query = now_ms();
	while (!stop && now_ms() < t_end) {
		int busy = poll_all() > 0;
		double t = now_ms();

		if (t - last_query > 200) {
			/* A QP can fail without a completion of the current generation. */
			last_query = t;
			for (int i = 0; i < NQ; i++) {
				struct ibv_qp_attr a;
				struct ibv_qp_init_attr ia;

				if (!ibv_query_qp(q[i].qp, &a, IBV_QP_STATE, &ia) &&
				    (a.qp_state == IBV_QPS_ERR || a.qp_state == IBV_QPS_SQE))
					q[i].need_reset = 1;
				if (q[i].outstanding > 0 && t - q[i].last_progress > 5000) {
					q[i].stuck++;
					q[i].need_reset = 1;
				}
			}
		}
		for (int i = 0; i < NQ; i++)
			if (q[i].need_reset) {
				reconnect(i);
				busy = 1;
			}
		if (mw && !mw_valid && !mw_binding && mw_failures < 3)
			bind_mw();
		if (q[Q_RC].outstanding < RC_MAX_OUT && t - q[Q_RC].last_post >= 3)
			post_request(Q_RC);
		if (q[Q_UC].outstanding < UC_MAX_OUT && t - q[Q_UC].last_post >= 10)
			post_request(Q_UC);
		if (!busy)
			usleep(1000);
	}
	/* Every work request still posted must come back, flushed. */
	for (int i = 0; i < NQ; i++)
		settle(i);
	report();
	if (vlog) {
		fprintf(vlog, "end %llu\n", (unsigned long long)now_ns());
		CHECK(!fclose(vlog), "the log written");
		vlog = NULL;
	}
	if (stamps_path) {
		FILE *f = fopen(stamps_path, "w");

		for (size_t i = 0; f && i < n_stamps_ok; i++)
			fprintf(f, "%016llx\n", (unsigned long long)stamps_ok[i]);
		CHECK(f && !fclose(f), "%zu stamps of successful SENDs and WRITEs written",
		      n_stamps_ok);
	}
	return teardown() || failures ? 1 : 0;
}
