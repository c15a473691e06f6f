#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Teardown under traffic, the ways users tear things down without asking:
#  1. a network namespace deleted with a live device in it (its veth goes, the device goes, the
#     namespace's UDP sockets go), while an RC pingpong runs through that device;
#  2. the device's netdev deleted under a running pingpong, in the initial namespace (the
#     deletion waits for the users, who are killed while it is under way);
#  3. the module removed right after processes using it were killed mid-transfer;
#  4. a namespace deleted while its device is held open from this namespace: the NIC goes back
#     to this namespace, the device's removal waits for its user, and the namespace is
#     dismantled meanwhile; its UDP sockets close with it (a socket released later would reach
#     a dismantled namespace: KASAN on the debug kernel).
# Each round must leave no device and a clean kernel (vm-run checks the log: KASAN, lockdep,
# kmemleak, lockups, a destroy stuck on references). TEARDOWN_ROUNDS sets the rounds (default 2).
. "$(dirname "$0")/lib.sh"
need_bin verbs_hold
pids= hold=
stop() {
	[ -n "$pids" ] && kill -9 $pids 2>/dev/null
	# `timeout` runs the pingpong as its child: kill that too (a live user keeps the device,
	# and so the netdev, as with C rxe: neither driver disassociates user contexts).
	pkill -9 -x ibv_rc_pingpong 2>/dev/null
	[ -n "$pids" ] && wait $pids 2>/dev/null
	wait_for 10 bash -c "! pgrep -x ibv_rc_pingpong >/dev/null"
	pids=
}
cleanup() {
	stop
	[ -n "$hold" ] && kill "$hold" 2>/dev/null
	ip netns del rrtd 2>/dev/null
	ip link del tdb 2>/dev/null
	ip link del tdd 2>/dev/null
	cleanup_driver
}
trap cleanup EXIT
modprobe ib_uverbs
modprobe veth || skip "no veth"
ip netns add rrtd || skip "no network namespaces"
ip netns del rrtd
rounds=${TEARDOWN_ROUNDS:-2}

# pingpong_in NS DEV ADDR-PATTERN PORT: an RC pingpong pair on DEV (in namespace NS, "" for
# this one), running for a long time, in the background; their pids are added to $pids.
pingpong_in() {
	local ns=$1 dev=$2 pat=$3 port=$4 gidx exec=()
	[ -n "$ns" ] && exec=(ip netns exec "$ns")
	gidx=$(wait_for 20 gid_index "$dev" "$pat") || fail "no IPv4 GID on $dev"
	"${exec[@]}" timeout 120 ibv_rc_pingpong -d "$dev" -g "$gidx" -p "$port" -n 100000000 \
		-s 4096 >/dev/null 2>&1 &
	pids="$pids $!"
	wait_for 20 "${exec[@]}" bash -c "ss -ltn | grep -q :$port " || fail "no pingpong server"
	"${exec[@]}" timeout 120 ibv_rc_pingpong -d "$dev" -g "$gidx" -p "$port" -n 100000000 \
		-s 4096 localhost >/dev/null 2>&1 &
	pids="$pids $!"
	sleep 2
}

for r in $(seq 1 "$rounds"); do
	# 1. Namespace deletion with a live device and traffic.
	ip netns add rrtd
	ip link add tda type veth peer name tdb
	ip link set tda netns rrtd
	ip -n rrtd addr add 192.168.83.1/24 dev tda
	ip -n rrtd link set tda up
	ip -n rrtd link set lo up
	check "add the device in the namespace" ip netns exec rrtd rdma link add "${DEV}n" \
		type "$TYPE" netdev tda
	pingpong_in rrtd "${DEV}n" ffff:c0a8:5301 18901
	ip netns del rrtd
	stop
	ip link del tdb 2>/dev/null
	check "round $r: the namespace's device is gone" \
		wait_for 30 bash -c "! rdma link show | grep -q '${DEV}n/'"

	# 2. The netdev deleted under traffic.
	modprobe dummy
	ip link add tdd type dummy
	ip link set tdd up
	ip addr add 192.168.84.1/24 dev tdd
	check "add $DEV" link_add "$DEV" tdd
	pingpong_in "" "$DEV" ffff:c0a8:5401 18902
	# The deletion waits until the users are gone (neither driver disassociates user
	# contexts): they are killed while it is under way, their traffic still in flight.
	ip link del tdd &
	del=$!
	sleep 1
	stop
	wait $del || fail "round $r: ip link del"
	check "round $r: the device went with its netdev" \
		wait_for 30 bash -c "! test -e /sys/class/infiniband/$DEV"

	# 3. Users killed mid-transfer, then the module removed at once.
	nic_up
	check "add $DEV" link_add "$DEV" "$NIC"
	pingpong_in "" "$DEV" ffff:0a00:020f 18903
	stop
	rdma link delete "$DEV" 2>/dev/null
	check "round $r: unload after the users died" wait_for 20 modprobe -r "$MOD"
	modprobe "$MOD" 2>/dev/null || true

	# 4. A namespace freed while a user elsewhere holds its device (first round only).
	[ "$r" -gt 1 ] && continue
	nic_up
	ip netns add rrtd
	check "round $r: $NIC into a namespace" ip link set "$NIC" netns rrtd
	ip -n rrtd link set "$NIC" up
	ip -n rrtd addr add 10.0.2.15/24 dev "$NIC"
	check "round $r: add ${DEV}m there" ip netns exec rrtd rdma link add "${DEV}m" \
		type "$TYPE" netdev "$NIC"
	"$BIN/verbs_hold" "${DEV}m" 60 &
	hold=$!
	sleep 1
	ip netns del rrtd
	check "round $r: $NIC back here" wait_for 20 ip link show "$NIC"
	# Namespace cleanup runs in a work item: give it time to dismantle the namespace.
	sleep 3
	test -e "/sys/class/infiniband/${DEV}m" && diag "round $r: ${DEV}m waits for its user"
	kill "$hold"
	wait "$hold" 2>/dev/null
	check "round $r: then goes" wait_for 30 bash -c "! test -e /sys/class/infiniband/${DEV}m"
	nic_up
done
exit 0
