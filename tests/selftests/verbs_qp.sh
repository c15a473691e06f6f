#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Queue pairs through librxe (tests/verbs/verbs_qp.c): creation and capability rounding,
# over-limit capabilities, the IBA state machine for RC/UC/UD with illegal transitions, missing
# and out-of-range attributes, query_qp, PD/CQ with live children, cleanup on close.
. "$(dirname "$0")/lib.sh"
trap cleanup_driver EXIT
need_bin verbs_qp
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
check "IPv4 GID" wait_for 20 gid_index "$DEV" "ffff:0a00:020f"
# rrxe is stricter than the C rxe in a few places (see verbs_qp.c); the oracle skips those.
is_rrxe || compat=--rxe-compatible
"$BIN/verbs_qp" "$DEV" "$(gid_index "$DEV" ffff:0a00:020f)" ${compat:-} || fail "verbs_qp"
exit 0
