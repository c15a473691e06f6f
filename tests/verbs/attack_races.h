/* SPDX-License-Identifier: GPL-2.0 */
/*
 * verbs_attack's subtests on object lifetimes and ownership: destroys racing retransmission
 * timers, memory-window binds racing the deregistration of their region, address handles of
 * another protection domain. Included once, by verbs_attack.c (after attack.h).
 */
#ifndef RRXE_VERBS_ATTACK_RACES_H
#define RRXE_VERBS_ATTACK_RACES_H

/*
 * Destroy against a re-arming retransmission timer: QPs connected to a QP number nobody has
 * keep retransmitting (their timer re-armed by every pass); each is destroyed mid-retry.
 * A destroy that waits for a timer re-armed behind its back takes until that timer fires
 * (seconds, with backoff): every destroy must take well under a second.
 */
static void destroy_retrying(void)
{
	double worst = 0;
	int ok = 1;

	for (int i = 0; i < 20 && ok; i++) {
		struct ibv_qp_cap cap = { .max_send_wr = 32, .max_recv_wr = 4, .max_send_sge = 1,
					  .max_recv_sge = 1 };
		struct ibv_sge sge = { .addr = (uintptr_t)sbuf, .length = 64, .lkey = mr->lkey };
		struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND },
				   *bad;
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS, .timeout = 1, .retry_cnt = 7,
					 .rnr_retry = 7, .max_rd_atomic = 4 };
		struct lp l;
		double t0;

		if (lp_create(&l, 0, cap)) {
			CHECK(0, "QP %d created", i);
			lp_destroy(&l);
			return;
		}
		/* Towards a QP number no QP has: nothing is ever acknowledged. */
		struct ibv_qp_attr r = { .qp_state = IBV_QPS_RESET };
		ok = !ibv_modify_qp(l.qp, &r, IBV_QP_STATE);
		r = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1 };
		ok = ok && !ibv_modify_qp(l.qp, &r, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
							  IBV_QP_ACCESS_FLAGS);
		r = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
					  .dest_qp_num = 0xfffff0, .max_dest_rd_atomic = 4,
					  .min_rnr_timer = 1 };
		r.ah_attr.is_global = 1;
		r.ah_attr.grh.dgid = gid;
		r.ah_attr.grh.sgid_index = gid_index;
		r.ah_attr.grh.hop_limit = 64;
		r.ah_attr.port_num = 1;
		ok = ok && !ibv_modify_qp(l.qp, &r, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
							  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
							  IBV_QP_MAX_DEST_RD_ATOMIC |
							  IBV_QP_MIN_RNR_TIMER);
		ok = ok && !ibv_modify_qp(l.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
							  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
							  IBV_QP_MAX_QP_RD_ATOMIC);
		for (int k = 0; ok && k < 16; k++)
			ok = !ibv_post_send(l.qp, &wr, &bad);
		CHECK(ok, "QP %d retransmits towards QPN 0xfffff0", i);
		/* Into the retries, at a different moment each time. */
		usleep(20000 + 7000 * (i % 10));
		t0 = now();
		ok = ok && !ibv_destroy_qp(l.qp);
		l.qp = NULL;
		worst = MAX(worst, now() - t0);
		lp_destroy(&l);
	}
	CHECK(ok && worst < 1, "20 retransmitting QPs destroyed, the slowest in %.3f s (limit 1 s)",
	      worst);
}

/*
 * A memory window bind racing the deregistration of its region: a bind that lands on a region
 * being deregistered must never give access to the region registered next (which may get the
 * same index and key byte), nor to the dead one's memory. Through the window's rkey a WRITE
 * succeeds only while the window's own region is registered, and never changes the new one.
 */
static void mw_bind_dereg(void)
{
	struct ibv_qp_cap cap = { .max_send_wr = 64, .max_recv_wr = 4, .max_send_sge = 1,
				  .max_recv_sge = 1 };
	uint8_t *a = aligned_alloc(4096, 8192), *b = aligned_alloc(4096, 8192);
	struct lp l;
	int leaks = 0, raced = 0, rounds = 0;

	if (!a || !b || lp_create(&l, 0, cap)) {
		CHECK(0, "buffers and a QP");
		free(a);
		free(b);
		lp_destroy(&l);
		return;
	}
	/* The QP grants remote writes; windows need them in the QP too. */
	for (int i = 0; i < 200; i++) {
		struct ibv_mr *m = ibv_reg_mr(pd, a, 8192, IBV_ACCESS_LOCAL_WRITE |
							   IBV_ACCESS_MW_BIND);
		struct ibv_mw *mw = m ? ibv_alloc_mw(pd, IBV_MW_TYPE_1) : NULL;
		struct ibv_mw_bind bind = { .wr_id = 0x70, .send_flags = IBV_SEND_SIGNALED };
		struct ibv_sge sge = { .addr = (uintptr_t)sbuf, .length = 64, .lkey = mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 0x71, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;
		struct ibv_mr *m2;
		struct ibv_wc wc;
		int dereg;

		if (!mw) {
			CHECK(0, "MR and MW %d", i);
			if (m)
				ibv_dereg_mr(m);
			break;
		}
		rounds++;
		bind.bind_info = (struct ibv_mw_bind_info){ .mr = m, .addr = (uintptr_t)a,
							    .length = 4096,
							    .mw_access_flags =
								    IBV_ACCESS_REMOTE_WRITE };
		/* The bind is executed by the kernel after this returns: race it. */
		if (ibv_bind_mw(l.qp, mw, &bind)) {
			CHECK(0, "bind %d posted", i);
			ibv_dealloc_mw(mw);
			ibv_dereg_mr(m);
			break;
		}
		dereg = ibv_dereg_mr(m);
		if (wait_wc(l.scq, &wc)) {
			CHECK(0, "bind %d completes", i);
			break;
		}
		if (dereg) {
			/* The bind won (EBUSY): the ordinary case. Unbind and retry. */
			ibv_dealloc_mw(mw);
			ibv_dereg_mr(m);
			continue;
		}
		raced += wc.status == IBV_WC_SUCCESS;
		/* A new region over other memory, maybe under the dead one's key. */
		memset(b, 0x11, 8192);
		m2 = ibv_reg_mr(pd, b, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						     IBV_ACCESS_MW_BIND);
		fill(sbuf, 64, i);
		wr.wr.rdma.remote_addr = (uintptr_t)a;
		wr.wr.rdma.rkey = mw->rkey;
		if (ibv_post_send(l.qp, &wr, &bad) || wait_wc(l.scq, &wc)) {
			CHECK(0, "write %d through the window", i);
			break;
		}
		for (int k = 0; k < 8192; k++)
			leaks += b[k] != 0x11;
		leaks += wc.status == IBV_WC_SUCCESS;
		if (wc.status != IBV_WC_SUCCESS) {
			/* The error moved the QP to ERR: back to RTS for the next round. */
			lp_drain(&l);
			lp_connect(&l, IBV_MTU_1024);
		}
		ibv_dealloc_mw(mw);
		if (m2)
			ibv_dereg_mr(m2);
	}
	printf("# %d rounds, %d binds completed on a deregistered region\n", rounds, raced);
	CHECK(!leaks, "no write through a window of a deregistered region (%d bytes or writes)",
	      leaks);
	lp_destroy(&l);
	free(a);
	free(b);
}

/* A UD QP of `p` in RTS (qkey 0x11111111), on `cq` for both queues. */
static struct ibv_qp *ud_qp(struct ibv_pd *p, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111 };
	struct ibv_qp *qp = ibv_create_qp(p, &ia);

	if (!qp)
		return NULL;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		goto fail;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		goto fail;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		goto fail;
	return qp;
fail:
	ibv_destroy_qp(qp);
	return NULL;
}

/*
 * An address handle is usable only by QPs of its own protection domain: a UD send of a QP of
 * one PD through an AH of another (librxe names AHs by number in the WQE, so any number can
 * be written there) completes in error and sends nothing.
 */
static void ah_other_pd(void)
{
	struct ibv_pd *other = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_mr *omr = other ? ibv_reg_mr(other, rbuf, 4096, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_ah_attr av = { .is_global = 1, .port_num = 1 };
	struct ibv_qp *sender = NULL, *receiver = NULL;
	struct ibv_ah *ah = NULL;
	struct ibv_wc wc;
	int sent_ok = 0, arrived = 0;

	av.grh.dgid = gid;
	av.grh.sgid_index = gid_index;
	av.grh.hop_limit = 64;
	if (omr && cq) {
		sender = ud_qp(pd, cq);
		receiver = ud_qp(other, cq);
		ah = ibv_create_ah(other, &av);
	}
	CHECK(sender && receiver && ah, "UD QPs in two PDs, an AH in the receiver's");
	if (sender && receiver && ah) {
		struct ibv_sge rs = { .addr = (uintptr_t)rbuf, .length = 4096, .lkey = omr->lkey };
		struct ibv_recv_wr rw = { .wr_id = 0x90, .sg_list = &rs, .num_sge = 1 }, *rbad;
		struct ibv_sge ss = { .addr = (uintptr_t)sbuf, .length = 64, .lkey = mr->lkey };
		struct ibv_send_wr sw = { .wr_id = 0x91, .sg_list = &ss, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
				   *sbad;

		sw.wr.ud.ah = ah;
		sw.wr.ud.remote_qpn = receiver->qp_num;
		sw.wr.ud.remote_qkey = 0x11111111;
		CHECK(!ibv_post_recv(receiver, &rw, &rbad), "receive posted");
		if (!ibv_post_send(sender, &sw, &sbad)) {
			/* Both completions, if any, within 2 s. */
			for (int i = 0; i < 2 && !wait_wc_for(cq, &wc, 2); i++) {
				if (wc.wr_id == 0x91)
					sent_ok = wc.status == IBV_WC_SUCCESS;
				if (wc.wr_id == 0x90)
					arrived = 1;
			}
		}
	}
	CHECK(!sent_ok && !arrived,
	      "a send through another PD's AH fails and delivers nothing (sent %d, arrived %d)",
	      sent_ok, arrived);
	if (sender)
		ibv_destroy_qp(sender);
	if (receiver)
		ibv_destroy_qp(receiver);
	if (ah)
		ibv_destroy_ah(ah);
	if (omr)
		ibv_dereg_mr(omr);
	if (cq)
		ibv_destroy_cq(cq);
	if (other)
		ibv_dealloc_pd(other);
}

#endif /* RRXE_VERBS_ATTACK_RACES_H */
