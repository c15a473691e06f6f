#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A process holding the device open (a PD and a CQ with its mapped ring) while the module is
# unloaded. rrxe disassociates it (`disassociate_ucontext`): the unload goes ahead, the device
# and its objects go, the process lives on with its ring pages mapped and exits cleanly later.
# C rxe has no disassociation: the open device keeps the module until the process is gone.
. "$(dirname "$0")/lib.sh"
trap 'kill $pid 2>/dev/null; cleanup_driver' EXIT
need_bin verbs_hold
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
"$BIN/verbs_hold" "$DEV" 60 &
pid=$!
check "holder is up" wait_for 20 bash -c "grep -q uverbs /proc/$pid/maps"
if is_rrxe; then
	check "module unloads under an open device" timeout 30 modprobe -r "$MOD"
	check "device gone" bash -c "! test -e /sys/class/infiniband/$DEV"
	check "the holder lives on" kill -0 $pid
	check "its ring still mapped" grep -q uverbs "/proc/$pid/maps"
	kill $pid
	wait $pid 2>/dev/null
	check "load again" modprobe "$MOD"
	check "add $DEV again" link_add "$DEV" "$NIC"
	check "the device works" wait_for 20 gid_index "$DEV" ffff:0a00:020f
else
	if modprobe -r "$MOD" 2>/dev/null; then fail "module unloaded under an open device"; fi
	check "device still there" dev_exists "$DEV"
	kill -9 $pid
	wait $pid 2>/dev/null
	check "unload after the holder died" wait_for 10 modprobe -r "$MOD"
	check "device gone" bash -c "! test -e /sys/class/infiniband/$DEV"
fi
exit 0
