#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/guest/bench.sh --csv FILE --logs DIR [--runs N] [--timeout S] [--bw-iters N]
#                        [--rate-iters N] [--lat-iters N] [--iperf-secs S] [--nvme-secs S]
#                        [--scale-qps N] [--families "loop veth1500 veth9000"] [--rows REGEX]
#                        [--profile]
# scripts/guest/bench.sh --families wire --csv FILE --logs DIR [OPTIONS]  (guest b of the pair)
#
# Runs in the bench VM (started by scripts/bench): perftest on the C rdma_rxe (link type rxe),
# then, rxe unloaded, on rrxe (link type rrxe); never both in one kernel. In each driver phase,
# for each family in turn:
#   loop      one device on the guest's NIC, server and client on it (loopback);
#   veth1500  the wire: network namespaces rrxe-bench-a and -b joined by a veth pair of MTU 1500
#             (RoCE path MTU 1024), a device on each end; the server runs in a on its device,
#             the client in b on its own, connecting to a's address, so that every packet (RoCE
#             and perftest's TCP exchange) crosses the veth;
#   veth9000  the same with MTU 9000 (path MTU 4096);
#   congestion  the veth of MTU 1500 with netem loss on both ends (bench-perf.sh, @loss=):
#             random loss of 0.1 to 5 % and bursts, the goodput that recovery keeps; and a
#             60 Mbit/s RED bottleneck that marks (bench-bneck.sh: tests/selftests/bottleneck.sh
#             in namespaces of its own), one, two and four WRITE flows.
# Or, alone, in guest b of the two guests of scripts/bench's wire phase:
#   wire      two guests (one vCPU each) joined by a QEMU socket netdev, MTU 1500 (path MTU
#             1024); the servers on guest a, run there through its agent over the wire itself
#             (bench-wire.sh, bench-agent.py), the clients here; the driver phases load and
#             unload the module on both guests (rxe<->rxe, then rrxe<->rrxe).
# The rows of a family (the ROWS table in bench-perf.sh: 64-byte bandwidth rows on veth1500
# only; 64-byte rate, latency and bidirectional rows on loop and veth1500; latencies without
# inline data on loop only; the wire has bandwidth, four QPs and the SEND, WRITE and READ
# latencies) are run --runs times (runs outer, rows inner); each row's median, minimum and
# maximum over its successful runs are reported.
# Beside the rows, the limits of bench-limits.sh: copy_to_user from tmpfs for loopback, iperf3
# TCP and UDP over the same veth (or socket wire) for the wire families.
# The kernel CPU cost of a bandwidth or rate row is the whole guest's system + irq + softirq
# time (/proc/stat, all CPUs) from the moment perftest's client prints its summary header (it
# then starts the measured iterations) to the moment it prints the result, per GB moved
# (messages x size, x2 when bidirectional) or per million messages; process start, connection
# setup and teardown are left out. For the wire it is the sum of both guests (guest a's sampled
# by its agent at the same two moments), also given per side. The loop and wire families also
# have NVMe-oF rows (bench-nvme.sh: fio over nvme-rdma against nvmet-rdma, --nvme-secs seconds
# per run, 0 for none; at most three runs). The loop family also has the scale rows
# (bench-scale.sh: --scale-qps RC QPs created, connected in pairs and destroyed, seconds per
# phase and kernel KiB per QP; 0 for none; at most three runs).
#
# Writes FILE, one CSV row per family and workload (after each driver phase and on exit):
#   family,workload,size,unit,rxe,rrxe,rrxe_over_rxe,rxe_min,rxe_max,rrxe_min,rrxe_max,
#   rxe_runs,rrxe_runs,limit,rxe_over_limit,rrxe_over_limit,rxe_cpu,rrxe_cpu,cpu_unit,
#   rxe_cpu_server,rrxe_cpu_server,rxe_cpu_client,rrxe_cpu_client
# family: loop, veth1500, veth9000, wire. workload: the perftest program; _q4, _q8, _q16 and
# _q64 that many QPs (-q N), _short a quarter of the messages (a new user's first run),
# _bidir both directions (-b; the sum of both), ib_*_rate_l16 message rate with 16 work
# requests per post (--post_list 16), _I0 no inline data (-I 0); latency rows end in .p50
# (t_typical), .p99, .p99.9 or .max. limit_copy_to_user (size: the read size),
# limit_iperf3_tcp (size: the wire's MTU) and limit_iperf3_udp (size: the datagram) are the
# limits, measured in each round of each driver; nvme_* are the NVMe-oF rows. unit: Gb/s, Mpps,
# usec, MB/s, IOPS, s or KiB/QP (the scale rows). rxe, rrxe: the medians; rrxe_over_rxe is rrxe/rxe (above 1: rrxe moves more;
# for usec below 1: rrxe is faster).
# *_min, *_max: the spread over the runs; *_runs: how many runs succeeded ("fail" with 0).
# limit: the limit row a bandwidth row is compared with (NAME@SIZE: loopback rows with the
# copy at 4 KiB or 64 KiB, wire rows with the family's UDP limit); *_over_limit: the median
# over that limit's value in the same phase. *_cpu: the median kernel CPU cost, cpu_unit
# CPU-s/GB (bandwidth rows) or CPU-s/Mmsg (rate rows); for the wire the sum of both guests,
# *_cpu_server and *_cpu_client the medians of guest a's and guest b's shares (empty for the
# other families, where one guest runs both ends). Every perftest, iperf3 and fio output is
# kept in DIR.
set -euo pipefail

csv='' logs='' tmo=60 runs=5 bw_iters=1000 rate_iters=8000 lat_iters=2000 iperf_secs=3 nvme_secs=3
scale_qps=10000
profile=0
families="loop veth1500 veth9000" rows_re=. baseline="" rrxe_args=""
usage="usage: $0 --csv FILE --logs DIR [--runs N] [--timeout S] [--bw-iters N] [--rate-iters N] \
[--lat-iters N] [--iperf-secs S] [--nvme-secs S] [--scale-qps N] [--families LIST] [--rows REGEX] \
[--baseline 'RRXE_MODULE_PARAMETERS'] [--rrxe-args 'RRXE_MODULE_PARAMETERS'] [--profile]"
while [ $# -gt 0 ]; do
	case $1 in
	--csv) csv=$2; shift 2 ;;
	--logs) logs=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--timeout) tmo=$2; shift 2 ;;
	--bw-iters) bw_iters=$2; shift 2 ;;
	--rate-iters) rate_iters=$2; shift 2 ;;
	--lat-iters) lat_iters=$2; shift 2 ;;
	--iperf-secs) iperf_secs=$2; shift 2 ;;
	--nvme-secs) nvme_secs=$2; shift 2 ;;
	--scale-qps) scale_qps=$2; shift 2 ;;
	--families) families=$2; shift 2 ;;
	--rows) rows_re=$2; shift 2 ;;
	--baseline) baseline=$2; shift 2 ;;
	--profile) profile=1; shift ;;
	--rrxe-args) rrxe_args=$2; shift 2 ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
# shellcheck disable=SC2015 # "A && B || C" below: C is meant when A or B fails
[ -n "$csv" ] && [ -n "$logs" ] || { echo "bench: --csv and --logs are required" >&2; exit 2; }
read -r -a FAMILIES <<<"$families"
for f in "${FAMILIES[@]}"; do
	case $f in
	loop | veth1500 | veth9000 | congestion) ;;
	wire)
		[ ${#FAMILIES[@]} -eq 1 ] ||
			{ echo "bench: wire runs alone, in the two guests of scripts/bench" >&2; exit 2; }
		;;
	*) echo "bench: unknown family $f (loop, veth1500, veth9000, congestion, wire)" >&2; exit 2 ;;
	esac
done
[ "$profile" = 0 ] || command -v perf >/dev/null ||
	{ echo "bench: --profile: no perf (Debian's linux-perf; scripts/setup installs it)" >&2; exit 2; }
mkdir -p "$logs"

# The selftest helpers (nic_up, gid_index, wait_for); they read their positional arguments.
set --
# shellcheck source-path=SCRIPTDIR source=../../tests/selftests/lib.sh
. "$(dirname "$0")/../../tests/selftests/lib.sh"
say() { printf 'bench: %s\n' "$*"; }
# bounded CMD...: CMD bounded by the per-command timeout.
bounded() { timeout -k 5 "$tmo" "$@"; }

declare -A V C CS CC # results: see bench-perf.sh
DRV='' FAM='' RUN=0 TYPE='' WORK=''
SRV_NS=() CLI_NS=() SRV_DEV='' CLI_DEV='' SRV_GID='' CLI_GID='' SRV_ADDR=''
# shellcheck source-path=SCRIPTDIR source=bench-perf.sh
. "$(dirname "$0")/bench-perf.sh"
# shellcheck source-path=SCRIPTDIR source=bench-limits.sh
. "$(dirname "$0")/bench-limits.sh"
# shellcheck source-path=SCRIPTDIR source=bench-nvme.sh
. "$(dirname "$0")/bench-nvme.sh"
# shellcheck source-path=SCRIPTDIR source=bench-scale.sh
. "$(dirname "$0")/bench-scale.sh"
# shellcheck source-path=SCRIPTDIR source=bench-bneck.sh
. "$(dirname "$0")/bench-bneck.sh"
# shellcheck source-path=SCRIPTDIR source=bench-csv.sh
. "$(dirname "$0")/bench-csv.sh"
# shellcheck source-path=SCRIPTDIR source=bench-wire.sh
. "$(dirname "$0")/bench-wire.sh"

# Each wire family's MTU and the RoCE path MTU it gives.
declare -A MTU=([veth1500]=1500 [veth9000]=9000 [congestion]=1500 [wire]=1500)
declare -A PMTU=([veth1500]=1024 [veth9000]=4096 [congestion]=1024 [wire]=1024)
port_active() { grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state"; }

# fam_enter FAMILY: the context, limits and devices of FAMILY for the loaded driver. Fails
# (after saying why) when the devices are not usable; the family's rows then stay "fail".
fam_enter() {
	local mtu pmtu
	FAM=$1
	case $FAM in
	loop)
		SRV_NS=() CLI_NS=() SRV_DEV=t${TYPE}0 CLI_DEV=t${TYPE}0 SRV_ADDR=localhost
		copy_limits
		bounded rdma link add "$SRV_DEV" type "$TYPE" netdev "$NIC" ||
			{ say "$DRV $FAM: rdma link add $SRV_DEV failed"; return 1; }
		SRV_GID=$(wait_for 20 gid_index "$SRV_DEV" ffff:0a00:020f) ||
			{ say "$DRV $FAM: no IPv4 RoCE v2 GID on $SRV_DEV"; return 1; }
		CLI_GID=$SRV_GID
		say "$DRV $FAM: $SRV_DEV on $NIC, GID index $SRV_GID," \
			"active_mtu $(devinfo_field "$SRV_DEV" active_mtu)"
		;;
	veth* | congestion)
		mtu=${MTU[$FAM]} pmtu=${PMTU[$FAM]}
		SRV_NS=(ip netns exec "$WA") CLI_NS=(ip netns exec "$WB") SRV_ADDR=$ADDR_A
		SRV_DEV=t${TYPE}a CLI_DEV=t${TYPE}b
		[ "$WIRE" = up ] || { say "$DRV $FAM: no veth pair"; return 1; }
		wire_mtu "$mtu" || { say "$DRV $FAM: veth MTU $mtu refused"; return 1; }
		wire_limits "$pmtu" "$mtu"
		ip netns exec "$WA" timeout -k 5 "$tmo" rdma link add "$SRV_DEV" type "$TYPE" netdev va &&
			ip netns exec "$WB" timeout -k 5 "$tmo" rdma link add "$CLI_DEV" type "$TYPE" netdev vb ||
			{ say "$DRV $FAM: rdma link add on the veth failed"; return 1; }
		wait_for 20 port_active "$SRV_DEV" && wait_for 20 port_active "$CLI_DEV" ||
			{ say "$DRV $FAM: ports not ACTIVE"; return 1; }
		SRV_GID=$(wait_for 20 gid_index "$SRV_DEV" "$GID_A") &&
			CLI_GID=$(wait_for 20 gid_index "$CLI_DEV" "$GID_B") ||
			{ say "$DRV $FAM: no IPv4 RoCE v2 GIDs"; return 1; }
		say "$DRV $FAM: $SRV_DEV on va (in $WA) and $CLI_DEV on vb (in $WB), MTU $mtu," \
			"GID indexes $SRV_GID/$CLI_GID, active_mtu" \
			"$(devinfo_field "$SRV_DEV" active_mtu)/$(devinfo_field "$CLI_DEV" active_mtu)" \
			"(path MTU $pmtu expected)"
		;;
	wire)
		SRV_NS=(remote) CLI_NS=() SRV_ADDR=$WIRE_ADDR_A
		SRV_DEV=w${TYPE}a CLI_DEV=w${TYPE}b
		[ "$WIRE" = up ] || { say "$DRV $FAM: no wire to guest a"; return 1; }
		wire_limits "${PMTU[$FAM]}" "${MTU[$FAM]}"
		remote timeout -k 5 "$tmo" rdma link add "$SRV_DEV" type "$TYPE" netdev $WIRE_NIC &&
			bounded rdma link add "$CLI_DEV" type "$TYPE" netdev $WIRE_NIC ||
			{ say "$DRV $FAM: rdma link add on the wire failed"; return 1; }
		SRV_GID=$(remote_sh "wait_for 20 gid_index $SRV_DEV $WIRE_GID_A") &&
			CLI_GID=$(wait_for 20 gid_index "$CLI_DEV" "$WIRE_GID_B") ||
			{ say "$DRV $FAM: no IPv4 RoCE v2 GIDs"; return 1; }
		wait_for 20 port_active "$CLI_DEV" ||
			{ say "$DRV $FAM: port of $CLI_DEV not ACTIVE"; return 1; }
		peer_kcpu_open || say "$DRV $FAM: no CPU samples from guest a"
		say "$DRV $FAM: $SRV_DEV on guest a and $CLI_DEV on guest b, $WIRE_NIC MTU" \
			"${MTU[$FAM]}, GID indexes $SRV_GID/$CLI_GID, active_mtu" \
			"$(remote ibv_devinfo -d "$SRV_DEV" | awk '$1 == "active_mtu:" { print $2; exit }')/$(
				devinfo_field "$CLI_DEV" active_mtu) (path MTU ${PMTU[$FAM]} expected)"
		;;
	esac
}
# fam_leave: keep the devices' counters (retransmissions, drops: DIR/DRIVER-FAMILY-counters),
# then delete the devices (guest a's through its agent).
fam_leave() {
	local d last='' f=$logs/$DRV-$FAM-counters
	for d in "$SRV_DEV" "$CLI_DEV"; do
		if [ -n "$d" ] && [ "$d" != "$last" ] && [ -e "/sys/class/infiniband/$d" ]; then
			{ echo "$d:"; bounded rdma statistic show link "$d/1"; } >>"$f" 2>&1
		fi
		last=$d
	done
	if [ "$FAM" = wire ]; then
		if [ -n "$SRV_DEV" ]; then
			{ echo "$SRV_DEV (guest a):"; remote timeout 10 rdma statistic show link "$SRV_DEV/1"; } \
				>>"$f" 2>&1
			remote_sh "[ ! -e /sys/class/infiniband/$SRV_DEV ] ||
				timeout -k 5 $tmo rdma link delete $SRV_DEV" ||
				say "$DRV $FAM: rdma link delete $SRV_DEV on guest a failed"
		fi
		peer_kcpu_close
		SRV_DEV=''
	fi
	for d in "$SRV_DEV" "$CLI_DEV"; do
		if [ -n "$d" ] && [ -e "/sys/class/infiniband/$d" ]; then
			bounded rdma link delete "$d" || say "$DRV $FAM: rdma link delete $d failed"
		fi
	done
	SRV_DEV='' CLI_DEV=''
}

# The driver on this guest and, for the wire, on guest a (through its agent).
drv_load() {
	if [ -n "${MODKO:-}" ]; then
		# insmod loads no dependencies: those of the installed rrxe first
		# shellcheck disable=SC2046 # a list of module names
		bounded modprobe -a $(modinfo -F depends "$1" | tr , ' ') || return 1
		# shellcheck disable=SC2086 # the parameters are words
		bounded insmod "$MODKO" ${MODARGS:-} || return 1
		return 0
	fi
	# shellcheck disable=SC2086 # the parameters are words
	bounded modprobe "$1" ${MODARGS:-} || return 1
	# shellcheck disable=SC2086 # the parameters are words
	[ "$WIRE" != up ] || [ "${FAMILIES[0]}" != wire ] ||
		remote timeout -k 5 "$tmo" modprobe "$1" ${MODARGS:-}
}
drv_unload() {
	bounded modprobe -r "$1" || say "$DRV: modprobe -r $1 failed"
	if [ "$WIRE" = up ] && [ "${FAMILIES[0]}" = wire ]; then
		remote timeout -k 5 "$tmo" modprobe -r "$1" || say "$DRV: modprobe -r $1 on guest a failed"
	fi
}
# drv_loaded MODULE: loaded here or (the wire) on guest a.
drv_loaded() {
	[ -d "/sys/module/$1" ] && return 0
	[ "$WIRE" = up ] && [ "${FAMILIES[0]}" = wire ] && remote test -d "/sys/module/$1"
}

# phase DRIVER MODULE LINK_TYPE ROUND: load the driver, run round ROUND of every family (run
# ROUND of each row; the limits are measured again in each round), unload.
phase() {
	local fam row t0=$SECONDS t1
	DRV=$1 TYPE=$3 RUN=$4
	say "== $DRV: module $2, link type $TYPE, round $RUN of $runs"
	drv_load "$2" || { say "$DRV: modprobe $2 failed"; return 0; }
	for fam in "${FAMILIES[@]}"; do
		t1=$SECONDS
		if fam_enter "$fam"; then
			for row in "${ROWS[@]}"; do
				row_applies "$row" "$fam" && run_row "$row"
			done
			if [ "$nvme_secs" -gt 0 ] && [ "$RUN" -le 3 ]; then
				case $fam in
				loop) nvme_rows 10.0.2.15 ;;
				wire) nvme_rows $WIRE_ADDR_A ;;
				esac
			fi
			if [ "$fam" = loop ] && [ "$scale_qps" -gt 0 ] && [ "$RUN" -le 3 ]; then
				scale_rows
			fi
			[ "$fam" != congestion ] || [ "$RUN" -gt 3 ] || bneck_rows "$2"
		fi
		fam_leave
		say "$DRV $fam: round $RUN done in $((SECONDS - t1)) s"
	done
	write_csv # what we have so far, should the next phase take the kernel down
	drv_unload "$2"
	say "$DRV: round $RUN done in $((SECONDS - t0)) s"
}

# --- main ----------------------------------------------------------------------------------

# on_exit: the table from what was measured, whatever happened; the guest as it was.
on_exit() {
	local rc=$?
	[ $rc -eq 0 ] || say "guest script failed (exit $rc): the table has what was measured"
	nvme_down
	wire_down
	if [ "${FAMILIES[0]}" = wire ] && [ "$WIRE" = up ]; then
		fam_leave
		for m in rdma_rxe rrxe; do remote_sh "[ ! -d /sys/module/$m ] || modprobe -r $m" || true; done
		agent_quit
	fi
	[ -z "$WORK" ] || rm -rf "$WORK"
	write_csv && say "wrote $csv"
}
trap on_exit EXIT
mkdir -p /run/rdma /etc/rdma 2>/dev/null || true
# perftest's outputs while it runs: the guest's own tmpfs (copied into the logs after each run)
WORK=$(tmpfs_dir)/rrxe-bench-work.$$
mkdir -p "$WORK"
[[ " ${FAMILIES[*]} " != *" loop "* ]] || nic_up
bounded modprobe ib_uverbs
say "kernel $(uname -r), $(nproc) vCPUs," \
	"perftest $(ib_write_bw --version 2>&1 | awk '{ print $NF; exit }')," \
	"$(iperf3 --version 2>/dev/null | head -1 || echo 'no iperf3')"
say "families: ${FAMILIES[*]}; $runs runs; iterations: bw $bw_iters, rate $rate_iters," \
	"lat $lat_iters; iperf3 $iperf_secs s; fio $nvme_secs s; scale $scale_qps QPs;" \
	"rows matching '$rows_re'"
WIRE=down
if [[ " ${FAMILIES[*]} " == *" veth"* ]] || [[ " ${FAMILIES[*]} " == *" congestion "* ]]; then
	if wire_up; then WIRE=up; else say "veth pair setup failed: no wire families"; fi
fi
if [ "${FAMILIES[0]}" = wire ]; then
	# guest b of the pair: our end of the wire, then guest a's agent (it may boot later)
	if ! wire_nic_up $WIRE_ADDR_B $WIRE_MAC_B; then
		say "no NIC with MAC $WIRE_MAC_B: no wire"
	elif ! agent_wait 300; then
		say "guest a's agent does not answer on $WIRE_ADDR_A:$AGENT_PORT: no wire"
	else
		WIRE=up
		say "wire: $WIRE_NIC $WIRE_ADDR_B, guest a's agent at $WIRE_ADDR_A after $SECONDS s" \
			"($(remote nproc) vCPU there)"
	fi
fi

for m in rdma_rxe rrxe; do
	if [ -d "/sys/module/$m" ]; then bounded modprobe -r "$m" || true; fi
	if [ "$WIRE" = up ] && [ "${FAMILIES[0]}" = wire ]; then
		remote_sh "[ ! -d /sys/module/$m ] || modprobe -r $m" || true
	fi
done
if [ -n "${baseline:-}" ]; then
	# An A/B of one change: the "rxe" rows are rrxe loaded with these parameters, or from
	# this module file (its first word, if it ends in .ko) with the rest as parameters.
	say "baseline: the rxe column is rrxe with '$baseline'"
	read -r BASE_KO BASE_ARGS <<<"$baseline"
	if [[ $BASE_KO != *.ko ]]; then BASE_ARGS="$baseline" BASE_KO=''; fi
fi
# The drivers take turns, round by round (rxe's first run, rrxe's first run, rxe's second...):
# a host that slows down during the bench (other guests, other work) then weighs on both
# columns alike, as it did not when each driver ran all its runs in one block.
for ((round = 1; round <= runs; round++)); do
	if [ -n "${baseline:-}" ]; then
		MODKO=$BASE_KO MODARGS=$BASE_ARGS
		phase rxe rrxe rrxe "$round"
		MODARGS='' MODKO=''
	else
		phase rxe rdma_rxe rxe "$round"
	fi
	if drv_loaded rdma_rxe; then
		# Never both drivers in one kernel: without the rxe unload there is no rrxe round
		# (its rows stay "fail").
		say "rdma_rxe is still loaded: skipping rrxe"
		break
	fi
	# rrxe with the module parameters of RRXE_BENCH_RRXE_ARGS (none: its defaults).
	MODARGS=$rrxe_args
	phase rrxe rrxe rrxe "$round"
	MODARGS=''
done
