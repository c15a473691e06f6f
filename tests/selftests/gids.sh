#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The core fills RoCE v2 GIDs from the netdev's addresses: the IPv6 link-local GID, the
# IPv4-mapped GID, and a global IPv6 GID that follows the address being added and removed.
. "$(dirname "$0")/lib.sh"
trap 'ip addr del fd00::15/64 dev $NIC 2>/dev/null; cleanup_driver' EXIT
nic_up
check "add $DEV" link_add "$DEV" "$NIC"
check "IPv4 GID ::ffff:10.0.2.15 (RoCE v2)" wait_for 20 gid_index "$DEV" "0000:0000:0000:0000:0000:ffff:0a00:020f"
check "IPv6 link-local GID (RoCE v2)" wait_for 20 gid_index "$DEV" "fe80:0000:0000:0000"
ip -6 addr add fd00::15/64 dev "$NIC" nodad
check "global IPv6 GID appears" wait_for 20 gid_index "$DEV" "fd00:0000:0000:0000:0000:0000:0000:0015"
ip -6 addr del fd00::15/64 dev "$NIC"
no_gid() { ! gid_index "$@" >/dev/null; }
check "global IPv6 GID disappears" wait_for 20 no_gid "$DEV" "fd00:0000"
diag "IPv4 GID index $(gid_index "$DEV" ffff:0a00:020f)"
exit 0
