#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rrxe and the C rdma_rxe never share a kernel (both claim RDMA_DRIVER_RXE): each refuses to
# load while the other is loaded, with a clear message and no crash.
. "$(dirname "$0")/lib.sh"
is_rrxe || skip "rrxe-specific"
trap 'modprobe -r rdma_rxe 2>/dev/null; cleanup_driver' EXIT
modprobe -r rdma_rxe 2>/dev/null
check "load rrxe" modprobe rrxe
if modprobe rdma_rxe 2>/dev/null; then fail "rdma_rxe loaded next to rrxe"; fi
check "rdma_rxe not loaded" bash -c "! grep -q '^rdma_rxe ' /proc/modules"
check "message names the conflict" bash -c "dmesg | grep -q 'refusing to load rdma_rxe while rrxe is loaded'"
check "rmmod rrxe" modprobe -r rrxe
check "load rdma_rxe" modprobe rdma_rxe
if modprobe rrxe 2>/dev/null; then fail "rrxe loaded next to rdma_rxe"; fi
check "rrxe not loaded" bash -c "! grep -q '^rrxe ' /proc/modules"
check "message names the conflict" bash -c "dmesg | grep -q 'rdma_rxe is loaded'"
check "rmmod rdma_rxe" modprobe -r rdma_rxe
check "rrxe loads again" modprobe rrxe
exit 0
