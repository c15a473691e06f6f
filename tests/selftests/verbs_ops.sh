#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# One small transfer of every RC operation through librxe (tests/verbs/verbs_ops.c), each
# checked byte for byte and by its completion: SEND (+IMM, +INV), RDMA WRITE (+IMM), RDMA
# READ, CMP_SWAP, FETCH_ADD, ATOMIC_WRITE, FLUSH, LOCAL_INV, BIND_MW of type 1 and type 2
# windows; then the refusals (rights, moved and invalidated windows, bounds).
. "$(dirname "$0")/lib.sh"
trap cleanup_driver EXIT
need_bin verbs_ops
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
check "IPv4 GID" wait_for 20 gid_index "$DEV" "ffff:0a00:020f"
# rrxe checks window bounds; C rxe checks only the region's (see verbs_ops.c).
is_rrxe || compat=--rxe-compatible
"$BIN/verbs_ops" "$DEV" "$(gid_index "$DEV" ffff:0a00:020f)" ${compat:-} || fail "verbs_ops"
exit 0
