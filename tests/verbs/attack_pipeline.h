/* SPDX-License-Identifier: GPL-2.0 */
/*
 * verbs_attack's subtests on the bounds of the packet pipeline itself, which a user shapes by
 * how it connects its QPs. Included once, by verbs_attack.c (after attack.h).
 */
#ifndef RRXE_VERBS_ATTACK_PIPELINE_H
#define RRXE_VERBS_ATTACK_PIPELINE_H

#define RING_QPS 48
#define RING_SENDS 400

struct ring_qp {
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	int done, errors;
};

/* RESET to RTS towards QPN `dest`, PSNs 0, one-second-ish timeout, three retries. */
static int ring_connect(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					  IBV_QP_ACCESS_FLAGS))
		return -1;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
				  .dest_qp_num = dest, .max_dest_rd_atomic = 1,
				  .min_rnr_timer = 1 };
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					  IBV_QP_MIN_RNR_TIMER))
		return -1;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 12, .retry_cnt = 3,
				  .rnr_retry = 3, .max_rd_atomic = 1 };
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
					 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					 IBV_QP_MAX_QP_RD_ATOMIC);
}

/*
 * S1, unbounded recursion: RC QPs in a ring, each sending to the next, so that each one's
 * responder acknowledges to the one after (a QP answers its own destination, whoever sent).
 * All start at PSN 0 and send alike, so the ACKs a QP receives fall in its own window of
 * unacknowledged PSNs: each frees the window of a QP that then sends on, to the next, whose
 * ACK frees the next... On one device every such packet is delivered by loopback; a driver
 * that runs the receiving QP's work inline in the delivery nests one call per hop, around
 * the ring (a kernel stack overflow). Every send must end (success, or a transport retry
 * error: the acknowledgements are crossed) within 60 s, and every QP be destroyed.
 */
static void qp_ring(void)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = RING_SENDS,
						.max_recv_wr = RING_SENDS, .max_send_sge = 1,
						.max_recv_sge = 1 } };
	static struct ring_qp r[RING_QPS];
	struct ibv_sge sge = { .addr = (uintptr_t)sbuf, .length = 0, .lkey = mr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED },
			   *sbad;
	struct ibv_wc wc[32];
	int ok = 1, posted = 0, done = 0, errors = 0;
	double t0;

	memset(r, 0, sizeof(r));
	for (int i = 0; i < RING_QPS && ok; i++) {
		r[i].scq = ibv_create_cq(ctx, RING_SENDS, NULL, NULL, 0);
		r[i].rcq = ibv_create_cq(ctx, RING_SENDS, NULL, NULL, 0);
		ia.send_cq = r[i].scq;
		ia.recv_cq = r[i].rcq;
		r[i].qp = r[i].scq && r[i].rcq ? ibv_create_qp(pd, &ia) : NULL;
		ok = r[i].qp != NULL;
	}
	CHECK(ok, "%d RC QPs", RING_QPS);
	for (int i = 0; i < RING_QPS && ok; i++)
		ok = !ring_connect(r[i].qp, r[(i + 1) % RING_QPS].qp->qp_num);
	CHECK(ok, "connected in a ring, each to the next");
	for (int i = 0; i < RING_QPS && ok; i++)
		for (int k = 0; k < RING_SENDS && ok; k++)
			ok = !ibv_post_recv(r[i].qp, &rwr, &rbad);
	CHECK(ok, "%d receives posted on each", RING_SENDS);
	/* Posted round-robin, a batch at a time, so that every window is busy when ACKs come. */
	for (int k = 0; k < RING_SENDS && ok; k += 50)
		for (int i = 0; i < RING_QPS && ok; i++)
			for (int j = k; j < k + 50 && j < RING_SENDS && ok; j++) {
				swr.wr_id = j;
				ok = !ibv_post_send(r[i].qp, &swr, &sbad);
				posted += ok;
			}
	CHECK(ok, "%d zero-length SENDs posted", posted);
	t0 = now();
	while (done < posted && now() - t0 < 60) {
		int progress = 0;

		for (int i = 0; i < RING_QPS; i++) {
			int n = ibv_poll_cq(r[i].scq, 32, wc);

			for (int k = 0; k < n; k++) {
				if (wc[k].status != IBV_WC_SUCCESS) {
					r[i].errors++;
					errors++;
				}
				if (wc[k].status != IBV_WC_SUCCESS &&
				    wc[k].status != IBV_WC_RETRY_EXC_ERR &&
				    wc[k].status != IBV_WC_WR_FLUSH_ERR)
					CHECK(0, "QP %d: send %llu status %s", i,
					      (unsigned long long)wc[k].wr_id,
					      ibv_wc_status_str(wc[k].status));
			}
			r[i].done += n > 0 ? n : 0;
			done += n > 0 ? n : 0;
			progress |= n > 0;
			while (ibv_poll_cq(r[i].rcq, 32, wc) > 0)
				;
		}
		if (!progress)
			usleep(1000);
	}
	printf("# qp_ring: %d of %d sends ended in %.1f s (%d in error)\n", done, posted,
	       now() - t0, errors);
	CHECK(done == posted, "every send ended within 60 s");
	for (int i = 0; i < RING_QPS; i++) {
		if (r[i].qp && ibv_destroy_qp(r[i].qp))
			CHECK(0, "destroy QP %d", i);
		if (r[i].scq)
			ibv_destroy_cq(r[i].scq);
		if (r[i].rcq)
			ibv_destroy_cq(r[i].rcq);
	}
}

#endif /* RRXE_VERBS_ATTACK_PIPELINE_H */
