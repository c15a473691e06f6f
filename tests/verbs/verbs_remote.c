// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_remote: the operations that ibv_*_pingpong and perftest do not use, across a real
 * wire (two hosts, or two network namespaces), checked by RDMA READ: ATOMIC_WRITE, FLUSH,
 * CMP_SWAP/FETCH_ADD, memory windows of both types bound by the server (type 1 with
 * ibv_bind_mw, type 2 with IBV_WR_BIND_MW), SEND_WITH_INV of the type 2 window, and the remote
 * access error after it. The command line is the pingpongs' so the same harnesses run it:
 *
 *   server: verbs_remote -d DEVICE -g GID_INDEX -p PORT
 *   client: verbs_remote -d DEVICE -g GID_INDEX -p PORT SERVER_ADDRESS
 *
 * The server exposes a 64 KiB buffer and two windows on it, then checks the SEND_WITH_INV it
 * receives; the client does the rest. Both exit 0 only when every check passed.
 *
 * With -r ROUNDS the client first writes and reads back 32 KiB that many times, each round a
 * new pattern, comparing every byte, then reads it back again as READs interleaved with
 * WRITEs, all in flight: run under packet loss, it checks that a READ whose responses were
 * lost completes only with all of its data, and that stale ACKs do not use up the retries.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "common.h"
#include "raw_ring.h"
#include "rc.h"

#define BUF_SIZE (64 * 1024)
#define WIN1 40960
#define WIN2 49152
#define WIN_LEN 4096

/* What each side tells the other (host byte order: both run the same build). */
struct info {
	uint32_t qpn;
	union ibv_gid gid;
	uint64_t addr;
	uint32_t rkey, mw1, mw2;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static uint8_t *buf;
static struct ibv_mr *mr;
static int gid_index;

static int tcp(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM,
				  .ai_flags = host ? 0 : AI_PASSIVE };
	struct addrinfo *ai;
	int fd, one = 1;

	if (getaddrinfo(host, port, &hints, &ai))
		return -1;
	fd = socket(ai->ai_family, ai->ai_socktype, 0);
	if (fd < 0)
		goto out;
	if (host) {
		/* The server may not listen yet. */
		for (int i = 0; i < 100 && connect(fd, ai->ai_addr, ai->ai_addrlen); i++)
			usleep(100 * 1000);
	} else {
		int lfd = fd;

		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		fd = -1;
		if (!bind(lfd, ai->ai_addr, ai->ai_addrlen) && !listen(lfd, 1))
			fd = accept(lfd, NULL, NULL);
		close(lfd);
	}
out:
	freeaddrinfo(ai);
	return fd;
}

static int xfer(int fd, void *p, size_t len, int out)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = out ? write(fd, (char *)p + done, len - done)
				: read(fd, (char *)p + done, len - done);

		if (n <= 0)
			return -1;
		done += n;
	}
	return 0;
}

static int setup(const char *dev, int sq_sge, uint64_t ops)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RC, .comp_mask = IBV_QP_INIT_ATTR_PD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 4, .max_send_sge = sq_sge,
			 .max_recv_sge = 1 },
	};
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND | ACCESS_FLUSH_GLOBAL;

	ctx = open_device(dev);
	if (!ctx)
		return -1;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	buf = aligned_alloc(4096, BUF_SIZE);
	if (!pd || !cq || !buf)
		return -1;
	memset(buf, 0, BUF_SIZE);
	mr = ibv_reg_mr(pd, buf, BUF_SIZE, access);
	ia.pd = pd;
	ia.send_cq = ia.recv_cq = cq;
	if (ops) {
		ia.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		ia.send_ops_flags = ops;
	}
	qp = ibv_create_qp_ex(ctx, &ia);
	return mr && qp ? 0 : -1;
}

static int server(int fd)
{
	struct info me = { 0 }, peer;
	struct ibv_mw *mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1), *mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	unsigned int rw = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_wc wc = { 0 };
	int done = -1;

	CHECK(mw1 && mw2, "server: type 1 and type 2 MWs");
	if (!mw1 || !mw2 || xfer(fd, &peer, sizeof(peer), 0))
		return 1;
	CHECK(!rc_connect(qp, peer.qpn, &peer.gid, gid_index), "server: QP %u -> %u", qp->qp_num,
	      peer.qpn);

	struct ibv_mw_bind b1 = { .wr_id = 1, .send_flags = IBV_SEND_SIGNALED,
				  .bind_info = { .mr = mr, .addr = (uintptr_t)buf + WIN1,
						 .length = WIN_LEN, .mw_access_flags = rw } };
	CHECK(!ibv_bind_mw(qp, mw1, &b1) && expect(cq, 1, IBV_WC_SUCCESS, IBV_WC_BIND_MW),
	      "server: type 1 window bound");
	struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_BIND_MW };
	wr.bind_mw.mw = mw2;
	wr.bind_mw.rkey = ibv_inc_rkey(mw2->rkey);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = mr,
							  .addr = (uintptr_t)buf + WIN2,
							  .length = WIN_LEN, .mw_access_flags = rw };
	CHECK(!post_signaled(qp, &wr) && expect(cq, 2, IBV_WC_SUCCESS, IBV_WC_BIND_MW),
	      "server: type 2 window bound to the QP");
	mw2->rkey = wr.bind_mw.rkey;

	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 3, .sg_list = &sge, .num_sge = 1 }, *bad;
	CHECK(!ibv_post_recv(qp, &rwr, &bad), "server: receive posted");

	me.qpn = qp->qp_num;
	ibv_query_gid(ctx, 1, gid_index, &me.gid);
	me.addr = (uintptr_t)buf;
	me.rkey = mr->rkey;
	me.mw1 = mw1->rkey;
	me.mw2 = mw2->rkey;
	if (xfer(fd, &me, sizeof(me), 1))
		return 1;
	/* The client reports its failures once it is done. */
	CHECK(!xfer(fd, &done, sizeof(done), 0) && done == 0, "server: client reports %d failures",
	      done);
	CHECK(!wait_wc(cq, &wc) && wc.wr_id == 3 && wc.status == IBV_WC_SUCCESS &&
		      wc.invalidated_rkey == mw2->rkey,
	      "server: SEND_WITH_INV received, invalidating %#x (status %d, flags %#x, rkey %#x)",
	      mw2->rkey, wc.status, wc.wc_flags, wc.invalidated_rkey);
	CHECK(ibv_dereg_mr(mr) != 0, "server: the region with a bound type 1 window stays");
	/* Windows first: C rxe's QP cannot be destroyed while a type 2 window is bound to it. */
	CHECK(!ibv_dealloc_mw(mw1) && !ibv_dealloc_mw(mw2), "server: windows deallocated");
	CHECK(!ibv_destroy_qp(qp) && !ibv_dereg_mr(mr), "server: QP destroyed, region deregistered");
	return failures ? 1 : 0;
}

/* RDMA READ of `len` bytes at the server's `off` into buf + 32 KiB; 1 when it completes. */
static int read_back(const struct info *s, size_t off, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + 32768, .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0x100 + off, .opcode = IBV_WR_RDMA_READ,
				  .sg_list = &sge, .num_sge = 1 };

	memset(buf + 32768, 0, len);
	wr.wr.rdma.remote_addr = s->addr + off;
	wr.wr.rdma.rkey = s->rkey;
	return !post_signaled(qp, &wr) && expect(cq, wr.wr_id, IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
}

/* RDMA WRITE of buf[0, len) to `va` through `rkey`; 1 on `status`. */
static int write_to(uint64_t id, uint32_t rkey, uint64_t va, uint32_t len,
		    enum ibv_wc_status status)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = len, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .opcode = IBV_WR_RDMA_WRITE, .sg_list = &sge,
				  .num_sge = 1 };

	wr.wr.rdma.remote_addr = va;
	wr.wr.rdma.rkey = rkey;
	return !post_signaled(qp, &wr) && expect(cq, id, status, IBV_WC_RDMA_WRITE);
}

static int atomic(uint64_t id, enum ibv_wr_opcode op, const struct info *s, uint64_t add,
		  uint64_t swap)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + 16384, .length = 8, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .opcode = op, .sg_list = &sge, .num_sge = 1 };

	wr.wr.atomic.remote_addr = s->addr + 24576;
	wr.wr.atomic.rkey = s->rkey;
	wr.wr.atomic.compare_add = add;
	wr.wr.atomic.swap = swap;
	return !post_signaled(qp, &wr) &&
	       expect(cq, id, IBV_WC_SUCCESS,
		      op == IBV_WR_ATOMIC_CMP_AND_SWP ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD);
}

/* Where the interleaved round's WRITEs land: a part of the server's buffer nothing else uses. */
#define SCRATCH 57344

/*
 * The 32 KiB just written read back as eight 4 KiB READs, each followed by a 512-byte WRITE,
 * all sixteen posted at once: under loss, the ACK of a later WRITE arrives while an earlier
 * READ's responses are missing (an implicit NAK), and after the requester went back the ACKs
 * of the WRITEs it had sent before still arrive. Those say nothing new and must not use up the
 * QP's retries. 1 when every WR succeeds and the data read back is `want`.
 */
static int interleaved_round(const struct info *s, const uint8_t *want)
{
	struct ibv_sge rsge[8], wsge = { .addr = (uintptr_t)buf, .length = 512, .lkey = mr->lkey };
	struct ibv_send_wr wr[16], *bad;
	uint8_t *got = buf + 32768;

	memset(got, 0, 32768);
	memset(wr, 0, sizeof(wr));
	for (int k = 0; k < 8; k++) {
		struct ibv_send_wr *rd = &wr[2 * k], *wt = &wr[2 * k + 1];

		rsge[k] = (struct ibv_sge){ .addr = (uintptr_t)got + 4096 * k, .length = 4096,
					    .lkey = mr->lkey };
		rd->wr_id = 0x2000 + 2 * k;
		rd->opcode = IBV_WR_RDMA_READ;
		rd->sg_list = &rsge[k];
		rd->num_sge = 1;
		rd->send_flags = IBV_SEND_SIGNALED;
		rd->wr.rdma.remote_addr = s->addr + 4096 * k;
		rd->wr.rdma.rkey = s->rkey;
		rd->next = wt;
		wt->wr_id = 0x2000 + 2 * k + 1;
		wt->opcode = IBV_WR_RDMA_WRITE;
		wt->sg_list = &wsge;
		wt->num_sge = 1;
		wt->send_flags = IBV_SEND_SIGNALED;
		wt->wr.rdma.remote_addr = s->addr + SCRATCH;
		wt->wr.rdma.rkey = s->rkey;
		wt->next = k < 7 ? &wr[2 * k + 2] : NULL;
	}
	if (ibv_post_send(qp, wr, &bad))
		return 0;
	for (int i = 0; i < 16; i++)
		if (!expect(cq, 0x2000 + i, IBV_WC_SUCCESS,
			    i % 2 ? IBV_WC_RDMA_WRITE : IBV_WC_RDMA_READ))
			return 0;
	return !memcmp(got, want, 32768);
}

/*
 * ROUNDS of a 32 KiB RDMA WRITE of a new pattern and its READ back, compared; then the same
 * data read back again interleaved with WRITEs.
 */
static int write_read_rounds(const struct info *s, int rounds)
{
	const uint32_t len = 32768;
	uint8_t *got = buf + 32768;
	int bad = 0;

	for (int r = 0; r < rounds && !bad; r++) {
		for (uint32_t i = 0; i < len; i++)
			buf[i] = (uint8_t)(i * 7 + r * 31 + (i >> 10));
		if (!write_to(0x1000 + r, s->rkey, s->addr, len, IBV_WC_SUCCESS) ||
		    !read_back(s, 0, len)) {
			printf("# round %d: a WRITE or READ failed\n", r);
			bad = 1;
		} else if (memcmp(got, buf, len)) {
			uint32_t i = 0;

			while (got[i] == buf[i])
				i++;
			printf("# round %d: READ data differs from byte %u (packet %u)\n", r, i,
			       i / 1024);
			bad = 1;
		} else if (!interleaved_round(s, buf)) {
			printf("# round %d: the READs interleaved with WRITEs failed\n", r);
			bad = 1;
		}
	}
	/* The checks that follow expect the server's buffer as it was: zeros. */
	memset(buf, 0, len);
	return write_to(0x1fff, s->rkey, s->addr, len, IBV_WC_SUCCESS) &&
	       write_to(0x1ffe, s->rkey, s->addr + SCRATCH, 512, IBV_WC_SUCCESS) && !bad;
}

static int rounds;

static int client(int fd)
{
	struct info me = { 0 }, s;
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(qp);
	struct rxe_queue_buf *sq = find_ring(9, NULL);
	const uint8_t value[8] = { 0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6, 0x07, 0x18 };
	uint8_t *got = buf + 32768;

	me.qpn = qp->qp_num;
	ibv_query_gid(ctx, 1, gid_index, &me.gid);
	if (!sq || xfer(fd, &me, sizeof(me), 1) || xfer(fd, &s, sizeof(s), 0))
		return 1;
	CHECK(!rc_connect(qp, s.qpn, &s.gid, gid_index), "client: QP %u -> %u", qp->qp_num,
	      s.qpn);
	if (rounds)
		CHECK(write_read_rounds(&s, rounds), "%d rounds of 32 KiB written and read back intact",
		      rounds);

	for (int i = 0; i < 5000; i++)
		buf[i] = (uint8_t)(i * 13 + 5);
	CHECK(write_to(0x10, s.rkey, s.addr + 8192, 5000, IBV_WC_SUCCESS) &&
		      read_back(&s, 8192, 5000) && !memcmp(got, buf, 5000),
	      "RDMA WRITE of 5000 bytes, read back intact");

	ibv_wr_start(qx);
	qx->wr_id = 0x20;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qx, s.rkey, s.addr + 20488, value);
	CHECK(!ibv_wr_complete(qx) && expect(cq, 0x20, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE) &&
		      read_back(&s, 20480, 24) && !memcmp(got + 8, value, 8) && !got[7] && !got[16],
	      "ATOMIC_WRITE: the 8 bytes land, nothing around them");

	uint64_t *old = (uint64_t *)(buf + 16384);
	CHECK(atomic(0x30, IBV_WR_ATOMIC_CMP_AND_SWP, &s, 0, 5) && *old == 0 &&
		      atomic(0x31, IBV_WR_ATOMIC_FETCH_AND_ADD, &s, 3, 0) && *old == 5 &&
		      read_back(&s, 24576, 8) && *(uint64_t *)got == 8,
	      "CMP_SWAP then FETCH_ADD: %llu, memory %llu", (unsigned long long)*old,
	      (unsigned long long)*(uint64_t *)got);

	CHECK(!raw_flush(sq, qp, 0x40, s.rkey, s.addr + 8192, 5000, FLUSH_GLOBAL, FLUSH_RANGE) &&
		      expect(cq, 0x40, IBV_WC_SUCCESS, WC_FLUSH),
	      "FLUSH of a range");
	CHECK(!raw_flush(sq, qp, 0x41, s.rkey, 0, 0, FLUSH_GLOBAL, FLUSH_MR) &&
		      expect(cq, 0x41, IBV_WC_SUCCESS, WC_FLUSH),
	      "FLUSH of the whole region");

	for (int i = 0; i < WIN_LEN; i++)
		buf[i] = (uint8_t)(i * 3 + 1);
	CHECK(write_to(0x50, s.mw1, s.addr + WIN1, WIN_LEN, IBV_WC_SUCCESS) &&
		      read_back(&s, WIN1, WIN_LEN) && !memcmp(got, buf, WIN_LEN),
	      "RDMA WRITE through the type 1 window");
	for (int i = 0; i < WIN_LEN; i++)
		buf[i] = (uint8_t)(i * 5 + 2);
	CHECK(write_to(0x51, s.mw2, s.addr + WIN2, WIN_LEN, IBV_WC_SUCCESS) &&
		      read_back(&s, WIN2, WIN_LEN) && !memcmp(got, buf, WIN_LEN),
	      "RDMA WRITE through the type 2 window");

	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 16, .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0x60, .opcode = IBV_WR_SEND_WITH_INV, .sg_list = &sge,
				  .num_sge = 1, .invalidate_rkey = s.mw2 };
	CHECK(!post_signaled(qp, &wr) && expect(cq, 0x60, IBV_WC_SUCCESS, IBV_WC_SEND),
	      "SEND_WITH_INV of the type 2 window");
	/* Last: the error moves both QPs to ERR. */
	CHECK(write_to(0x61, s.mw2, s.addr + WIN2, 8, IBV_WC_REM_ACCESS_ERR),
	      "the invalidated window refuses access");
	xfer(fd, &failures, sizeof(failures), 1);
	ibv_destroy_qp(qp);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *port = "18515";
	int opt, fd, r;

	while ((opt = getopt(argc, argv, "d:g:p:r:")) != -1) {
		switch (opt) {
		case 'r': rounds = atoi(optarg); break;
		case 'd': dev = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		case 'p': port = optarg; break;
		default: return 2;
		}
	}
	const char *peer = optind < argc ? argv[optind] : NULL;
	if (!dev) {
		fprintf(stderr, "usage: %s -d DEVICE -g GID_INDEX [-p PORT] [-r ROUNDS] [SERVER]\n",
			argv[0]);
		return 2;
	}
	/* The client's send ring has 512-byte slots (4 SGEs): find_ring() tells it apart. */
	if (setup(dev, peer ? 4 : 1,
		  peer ? IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_RDMA_WRITE : 0)) {
		printf("# FAIL: setup on %s (errno %d)\n", dev, errno);
		return 1;
	}
	fd = tcp(peer, port);
	if (fd < 0) {
		printf("# FAIL: TCP %s:%s\n", peer ? peer : "*", port);
		return 1;
	}
	r = peer ? client(fd) : server(fd);
	close(fd);
	printf("# %s: %d failure(s)\n", peer ? "client" : "server", failures);
	return r;
}
