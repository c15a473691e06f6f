#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Hostile packets: from another network namespace, through a veth, a raw socket sends thousands
# of malformed and well-formed-but-wrong RoCEv2 packets (hostile_packets.py: random bytes, every
# opcode byte, random QPNs, PSNs, keys, addresses and lengths, truncated packets; most with a
# correct ICRC) at a device whose QPs carry live RC traffic. The kernel must stay clean (vm-run
# checks the log), the drops must be counted, and the device must still work afterwards.
# HOSTILE_COUNT sets the number of packets (default 4000).
. "$(dirname "$0")/lib.sh"
ns=rrhp
cleanup() {
	kill $srv $cli 2>/dev/null
	wait $srv $cli 2>/dev/null
	cleanup_driver
	ip netns del $ns 2>/dev/null
	ip link del hpb 2>/dev/null
}
srv= cli=
trap cleanup EXIT
command -v python3 >/dev/null || skip "no python3"
modprobe ib_uverbs
ip netns add $ns || skip "no network namespaces"
ip link add hpa type veth peer name hpb || skip "no veth"
ip link set hpa netns $ns
ip -n $ns addr add 192.168.79.1/24 dev hpa
ip -n $ns link set hpa up
ip -n $ns link set lo up
ip addr add 192.168.79.2/24 dev hpb
ip link set hpb up
check "add $DEV" link_add "$DEV" hpb
gidx=$(wait_for 20 gid_index "$DEV" ffff:c0a8:4f02) || fail "no IPv4 GID"

# Live RC traffic on the device (QPs 16 and up) while the packets arrive.
timeout 300 ibv_rc_pingpong -d "$DEV" -g "$gidx" -p 18800 -n 100000000 -s 1024 >/dev/null 2>&1 &
srv=$!
wait_for 30 listening 18800
timeout 300 ibv_rc_pingpong -d "$DEV" -g "$gidx" -p 18800 -n 100000000 -s 1024 localhost \
	>/dev/null 2>&1 &
cli=$!
sleep 2

drops() {
	rdma statistic show link "$DEV/1" | tr ' ' '\n' | awk '/^drop_/ {getline v; s += v} END {print s + 0}'
}
before=$(drops)
count=${HOSTILE_COUNT:-4000}
sent=$(ip netns exec $ns timeout 600 python3 "$(dirname "$0")/hostile_packets.py" \
	192.168.79.1 192.168.79.2 "$count" 4791) || fail "the sender failed: $sent"
diag "$sent"
sleep 2
after=$(drops)
diag "drop counters: $before -> $after"
rdma statistic show link "$DEV/1" | tr ' ' '\n' | paste - - | awk '$1 ~ /^drop_/ && $2 > 0' |
	sed 's/^/# /'
# The C rxe (oracle) drops silently: it has no drop counters.
if is_rrxe; then
	[ $((after - before)) -ge $((count / 2)) ] || fail "fewer drops counted than half the packets"
fi
kill $srv $cli 2>/dev/null
wait $srv $cli 2>/dev/null
srv= cli=

# The device still works.
timeout 60 ibv_rc_pingpong -d "$DEV" -g "$gidx" -p 18801 -c -n 20 -s 4096 >/dev/null 2>&1 &
srv=$!
wait_for 30 listening 18801
timeout 60 ibv_rc_pingpong -d "$DEV" -g "$gidx" -p 18801 -c -n 20 -s 4096 localhost >/dev/null 2>&1
rc=$?
wait $srv
src=$?
srv=
[ $rc -eq 0 ] && [ $src -eq 0 ] || fail "a transfer after the attack failed (client $rc, server $src)"
diag "a data-checked transfer after the attack: ok"
exit 0
