#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The module's KUnit suites run when it loads; every expected suite must report, and pass.
# Prints "kunit: N passed, N failed" for the summary of `make check`.
. "$(dirname "$0")/lib.sh"
is_rrxe || skip "rrxe-specific"
SUITES="rrxe_limits rrxe_counters rrxe_table rrxe_ib_attr rrxe_mr rrxe_mm_fill rrxe_mcast rrxe_crc
	rrxe_pipeline_state rrxe_pipeline_sinks rrxe_pipeline_flow rrxe_pipeline_completer
	rrxe_pipeline_requester rrxe_pipeline_responder"
trap cleanup_driver EXIT
modprobe -r rrxe 2>/dev/null
dmesg -C
check "load rrxe" modprobe rrxe
pass=0 failed=0
log=$(dmesg | sed 's/^\[[^]]*\] //')
for s in $SUITES; do
	# The suite's test cases are the indented "ok"/"not ok" lines between its "# Subtest:" line
	# and its own result line (suites of one test print no totals line).
	read -r p f done < <(echo "$log" | awk -v s="$s" '
		!done && $0 == "    # Subtest: " s { on = 1; next }
		on && /^    ok / { p++ }
		on && /^    not ok / { f++ }
		on && $0 ~ ("^(not )?ok [0-9]+ " s "$") { on = 0; done = 1 }
		END { print p + 0, f + 0, done + 0 }')
	if [ "$done" -ne 1 ]; then
		diag "suite $s did not run"
		failed=$((failed + 1))
		continue
	fi
	diag "$s: $p passed, $f failed"
	pass=$((pass + p)) failed=$((failed + f))
done
# A suite the module runs but this list lacks would go unchecked: it fails instead.
for s in $(echo "$log" | sed -n 's/^    # Subtest: \(rrxe_[a-z0-9_]*\)$/\1/p' | sort -u); do
	[[ " ${SUITES//[[:space:]]/ } " == *" $s "* ]] && continue
	diag "suite $s ran but is not listed in $0"
	failed=$((failed + 1))
done
dmesg | grep -E "^\[.*\] +(not ok|# .*(Expected|ASSERT|EXPECT))" | sed 's/^/# /'
echo "# kunit: $pass passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$pass" -gt 0 ]
