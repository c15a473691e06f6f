#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# One small transfer of every RC operation through librxe (tests/verbs/verbs_ops.c), each
# checked byte for byte and by its completion: SEND (+IMM, +INV), RDMA WRITE (+IMM), RDMA
# READ, CMP_SWAP, FETCH_ADD, ATOMIC_WRITE, FLUSH, LOCAL_INV, BIND_MW of type 1 and type 2
# windows; then the refusals (rights, moved and invalidated windows, bounds), and a peer that
# never answers (rrxe counts it and says so in the kernel log).
. "$(dirname "$0")/lib.sh"
trap cleanup_driver EXIT
need_bin verbs_ops
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
check "IPv4 GID" wait_for 20 gid_index "$DEV" "ffff:0a00:020f"
# rrxe checks window bounds; C rxe checks only the region's (see verbs_ops.c).
is_rrxe || compat=--rxe-compatible
said="$DEV: QP 0x[0-9a-f]* had no answer from its peer (QP 0xfffff0 at 10.0.2.15)"
said0=$(dmesg | grep -c "$said")
"$BIN/verbs_ops" "$DEV" "$(gid_index "$DEV" ffff:0a00:020f)" ${compat:-} || fail "verbs_ops"
# The peer that never answered (one case of verbs_ops.c; nothing else runs out of retries):
# counted once, and named in the kernel log with what to check.
if is_rrxe; then
	check "peer_silent counted once" \
		test "$(cat /sys/class/infiniband/$DEV/ports/1/hw_counters/peer_silent)" = 1
	check "the kernel log names the silent peer, once" \
		test "$(dmesg | grep -c "$said")" -eq $((said0 + 1))
fi
exit 0
