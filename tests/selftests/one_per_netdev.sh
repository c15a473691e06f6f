#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# One device per netdev: a second `rdma link add` on the same netdev fails cleanly, and a VLAN
# device is refused as a parent.
. "$(dirname "$0")/lib.sh"
trap 'ip link del rrxed0.5 2>/dev/null; ip link del rrxed0 2>/dev/null; cleanup_driver' EXIT
dummy_add rrxed0 192.168.200.1/24
check "add $DEV" link_add "$DEV" rrxed0
if link_add "${DEV}x" rrxed0 2>/dev/null; then fail "second device on rrxed0 accepted"; fi
check "second device not created" bash -c "! test -e /sys/class/infiniband/${DEV}x"
check "first device intact" dev_exists "$DEV"
modprobe 8021q || skip "no 8021q"
ip link add link rrxed0 name rrxed0.5 type vlan id 5 || fail "vlan add"
ip link set rrxed0.5 up
if link_add "${DEV}v" rrxed0.5 2>/dev/null; then fail "VLAN parent accepted"; fi
check "no device on the VLAN" bash -c "! test -e /sys/class/infiniband/${DEV}v"
dmesg | tail -n 5 | sed 's/^/# /'
exit 0
