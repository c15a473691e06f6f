#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# active_mtu follows the netdev MTU minus the RoCE headers (1500 -> 1024, 9000 -> 4096,
# 4176 -> 4096, 4175 -> 2048); max_mtu stays 4096.
. "$(dirname "$0")/lib.sh"
trap 'ip link del rrxed0 2>/dev/null; cleanup_driver' EXIT
modprobe ib_uverbs
dummy_add rrxed0 192.168.200.1/24
check "add $DEV" link_add "$DEV" rrxed0
for pair in 1500:1024 9000:4096 4176:4096 4175:2048 2128:2048 1103:512 1500:1024; do
	ip link set rrxed0 mtu "${pair%:*}" || fail "set mtu ${pair%:*}"
	got=$(devinfo_field "$DEV" active_mtu)
	[ "$got" = "${pair#*:}" ] ||
		fail "netdev mtu ${pair%:*}: active_mtu $got, expected ${pair#*:}"
	diag "netdev mtu ${pair%:*} -> active_mtu $got"
done
check "max_mtu 4096" bash -c "ibv_devinfo -d $DEV | grep -q -E 'max_mtu:[[:space:]]+4096'"
exit 0
