#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# UD multicast through rdma_cm on one device (mckey): a receiver joins a group and waits for
# messages; a sender joins and sends; the device delivers each packet for QPN 0xffffff to
# every QP attached to the group's GID (rrxe only: see below).
. "$(dirname "$0")/lib.sh"
trap 'kill $rcv 2>/dev/null; cleanup_driver' EXIT
command -v mckey >/dev/null || skip "mckey (librdmacm-utils) not installed"
# The C rxe sends multicast only to the wire; on one device its receiver gets (almost) nothing.
is_rrxe || skip "rdma_rxe does not deliver multicast to QPs of the sending device"
nic_up
modprobe ib_uverbs
modprobe rdma_ucm
check "add $DEV" link_add "$DEV" "$NIC"
check "IPv4 GID" wait_for 20 gid_index "$DEV" "ffff:0a00:020f"
timeout 60 mckey -m 239.1.2.3 -b 10.0.2.15 -C 10 -S 256 >/tmp/mckey_rcv 2>&1 &
rcv=$!
# mckey's output is buffered: wait for its rdma_cm ID, then give the join a moment.
wait_for 30 eval "rdma resource show cm_id 2>/dev/null | grep -q mckey" ||
	diag "the receiver has no rdma_cm ID yet"
sleep 2
timeout 60 mckey -m 239.1.2.3 -b 10.0.2.15 -s -C 10 -S 256 >/tmp/mckey_snd 2>&1
src=$?
wait $rcv
rrc=$?
rcv=
sed 's/^/# receiver: /' /tmp/mckey_rcv | tail -8
rdma statistic show link "$DEV/1" | tr ' ' '\n' | paste - - | awk '$2 > 0' | sed 's/^/# /'
sed 's/^/# sender: /' /tmp/mckey_snd | tail -3
[ $src -eq 0 ] || fail "sender exit $src"
[ $rrc -eq 0 ] || fail "receiver exit $rrc (did not get its 10 messages)"
exit 0
