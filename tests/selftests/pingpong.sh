#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Loopback data transfers through one device with the unmodified rdma-core examples:
# ibv_rc_pingpong with data checking (-c), ibv_uc_pingpong, ibv_ud_pingpong and, where the
# SRQs (ibv_srq_pingpong); then the device is deleted under RC traffic. Server and client both
# run in the guest.
. "$(dirname "$0")/lib.sh"
trap 'kill $srv 2>/dev/null; cleanup_driver' EXIT
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
check "IPv4 GID" wait_for 20 gid_index "$DEV" "ffff:0a00:020f"
gidx=$(gid_index "$DEV" ffff:0a00:020f)
port=18600
run_pp() {
	local name=$1
	shift
	port=$((port + 1))
	timeout 60 "$@" -d "$DEV" -g "$gidx" -p $port >"/tmp/pp_srv_$name" 2>&1 &
	srv=$!
	# The server listens on TCP for the address exchange (slow to start on the debug kernel).
	wait_for 30 listening $port
	timeout 60 "$@" -d "$DEV" -g "$gidx" -p $port localhost >"/tmp/pp_cli_$name" 2>&1
	local rc=$?
	wait $srv
	local src=$?
	sed "s/^/# $name client: /" "/tmp/pp_cli_$name" | tail -3
	if [ $rc -ne 0 ] || [ $src -ne 0 ]; then
		sed "s/^/# $name server: /" "/tmp/pp_srv_$name" | tail -5
		fail "$name: client $rc, server $src"
	fi
}
run_pp rc ibv_rc_pingpong -c -n 200 -s 4096
run_pp rc_big ibv_rc_pingpong -c -n 20 -s 65536 -m 1024
run_pp uc ibv_uc_pingpong -c -n 200 -s 1024
run_pp ud ibv_ud_pingpong -c -n 200 -s 1024
run_pp srq ibv_srq_pingpong -c -n 50 -s 1024 -q 4
# The same over the IPv6 link-local GID (RoCEv2 over IPv6).
gid4=$gidx
gidx=$(gid_index "$DEV" fe80) || fail "no IPv6 GID"
run_pp rc6 ibv_rc_pingpong -c -n 50 -s 4096
run_pp ud6 ibv_ud_pingpong -c -n 50 -s 1024
gidx=$gid4

# Teardown under traffic: delete the device while an RC transfer runs, then kill both sides
# (their QPs, MRs and CQs are destroyed with packets in flight). The device must go away and
# the kernel must stay clean (vm-run checks the log).
port=$((port + 1))
timeout 120 ibv_rc_pingpong -d "$DEV" -g "$gidx" -p $port -n 1000000 -s 4096 >/dev/null 2>&1 &
srv=$!
wait_for 30 listening $port
timeout 120 ibv_rc_pingpong -d "$DEV" -g "$gidx" -p $port -n 1000000 -s 4096 localhost >/dev/null 2>&1 &
cli=$!
sleep 3
kill -0 $cli 2>/dev/null || fail "the long transfer ended before the teardown"
link_del "$DEV" &
del=$!
sleep 1
kill -9 $cli $srv 2>/dev/null
wait $cli $srv 2>/dev/null
pkill -9 ibv_rc_pingpong 2>/dev/null
wait $del || fail "rdma link delete failed under traffic"
check "$DEV removed" wait_for 30 eval "! dev_exists $DEV"
diag "teardown under traffic: device removed"
exit 0
