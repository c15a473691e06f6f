#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A process holding the device open (with a CQ and its mapped ring) keeps the module loaded;
# after it is killed, the module unloads and every object is gone.
. "$(dirname "$0")/lib.sh"
trap 'kill $pid 2>/dev/null; cleanup_driver' EXIT
need_bin verbs_hold
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
"$BIN/verbs_hold" "$DEV" 60 &
pid=$!
check "holder is up" wait_for 20 bash -c "grep -q uverbs /proc/$pid/maps"
if modprobe -r "$MOD" 2>/dev/null; then fail "module unloaded under an open device"; fi
check "device still there" dev_exists "$DEV"
kill -9 $pid
wait $pid 2>/dev/null
check "unload after the holder died" wait_for 10 modprobe -r "$MOD"
check "device gone" bash -c "! test -e /sys/class/infiniband/$DEV"
exit 0
