// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_ops: one small transfer of every RC operation between two connected QPs of one device,
 * each checked byte for byte and by its completion: SEND, SEND_WITH_IMM, SEND_WITH_INV,
 * RDMA_WRITE, RDMA_WRITE_WITH_IMM, RDMA_READ, CMP_SWAP, FETCH_ADD, ATOMIC_WRITE (ibv_qp_ex),
 * FLUSH (written into the send ring as a newer librxe's ibv_wr_flush does: rdma-core 44 has no
 * verb for it), LOCAL_INV, and memory windows: type 1 bound with ibv_bind_mw, type 2 bound
 * with IBV_WR_BIND_MW (also zero-based), used remotely, invalidated locally and remotely. Then
 * the refusals: rights a key lacks, a moved or invalidated window, another QP's window,
 * misaligned ATOMIC_WRITE, deregistering a region with a bound window, persistent FLUSH access
 * on ordinary memory; a peer that never answers. Last, the SRQ limit event.
 *
 * Usage: verbs_ops DEVICE GID_INDEX [--rxe-compatible]
 *   --rxe-compatible skips the checks where rrxe is stricter than the C rxe: rxe checks a
 *   window access against the bounds of the region, not of the window; and it reports a
 *   remote invalidation with the kernel's flag value (IB_WC_WITH_INVALIDATE, 1 << 2, which
 *   libibverbs reads as IBV_WC_IP_CSUM_OK) instead of IBV_WC_WITH_INV.
 */
#include <arpa/inet.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "raw_ring.h"
#include "rc.h"
#include "testenv.h"

#define BUF_SIZE (64 * 1024)

/* A requests, B responds. A's send ring has 512-byte slots (4 SGEs), unique in the process. */
static struct ibv_qp *qa, *qb;
static struct ibv_qp_ex *qax;
static struct ibv_cq *cqa, *cqb;
static uint8_t *abuf, *bbuf, *cbuf;
static struct ibv_mr *amr, *bmr, *cmr;
static struct rxe_queue_buf *asq;

/* Drops whatever the CQs hold. */
static void drain(void)
{
	struct ibv_wc wc[16];

	while (ibv_poll_cq(cqa, 16, wc) > 0 || ibv_poll_cq(cqb, 16, wc) > 0)
		;
}

/* (Re)connects A and B: after an expected error both go through RESET. */
static int connect_pair(void)
{
	int r = rc_connect(qa, qb->qp_num, &gid, gid_index) ||
		rc_connect(qb, qa->qp_num, &gid, gid_index);

	drain();
	return r;
}

/* A's request with one local SGE of `len` bytes at abuf + off. */
static struct ibv_send_wr req(uint64_t id, enum ibv_wr_opcode op, struct ibv_sge *sge,
			      size_t off, uint32_t len)
{
	*sge = (struct ibv_sge){ .addr = (uintptr_t)abuf + off, .length = len,
				 .lkey = amr->lkey };
	return (struct ibv_send_wr){ .wr_id = id, .opcode = op, .sg_list = sge,
				     .num_sge = len ? 1 : 0 };
}

/* A receive on B into bbuf + off. */
static int recv_b(uint64_t id, size_t off, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)bbuf + off, .length = len, .lkey = bmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(qb, &wr, &bad);
}

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 8));
}

/* RDMA WRITE of `len` bytes from abuf to `va` through `rkey`; 1 on the expected status. */
static int write_via(uint64_t id, uint32_t rkey, uint64_t va, uint32_t len,
		     enum ibv_wc_status status)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = req(id, IBV_WR_RDMA_WRITE, &sge, 0, len);

	wr.wr.rdma.remote_addr = va;
	wr.wr.rdma.rkey = rkey;
	return !post_signaled(qa, &wr) && expect(cqa, id, status, IBV_WC_RDMA_WRITE);
}

static void test_send(void)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	struct ibv_wc wc;

	fill(abuf, 3000, 1);
	recv_b(0x11, 0, 8192);
	wr = req(0x10, IBV_WR_SEND, &sge, 0, 3000);
	CHECK(!post_signaled(qa, &wr) && expect(cqa, 0x10, IBV_WC_SUCCESS, IBV_WC_SEND), "SEND completes");
	CHECK(!wait_wc(cqb, &wc) && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		      wc.byte_len == 3000 && !(wc.wc_flags & IBV_WC_WITH_IMM) &&
		      !memcmp(abuf, bbuf, 3000),
	      "SEND: 3000 bytes received intact");

	fill(abuf, 100, 2);
	recv_b(0x13, 0, 8192);
	wr = req(0x12, IBV_WR_SEND_WITH_IMM, &sge, 0, 100);
	wr.imm_data = htonl(0x12345678);
	CHECK(!post_signaled(qa, &wr) && expect(cqa, 0x12, IBV_WC_SUCCESS, IBV_WC_SEND),
	      "SEND_WITH_IMM completes");
	CHECK(!wait_wc(cqb, &wc) && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		      (wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htonl(0x12345678) &&
		      wc.byte_len == 100 && !memcmp(abuf, bbuf, 100),
	      "SEND_WITH_IMM: data and immediate");
}

static void test_rdma(void)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	struct ibv_wc wc;

	fill(abuf, 5000, 3);
	CHECK(write_via(0x20, bmr->rkey, (uintptr_t)bbuf + 8192, 5000, IBV_WC_SUCCESS) &&
		      !memcmp(abuf, bbuf + 8192, 5000),
	      "RDMA_WRITE: 5000 bytes (5 packets) intact");

	fill(abuf, 200, 4);
	recv_b(0x22, 0, 16);
	wr = req(0x21, IBV_WR_RDMA_WRITE_WITH_IMM, &sge, 0, 200);
	wr.imm_data = htonl(0xabcdef01);
	wr.wr.rdma.remote_addr = (uintptr_t)bbuf + 12288;
	wr.wr.rdma.rkey = bmr->rkey;
	CHECK(!post_signaled(qa, &wr) && expect(cqa, 0x21, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE),
	      "RDMA_WRITE_WITH_IMM completes");
	CHECK(!wait_wc(cqb, &wc) && wc.status == IBV_WC_SUCCESS &&
		      wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.imm_data == htonl(0xabcdef01) &&
		      wc.byte_len == 200 && !memcmp(abuf, bbuf + 12288, 200),
	      "RDMA_WRITE_WITH_IMM: data, immediate and byte_len");

	fill(bbuf + 16384, 5000, 5);
	memset(abuf + 8192, 0, 5000);
	wr = req(0x23, IBV_WR_RDMA_READ, &sge, 8192, 5000);
	wr.wr.rdma.remote_addr = (uintptr_t)bbuf + 16384;
	wr.wr.rdma.rkey = bmr->rkey;
	CHECK(!post_signaled(qa, &wr) && expect(cqa, 0x23, IBV_WC_SUCCESS, IBV_WC_RDMA_READ) &&
		      !memcmp(abuf + 8192, bbuf + 16384, 5000),
	      "RDMA_READ: 5000 bytes intact");
}

/*
 * A responder with max_dest_rd_atomic 0 keeps no responder resources: it refuses READ and
 * atomic requests with an invalid request NAK (C rxe does the same), and still takes WRITEs.
 */
static void test_no_responder_resources(void)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr;

	CHECK(!rc_connect(qa, qb->qp_num, &gid, gid_index) &&
		      !rc_connect_rd(qb, qa->qp_num, &gid, gid_index, 0),
	      "responder connected with max_dest_rd_atomic 0");
	drain();
	CHECK(write_via(0x28, bmr->rkey, (uintptr_t)bbuf + 8192, 64, IBV_WC_SUCCESS),
	      "no responder resources: RDMA_WRITE still completes");
	wr = req(0x29, IBV_WR_RDMA_READ, &sge, 8192, 64);
	wr.wr.rdma.remote_addr = (uintptr_t)bbuf + 16384;
	wr.wr.rdma.rkey = bmr->rkey;
	CHECK(!post_signaled(qa, &wr) && expect(cqa, 0x29, IBV_WC_REM_INV_REQ_ERR, 0),
	      "no responder resources: RDMA_READ is a remote invalid request");
	CHECK(!connect_pair(), "reconnect");
}

/*
 * A peer that never answers: A connected to a QP number nobody has, with one retry. Its SEND
 * fails with a retry-exceeded error after two timeouts; rrxe also counts peer_silent and says
 * so in the kernel log (verbs_ops.sh checks both).
 */
static void test_silent_peer(void)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr;

	CHECK(!rc_connect_psn(qa, 0xfffff0, &gid, gid_index, 4, 0, 0, 1),
	      "requester connected to QP 0xfffff0, which does not exist");
	drain();
	wr = req(0x2a, IBV_WR_SEND, &sge, 0, 64);
	CHECK(!post_signaled(qa, &wr) && expect(cqa, 0x2a, IBV_WC_RETRY_EXC_ERR, 0),
	      "silent peer: the SEND fails with a retry-exceeded error");
	CHECK(!connect_pair(), "reconnect");
}

static void test_atomics(void)
{
	uint64_t *target = (uint64_t *)(bbuf + 32768);
	uint64_t *result = (uint64_t *)(abuf + 16384);
	struct ibv_sge sge;
	struct ibv_send_wr wr;

	*target = 7;
	wr = req(0x30, IBV_WR_ATOMIC_CMP_AND_SWP, &sge, 16384, 8);
	wr.wr.atomic.remote_addr = (uintptr_t)target;
	wr.wr.atomic.rkey = bmr->rkey;
	wr.wr.atomic.compare_add = 7;
	wr.wr.atomic.swap = 9;
	CHECK(!post_signaled(qa, &wr) && expect(cqa, 0x30, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP) &&
		      *result == 7 && *target == 9,
	      "CMP_SWAP: returned %llu, memory %llu", (unsigned long long)*result,
	      (unsigned long long)*target);

	wr = req(0x31, IBV_WR_ATOMIC_FETCH_AND_ADD, &sge, 16384, 8);
	wr.wr.atomic.remote_addr = (uintptr_t)target;
	wr.wr.atomic.rkey = bmr->rkey;
	wr.wr.atomic.compare_add = 5;
	CHECK(!post_signaled(qa, &wr) && expect(cqa, 0x31, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD) &&
		      *result == 9 && *target == 14,
	      "FETCH_ADD: returned %llu, memory %llu", (unsigned long long)*result,
	      (unsigned long long)*target);
}

/* ATOMIC_WRITE of 8 bytes to `va` through the extended QP API. */
static int atomic_write(uint64_t id, uint64_t va, const uint8_t value[8])
{
	ibv_wr_start(qax);
	qax->wr_id = id;
	qax->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qax, bmr->rkey, va, value);
	return ibv_wr_complete(qax);
}

static void test_atomic_write(void)
{
	const uint8_t value[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint8_t *target = bbuf + 32776;

	memset(target - 8, 0xee, 24);
	CHECK(!atomic_write(0x40, (uintptr_t)target, value) &&
		      expect(cqa, 0x40, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE) &&
		      !memcmp(target, value, 8) && target[-1] == 0xee && target[8] == 0xee,
	      "ATOMIC_WRITE: the 8 bytes land, nothing around them");
	CHECK(!atomic_write(0x41, (uintptr_t)target + 4, value) &&
		      expect(cqa, 0x41, IBV_WC_REM_INV_REQ_ERR, 0),
	      "ATOMIC_WRITE to a misaligned address: remote invalid request");
	CHECK(!connect_pair(), "reconnect");
}

static int flush(uint64_t id, uint32_t rkey, uint64_t va, uint32_t len, uint8_t type,
		 uint8_t level)
{
	return raw_flush(asq, qa, id, rkey, va, len, type, level);
}

static void test_flush(void)
{
	CHECK(!flush(0x50, bmr->rkey, (uintptr_t)bbuf + 8192, 5000, FLUSH_GLOBAL, FLUSH_RANGE) &&
		      expect(cqa, 0x50, IBV_WC_SUCCESS, WC_FLUSH),
	      "FLUSH of a range, global visibility");
	CHECK(!flush(0x51, bmr->rkey, 0, 0, FLUSH_GLOBAL, FLUSH_MR) &&
		      expect(cqa, 0x51, IBV_WC_SUCCESS, WC_FLUSH),
	      "FLUSH of a whole region");
	CHECK(!flush(0x52, cmr->rkey, (uintptr_t)cbuf, 64, FLUSH_GLOBAL, FLUSH_RANGE) &&
		      expect(cqa, 0x52, IBV_WC_REM_ACCESS_ERR, 0),
	      "FLUSH of a region without IBV_ACCESS_FLUSH_GLOBAL: remote access error");
	CHECK(!connect_pair(), "reconnect");
	CHECK(!flush(0x53, bmr->rkey, (uintptr_t)bbuf + BUF_SIZE - 8, 64, FLUSH_GLOBAL,
		     FLUSH_RANGE) &&
		      expect(cqa, 0x53, IBV_WC_REM_ACCESS_ERR, 0),
	      "FLUSH of a range past the region: remote access error");
	CHECK(!connect_pair(), "reconnect");

	void *p = malloc(4096);
	struct ibv_mr *mr = ibv_reg_mr(pd, p, 4096,
				       IBV_ACCESS_LOCAL_WRITE | ACCESS_FLUSH_PERSISTENT);
	CHECK(!mr, "IBV_ACCESS_FLUSH_PERSISTENT on ordinary memory is refused");
	if (mr)
		ibv_dereg_mr(mr);
	free(p);
	if (strict) {
		/* rxe advertises it and refuses it outside pmem; rrxe has no pmem support. */
		struct ibv_device_attr_ex ax = {};

		CHECK(!ibv_query_device_ex(ctx, NULL, &ax) &&
			      !(ax.device_cap_flags_ex & DEVICE_FLUSH_PERSISTENT),
		      "IB_DEVICE_FLUSH_PERSISTENT is not advertised (flags %#llx)",
		      (unsigned long long)ax.device_cap_flags_ex);
	}
}

static void test_mw_type1(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	uint64_t win = (uintptr_t)bbuf + 40960;
	struct ibv_mw_bind bind = {
		.wr_id = 0x60,
		.send_flags = IBV_SEND_SIGNALED,
		/* With a local right, as rdma-core's own tests bind: accepted, meaningless. */
		.bind_info = { .mr = bmr, .addr = win, .length = 4096,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
						  IBV_ACCESS_LOCAL_WRITE },
	};
	struct ibv_sge sge;
	struct ibv_send_wr wr;

	CHECK(mw, "type 1 MW allocated");
	if (!mw)
		return;
	uint32_t unbound = mw->rkey;
	CHECK(!ibv_bind_mw(qa, mw, &bind) && expect(cqa, 0x60, IBV_WC_SUCCESS, IBV_WC_BIND_MW) &&
		      mw->rkey != unbound,
	      "type 1 bind completes (rkey %#x -> %#x)", unbound, mw->rkey);
	fill(abuf, 4096, 6);
	CHECK(write_via(0x61, mw->rkey, win, 4096, IBV_WC_SUCCESS) &&
		      !memcmp(abuf, bbuf + 40960, 4096),
	      "RDMA_WRITE through the type 1 window");
	memset(abuf + 8192, 0, 1000);
	wr = req(0x62, IBV_WR_RDMA_READ, &sge, 8192, 1000);
	wr.wr.rdma.remote_addr = win + 3000;
	wr.wr.rdma.rkey = mw->rkey;
	CHECK(!post_signaled(qa, &wr) && expect(cqa, 0x62, IBV_WC_SUCCESS, IBV_WC_RDMA_READ) &&
		      !memcmp(abuf + 8192, bbuf + 40960 + 3000, 1000),
	      "RDMA_READ through the type 1 window");
	CHECK(ibv_dereg_mr(bmr) != 0, "a region with a bound window is not deregistered");

	if (strict) {
		CHECK(write_via(0x63, mw->rkey, win + 4000, 200, IBV_WC_REM_ACCESS_ERR),
		      "RDMA_WRITE across the window's end: remote access error");
		CHECK(!connect_pair(), "reconnect");
	}

	/*
	 * Rebind read-only elsewhere: the old rkey dies, the new one refuses writes (the local
	 * write right the bind names grants no remote write).
	 */
	uint32_t old = mw->rkey;
	bind.wr_id = 0x64;
	bind.bind_info.addr = win + 4096;
	bind.bind_info.length = 1024;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE;
	CHECK(!ibv_bind_mw(qa, mw, &bind) && expect(cqa, 0x64, IBV_WC_SUCCESS, IBV_WC_BIND_MW),
	      "type 1 rebind completes");
	CHECK(write_via(0x65, old, win, 8, IBV_WC_REM_ACCESS_ERR),
	      "the rkey before the rebind is dead");
	CHECK(!connect_pair(), "reconnect");
	CHECK(write_via(0x66, mw->rkey, win + 4096, 8, IBV_WC_REM_ACCESS_ERR),
	      "RDMA_WRITE through a read-only window: remote access error");
	CHECK(!connect_pair(), "reconnect");

	/* A zero-length bind unbinds. */
	bind.wr_id = 0x67;
	/* librxe 44 dereferences the MR even for an unbind: name it, with length 0. */
	bind.bind_info = (struct ibv_mw_bind_info){ .mr = bmr };
	CHECK(!ibv_bind_mw(qa, mw, &bind) && expect(cqa, 0x67, IBV_WC_SUCCESS, IBV_WC_BIND_MW),
	      "zero-length bind (unbind) completes");
	wr = req(0x68, IBV_WR_RDMA_READ, &sge, 8192, 8);
	wr.wr.rdma.remote_addr = win + 4096;
	wr.wr.rdma.rkey = mw->rkey;
	CHECK(!post_signaled(qa, &wr) && expect(cqa, 0x68, IBV_WC_REM_ACCESS_ERR, 0),
	      "an unbound window refuses access");
	CHECK(!connect_pair(), "reconnect");
	CHECK(!ibv_dealloc_mw(mw), "type 1 MW deallocated");
}

/* Binds type 2 window `mw` on `qp` (completion on `c`) to [addr, addr + len). */
static int bind2(struct ibv_qp *qp, struct ibv_cq *c, struct ibv_mw *mw, uint64_t id,
		 uint64_t addr, uint64_t len, unsigned int access)
{
	struct ibv_send_wr wr = { .wr_id = id, .opcode = IBV_WR_BIND_MW };
	uint32_t rkey = ibv_inc_rkey(mw->rkey);

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = bmr, .addr = addr,
							  .length = len,
							  .mw_access_flags = access };
	if (post_signaled(qp, &wr) || !expect(c, id, IBV_WC_SUCCESS, IBV_WC_BIND_MW))
		return -1;
	mw->rkey = rkey;
	return 0;
}

static void test_mw_type2(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	uint64_t win = (uintptr_t)bbuf + 49152;
	unsigned int rw = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	struct ibv_wc wc;

	CHECK(mw, "type 2 MW allocated");
	if (!mw)
		return;
	CHECK(write_via(0x70, mw->rkey, win, 8, IBV_WC_REM_ACCESS_ERR),
	      "a type 2 window is unusable before its first bind");
	CHECK(!connect_pair(), "reconnect");
	CHECK(!bind2(qb, cqb, mw, 0x71, win, 4096, rw | IBV_ACCESS_LOCAL_WRITE),
	      "type 2 bind on the responder's QP (with a local right, as rdma-core binds)");
	fill(abuf, 4096, 8);
	CHECK(write_via(0x72, mw->rkey, win, 4096, IBV_WC_SUCCESS) &&
		      !memcmp(abuf, bbuf + 49152, 4096),
	      "RDMA_WRITE through the type 2 window");
	if (strict) {
		CHECK(write_via(0x73, mw->rkey, win - 8, 16, IBV_WC_REM_ACCESS_ERR),
		      "RDMA_WRITE starting before the window: remote access error");
		CHECK(!connect_pair(), "reconnect");
	}

	/* SEND_WITH_INV invalidates it remotely. */
	recv_b(0x75, 0, 64);
	wr = req(0x74, IBV_WR_SEND_WITH_INV, &sge, 0, 16);
	wr.invalidate_rkey = mw->rkey;
	CHECK(!post_signaled(qa, &wr) && expect(cqa, 0x74, IBV_WC_SUCCESS, IBV_WC_SEND),
	      "SEND_WITH_INV completes");
	CHECK(!wait_wc(cqb, &wc) && wc.status == IBV_WC_SUCCESS &&
		      (!strict || (wc.wc_flags & IBV_WC_WITH_INV)) &&
		      wc.invalidated_rkey == mw->rkey,
	      "SEND_WITH_INV: the receive reports the invalidated rkey (status %d, flags %#x, "
	      "rkey %#x)",
	      wc.status, wc.wc_flags, wc.invalidated_rkey);
	CHECK(write_via(0x76, mw->rkey, win, 8, IBV_WC_REM_ACCESS_ERR),
	      "the remotely invalidated window refuses access");
	CHECK(!connect_pair(), "reconnect");

	/* Rebind zero-based, then LOCAL_INV. */
	CHECK(!bind2(qb, cqb, mw, 0x77, win, 4096, rw | IBV_ACCESS_ZERO_BASED),
	      "zero-based rebind after invalidation");
	fill(abuf, 16, 9);
	CHECK(write_via(0x78, mw->rkey, 0x100, 16, IBV_WC_SUCCESS) &&
		      !memcmp(abuf, bbuf + 49152 + 0x100, 16),
	      "RDMA_WRITE at zero-based address 0x100 lands 0x100 into the window");
	wr = (struct ibv_send_wr){ .wr_id = 0x79, .opcode = IBV_WR_LOCAL_INV,
				   .invalidate_rkey = mw->rkey };
	CHECK(!post_signaled(qb, &wr) && expect(cqb, 0x79, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV),
	      "LOCAL_INV of the type 2 window");
	CHECK(write_via(0x7a, mw->rkey, 0x100, 8, IBV_WC_REM_ACCESS_ERR),
	      "the locally invalidated window refuses access");
	CHECK(!connect_pair(), "reconnect");

	/* Bound on A, the window is not B's: requests arriving on B cannot use it. */
	CHECK(!bind2(qa, cqa, mw, 0x7b, win, 4096, rw), "type 2 bind on the requester's QP");
	CHECK(write_via(0x7c, mw->rkey, win, 8, IBV_WC_REM_ACCESS_ERR),
	      "another QP's type 2 window refuses access");
	CHECK(!connect_pair(), "reconnect");
	CHECK(!ibv_dealloc_mw(mw), "type 2 MW deallocated while bound");
}

static void test_local_inv_mr(void)
{
	struct ibv_send_wr wr = { .wr_id = 0x80, .opcode = IBV_WR_LOCAL_INV,
				  .invalidate_rkey = cmr->rkey };
	struct ibv_wc wc;

	/* User MRs are not fast-registration MRs: they cannot be invalidated. */
	CHECK(!post_signaled(qa, &wr) && !wait_wc(cqa, &wc) && wc.wr_id == 0x80 &&
		      wc.status != IBV_WC_SUCCESS,
	      "LOCAL_INV of an ordinary MR fails (%s)", ibv_wc_status_str(wc.status));
	CHECK(!connect_pair(), "reconnect");
}

/*
 * A process that exits with windows of both types bound: the kernel's cleanup must destroy
 * the region after its windows (its first attempt is refused) without a report.
 */
static void test_exit_with_bound_windows(void)
{
	pid_t pid = fork();
	int status = -1;

	if (pid == 0) {
		/* Its own context: objects made on the parent's would outlive the child. */
		struct ibv_context *cx = open_device(ibv_get_device_name(ctx->device));
		struct ibv_pd *p = cx ? ibv_alloc_pd(cx) : NULL;
		struct ibv_cq *c = cx ? ibv_create_cq(cx, 8, NULL, NULL, 0) : NULL;
		void *mem = aligned_alloc(4096, 8192);
		struct ibv_mr *m = ibv_reg_mr(p, mem, 8192,
					      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						      IBV_ACCESS_MW_BIND);
		struct ibv_qp_init_attr ia = { .send_cq = c, .recv_cq = c, .qp_type = IBV_QPT_RC,
					       .cap = { .max_send_wr = 4, .max_recv_wr = 1,
							.max_send_sge = 1, .max_recv_sge = 1 } };
		struct ibv_qp *q = p && c && m ? ibv_create_qp(p, &ia) : NULL;
		struct ibv_mw *w1 = p ? ibv_alloc_mw(p, IBV_MW_TYPE_1) : NULL;
		struct ibv_mw *w2 = p ? ibv_alloc_mw(p, IBV_MW_TYPE_2) : NULL;
		struct ibv_mw_bind b = { .wr_id = 1, .send_flags = IBV_SEND_SIGNALED,
					 .bind_info = { .mr = m, .addr = (uintptr_t)mem,
							.length = 4096,
							.mw_access_flags = IBV_ACCESS_REMOTE_WRITE } };
		struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_BIND_MW };

		if (!q || !w1 || !w2 || rc_connect(q, q->qp_num, &gid, gid_index) ||
		    ibv_bind_mw(q, w1, &b) || !expect(c, 1, IBV_WC_SUCCESS, IBV_WC_BIND_MW))
			_exit(1);
		wr.bind_mw.mw = w2;
		wr.bind_mw.rkey = ibv_inc_rkey(w2->rkey);
		wr.bind_mw.bind_info = b.bind_info;
		wr.bind_mw.bind_info.addr += 4096;
		_exit(post_signaled(q, &wr) || !expect(c, 2, IBV_WC_SUCCESS, IBV_WC_BIND_MW) ? 1 : 0);
	}
	waitpid(pid, &status, 0);
	CHECK(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "a process exits with type 1 and type 2 windows bound to its region");
}

/*
 * The SRQ limit: armed at 4 with 6 receives posted, three SENDs from A to a QP on the SRQ leave
 * 3, and IBV_EVENT_SRQ_LIMIT_REACHED arrives once, disarming the limit (the driver raises it
 * from a work item, outside the receiving QP's locks).
 */
static void test_srq_limit(void)
{
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &si);
	struct ibv_qp_init_attr qi = { .send_cq = cqb, .recv_cq = cqb, .srq = srq,
				       .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_send_sge = 1 } };
	struct ibv_qp *qs = NULL, *qr = NULL;
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	struct ibv_srq_attr a = { .srq_limit = 4 };
	struct ibv_wc wc;
	int events = 0, sent = 0;

	CHECK(srq, "SRQ of 8");
	if (!srq)
		return;
	qr = ibv_create_qp(pd, &qi);
	qi.srq = NULL;
	qi.send_cq = qi.recv_cq = cqa;
	qi.cap.max_recv_wr = 4;
	qi.cap.max_recv_sge = 1;
	qs = ibv_create_qp(pd, &qi);
	CHECK(qs && qr && !rc_connect(qs, qr->qp_num, &gid, gid_index) &&
		      !rc_connect(qr, qs->qp_num, &gid, gid_index),
	      "a QP on the SRQ connected to a sender");
	for (int i = 0; i < 6; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)bbuf + i * 256, .length = 256,
				       .lkey = bmr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 0x60 + i, .sg_list = &sge, .num_sge = 1 }, *bad;

		CHECK(!ibv_post_srq_recv(srq, &wr, &bad), "SRQ receive %d posted", i);
	}
	CHECK(!ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT), "SRQ limit armed at 4");
	for (int i = 0; qs && qr && i < 3; i++) {
		struct ibv_sge sge;
		struct ibv_send_wr wr = req(0x70 + i, IBV_WR_SEND, &sge, 0, 64);

		sent += !post_signaled(qs, &wr) && expect(cqa, 0x70 + i, IBV_WC_SUCCESS, IBV_WC_SEND) &&
			!wait_wc(cqb, &wc) && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV;
	}
	CHECK(sent == 3, "three SENDs received through the SRQ (%d)", sent);
	while (poll(&p, 1, 3000) > 0 && !ibv_get_async_event(ctx, &ev)) {
		if (ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && ev.element.srq == srq)
			events++;
		ibv_ack_async_event(&ev);
	}
	CHECK(events == 1, "IBV_EVENT_SRQ_LIMIT_REACHED once (%d)", events);
	CHECK(!ibv_query_srq(srq, &a) && a.srq_limit == 0, "limit disarmed (%u)", a.srq_limit);
	if (qs)
		ibv_destroy_qp(qs);
	if (qr)
		ibv_destroy_qp(qr);
	CHECK(!ibv_destroy_srq(srq), "SRQ destroyed");
	drain();
}

int main(int argc, char **argv)
{
	int r = test_setup(argc, argv);

	if (r)
		return r;
	abuf = aligned_alloc(4096, BUF_SIZE);
	bbuf = aligned_alloc(4096, BUF_SIZE);
	cbuf = aligned_alloc(4096, 4096);
	amr = ibv_reg_mr(pd, abuf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	bmr = ibv_reg_mr(pd, bbuf, BUF_SIZE,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND |
				 ACCESS_FLUSH_GLOBAL);
	cmr = ibv_reg_mr(pd, cbuf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(amr && bmr && cmr, "MRs (one with IBV_ACCESS_FLUSH_GLOBAL)");
	cqa = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	cqb = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = cqa, .recv_cq = cqa, .qp_type = IBV_QPT_RC, .pd = pd,
		.cap = { .max_send_wr = 32, .max_recv_wr = 8, .max_send_sge = 4,
			 .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_SEND,
	};
	qa = ibv_create_qp_ex(ctx, &ia);
	CHECK(qa, "requester QP with IBV_QP_EX_WITH_ATOMIC_WRITE");
	asq = find_ring(9, NULL);
	ia.send_cq = ia.recv_cq = cqb;
	ia.cap.max_send_sge = 1;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD;
	qb = ibv_create_qp_ex(ctx, &ia);
	CHECK(qb && asq, "responder QP; the requester's send ring is mapped");
	if (!amr || !bmr || !cmr || !qa || !qb || !asq)
		return 1;
	qax = ibv_qp_to_qp_ex(qa);
	CHECK(!connect_pair(), "QPs %u and %u connected", qa->qp_num, qb->qp_num);

	test_send();
	test_rdma();
	test_no_responder_resources();
	test_silent_peer();
	test_atomics();
	test_atomic_write();
	test_flush();
	test_mw_type1();
	test_mw_type2();
	test_local_inv_mr();
	test_exit_with_bound_windows();
	test_srq_limit();

	CHECK(!ibv_destroy_qp(qa) && !ibv_destroy_qp(qb), "QPs destroyed");
	CHECK(!ibv_dereg_mr(amr) && !ibv_dereg_mr(bmr) && !ibv_dereg_mr(cmr),
	      "MRs deregistered once their windows are gone");
	ibv_destroy_cq(cqa);
	ibv_destroy_cq(cqb);
	printf("# %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
