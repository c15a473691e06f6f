#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The port follows the netdev: link down -> PORT_DOWN, up -> PORT_ACTIVE (and `rdma link`
# shows it); the physical state as rxe reports it: LinkUp with carrier, Polling when the
# netdev is up without carrier, Disabled when it is down.
. "$(dirname "$0")/lib.sh"
trap 'ip link del rrxed0 2>/dev/null; ip link del rrxev0 2>/dev/null; cleanup_driver' EXIT
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
check "delete $DEV" link_del "$DEV"

# A veth end is up without carrier while its peer is down.
ip link add rrxev0 type veth peer name rrxev1
ip link set rrxev1 down
ip link set rrxev0 up
check "add $DEV on a veth" link_add "$DEV" rrxev0
phys="/sys/class/infiniband/$DEV/ports/1/phys_state"
phys_is() { grep -q "$1" "$phys"; }
diag "peer down: $(cat "$phys"), $(state)"
check "up without carrier: Polling" phys_is Polling
check "up without carrier: PORT_DOWN" bash -c "ibv_devinfo -d $DEV | grep -q PORT_DOWN"
ip link set rrxev1 up
check "carrier: LinkUp" wait_for 5 phys_is LinkUp
check "carrier: PORT_ACTIVE" wait_for 5 bash -c "ibv_devinfo -d $DEV | grep -q PORT_ACTIVE"
ip link set rrxev0 down
check "down: Disabled" wait_for 5 phys_is Disabled
diag "netdev down: $(cat "$phys"), $(state)"
exit 0
