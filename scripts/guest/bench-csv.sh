# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154 # sourced by bench.sh, which sets the globals
#
# scripts/guest/bench-csv.sh: the CSV of scripts/guest/bench.sh, which sources it. The columns
# are described in scripts/guest/bench.sh's header. The results are the arrays V, C, CS and CC
# of bench-perf.sh: per "DRIVER|FAMILY|WORKLOAD|SIZE", the values of the successful runs.

CSV_HEADER="family,workload,size,unit,rxe,rrxe,rrxe_over_rxe,rxe_min,rxe_max,rrxe_min,rrxe_max,\
rxe_runs,rrxe_runs,limit,rxe_over_limit,rrxe_over_limit,rxe_cpu,rrxe_cpu,cpu_unit,\
rxe_cpu_server,rrxe_cpu_server,rxe_cpu_client,rrxe_cpu_client"

# csv_line FAMILY WORKLOAD SIZE UNIT KIND [LIMIT_WORKLOAD LIMIT_SIZE]: one line of the CSV, all
# in one awk: medians (of an even count: the mean of the middle two), spreads, ratios.
csv_line() {
	local fam=$1 w=$2 size=$3 unit=$4 kind=$5 lw=${6:-} ls=${7:-} cu=''
	case $kind in
	bw) cu=CPU-s/GB ;;
	rate) cu=CPU-s/Mmsg ;;
	esac
	awk -v head="$fam,$w,$size,$unit" -v cu="$cu" -v lname="${lw:+$lw@$ls}" \
		-v vr="${V[rxe|$fam|$w|$size]:-}" -v vq="${V[rrxe|$fam|$w|$size]:-}" \
		-v cr="${C[rxe|$fam|$w|$size]:-}" -v cq="${C[rrxe|$fam|$w|$size]:-}" \
		-v sr="${CS[rxe|$fam|$w|$size]:-}" -v sq="${CS[rrxe|$fam|$w|$size]:-}" \
		-v ur="${CC[rxe|$fam|$w|$size]:-}" -v uq="${CC[rrxe|$fam|$w|$size]:-}" \
		-v lr="${V[rxe|$fam|$lw|$ls]:-}" -v lq="${V[rrxe|$fam|$lw|$ls]:-}" '
		function f(x) {
			return x >= 1000 ? sprintf("%.0f", x) : sprintf(x < 0.01 ? "%.6f" : "%.4g", x)
		}
		# st(LIST): sets n, lo, hi and returns the median (nothing for an empty list)
		function st(s,    a, i, j, t) {
			n = split(s, a, " ")
			if (n == 0) { lo = hi = ""; return "" }
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
			lo = f(a[1]); hi = f(a[n])
			return f(n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2)
		}
		function ratio(a, b) { return (a != "" && b != "" && b + 0 > 0) ? sprintf("%.3f", a / b) : "" }
		BEGIN {
			mr = st(vr); rlo = lo; rhi = hi; rn = n
			mq = st(vq); qlo = lo; qhi = hi; qn = n
			xr = st(cr); xq = st(cq)
			limr = st(lr); limq = st(lq)
			printf "%s,%s,%s,%s,%s,%s,%s,%s,%d,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", head,
				mr == "" ? "fail" : mr, mq == "" ? "fail" : mq, ratio(mq, mr),
				rlo, rhi, qlo, qhi, rn, qn, lname, ratio(mr, limr), ratio(mq, limq), xr, xq,
				xr == "" && xq == "" ? "" : cu, st(sr), st(sq), st(ur), st(uq)
		}'
}

# write_csv: the table from what was measured so far, every family and row in order; a row
# without a successful run is "fail". A bandwidth row is compared with its family's limit:
# loopback rows with the copy at their size (the 4 KiB copy for the rows below 64 KiB; 64 KiB
# for larger ones), wire rows (veth and wire) with the family's UDP limit. Runs after each
# driver phase and on exit.
write_csv() {
	local tmp=$csv.tmp fam row w kind fams bin size st lw ls dg unit
	{
		echo "$CSV_HEADER"
		for fam in "${FAMILIES[@]}"; do
			dg=$((${PMTU[$fam]:-1024} + 16))
			for row in "${ROWS[@]}"; do
				row_applies "$row" "$fam" || continue
				read -r w kind fams bin size _ <<<"$row"
				if [ "$fam" != loop ]; then
					lw=limit_iperf3_udp ls=$dg
				elif [ "$size" -ge 65536 ]; then
					lw=limit_copy_to_user ls=65536
				else
					lw=limit_copy_to_user ls=4096
				fi
				case $kind in
				bw) csv_line "$fam" "$w" "$size" Gb/s bw "$lw" "$ls" ;;
				rate) csv_line "$fam" "$w" "$size" Mpps rate ;;
				lat)
					for st in p50 p99 p99.9 max; do
						csv_line "$fam" "$w.$st" "$size" usec lat
					done
					;;
				esac
			done
			if [[ $fam == loop || $fam == wire ]] && [ "$nvme_secs" -gt 0 ]; then
				for row in "${NVME_ROWS[@]}"; do
					read -r w size unit _ <<<"$row"
					[[ $w =~ $rows_re ]] && csv_line "$fam" "$w" "$size" "$unit" nvme
				done
			fi
			if [ "$fam" = loop ] && [ "$scale_qps" -gt 0 ]; then
				for row in "${SCALE_ROWS[@]}"; do
					read -r w unit _ <<<"$row"
					[[ $w =~ $rows_re ]] && csv_line "$fam" "$w" "$scale_qps" "$unit" scale
				done
			fi
			[ "$fam" != congestion ] || bneck_csv
			if [ "$fam" = loop ]; then
				csv_line "$fam" limit_copy_to_user 4096 Gb/s limit
				csv_line "$fam" limit_copy_to_user 65536 Gb/s limit
			else
				csv_line "$fam" limit_iperf3_tcp "${MTU[$fam]}" Gb/s limit
				csv_line "$fam" limit_iperf3_udp "$dg" Gb/s limit
			fi
		done
	} >"$tmp"
	mv "$tmp" "$csv"
}
