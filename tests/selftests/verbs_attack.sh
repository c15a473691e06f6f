#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Attacks through the uverbs ABI and the mapped rings (tests/verbs/verbs_attack.c): POST_SEND,
# POST_RECV and POST_SRQ_RECV write()s with work requests naming kernel memory for user objects,
# stale kernel heap in query_qp's alternate path, a flush racing a producer index that keeps
# moving, byte_len of a multi-packet RDMA WRITE with immediate, a malformed receive WQE, object
# lifetimes, QPs in a ring, and answers forged into a victim's connection at a PSN it never sent
# (a READ response, an atomic ACK, an ACK: the victim's SENDs must still reach its peer).
# VERBS_ATTACK (environment) names the subtests to run, e.g. "query_qp_alt"; default all.
# ERR_ROUNDS (environment) sets err_race's rounds (default 40, random seed when set: make soak).
. "$(dirname "$0")/lib.sh"
trap cleanup_driver EXIT
need_bin verbs_attack
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
check "IPv4 GID" wait_for 20 gid_index "$DEV" "ffff:0a00:020f"
# C rxe reads user receive WQEs unchecked (bad_recv_wqe is skipped) and walks its send ring in
# RTS unchecked (flush_lockup's race starts in ERR); see verbs_attack.c.
is_rrxe || compat=--rxe-compatible
# shellcheck disable=SC2086
"$BIN/verbs_attack" "$DEV" "$(gid_index "$DEV" ffff:0a00:020f)" ${compat:-} ${VERBS_ATTACK:-} ||
	fail "verbs_attack"
exit 0
