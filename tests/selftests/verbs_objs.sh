#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The other verbs objects through librxe (tests/verbs/verbs_objs.c): device and port queries,
# address handles, SRQs (resize, limit, attached QPs), memory windows, memory regions (keys,
# access rules, pinning, re-registration), multicast attach/detach, PDs with live children,
# cleanup on close; then rxe's 17 port hw counters.
. "$(dirname "$0")/lib.sh"
trap cleanup_driver EXIT
need_bin verbs_objs
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
check "IPv4 GID" wait_for 20 gid_index "$DEV" "ffff:0a00:020f"
# rrxe is stricter than the C rxe in a few places (see verbs_objs.c); the oracle skips those.
is_rrxe || compat=--rxe-compatible
"$BIN/verbs_objs" "$DEV" "$(gid_index "$DEV" ffff:0a00:020f)" ${compat:-} || fail "verbs_objs"
# The hw counters of port 1, by rxe's names (rxe_hw_counters.c), in sysfs and through netlink.
COUNTERS="sent_pkts rcvd_pkts duplicate_request out_of_seq_request rcvd_rnr_err send_rnr_err
	rcvd_seq_err ack_deferred retry_exceeded_err retry_rnr_exceeded_err completer_retry_err
	send_err link_downed rdma_sends rdma_recvs sent_bytes rcvd_bytes"
hw=/sys/class/infiniband/$DEV/ports/1/hw_counters
stats=$(rdma statistic show link "$DEV/1") || fail "rdma statistic show link $DEV/1"
diag "$stats"
for c in $COUNTERS; do
	[ -r "$hw/$c" ] || fail "no hw counter $c in $hw"
	grep -qE '^[0-9]+$' "$hw/$c" || fail "hw counter $c: '$(cat "$hw/$c")'"
	[[ " $(echo $stats) " == *" $c "* ]] || fail "rdma statistic: no $c"
done
diag "hw_counters: $(ls "$hw" | tr '\n' ' ')"
exit 0
