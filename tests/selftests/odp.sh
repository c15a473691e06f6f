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
"$BIN/verbs_odp" "$DEV" "$gidx"
rc=$?
[ $rc -eq 4 ] && skip "$DEV has no on-demand paging"
[ $rc -eq 0 ] || fail "verbs_odp"

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
	timeout 90 "${a[@]}" -p $port >"/tmp/odp_srv_$name" 2>&1 &
	srv=$!
	wait_for 30 listening $port
	timeout 90 "${a[@]}" -p $port "$@" >"/tmp/odp_cli_$name" 2>&1
	rc=$?
	wait $srv
	src=$?
	srv=
	sed "s/^/# $name client: /" "/tmp/odp_cli_$name" | tail -2
	if [ $rc -ne 0 ] || [ $src -ne 0 ]; then
		sed "s/^/# $name server: /" "/tmp/odp_srv_$name" | tail -5
		fail "$name: client $rc, server $src"
	fi
	diag "$name: ok"
}
both rc_pingpong_odp ibv_rc_pingpong -d "$DEV" -g "$gidx" -o -c -n 200 -s 4096 -- localhost
both rc_pingpong_odp_64k ibv_rc_pingpong -d "$DEV" -g "$gidx" -o -c -n 50 -s 65536 -m 1024 \
	-- localhost
both rc_pingpong_prefetch ibv_rc_pingpong -d "$DEV" -g "$gidx" -o -P -c -n 200 -s 4096 \
	-- localhost
if command -v ib_write_bw >/dev/null; then
	for t in ib_write_bw ib_read_bw ib_send_bw; do
		both "${t}_odp" "$t" -d "$DEV" -x "$gidx" -F --odp -s 65536 -n 500 -- localhost
	done
else
	diag "perftest not installed: its ODP runs skipped"
fi
grep -H . "/sys/class/infiniband/$DEV/ports/1/hw_counters/odp_faults" 2>/dev/null | sed 's/^/# /'
exit 0
