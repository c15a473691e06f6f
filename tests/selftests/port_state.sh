#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The port follows the netdev: link down -> PORT_DOWN, up -> PORT_ACTIVE (and `rdma link`
# shows it).
. "$(dirname "$0")/lib.sh"
trap 'ip link del rrxed0 2>/dev/null; cleanup_driver' EXIT
modprobe ib_uverbs
dummy_add rrxed0 192.168.200.1/24
check "add $DEV" link_add "$DEV" rrxed0
state() { devinfo_field "$DEV" state; }
check "active after add" bash -c "[ \"\$(ibv_devinfo -d $DEV | awk '\$1 == \"state:\" {print \$2}')\" = PORT_ACTIVE ]"
ip link set rrxed0 down
check "down after link down" wait_for 5 bash -c "ibv_devinfo -d $DEV | grep -q PORT_DOWN"
check "rdma link shows DOWN" bash -c "rdma link show $DEV/1 | grep -q 'state DOWN'"
ip link set rrxed0 up
check "active after link up" wait_for 5 bash -c "ibv_devinfo -d $DEV | grep -q PORT_ACTIVE"
check "rdma link shows ACTIVE" bash -c "rdma link show $DEV/1 | grep -q 'state ACTIVE'"
diag "final state $(state)"
exit 0
