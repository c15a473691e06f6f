#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# On-demand paging (IBV_ACCESS_ON_DEMAND), loopback through one device: tests/verbs/verbs_odp
# (every RC operation faulting on both sides, pages dropped with MADV_DONTNEED and unmapped
# under the registration, ibv_advise_mr, invalidation racing WRITEs and READs); then the
# unmodified rdma-core and perftest clients with ODP: ibv_rc_pingpong -o with data checks, with
# prefetch (-P), and ib_write_bw, ib_read_bw, ib_send_bw --odp.
. "$(dirname "$0")/lib.sh"
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; cleanup_driver' EXIT
need_bin verbs_odp
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
check "IPv4 GID" wait_for 20 gid_index "$DEV" "ffff:0a00:020f"
gidx=$(gid_index "$DEV" ffff:0a00:020f)
"$BIN/verbs_odp" "$DEV" "$gidx" >/tmp/odp_verbs 2>&1
rc=$?
[ $rc -eq 4 ] && skip "$DEV has no on-demand paging"
if [ $rc -ne 0 ]; then
	grep -v '^# ok' /tmp/odp_verbs
	# C rxe 7.2 loses data moved to and from pages that are not present (measured: 8 of the
	# checks, see Documentation/testing.rst); the oracle runs the rdma-core and perftest
	# clients below, which do not look at more than a few bytes.
	is_rrxe && fail "verbs_odp"
	diag "verbs_odp fails on C rxe (known; not counted)"
else
	tail -1 /tmp/odp_verbs
fi

port=18900
# both NAME SERVER-CMD... -- CLIENT-ARGS...: a server and a client to localhost; both must
# exit 0.
both() {
	local name=$1 a=() rc src
	shift
	while [ "$1" != -- ]; do
		a+=("$1")
		shift
	done
	shift
	port=$((port + 1))
	# Line-buffered: what a client killed by the timeout printed is kept.
	timeout 90 stdbuf -oL "${a[@]}" -p $port >"/tmp/odp_srv_$name" 2>&1 &
	srv=$!
	wait_for 30 listening $port
	timeout 90 stdbuf -oL "${a[@]}" -p $port "$@" >"/tmp/odp_cli_$name" 2>&1
	rc=$?
	wait $srv
	src=$?
	srv=
	sed "s/^/# $name client: /" "/tmp/odp_cli_$name" | tail -2
	if [ $rc -ne 0 ] || [ $src -ne 0 ]; then
		sed "s/^/# $name server: /" "/tmp/odp_srv_$name" | tail -5
		grep -H . /sys/class/infiniband/"$DEV"/ports/1/hw_counters/* 2>/dev/null |
			grep -v ':0$' | sed 's|.*/||; s/^/# /'
		fail "$name: client $rc, server $src"
	fi
	diag "$name: ok"
}
both rc_pingpong_odp ibv_rc_pingpong -d "$DEV" -g "$gidx" -o -c -n 200 -s 4096 -- localhost
both rc_pingpong_prefetch ibv_rc_pingpong -d "$DEV" -g "$gidx" -o -P -c -n 200 -s 4096 \
	-- localhost
# Multi-packet messages between two QPs of one device take the packet path when a region is
# paged on demand (the direct copy is for pinned memory): 64 packets per message, the budget
# of one run, so runs hand over to the deferred kick under retransmissions (the debug kernel
# once froze here: a lost wakeup in the run gate, fixed by 1fdc292).
both rc_pingpong_odp_64k ibv_rc_pingpong -d "$DEV" -g "$gidx" -o -c -n 50 -s 65536 -m 1024 \
	-- localhost
if [ "${PERFTEST_QUICK:-0}" = 1 ]; then
	diag "debug subset: the perftest runs left out"
	exit 0
fi
if command -v ib_write_bw >/dev/null; then
	for t in ib_write_bw ib_read_bw ib_send_bw; do
		both "${t}_odp" "$t" -d "$DEV" -x "$gidx" -F --odp -s 65536 -n 500 -- localhost
	done
else
	diag "perftest not installed: its ODP runs skipped"
fi
grep -H . "/sys/class/infiniband/$DEV/ports/1/hw_counters/odp_faults" 2>/dev/null | sed 's/^/# /'
exit 0
