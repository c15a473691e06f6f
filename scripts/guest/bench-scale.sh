# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154 # sourced by bench.sh, which sets the globals
#
# scripts/guest/bench-scale.sh: the scale rows of scripts/guest/bench.sh, which sources it.
# tests/verbs/verbs_scale creates --scale-qps RC QPs on the loop family's device (16-entry
# queues, one shared CQ), connects them in loopback pairs (RESET, INIT, RTR, RTS), destroys them, and
# reports each phase's time and the kernel memory the QPs held, per QP, once created and again
# once in RTS: slab (/proc/meminfo Slab) and everything (MemFree; rrxe's rings are pages of
# its own, which VmallocUsed does not count, rxe's vmalloc_user). Lower is better in every row. Issue #13's goal: rrxe's create +
# connect time at most half of rxe's, its slab per QP no more than rxe's.

# "WORKLOAD UNIT FIELD": the rows, in table order; FIELD is verbs_scale's output name.
SCALE_ROWS=(
	"qp_create s create_s"
	"qp_connect s connect_s"
	"qp_destroy s destroy_s"
	"qp_slab KiB/QP slab_kib_per_qp"
	"qp_memory KiB/QP memory_kib_per_qp"
	"qp_slab_rts KiB/QP slab_rts_kib_per_qp"
	"qp_memory_rts KiB/QP memory_rts_kib_per_qp"
)

# scale_rows: run $RUN of the scale rows on the current family's device (the caller runs them
# in the first three rounds only).
scale_rows() {
	local bin=${RRXE_TESTS_BIN:-${RRXE_CACHE:-$HOME/.cache/rrxe}/tests}/verbs_scale
	local log=$logs/$DRV-$FAM-scale-r$RUN row w unit field v t0=$SECONDS
	if [ ! -x "$bin" ]; then
		say "$DRV $FAM scale: $bin not built (scripts/build-tests)"
		return 0
	fi
	timeout -k 5 $((tmo * 10)) "$bin" "$SRV_DEV" "$SRV_GID" "$scale_qps" >"$log" 2>&1 ||
		say "$DRV $FAM run $RUN scale: failed ($log)"
	for row in "${SCALE_ROWS[@]}"; do
		read -r w unit field <<<"$row"
		[[ $w =~ $rows_re ]] || continue
		v=$(awk -v f="$field" '$1 == "scale:" && $2 == f { print $3 }' "$log")
		[ -n "$v" ] && add_result "$DRV|$FAM|$w|$scale_qps" "$v"
	done
	say "$DRV $FAM run $RUN scale ($scale_qps QPs, $((SECONDS - t0)) s):" \
		"$(awk '$1 == "scale:" && $2 != "qps" { printf "%s %s ", $2, $3 }' "$log")"
}
