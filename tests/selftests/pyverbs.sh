#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rdma-core's own verbs test suite (pyverbs, what upstream runs against rxe): the Debian copy
# in /usr/share/doc/rdma-core/tests (gzipped; python3-pyverbs, installed by scripts/setup),
# unpacked into a scratch directory and run with `run_tests.py --dev DEV --gid IDX` against
# the device's IPv4 RoCE v2 GID, loopback through one device.
#
# Prints the counts (passed, failed, errors, skipped) as "# pyverbs: ..." and every test that
# did not pass, and every skip with its reason. Fails on any failure or error. PYVERBS_TESTS
# (unittest names, e.g. "tests.test_mr.MWTest") runs a part.
. "$(dirname "$0")/lib.sh"
SRC=/usr/share/doc/rdma-core/tests
dir=''
trap 'rm -rf "$dir"; cleanup_driver' EXIT
[ -f "$SRC/run_tests.py" ] || skip "no $SRC (rdma-core-tests docs)"
python3 -c 'import pyverbs' 2>/dev/null || skip "python3-pyverbs not installed"
nic_up
modprobe ib_uverbs
modprobe rdma_ucm
check "add $DEV" link_add "$DEV" "$NIC"
gidx=$(wait_for 20 gid_index "$DEV" "ffff:0a00:020f") || fail "no IPv4 RoCE v2 GID on $DEV"

# The suite is a Python package named "tests": unpack it as such.
dir=$(mktemp -d /tmp/pyverbs.XXXXXX)
mkdir "$dir/tests"
cp -r "$SRC"/. "$dir/tests/"
find "$dir/tests" -name '*.gz' -exec gunzip -f {} +
out=$dir/out
# shellcheck disable=SC2086
(cd "$dir/tests" && timeout 1500 python3 run_tests.py -v --dev "$DEV" --gid "$gidx" \
	${PYVERBS_TESTS:-}) >"$out" 2>&1
rc=$?
diag "run_tests.py --dev $DEV --gid $gidx: exit $rc"

# unittest -v: "name (module.Class.name) ... ok|FAIL|ERROR|skipped 'why'|expected failure";
# a result may land on a later line when the test printed something.
summary=$(grep -E '^Ran [0-9]+ tests? in' "$out" | tail -1)
[ -n "$summary" ] || {
	tail -30 "$out" | sed 's/^/# /'
	fail "no unittest summary"
}
ran=$(awk '{print $2}' <<<"$summary")
status=$(grep -E '^(OK|FAILED)( \(|$)' "$out" | tail -1)
num() { sed -n "s/.*[(,] *$1=\([0-9]*\).*/\1/p" <<<"$status"; }
failed=$(num failures) errors=$(num errors) skipped=$(num skipped)
xfail=$(num 'expected failures')
failed=${failed:-0} errors=${errors:-0} skipped=${skipped:-0} xfail=${xfail:-0}
passed=$((ran - failed - errors - skipped - xfail))
diag "$summary; $status"
diag "pyverbs: $passed passed, $failed failed, $errors errors, $skipped skipped ($MOD)"
# The tests that failed or erred, one line each, then their tracebacks' last lines.
grep -E '^(FAIL|ERROR): ' "$out" | sed 's/^/# /'
if [ "$failed" -gt 0 ] || [ "$errors" -gt 0 ]; then
	awk '/^(FAIL|ERROR): /{p=1} p' "$out" | grep -E '^(FAIL|ERROR): |Error|error|assert' |
		head -60 | sed 's/^/#   /'
fi
# The skips, with their reasons (not those for other vendors' hardware, CUDA or XRC): what
# tells the two drivers apart when both pass.
grep -E "\.\.\. skipped " "$out" |
	grep -v -E "non (MLX5|EFA) device|not an MLX5|cuda|CUDA|mlx5|XRCD|Device memory" |
	sed 's/^/# skip: /'

# Races in the suite that C rxe loses now and then: the oracle reports them, rrxe must pass.
# test_resize_cq shrinks a CQ right after posting sends, without polling: rxe's completions
# may not have arrived yet, so its shrink succeeds where the test wants EINVAL.
RXE_RACES="test_resize_cq"
bad=$(grep -E '^(FAIL|ERROR): ' "$out" | awk '{print $2}' | sort -u)
if [ "$MOD" = rdma_rxe ]; then
	for t in $RXE_RACES; do
		grep -qx "$t" <<<"$bad" && diag "$t: a known race of the suite on C rxe, not counted"
		bad=$(grep -vx "$t" <<<"$bad")
	done
fi
[ -z "$bad" ] || fail "pyverbs: $failed failed, $errors errors"
exit 0
