#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs in the demo VM: create an rrxe device on the NIC and show what libibverbs sees.
set -e
nic=$(for n in /sys/class/net/*; do [ -e "$n/device" ] && basename "$n" && break; done)
ip link set "$nic" up
ip addr add 10.0.2.15/24 dev "$nic"
modprobe ib_uverbs
run() { echo "+ $*"; "$@"; }
run rdma link add rrxe0 type rrxe netdev "$nic"
run rdma link show
run ibv_devices
run ibv_devinfo -d rrxe0
for i in 0 1; do
	echo "GID[$i] $(cat /sys/class/infiniband/rrxe0/ports/1/gids/$i) $(cat /sys/class/infiniband/rrxe0/ports/1/gid_attrs/types/$i)"
done
run rdma link delete rrxe0
