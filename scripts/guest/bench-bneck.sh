# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154 # sourced by bench.sh, which sets the globals
#
# scripts/guest/bench-bneck.sh: the congestion family's bottleneck rows of
# scripts/guest/bench.sh, which sources it. tests/selftests/bottleneck.sh (its own namespaces:
# a router with a 60 Mbit/s RED queue that marks, Documentation/congestion.rst) runs one, two
# and four RC WRITE flows of 64 KiB through the bottleneck with a 64-byte ib_write_lat probe
# beside them: rrxe with its congestion control (BNECK_MODES=cc), C rxe without (it has none).
# Rows per flow count N: bneck_qN the flows' goodput (Gb/s), bneck_qN.drop the share of the
# bottleneck's packets it dropped (%), bneck_qN.p99 the probe's p99 (usec). At most three runs.

BNECK_ROWS=(
	"bneck_q1 1"
	"bneck_q2 2"
	"bneck_q4 4"
)

# bneck_rows MODULE: one run of the bottleneck rows with the driver MODULE (link type $TYPE),
# which bottleneck.sh unloads when it is done: loaded again for what follows in the phase.
bneck_rows() {
	local test log=$logs/$DRV-$FAM-bneck-r$RUN flows='' row w n mode
	test=$(dirname "$0")/../../tests/selftests/bottleneck.sh
	for row in "${BNECK_ROWS[@]}"; do
		read -r w n <<<"$row"
		[[ $w =~ $rows_re ]] && flows+=" $n"
	done
	[ -n "$flows" ] || return 0
	mode=off
	[ "$DRV" = rxe ] || mode=cc
	say "$DRV $FAM: bottleneck, flows$flows"
	BNECK_FLOWS=$flows BNECK_MODES=$mode BNECK_STRICT=0 BNECK_OUT=$WORK/bneck \
		timeout -k 5 600 bash "$test" "$1" "$TYPE" >"$log" 2>&1 ||
		say "$DRV $FAM bottleneck: exit $? (see $log)"
	[ -d "/sys/module/$1" ] || drv_load "$1" || say "$DRV: modprobe $1 failed after the bottleneck"
	# "# MODE, N flow(s) at R Mbit/s: P packets, D dropped, M CE-marked; goodput G Mbit/s,
	# utilisation U, probe p99 L us, Jain fairness J"
	while read -r n p d g l; do
		[ "$p" -gt 0 ] || continue
		add_result "$DRV|$FAM|bneck_q$n|65536" "$(awk -v g="$g" 'BEGIN { print g / 1000 }')"
		add_result "$DRV|$FAM|bneck_q$n.drop|65536" \
			"$(awk -v d="$d" -v p="$p" 'BEGIN { print 100 * d / p }')"
		[ "$l" = 0.0 ] || add_result "$DRV|$FAM|bneck_q$n.p99|65536" "$l"
	done < <(awk -v m="$mode," '$2 == m && $4 == "flow(s)" {
		for (i = 1; i < NF; i++) {
			if ($(i + 1) ~ /^packets,/) p = $i
			if ($(i + 1) ~ /^dropped,/) d = $i
			if ($i == "goodput") g = $(i + 1)
			if ($i == "p99") l = $(i + 1)
		}
		print $3, p, d, g, l }' "$log")
}

# bneck_csv: the bottleneck rows of the CSV (congestion family).
bneck_csv() {
	local row w n
	for row in "${BNECK_ROWS[@]}"; do
		read -r w n <<<"$row"
		[[ $w =~ $rows_re ]] || continue
		csv_line congestion "$w" 65536 Gb/s bneck
		csv_line congestion "$w.drop" 65536 % bneck
		csv_line congestion "$w.p99" 65536 usec bneck
	done
}
