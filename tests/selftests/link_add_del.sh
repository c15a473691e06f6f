#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `rdma link add` autoloads the driver and creates a device on the NIC; `rdma link delete`
# removes it; the name can be reused.
. "$(dirname "$0")/lib.sh"
trap cleanup_driver EXIT
nic_up
modprobe ib_uverbs
modprobe -r "$MOD" 2>/dev/null
check "add $DEV (autoload $MOD)" link_add "$DEV" "$NIC"
check "$MOD autoloaded" grep -q "^$MOD " /proc/modules
check "device in sysfs" dev_exists "$DEV"
check "rdma link shows $DEV on $NIC" bash -c "rdma link show $DEV/1 | grep -q 'netdev $NIC'"
check "rdma dev shows $DEV" bash -c "rdma dev show $DEV | grep -q 'node_type ca'"
check "delete $DEV" link_del "$DEV"
check "device gone" wait_for 5 bash -c "! test -e /sys/class/infiniband/$DEV"
check "re-add with the same name" link_add "$DEV" "$NIC"
check "delete again" link_del "$DEV"
if link_del "$DEV" 2>/dev/null; then fail "deleting a missing device succeeded"; fi
exit 0
