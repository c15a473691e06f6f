#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `rdma dev set DEV netns NS` in exclusive mode (`rdma system set netns exclusive`), as the
# container RDMA plugins use it: ib_core allows it only for a driver that disassociates user
# contexts. rrxe: a process holding the device (a PD and a CQ with its mapped ring) is
# disassociated and lives on, the device moves into the namespace, where a loopback
# ibv_rc_pingpong runs with data checks, and comes back when the namespace goes. C rxe: the
# move is refused. The mode is shared again at the end (it can change only while no other
# network namespace exists).
. "$(dirname "$0")/lib.sh"
NS=rrdevns
pid=
teardown() {
	kill $pid 2>/dev/null
	ip netns del $NS 2>/dev/null
	wait_for 20 rdma system set netns shared || diag "netns mode left exclusive"
	cleanup_driver
}
trap teardown EXIT
need_bin verbs_hold
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
gidx=$(wait_for 20 gid_index "$DEV" ffff:0a00:020f) || fail "no IPv4 GID on $DEV"
# Other tests' namespaces may still be going away: the mode changes once they are gone.
check "exclusive netns mode" wait_for 20 rdma system set netns exclusive
check "namespace $NS" ip netns add $NS
ip -n $NS link set lo up
"$BIN/verbs_hold" "$DEV" 60 &
pid=$!
check "holder is up" wait_for 20 bash -c "grep -q uverbs /proc/$pid/maps"
if ! is_rrxe; then
	check "C rxe: the move is refused" bash -c "! rdma dev set $DEV netns $NS 2>/dev/null"
	exit 0
fi
check "move $DEV into $NS" timeout 30 rdma dev set "$DEV" netns $NS
check "the holder lives on" kill -0 $pid
check "$DEV gone from here" bash -c "! rdma dev show $DEV >/dev/null 2>&1"
check "$DEV in $NS" ip netns exec $NS rdma dev show "$DEV"
srv_out=$(mktemp) cli_out=$(mktemp)
ip netns exec $NS timeout 30 ibv_rc_pingpong -c -n 50 -s 4096 -d "$DEV" -g "$gidx" -p 18695 \
	>"$srv_out" 2>&1 &
srv=$!
wait_for 15 ip netns exec $NS bash -c "ss -ltn | grep -q ':18695 '" || diag "server not listening"
ip netns exec $NS timeout 30 ibv_rc_pingpong -c -n 50 -s 4096 -d "$DEV" -g "$gidx" -p 18695 \
	localhost >"$cli_out" 2>&1 || fail "pingpong in $NS: $(tail -n 2 "$cli_out")"
wait $srv || fail "pingpong server in $NS: $(tail -n 2 "$srv_out")"
diag "in $NS: $(grep -h 'bytes in' "$cli_out")"
kill $pid
wait $pid 2>/dev/null
pid=
check "namespace deleted" ip netns del $NS
check "$DEV back here" wait_for 20 rdma dev show "$DEV"
check "shared netns mode again" wait_for 20 rdma system set netns shared
exit 0
