#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/selftests/run.sh [--module MOD] [--type TYPE] [--subset full|debug|oracle] [--timeout S]
#                        [--budget S] [TEST...]
#
# Runs inside the test VM (scripts/vm-run). Prepares the guest, runs each test script with a
# timeout and prints KTAP; the last line is "selftests(MOD): N passed, N failed, N skipped".
#
# --budget S: start no test once the time elapsed plus the test's estimate (EST below, scaled
# by how long the tests so far took against their estimates) would pass S seconds. The tests
# not run are reported as "ok N TEST # SKIP budget", counted as skipped and listed on one
# "# budget: ..." line; a test that runs gets at most the budget left plus BUDGET_GRACE (from
# the environment, default 300) seconds.
set -u
cd "$(dirname "$0")" || exit 1
MOD=rrxe TYPE='' SUBSET=full TMO=300 BUDGET=0 GRACE=${BUDGET_GRACE:-300}
while [ $# -gt 0 ]; do
	case $1 in
	--module) MOD=$2; shift 2 ;;
	--type) TYPE=$2; shift 2 ;;
	--subset) SUBSET=$2; shift 2 ;;
	--timeout) TMO=$2; shift 2 ;;
	--budget) BUDGET=$2; shift 2 ;;
	*) break ;;
	esac
done
# The full suite, and the subset that also runs on the (slow) debug kernel.
#
# A new test NAME.sh goes into FULL (anywhere; it runs on the fast kernel against rrxe and the
# C rdma_rxe). If KASAN, lockdep or kmemleak over it finds what the fast kernel cannot, it goes
# into DEBUG too, at its place by value: DEBUG runs in order and a budget cuts its tail. Give it
# an estimate in EST (seconds on the debug kernel under TCG: the "# Ns" of its "ok" line in the
# vm-debug-rrxe log; these were measured on 2026-12-01); without one it is taken to take
# EST_DEFAULT.
FULL="kunit link_add_del devinfo gids netdev_unregister mtu port_state one_per_netdev rmmod \
	rxe_refusal verbs_cq verbs_qp verbs_objs verbs_hostile verbs_attack uverbs_fuzz verbs_ops \
	pingpong udp_sport tc_priority congestion bottleneck rdma_cm perftest netns hostile_packets \
	packet_fuzz nvmeof nfs_rdma smb_direct srp iser stacks mpi multicast kverbs busy_rmmod \
	teardown_races pyverbs pma_counters qp_counters dev_netns mad link_type_rxe odp odp_stall"
# By value: kernel consumers (lockdep over the completion context; NFS over RDMA, a real ULP
# across the veth, whose fio verification failed once on the debug kernel; NVMe-oF, FRWR and
# SEND with invalidate from both kernel ULPs), teardown under traffic, on-demand paging,
# hostile user rings, every operation, hostile packets, the data path, then the verbs objects,
# perftest, link handling and KUnit (pure logic, the fast kernel covers most of it).
# The other kernel ULPs (SRP, iSER with its target through configfs, SMB Direct) come after the
# data path's tests: they add their own stacks' code more than the driver's, and their own
# connection setup (rdma_cm) covers rdma_cm's test. The user-space stacks (UCX and libfabric,
# an MPI job) after them: through uverbs, what the verbs tests do, slower (some 160 s each).
DEBUG="kverbs nfs_rdma nvmeof busy_rmmod odp odp_stall teardown_races rmmod netdev_unregister \
	verbs_hostile verbs_attack uverbs_fuzz verbs_ops dev_netns hostile_packets packet_fuzz \
	srp iser smb_direct stacks mpi pingpong rdma_cm qp_counters verbs_qp verbs_objs verbs_cq \
	perftest link_add_del one_per_netdev rxe_refusal mad kunit"
# The oracle subset (the C rdma_rxe, under a budget in make check; make check-full runs FULL):
# by value, the tests that check verbs semantics against C rxe first, the long sweeps last.
ORACLE="verbs_ops verbs_attack verbs_qp verbs_objs verbs_cq kverbs pyverbs odp pingpong udp_sport \
	tc_priority congestion rdma_cm teardown_races link_add_del devinfo gids netdev_unregister mtu \
	port_state one_per_netdev rmmod pma_counters qp_counters dev_netns multicast nvmeof nfs_rdma srp \
	smb_direct iser hostile_packets netns perftest busy_rmmod stacks mpi"
declare -A EST=(
	[busy_rmmod]=25 [teardown_races]=150 [rmmod]=30 [netdev_unregister]=30 [verbs_hostile]=20
	[verbs_attack]=50 [uverbs_fuzz]=50 [verbs_ops]=20 [kverbs]=60 [hostile_packets]=70
	[packet_fuzz]=60 [pingpong]=65 [rdma_cm]=35 [verbs_qp]=25 [verbs_objs]=35 [verbs_cq]=20
	[perftest]=120 [link_add_del]=20 [one_per_netdev]=15 [rxe_refusal]=20 [kunit]=30
	[pyverbs]=120 [pma_counters]=30 [qp_counters]=105 [dev_netns]=30 [mad]=180
	[link_type_rxe]=20 [odp]=90 [nfs_rdma]=220 [nvmeof]=120 [odp_stall]=50 [srp]=90
	[smb_direct]=100 [iser]=80 [mpi]=160 [stacks]=170
)
EST_DEFAULT=120
if [ "$SUBSET" = debug ]; then
	# Every operation once, not the sweeps: the debug kernel under TCG is 10-70x slower.
	export PERFTEST_QUICK=1 HOSTILE_COUNT=1000 FUZZ_SECONDS=30 PFUZZ_COUNT=1000 TEARDOWN_ROUNDS=1 \
		NETNS_LONG_MB=2 NFS_RDMA_VERS=4.1 NFS_RDMA_MB=2 NFS_RDMA_FIO=2M \
		NVMEOF_SIZE=4M ODP_RACE_ROUNDS=30 SMB_DIRECT_MB=2 SMB_DIRECT_FIO=2M SRP_MB=2 SRP_FIO=2M \
		ISER_MB=2 ISER_FIO=2M ISER_TARGET=configfs
fi
if [ $# -gt 0 ]; then
	TESTS="$*"
elif [ "$SUBSET" = debug ]; then
	TESTS=$DEBUG
elif [ "$SUBSET" = oracle ]; then
	TESTS=$ORACLE
else
	TESTS=$FULL
fi

# Guest setup: sysfs/debugfs are mounted by virtme-ng; give the tools what they expect.
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
mkdir -p /run/rdma /etc/rdma 2>/dev/null
# kmemleak (debug kernel): no automatic scans while the tests run (a scan of all memory under
# TCG and KASAN is slow and takes a vCPU); the two scans at the end report every leak all the same.
[ -w /sys/kernel/debug/kmemleak ] && echo scan=off >/sys/kernel/debug/kmemleak

# shellcheck disable=SC2086
set -- $TESTS
echo "TAP version 13"
echo "1..$#"
[ "$BUDGET" -gt 0 ] && echo "# budget: $BUDGET s"
pass=0 fail=0 skip=0 n=0
# Seconds taken and estimated by the tests run so far: the scale of the next estimate.
took_sum=0 est_sum=0
over=()
t_start=$SECONDS
for t in "$@"; do
	n=$((n + 1))
	tmo=$TMO est=''
	if [ "$BUDGET" -gt 0 ]; then
		est=${EST[$t]:-$EST_DEFAULT}
		[ "$est_sum" -gt 0 ] && est=$(((est * took_sum + est_sum / 2) / est_sum))
		left=$((BUDGET - (SECONDS - t_start)))
		if [ ${#over[@]} -gt 0 ] || [ "$est" -gt "$left" ]; then
			echo "ok $n $t # SKIP budget"
			over+=("$t")
			skip=$((skip + 1))
			continue
		fi
		[ $((left + GRACE)) -lt "$tmo" ] && tmo=$((left + GRACE))
	fi
	start=$SECONDS
	# shellcheck disable=SC2086
	out=$(timeout "$tmo" bash "./$t.sh" "$MOD" $TYPE 2>&1)
	rc=$?
	took=$((SECONDS - start))
	[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^\([^#]\)/# \1/'
	if [ -n "$est" ] && [ "$rc" -ne 4 ]; then
		took_sum=$((took_sum + took)) est_sum=$((est_sum + ${EST[$t]:-$EST_DEFAULT}))
		est=", estimate ${est}s"
	fi
	case $rc in
	0) echo "ok $n $t # ${took}s$est"; pass=$((pass + 1)) ;;
	4) echo "ok $n $t # SKIP"; skip=$((skip + 1)) ;;
	124)
		why=''
		[ "$tmo" -lt "$TMO" ] && why=" (the budget left + ${GRACE} s)"
		echo "not ok $n $t # TIMEOUT ${tmo}s$why"
		fail=$((fail + 1))
		;;
	*) echo "not ok $n $t # exit $rc"; fail=$((fail + 1)) ;;
	esac
done
[ ${#over[@]} -gt 0 ] &&
	echo "# budget: ${BUDGET} s used up after $((SECONDS - t_start)) s; not run: ${over[*]}"
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
