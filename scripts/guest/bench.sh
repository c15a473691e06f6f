#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/guest/bench.sh --csv FILE --logs DIR [--timeout S] [--bw-iters N] [--lat-iters N]
#
# Runs in the bench VM (started by scripts/bench). The same perftest workloads, loopback through
# one device, first on the C rdma_rxe (link type rxe) and then on rrxe (link type rrxe); the
# first driver is unloaded before the second is loaded. In each phase it also measures the
# one-copy limit of this VM (copies of 64 KiB chunks on one vCPU). Writes FILE, one CSV row per
# workload:
#   workload,size,unit,rxe,rrxe,rrxe_over_rxe,rxe_over_limit,rrxe_over_limit
# Bandwidths in Gb/s; latencies in usec: t_avg, and t_typical in the row "WORKLOAD(median)";
# the limit rows are the copy rates in Gb/s measured in each phase. A value is "fail" when the
# workload failed; every perftest output is kept in DIR.
set -euo pipefail

csv='' logs='' tmo=60 bw_iters=2000 lat_iters=1000
while [ $# -gt 0 ]; do
	case $1 in
	--csv) csv=$2; shift 2 ;;
	--logs) logs=$2; shift 2 ;;
	--timeout) tmo=$2; shift 2 ;;
	--bw-iters) bw_iters=$2; shift 2 ;;
	--lat-iters) lat_iters=$2; shift 2 ;;
	*) echo "usage: $0 --csv FILE --logs DIR [--timeout S] [--bw-iters N] [--lat-iters N]" >&2; exit 2 ;;
	esac
done
[ -n "$csv" ] && [ -n "$logs" ] || { echo "bench: --csv and --logs are required" >&2; exit 2; }
mkdir -p "$logs"

# The selftest helpers (nic_up, gid_index, wait_for); they read their positional arguments.
set --
# shellcheck source-path=SCRIPTDIR source=../../tests/selftests/lib.sh
. "$(dirname "$0")/../../tests/selftests/lib.sh"

say() { printf 'bench: %s\n' "$*"; }

# workload size: the perftest binary and its message size, in table order.
WORKLOADS=(
	"ib_write_bw 4096" "ib_write_bw 65536"
	"ib_read_bw 4096" "ib_read_bw 65536"
	"ib_send_bw 4096" "ib_send_bw 65536"
	"ib_send_lat 2" "ib_write_lat 2"
)
LIMITS=(limit_memcpy_python limit_dd_zero limit_tmpfs_copy_to_user)
declare -A R # R[driver,workload,size] = value | fail

# --- one-copy limit ------------------------------------------------------------------------

# dd_gbps DD-ARGS...: dd's rate in Gb/s, from its byte count and elapsed seconds.
dd_gbps() {
	LC_ALL=C timeout "$tmo" dd "$@" 2>&1 | awk '/ copied, / {
		for (i = 1; i < NF; i++) if ($(i + 1) == "s,") t = $i
		if (t > 0) printf "%.3f\n", $1 * 8 / t / 1e9 }'
}
# best_of N CMD...: the largest of N numeric outputs of CMD (nothing if none is numeric).
best_of() {
	local n=$1 i v best=
	shift
	for ((i = 0; i < n; i++)); do
		v=$("$@" || true)
		[[ $v =~ ^[0-9.]+$ ]] || continue
		if [ -z "$best" ] || awk -v a="$v" -v b="$best" 'BEGIN { exit !(a > b) }'; then
			best=$v
		fi
	done
	[ -n "$best" ] && echo "$best"
}
# memcpy of 64 KiB chunks in user space: a 64 MiB source into one 64 KiB buffer, as dd does.
memcpy_py() {
	timeout "$tmo" python3 - <<-'EOF'
		import time
		n, tot = 64 << 10, 64 << 20
		src, dst = bytearray(b"\x5a" * tot), bytearray(n)
		s, d = memoryview(src), memoryview(dst)
		def one_pass():
		    for o in range(0, tot, n):
		        d[:] = s[o:o + n]
		one_pass()
		t0, passes = time.perf_counter(), 0
		while True:
		    one_pass()
		    passes += 1
		    t = time.perf_counter() - t0
		    if t >= 1.0:
		        break
		print("%.3f" % (passes * tot * 8 / t / 1e9))
	EOF
}
# A tmpfs directory: /dev/shm or /tmp if they are tmpfs, else a fresh tmpfs mount.
tmpfs_dir() {
	local d
	for d in /dev/shm /tmp /run; do
		[ "$(stat -f -c %T "$d" 2>/dev/null)" = tmpfs ] && [ -w "$d" ] && { echo "$d"; return 0; }
	done
	d=$(mktemp -d)
	mount -t tmpfs -o size=300m rrxe-bench "$d" && echo "$d"
}
# measure_limits DRIVER: the three copy rates of this VM, recorded under DRIVER's phase.
measure_limits() {
	local drv=$1 dir f v
	v=$(best_of 2 memcpy_py) || v=fail
	R[$drv,limit_memcpy_python,65536]=${v:-fail}
	v=$(best_of 2 dd_gbps if=/dev/zero of=/dev/null bs=64k count=8192) || v=fail
	R[$drv,limit_dd_zero,65536]=${v:-fail}
	v=fail
	if dir=$(tmpfs_dir); then
		f=$dir/rrxe-bench.$$
		if timeout "$tmo" dd if=/dev/zero of="$f" bs=1M count=256 status=none; then
			v=$(best_of 3 dd_gbps if="$f" of=/dev/null bs=64k) || v=fail
		fi
		rm -f "$f"
	fi
	R[$drv,limit_tmpfs_copy_to_user,65536]=${v:-fail}
	say "$drv one-copy limits (Gb/s): memcpy(python) ${R[$drv,limit_memcpy_python,65536]}," \
		"dd /dev/zero ${R[$drv,limit_dd_zero,65536]}," \
		"copy_to_user from tmpfs ${R[$drv,limit_tmpfs_copy_to_user,65536]}"
}

# --- perftest ------------------------------------------------------------------------------

# perf_value FILE SIZE COLUMN...: the first COLUMN found in the header of perftest's summary,
# read from the result line of SIZE. Column names are the header tokens that start with '#' or
# end in ']' ("BW average[Gb/sec]" is the token "average[Gb/sec]").
perf_value() {
	local f=$1 size=$2
	shift 2
	awk -v size="$size" -v want="$*" '
		BEGIN { nw = split(want, w, " ") }
		/#bytes/ {
			n = 0; idx = 0; pri = nw + 1
			for (i = 1; i <= NF; i++) {
				if ($i !~ /^#/ && $i !~ /\]$/) continue
				n++
				for (j = 1; j < pri; j++) if ($i == w[j]) { idx = n; pri = j }
			}
			next
		}
		idx && $1 == size && NF >= idx && $idx ~ /^[0-9.]+$/ { v = $idx }
		END { if (v != "") print v }' "$f"
}
listening() { ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }

port=18700
# run_one DRIVER DEV GID WORKLOAD SIZE: one perftest run, server in the background and client to
# localhost, both bounded by the timeout; records the client's result or "fail". Bandwidth is
# computed from MsgRate[Mpps] (six decimals; perftest rounds "BW average" to two), latency is
# t_avg, and t_typical (the median) is recorded as the row "WORKLOAD(median)".
# perftest calibrates its cycle counter against gettimeofday at start; on a busy TCG host that
# fails now and then ("Correlation coefficient r^2: ... < 0.9") and the run reports 0 or inf:
# such a run is repeated, up to 3 attempts.
run_one() {
	local drv=$1 dev=$2 gidx=$3 bin=$4 size=$5 log srv rc src v med unit attempt
	local -a args
	log=$logs/$drv-$bin-$size
	for attempt in 1 2 3; do
		port=$((port + 1)) rc=0 src=0 v='' med=''
		args=(-d "$dev" -x "$gidx" -p "$port" -F -s "$size")
		case $bin in
		*_bw) args+=(-n "$bw_iters" --report_gbits); unit=Gb/s ;;
		*) args+=(-n "$lat_iters"); unit=usec ;;
		esac
		timeout -k 5 "$tmo" "$bin" "${args[@]}" >"$log.server" 2>&1 &
		srv=$!
		wait_for 20 listening "$port" || true
		timeout -k 5 "$tmo" "$bin" "${args[@]}" localhost >"$log.client" 2>&1 || rc=$?
		wait "$srv" || src=$?
		case $bin in
		*_bw)
			v=$(perf_value "$log.client" "$size" "MsgRate[Mpps]")
			if [ -n "$v" ]; then
				v=$(awk -v r="$v" -v s="$size" 'BEGIN { printf "%.4f", r * s * 8 / 1000 }')
			else
				v=$(perf_value "$log.client" "$size" "average[Gb/sec]")
			fi
			;;
		*)
			v=$(perf_value "$log.client" "$size" "t_avg[usec]" "t_typical[usec]")
			med=$(perf_value "$log.client" "$size" "t_typical[usec]")
			;;
		esac
		awk -v v="$v" 'BEGIN { exit !(v + 0 > 0) }' || v=''
		[ "$rc" -eq 0 ] && [ "$src" -eq 0 ] && [ -n "$v" ] && break
		grep -q 'Correlation coefficient' "$log.client" "$log.server" || break
		[ "$attempt" -lt 3 ] && say "$drv $bin -s $size: perftest clock calibration failed, again"
	done
	if [ "$rc" -ne 0 ] || [ "$src" -ne 0 ] || [ -z "$v" ]; then
		say "$drv $bin -s $size: fail (client exit $rc, server exit $src; $log.*)"
		sed 's/^/bench:   client| /' "$log.client" | grep -v -e '^bench:   client| *$' | tail -3 || true
		v=fail med=fail
	else
		say "$drv $bin -s $size: $v $unit${med:+ (median $med)}"
	fi
	R[$drv,$bin,$size]=$v
	[ "$unit" = usec ] && R[$drv,$bin\(median\),$size]=${med:-fail}
	return 0
}

mod_loaded() { [ -d "/sys/module/$1" ]; }
# bounded CMD...: CMD bounded by the per-command timeout.
bounded() { timeout -k 5 "$tmo" "$@"; }

# phase DRIVER MODULE LINK_TYPE: load the driver, add a device on the NIC, measure, unload.
phase() {
	local drv=$1 mod=$2 type=$3 dev=t${3}0 gidx='' w bin size t0=$SECONDS
	say "== $drv: module $mod, device $dev (link type $type) on $NIC"
	measure_limits "$drv"
	if ! bounded modprobe "$mod"; then
		say "$drv: modprobe $mod failed"
	elif ! bounded rdma link add "$dev" type "$type" netdev "$NIC"; then
		say "$drv: rdma link add $dev failed"
	elif ! wait_for 20 gid_index "$dev" ffff:0a00:020f >/dev/null; then
		say "$drv: no IPv4 RoCE v2 GID on $dev"
	else
		gidx=$(gid_index "$dev" ffff:0a00:020f)
		say "$drv: $dev GID index $gidx: $(cat "/sys/class/infiniband/$dev/ports/1/gids/$gidx")"
	fi
	for w in "${WORKLOADS[@]}"; do
		read -r bin size <<<"$w"
		if [ -n "$gidx" ]; then
			run_one "$drv" "$dev" "$gidx" "$bin" "$size"
		else
			R[$drv,$bin,$size]=fail
		fi
	done
	if [ -e "/sys/class/infiniband/$dev" ]; then
		bounded rdma link delete "$dev" || say "$drv: rdma link delete $dev failed"
	fi
	bounded modprobe -r "$mod" || say "$drv: modprobe -r $mod failed"
	say "$drv: done in $((SECONDS - t0)) s"
	write_csv # what we have so far, should the next phase take the kernel down
}

# ratio A B: A/B with three decimals, empty unless both are numbers and B > 0.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b + 0 > 0) printf "%.3f", a / b }'
}
# write_csv: the table from what was measured; anything missing is "fail". Runs on exit, so
# that an unexpected error still leaves a table.
write_csv() {
	local w bin size a b la lb unit tmp=$csv.tmp
	local -a rows=()
	for w in "${WORKLOADS[@]}"; do # each latency is followed by its median
		rows+=("$w")
		read -r bin size <<<"$w"
		if [[ $bin == *_lat ]]; then rows+=("$bin(median) $size"); fi
	done
	rows+=("${LIMITS[@]/%/ 65536}")
	echo "workload,size,unit,rxe,rrxe,rrxe_over_rxe,rxe_over_limit,rrxe_over_limit" >"$tmp"
	for w in "${rows[@]}"; do
		read -r bin size <<<"$w"
		a=${R[rxe,$bin,$size]:-fail} b=${R[rrxe,$bin,$size]:-fail} la='' lb='' unit=Gb/s
		case $bin in
		*_lat | *_lat\(median\)) unit=usec ;;
		*_bw)
			la=$(ratio "$a" "${R[rxe,limit_tmpfs_copy_to_user,65536]:-}")
			lb=$(ratio "$b" "${R[rrxe,limit_tmpfs_copy_to_user,65536]:-}")
			;;
		esac
		echo "$bin,$size,$unit,$a,$b,$(ratio "$b" "$a"),$la,$lb" >>"$tmp"
	done
	mv "$tmp" "$csv"
}

# --- main ----------------------------------------------------------------------------------

trap 'rc=$?; [ $rc -eq 0 ] || say "guest script failed (exit $rc): the table has what was measured"; write_csv && say "wrote $csv"' EXIT
mkdir -p /run/rdma /etc/rdma 2>/dev/null || true
nic_up
bounded modprobe ib_uverbs
say "kernel $(uname -r), $(nproc) vCPUs, perftest $(ib_write_bw --version 2>&1 | awk '{ print $NF; exit }')"

for m in rdma_rxe rrxe; do
	if mod_loaded "$m"; then bounded modprobe -r "$m" || true; fi
done
phase rxe rdma_rxe rxe
if mod_loaded rdma_rxe; then
	# Never both drivers in one kernel: without the rxe unload there is no rrxe phase (its
	# rows stay "fail").
	say "rdma_rxe is still loaded: skipping rrxe"
else
	phase rrxe rrxe rrxe
fi

