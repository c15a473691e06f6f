#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `rdma link add NAME type rxe netdev DEV` (what tools and documentation say) creates an rrxe
# device while rrxe is loaded, without loading rdma_rxe; the device says it is rrxe's
# (node_desc "rrxe", its drop counters); the module parameter rxe_link=0 turns the type off,
# and then the command cannot load rdma_rxe next to rrxe either.
. "$(dirname "$0")/lib.sh"
is_rrxe || skip "rrxe-specific"
trap 'rdma link delete trxec0 2>/dev/null; modprobe -r rdma_rxe 2>/dev/null; cleanup_driver' EXIT
nic_up
modprobe -r rdma_rxe 2>/dev/null
modprobe ib_uverbs
check "load rrxe" modprobe rrxe
check "rdma link add type rxe" rdma link add trxec0 type rxe netdev "$NIC"
check "the device exists" dev_exists trxec0
check "rdma_rxe was not loaded" bash -c "! grep -q '^rdma_rxe ' /proc/modules"
diag "rdma link show: $(rdma link show trxec0/1)"
diag "node_desc: $(cat /sys/class/infiniband/trxec0/node_desc)"
check "node_desc names rrxe" grep -q '^rrxe' /sys/class/infiniband/trxec0/node_desc
check "rrxe's drop counters" test -r /sys/class/infiniband/trxec0/ports/1/hw_counters/drop_bad_icrc
check "the kernel log names the link type" bash -c "dmesg | grep -q 'trxec0: added on $NIC .*link type rxe'"
check "librxe drives it" bash -c "ibv_devinfo -d trxec0 | grep -q PORT_ACTIVE"
check "rdma link delete" rdma link delete trxec0
check "the device is gone" bash -c "! test -e /sys/class/infiniband/trxec0"
# The rrxe type is unchanged.
check "rdma link add type rrxe" link_add "$DEV" "$NIC"
check "rdma link delete" link_del "$DEV"

check "unload rrxe" modprobe -r rrxe
check "load rrxe rxe_link=0" modprobe rrxe rxe_link=0
if rdma link add trxec0 type rxe netdev "$NIC" 2>/dev/null; then
	fail "type rxe with rxe_link=0 created a device"
fi
check "no device" bash -c "! test -e /sys/class/infiniband/trxec0"
check "rdma_rxe still not loaded" bash -c "! grep -q '^rdma_rxe ' /proc/modules"
check "type rrxe still works" link_add "$DEV" "$NIC"
check "rdma link delete" link_del "$DEV"
check "unload rrxe" modprobe -r rrxe
exit 0
