#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Completion queues through the stock librxe provider (tests/verbs/verbs_cq.c): create, the
# mmap'ed ring, resize, arming, destroy, error paths, hostile mmap calls, cleanup on close; and
# CQ overrun (tests/verbs/overrun.h): IBV_EVENT_CQ_ERR, the QPs that completed to it, teardown.
. "$(dirname "$0")/lib.sh"
trap cleanup_driver EXIT
need_bin verbs_cq
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
check "IPv4 GID" wait_for 20 gid_index "$DEV" "ffff:0a00:020f"
# C rxe leaves a QP whose send completion did not fit in RTS, and reports no QP event; see
# overrun.h.
is_rrxe || compat=--rxe-compatible
"$BIN/verbs_cq" "$DEV" "$(gid_index "$DEV" ffff:0a00:020f)" ${compat:-} || fail "verbs_cq"
exit 0
