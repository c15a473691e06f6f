#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong and ibv_srq_pingpong (unmodified, through
# librxe) get through resource creation, the address exchange and the RTR/RTS transitions. With
# the C rxe (oracle)
# they also complete their transfers; rrxe stops at the first send until the packet pipeline
# exists, which this test reports and accepts.
. "$(dirname "$0")/lib.sh"
trap 'kill $srv 2>/dev/null; cleanup_driver' EXIT
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
check "IPv4 GID" wait_for 20 gid_index "$DEV" "ffff:0a00:020f"
gidx=$(gid_index "$DEV" ffff:0a00:020f)
port=18515
for t in rc uc ud srq; do
	port=$((port + 1))
	timeout 30 "ibv_${t}_pingpong" -d "$DEV" -g "$gidx" -n 3 -p $port >"/tmp/pp_srv_$t" 2>&1 &
	srv=$!
	sleep 1
	timeout 30 "ibv_${t}_pingpong" -d "$DEV" -g "$gidx" -n 3 -p $port localhost >"/tmp/pp_cli_$t" 2>&1
	rc=$?
	sed "s/^/# $t client: /" "/tmp/pp_cli_$t"
	if is_rrxe; then
		kill $srv 2>/dev/null
		wait $srv 2>/dev/null
		sed "s/^/# $t server: /" "/tmp/pp_srv_$t"
		out=$(cat "/tmp/pp_cli_$t" "/tmp/pp_srv_$t")
		# Resources and the RTR/RTS transitions must succeed; what fails is the first send
		# (no packet pipeline yet) or, for UD, the address handle after RTS (no AHs yet).
		echo "$out" | grep -q -i "failed to modify\|couldn't create\|couldn't allocate\|couldn't register\|couldn't get\|couldn't open" &&
			fail "$t: resource setup or a state transition failed"
		echo "$out" | grep -q "Couldn't post send\|Failed to create AH" ||
			fail "$t: did not reach the first send"
		diag "$t: reached the data path (rc $rc)"
	else
		wait $srv
		srv_rc=$?
		[ $rc -eq 0 ] && [ $srv_rc -eq 0 ] || fail "$t: oracle transfer failed (client $rc, server $srv_rc)"
	fi
done
exit 0
