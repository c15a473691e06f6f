#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Deleting the netdev removes the RDMA device bound to it, and only that one.
. "$(dirname "$0")/lib.sh"
trap 'ip link del rrxed0 2>/dev/null; ip link del rrxed1 2>/dev/null; cleanup_driver' EXIT
dummy_add rrxed0 192.168.200.1/24
dummy_add rrxed1 192.168.201.1/24
check "add ${DEV}a on rrxed0" link_add "${DEV}a" rrxed0
check "add ${DEV}b on rrxed1" link_add "${DEV}b" rrxed1
ip link del rrxed0
check "${DEV}a removed with its netdev" wait_for 10 bash -c "! test -e /sys/class/infiniband/${DEV}a"
check "${DEV}b still there" dev_exists "${DEV}b"
check "${DEV}b still usable" bash -c "ibv_devinfo -d ${DEV}b | grep -q PORT_ACTIVE"
ip link del rrxed1
check "${DEV}b removed with its netdev" wait_for 10 bash -c "! test -e /sys/class/infiniband/${DEV}b"
exit 0
