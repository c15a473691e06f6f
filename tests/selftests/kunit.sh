#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The module's KUnit suites run when it loads; every expected suite must report, and pass.
# Prints "kunit: N passed, N failed" for the summary of `make check`.
. "$(dirname "$0")/lib.sh"
is_rrxe || skip "rrxe-specific"
SUITES="rrxe_limits rrxe_ib_attr rrxe_mr rrxe_mcast"
trap cleanup_driver EXIT
modprobe -r rrxe 2>/dev/null
dmesg -C
check "load rrxe" modprobe rrxe
pass=0 failed=0
for s in $SUITES; do
	line=$(dmesg | grep -E "# $s: pass:[0-9]+ fail:[0-9]+" | tail -n1)
	[ -n "$line" ] || { diag "suite $s did not run"; failed=$((failed + 1)); continue; }
	diag "${line#*] }"
	p=$(echo "$line" | sed -E 's/.*pass:([0-9]+).*/\1/')
	f=$(echo "$line" | sed -E 's/.*fail:([0-9]+).*/\1/')
	pass=$((pass + p)) failed=$((failed + f))
done
dmesg | grep -E "^\[.*\] +(not ok|# .*(Expected|ASSERT|EXPECT))" | sed 's/^/# /'
echo "# kunit: $pass passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$pass" -gt 0 ]
