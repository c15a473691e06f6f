#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/selftests/run.sh [--module MOD] [--type TYPE] [--subset full|debug] [--timeout S] [TEST...]
#
# Runs inside the test VM (scripts/vm-run). Prepares the guest, runs each test script with a
# timeout and prints KTAP; the last line is "selftests(MOD): N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")"
MOD=rrxe TYPE= SUBSET=full TMO=300
while [ $# -gt 0 ]; do
	case $1 in
	--module) MOD=$2; shift 2 ;;
	--type) TYPE=$2; shift 2 ;;
	--subset) SUBSET=$2; shift 2 ;;
	--timeout) TMO=$2; shift 2 ;;
	*) break ;;
	esac
done
# The full suite, and the subset that also runs on the (slow) debug kernel.
FULL="kunit link_add_del devinfo gids netdev_unregister mtu port_state one_per_netdev rmmod \
	rxe_refusal verbs_cq verbs_qp verbs_objs verbs_hostile verbs_ops pingpong rdma_cm perftest netns \
	hostile_packets nvmeof multicast kverbs busy_rmmod"
DEBUG="kunit link_add_del netdev_unregister one_per_netdev rmmod rxe_refusal verbs_cq verbs_qp \
	verbs_objs verbs_hostile verbs_ops pingpong rdma_cm perftest hostile_packets kverbs busy_rmmod"
if [ "$SUBSET" = debug ]; then
	# Every operation once, not the sweeps: the debug kernel under TCG is 10-70x slower.
	export PERFTEST_QUICK=1 HOSTILE_COUNT=1000
fi
if [ $# -gt 0 ]; then
	TESTS="$*"
elif [ "$SUBSET" = debug ]; then
	TESTS=$DEBUG
else
	TESTS=$FULL
fi

# Guest setup: sysfs/debugfs are mounted by virtme-ng; give the tools what they expect.
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
mkdir -p /run/rdma /etc/rdma 2>/dev/null

set -- $TESTS
echo "TAP version 13"
echo "1..$#"
pass=0 fail=0 skip=0 n=0
for t in "$@"; do
	n=$((n + 1))
	start=$(date +%s)
	out=$(timeout "$TMO" bash "./$t.sh" "$MOD" $TYPE 2>&1)
	rc=$?
	took=$(($(date +%s) - start))
	[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^\([^#]\)/# \1/'
	case $rc in
	0) echo "ok $n $t # ${took}s"; pass=$((pass + 1)) ;;
	4) echo "ok $n $t # SKIP"; skip=$((skip + 1)) ;;
	124) echo "not ok $n $t # TIMEOUT ${TMO}s"; fail=$((fail + 1)) ;;
	*) echo "not ok $n $t # exit $rc"; fail=$((fail + 1)) ;;
	esac
done
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
# Kernel memory leaks are reported into the console log that vm-run checks.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak
	sleep 1
	echo scan >/sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak
fi
echo "selftests($MOD): $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
