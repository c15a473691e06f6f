#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Connection setup through rdma_cm (CM MADs on QP1, kernel UD sends and receives on the GSI
# QP): rping with data verification (SEND, RDMA READ and WRITE through the connected QP), then
# the same in several sizes.
. "$(dirname "$0")/lib.sh"
trap 'kill $srv 2>/dev/null; cleanup_driver' EXIT
nic_up
modprobe ib_uverbs
modprobe rdma_ucm
check "add $DEV" link_add "$DEV" "$NIC"
check "IPv4 GID" wait_for 20 gid_index "$DEV" "ffff:0a00:020f"
# rping takes at most 64 KiB - 1.
for size in 64 4096 60000; do
	timeout 60 rping -s -a 10.0.2.15 -p 7174 -C 10 -S $size -V >/tmp/rping_srv 2>&1 &
	srv=$!
	wait_for 30 eval "rdma resource show cm_id 2>/dev/null | grep -q LISTEN"
	timeout 60 rping -c -a 10.0.2.15 -p 7174 -C 10 -S $size -V >/tmp/rping_cli 2>&1
	rc=$?
	wait $srv
	src=$?
	if [ $rc -ne 0 ] || [ $src -ne 0 ]; then
		sed 's/^/# client: /' /tmp/rping_cli | tail -5
		sed 's/^/# server: /' /tmp/rping_srv | tail -5
		fail "rping -S $size: client $rc, server $src"
	fi
	diag "rping -S $size -C 10 -V: ok"
done
exit 0
