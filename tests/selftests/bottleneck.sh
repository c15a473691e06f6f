#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Congestion at a bottleneck (Documentation/congestion.rst): senders on one device, a router
# namespace, a receiver's device behind it. The router's port towards the receiver is the
# bottleneck: an htb rate limit (BNECK_MBIT, default 60) in front of one CE-marking FIFO, so
# fairness is the senders' doing, not the queue's: RED marking on the queue's length as DCQCN's
# switches do (BNECK_QDISC=red, the default), or CoDel marking on sojourn time (fq_codel with one
# flow, BNECK_QDISC=codel). N flows of ib_write_bw (RC WRITE, 64 KiB) run together for
# BNECK_SECONDS, with congestion control on (the senders' reaction points: ECT packets, CE
# marks, CNPs) and off (rp_enable 0: Not-ECT packets, which the queue drops instead), for N in
# BNECK_FLOWS
# (default "1 2"), with an ib_write_lat probe (64 B) beside them. Each run prints the
# bottleneck's packets, drops and marks, the utilisation (the flows' sum over the rate), Jain's
# fairness index and the probe's p99; with congestion control the drops must stay under 1 % of
# the packets and fairness for several flows at least 0.9 (BNECK_STRICT=0 only reports). C rxe
# has no congestion control: it runs the "off" rows as the baseline.
. "$(dirname "$0")/lib.sh"
RNS=rrbnr DNS=rrbnd
SIF=vbs0 SRIF=vbs1 DRIF=vbd1 DIF=vbd0
SRV=10.91.2.1 SRT=10.91.2.2 CLI=10.91.1.1 CRT=10.91.1.2
SD=${DEV}s CD=${DEV}c
MBIT=${BNECK_MBIT:-60} SECS=${BNECK_SECONDS:-5} FLOWS=${BNECK_FLOWS:-"1 2"}
LAT_ITERS=${BNECK_LAT_ITERS:-300} QDISC=${BNECK_QDISC:-red}
OUT=/tmp/bottleneck
srvs=()
teardown() {
	kill "${srvs[@]}" 2>/dev/null
	local d
	for d in "$CD" "$SD"; do
		dev_exists "$d" && timeout 30 rdma link delete "$d"
	done
	ip netns del $DNS 2>/dev/null
	ip netns del $RNS 2>/dev/null
	ip link del $SIF 2>/dev/null
	cleanup_driver
}
trap teardown EXIT
nic_up
modprobe ib_uverbs
mkdir -p $OUT
ip netns del $DNS 2>/dev/null
ip netns del $RNS 2>/dev/null
ip link del $SIF 2>/dev/null
# Client (senders) in the initial namespace, the router and the server (receiver) in theirs.
check "namespaces" ip netns add $RNS
ip netns add $DNS
check "veth client-router" ip link add $SIF type veth peer name $SRIF netns $RNS
check "veth router-server" ip -n $RNS link add $DRIF type veth peer name $DIF netns $DNS
ip addr add $CLI/24 dev $SIF
ip link set $SIF up
ip -n $RNS addr add $CRT/24 dev $SRIF
ip -n $RNS addr add $SRT/24 dev $DRIF
ip -n $RNS link set $SRIF up
ip -n $RNS link set $DRIF up
ip -n $RNS link set lo up
ip netns exec $RNS sysctl -qw net.ipv4.ip_forward=1
ip -n $DNS addr add $SRV/24 dev $DIF
ip -n $DNS link set $DIF up
ip -n $DNS link set lo up
ip route add $SRV/32 via $CRT
ip -n $DNS route add default via $SRT
# The bottleneck: rate limit, then one CoDel queue that marks ECT packets and drops the others.
check "htb on the router" ip netns exec $RNS tc qdisc add dev $DRIF root handle 1: htb default 1
check "htb class ${MBIT} Mbit/s" ip netns exec $RNS tc class add dev $DRIF parent 1: classid 1:1 \
	htb rate ${MBIT}mbit ceil ${MBIT}mbit quantum 15140
if [ "$QDISC" = red ]; then
	# Marking on the queue's (average) length from 2 ms to 6 ms of the rate, as DCQCN's
	# switches mark (Kmin, Kmax, Pmax 0.1).
	kmin=$((MBIT * 250)) kmax=$((MBIT * 750))
	check "red ecn" ip netns exec $RNS tc qdisc add dev $DRIF parent 1:1 handle 10: red \
		limit $((kmax * 8)) min $kmin max $kmax avpkt 1000 burst $(((2 * kmin + kmax) / 3000 + 1)) \
		probability 0.1 bandwidth ${MBIT}mbit ecn
else
	check "fq_codel ecn" ip netns exec $RNS tc qdisc add dev $DRIF parent 1:1 handle 10: \
		fq_codel flows 1 ecn
fi
check "add $CD on $SIF" timeout 30 rdma link add "$CD" type "$TYPE" netdev $SIF
check "add $SD on $DIF in $DNS" ip netns exec $DNS timeout 30 rdma link add "$SD" type "$TYPE" \
	netdev $DIF
wait_for 20 gid_index "$CD" "$(v4_gid $CLI)" >/dev/null || fail "no IPv4 GID on $CD"
wait_for 20 gid_index "$SD" "$(v4_gid $SRV)" >/dev/null || fail "no IPv4 GID on $SD"
cidx=$(gid_index "$CD" "$(v4_gid $CLI)")
sidx=$(gid_index "$SD" "$(v4_gid $SRV)")
cc() { echo "/sys/kernel/debug/rrxe/$1/cc_params/$2"; }

# qstat FIELD: the bottleneck queue's counter (sent packets, dropped, ecn_mark).
qstat() {
	ip netns exec $RNS tc -s qdisc show dev $DRIF | awk -v f="$1" '
		/qdisc (fq_codel|red)/ { q = 1 }
		q && f == "pkts" && /Sent/ { print $4; exit }
		q && f == "dropped" && /Sent/ { gsub(",", "", $7); print $7; exit }
		q && f == "ecn_mark" {
			for (i = 1; i < NF; i++) if ($i == "ecn_mark" || $i == "marked") { print $(i + 1); exit }
		}'
}

# flows N CC: N ib_write_bw flows at once; prints "pkts drops marks sum jain rates...".
port=19100
flows() {
	local n=$1 mode=$2 i p0 d0 m0 rates=() pids=()
	p0=$(qstat pkts) d0=$(qstat dropped) m0=$(qstat ecn_mark)
	srvs=()
	for i in $(seq 1 "$n"); do
		ip netns exec $DNS timeout $((SECS + 60)) ib_write_bw -d "$SD" -x "$sidx" \
			-p $((port + i)) -F --report_gbits -s 65536 -D "$SECS" \
			>"$OUT/$mode$n.srv$i" 2>&1 &
		srvs+=($!)
	done
	for i in $(seq 1 "$n"); do
		wait_for 15 bash -c "ip netns exec $DNS ss -ltn | grep -q ':$((port + i)) '" ||
			diag "flow $i: server not listening"
	done
	# A latency probe beside the flows: 64-byte WRITEs, one at a time, through the same queue.
	ip netns exec $DNS timeout $((SECS + 60)) ib_write_lat -d "$SD" -x "$sidx" -p $((port + 50)) \
		-F -s 64 -n "$LAT_ITERS" >"$OUT/$mode$n.lsrv" 2>&1 &
	srvs+=($!)
	wait_for 15 bash -c "ip netns exec $DNS ss -ltn | grep -q ':$((port + 50)) '" ||
		diag "latency probe: server not listening"
	for i in $(seq 1 "$n"); do
		timeout $((SECS + 60)) ib_write_bw -d "$CD" -x "$cidx" -p $((port + i)) -F \
			--report_gbits -s 65536 -D "$SECS" $SRV >"$OUT/$mode$n.cli$i" 2>&1 &
		pids+=($!)
	done
	# The probe starts once the flows have filled the queue.
	sleep 1
	timeout $((SECS + 60)) ib_write_lat -d "$CD" -x "$cidx" -p $((port + 50)) -F -s 64 \
		-n "$LAT_ITERS" $SRV >"$OUT/$mode$n.lcli" 2>&1 &
	pids+=($!)
	wait "${pids[@]}"
	wait "${srvs[@]}" 2>/dev/null
	srvs=()
	port=$((port + n + 51))
	for i in $(seq 1 "$n"); do
		rates+=("$(awk '$1 ~ /^[0-9]+$/ && NF >= 5 { v = $4 } END { print v + 0 }' \
			"$OUT/$mode$n.cli$i")")
	done
	# "#bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%" (usec); 0: no result.
	p99=$(awk '$1 == 64 && NF >= 8 { v = $8 } END { print v + 0 }' "$OUT/$mode$n.lcli")
	echo "$(($(qstat pkts) - p0)) $(($(qstat dropped) - d0)) $(($(qstat ecn_mark) - m0))" \
		"$p99" "${rates[@]}" | awk -v mbit="$MBIT" '{
		s = 0; s2 = 0; k = 0
		for (i = 5; i <= NF; i++) { s += $i; s2 += $i * $i; k++ }
		jain = s2 > 0 ? s * s / (k * s2) : 0
		printf "%d %d %d %.3f %.3f %.1f", $1, $2, $3, s * 1000 / mbit, jain, $4
		for (i = 5; i <= NF; i++) printf " %.1f", $i * 1000
		printf "\n" }'
}

# run N MODE: one row, judged with congestion control on.
verdicts=()
run() {
	local n=$1 mode=$2 r pkts drops marks util jain
	r=$(flows "$n" "$mode")
	read -r pkts drops marks util jain p99 rest <<<"$r"
	diag "$mode, $n flow(s) at ${MBIT} Mbit/s: $pkts packets, $drops dropped, $marks CE-marked;" \
		"utilisation $util, fairness $jain, probe p99 $p99 us; flows (Mbit/s): $rest"
	P99[$mode$n]=$p99
	[ "$mode" = cc ] || return 0
	awk -v p="$pkts" -v d="$drops" 'BEGIN { exit !(p > 0 && d <= 0.01 * p) }' ||
		verdicts+=("cc, $n flow(s): $drops drops in $pkts packets (over 1 %)")
	[ "$n" -lt 2 ] || awk -v j="$jain" 'BEGIN { exit !(j >= 0.9) }' ||
		verdicts+=("cc, $n flows: fairness $jain under 0.9")
}

declare -A P99
for n in $FLOWS; do
	if is_rrxe; then
		echo 1 >"$(cc "$CD" rp_enable)"
		run "$n" cc
		echo 0 >"$(cc "$CD" rp_enable)"
	fi
	run "$n" off
	is_rrxe || continue
	# The probe's tail with congestion control against without (issue #35's goal: half or
	# less). Reported, not judged: without congestion control the flows collapse and leave the
	# queue empty, and under TCG the probe's own round trip is milliseconds
	# (Documentation/congestion.rst, "Measured").
	awk -v a="${P99[cc$n]}" -v b="${P99[off$n]}" 'BEGIN { exit !(a > 0 && b > 0 && a <= 0.5 * b) }' ||
		diag "$n flow(s): probe p99 ${P99[cc$n]} us with, ${P99[off$n]} us without (not half)"
done
if [ ${#verdicts[@]} -gt 0 ]; then
	for v in "${verdicts[@]}"; do
		diag "$v"
	done
	[ "${BNECK_STRICT:-1}" = 0 ] || fail "congestion control at the bottleneck"
fi
exit 0
