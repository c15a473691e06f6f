#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Unloading the driver with devices present (one of them opened by a verbs user that has
# exited) removes them all; the module loads again and works.
. "$(dirname "$0")/lib.sh"
trap 'ip link del rrxed0 2>/dev/null; cleanup_driver' EXIT
nic_up
modprobe ib_uverbs
dummy_add rrxed0 192.168.200.1/24
check "add ${DEV}a" link_add "${DEV}a" "$NIC"
check "add ${DEV}b" link_add "${DEV}b" rrxed0
check "verbs user opens ${DEV}a" bash -c "ibv_devinfo -d ${DEV}a >/dev/null"
check "rmmod $MOD" modprobe -r "$MOD"
check "devices gone" bash -c "! test -e /sys/class/infiniband/${DEV}a && ! test -e /sys/class/infiniband/${DEV}b"
check "module gone" bash -c "! grep -q '^$MOD ' /proc/modules"
check "reload and add" link_add "${DEV}a" "$NIC"
check "device works after reload" bash -c "ibv_devinfo -d ${DEV}a | grep -q PORT_ACTIVE"
exit 0
