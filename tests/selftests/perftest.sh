#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Loopback perftest through one device, server and client both in the guest: ib_write_bw,
# ib_read_bw and ib_send_bw over a size sweep (2 B .. 1 MiB) and with two QPs (-q 2), the
# latency tests at 2 B, ib_atomic_bw/ib_atomic_lat with both atomic types and, unless
# PERFTEST_RDMA_CM=0, ib_send_bw/ib_write_bw connected through rdma_cm (-R: the connection
# is set up with MADs on QP1, i.e. kernel UD sends on the GSI QP).
# Every run's server and client must exit 0 and the client must print its result line. All
# runs are made (up to a time budget, PERFTEST_BUDGET seconds); the test then fails naming
# every run that did not pass. One line per run: "# ib_write_bw 4096: 1.23 Gb/s".
. "$(dirname "$0")/lib.sh"
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; cleanup_driver' EXIT
for t in ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_read_lat ib_send_lat ib_atomic_bw \
	ib_atomic_lat; do
	command -v $t >/dev/null || skip "$t not installed (perftest)"
done
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
gidx=$(wait_for 20 gid_index "$DEV" ffff:0a00:020f) || fail "no IPv4 GID on $DEV"
out=$(mktemp -d /tmp/perftest.XXXXXX)
port=18700
budget=${PERFTEST_BUDGET:-230}
runs=0
failed=()

# listening PORT CM: the server of the current run accepts connections (rdma_cm or TCP).
listening() {
	if [ "$2" = 1 ]; then
		timeout 10 rdma resource show cm_id 2>/dev/null | grep -q -E "LISTEN.*:$1( |$)"
	else
		timeout 10 ss -ltn 2>/dev/null | grep -q ":$1 "
	fi
}
srv_gone() { ! kill -0 "$srv" 2>/dev/null; }

# run_pt LABEL SIZE KIND CM TOOL ARGS...: one run, server in the background, client to
# localhost (CM=1: rdma_cm to the NIC's address). KIND bw|lat picks the result column.
run_pt() {
	local label=$1 size=$2 kind=$3 cm=$4 tool=$5 name rc src res t0
	local conn=(-x "$gidx") host=localhost
	shift 5
	runs=$((runs + 1))
	if [ $SECONDS -gt "$budget" ]; then
		diag "$label: not run (over the ${budget} s budget)"
		failed+=("$label (not run)")
		return
	fi
	port=$((port + 1))
	name=${label// /_}
	if [ "$cm" = 1 ]; then
		conn=(-R)
		host=10.0.2.15
	fi
	timeout 60 "$tool" -d "$DEV" "${conn[@]}" -p $port -F "$@" >"$out/$name.srv" 2>&1 &
	srv=$!
	wait_for 15 listening $port "$cm" || diag "$label: server not listening after 15 s"
	t0=$SECONDS
	timeout 60 "$tool" -d "$DEV" "${conn[@]}" -p $port -F "$@" $host >"$out/$name.cli" 2>&1
	rc=$?
	t0=$((SECONDS - t0))
	# The server normally ends with the client: do not wait out its timeout when it hangs.
	wait_for 10 srv_gone || diag "$label: server still running 10 s after the client, killed"
	kill "$srv" 2>/dev/null
	wait "$srv"
	src=$?
	srv=
	res=$(awk -v s="$size" -v k="$kind" '
		/#bytes/ { hdr = 1; next }
		hdr && $1 == s && NF >= 5 {
			print (k == "lat" ? (NF >= 6 ? $6 : $5) " usec" : $4 " Gb/s, " $5 " Mpps")
			exit
		}
	' "$out/$name.cli")
	if [ $rc -eq 0 ] && [ $src -eq 0 ] && [ -n "$res" ]; then
		diag "$label: $res"
		return
	fi
	diag "$label: FAILED (client exit $rc after $t0 s, server exit $src, ${res:-no result line};" \
		"124 = timed out, 143 = killed)"
	grep -v -E '^ *-+ *$|^ *$' "$out/$name.cli" | tail -6 | sed "s/^/# $label client: /"
	grep -v -E '^ *-+ *$|^ *$' "$out/$name.srv" | tail -6 | sed "s/^/# $label server: /"
	failed+=("$label")
}

# Size sweep: iterations shrink with the size to keep the test short under TCG.
# PERFTEST_QUICK=1 (the debug kernel's subset): one size, a few iterations, every operation.
sweep="2:200 16:200 256:200 4096:100 65536:50 1048576:20"
n=200 nq=50
if [ "${PERFTEST_QUICK:-0}" = 1 ]; then
	sweep="5000:10"
	n=10 nq=
fi
for tool in ib_write_bw ib_read_bw ib_send_bw; do
	for sn in $sweep; do
		run_pt "$tool ${sn%%:*}" "${sn%%:*}" bw 0 $tool -s "${sn%%:*}" -n "${sn##*:}" --report_gbits
	done
	[ -n "$nq" ] && run_pt "$tool 65536 -q 2" 65536 bw 0 $tool -s 65536 -n $nq -q 2 --report_gbits
done
for tool in ib_write_lat ib_send_lat ib_read_lat; do
	run_pt "$tool 2" 2 lat 0 $tool -s 2 -n $n
done
# perftest's default atomic is FETCH_AND_ADD; CMP_AND_SWAP is run explicitly.
run_pt "ib_atomic_bw" 8 bw 0 ib_atomic_bw -n $n --report_gbits
run_pt "ib_atomic_bw CMP_AND_SWAP" 8 bw 0 ib_atomic_bw -A CMP_AND_SWAP -n $n --report_gbits
run_pt "ib_atomic_lat" 8 lat 0 ib_atomic_lat -n $n
run_pt "ib_atomic_lat CMP_AND_SWAP" 8 lat 0 ib_atomic_lat -A CMP_AND_SWAP -n $n
if [ "${PERFTEST_RDMA_CM:-1}" = 1 ]; then
	modprobe rdma_ucm || diag "modprobe rdma_ucm failed"
	run_pt "ib_send_bw 65536 -R" 65536 bw 1 ib_send_bw -s 65536 -n ${nq:-5} --report_gbits
	run_pt "ib_write_bw 65536 -R" 65536 bw 1 ib_write_bw -s 65536 -n ${nq:-5} --report_gbits
else
	diag "rdma_cm (-R) runs left out: PERFTEST_RDMA_CM=0"
fi
rm -rf "$out"
diag "$((runs - ${#failed[@]})) of $runs runs passed in $SECONDS s"
if [ ${#failed[@]} -gt 0 ]; then
	fail "$(printf '%s, ' "${failed[@]}" | sed 's/, $//')"
fi
exit 0
