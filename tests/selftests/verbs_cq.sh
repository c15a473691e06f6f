#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Completion queues through the stock librxe provider (tests/verbs/verbs_cq.c): create, the
# mmap'ed ring, resize, arming, destroy, error paths, hostile mmap calls, cleanup on close.
. "$(dirname "$0")/lib.sh"
trap cleanup_driver EXIT
need_bin verbs_cq
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
"$BIN/verbs_cq" "$DEV" || fail "verbs_cq"
exit 0
