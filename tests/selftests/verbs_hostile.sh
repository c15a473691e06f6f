#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Hostile user rings (tests/verbs/verbs_hostile.c): garbage WQEs, REG_MR from user space, huge
# num_sge, wild producer indices and corrupted ring headers become error completions and an
# errored QP; WRs posted in ERR are flushed; the kernel stays clean (vm-run checks the log).
. "$(dirname "$0")/lib.sh"
trap cleanup_driver EXIT
is_rrxe || skip "needs the rrxe requester checks (C rxe reads user WQEs unchecked)"
need_bin verbs_hostile
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
check "IPv4 GID" wait_for 20 gid_index "$DEV" "ffff:0a00:020f"
"$BIN/verbs_hostile" "$DEV" "$(gid_index "$DEV" ffff:0a00:020f)" "${ROUNDS:-50}" || fail "verbs_hostile"
exit 0
