#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Per-QP counters (`rdma statistic qp`, ib_core's counter ops): in auto mode a running
# ib_write_bw's RC QPs get counters of their own that count their packets; a QP bound by hand
# (`bind lqpn`) counts in its counter while bound; counters go away with their last QP.
# Throughout, the port's counters (which ib_core shows as the port's own plus every
# counter's) keep every packet once: at rest the performance management agent's totals, which
# count everything, equal them. C rxe has no counter ops: ib_core takes the auto mode and binds
# nothing, and refuses a bind by hand.
. "$(dirname "$0")/lib.sh"
srv=
cli=
trap 'kill $srv $cli 2>/dev/null; rdma statistic qp set link "$DEV/1" auto off 2>/dev/null;
	cleanup_driver' EXIT
command -v ib_write_bw >/dev/null || skip "ib_write_bw not installed (perftest)"
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
gidx=$(wait_for 20 gid_index "$DEV" ffff:0a00:020f) || fail "no IPv4 GID on $DEV"
out=$(mktemp -d /tmp/qp_counters.XXXXXX)
hw=/sys/class/infiniband/$DEV/ports/1/hw_counters
pma=/sys/class/infiniband/$DEV/ports/1/counters

# counters_json: the device's per-QP counters, as `rdma -j statistic qp show` prints them.
# A failed command reads as a counter, so that "no counter" checks fail with it.
counters_json() {
	rdma -j statistic qp show link "$DEV/1" || echo '[{"cntn": "rdma failed"}]'
}
# field JSON CNTN NAME: the value of NAME (a counter or an attribute) of counter CNTN; with
# CNTN "any", of the first counter; with "sum", a counter's sum over all; "" when there is
# none.
field() {
	python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
data, cntn, name = json.loads(sys.argv[1] or "[]"), sys.argv[2], sys.argv[3]
if cntn == "sum":
    print(sum(int(c.get(name, 0)) for c in data))
    sys.exit(0)
for c in data:
    if cntn != "any" and str(c.get("cntn")) != cntn:
        continue
    v = c.get(name)
    if isinstance(v, list):
        v = ",".join(str(x) for x in v)
    print("" if v is None else v)
    break
EOF
}
# at_rest: the port's counters equal the agent's totals (read again: a straggling ACK).
at_rest() {
	wait_for 3 bash -c "[ \$(cat $pma/port_xmit_packets) = \$(cat $hw/sent_pkts) ] &&
		[ \$(cat $pma/port_rcv_packets) = \$(cat $hw/rcvd_pkts) ]"
}
# bw PORT: a background ib_write_bw pair through the device (64 KiB), running until bw_done
# stops it (--run_infinitely: the checks take their time on a slow kernel).
bw() {
	ib_write_bw -d "$DEV" -x "$gidx" -p "$1" -F -s 65536 -D 2 --run_infinitely \
		>"$out/srv.$1" 2>&1 &
	srv=$!
	wait_for 15 listening "$1" || diag "ib_write_bw: server not listening"
	ib_write_bw -d "$DEV" -x "$gidx" -p "$1" -F -s 65536 -D 2 --run_infinitely localhost \
		>"$out/cli.$1" 2>&1 &
	cli=$!
}
# bw_done PORT: both were still running (no error ended them), and are stopped.
bw_done() {
	kill -0 "$cli" 2>/dev/null || fail "ib_write_bw client ended: $(tail -n 2 "$out/cli.$1")"
	kill -0 "$srv" 2>/dev/null || fail "ib_write_bw server ended: $(tail -n 2 "$out/srv.$1")"
	kill "$cli" "$srv"
	wait "$cli" "$srv" 2>/dev/null
	srv= cli=
}
if ! is_rrxe; then
	# ib_core takes the mode, and then binds nothing: C rxe has no counter ops.
	check "C rxe: auto mode set" rdma statistic qp set link "$DEV/1" auto type on
	bw 18954
	wait_for 30 bash -c "rdma res show qp link $DEV/1 | grep -q 'comm ib_write_bw'"
	sleep 1
	check "C rxe: no counter for its QPs" test -z "$(field "$(counters_json)" any cntn)"
	# By hand, in manual mode (auto mode refuses a bind before asking the driver).
	check "C rxe: auto mode off" rdma statistic qp set link "$DEV/1" auto off
	qpn=$(rdma res show qp link "$DEV/1" | awk '/comm ib_write_bw/ {
		for (i = 1; i < NF; i++) if ($i == "lqpn") v = $(i + 1) } END { print v }')
	check "C rxe: bind by hand refused" \
		bash -c "! rdma statistic qp bind link $DEV/1 lqpn $qpn 2>/dev/null"
	bw_done 18954
	exit 0
fi
check "no counters before" test -z "$(field "$(counters_json)" any cntn)"
check "auto mode per QP type" rdma statistic qp set link "$DEV/1" auto type on
check "mode shows auto" bash -c "rdma statistic qp mode link $DEV/1 | grep -q auto"
sent0=$(cat $hw/sent_pkts)
bw 18950
# Both QPs connect within a second or two of the client's start; then they are counted.
wait_for 30 bash -c "[ -n \"\$(rdma -j statistic qp show link $DEV/1 | grep -o cntn)\" ]" ||
	fail "no counter in auto mode: $(counters_json)"
sleep 1
j=$(counters_json)
diag "auto: $(echo "$j" | tr ',' '\n' | grep -E 'cntn|qp-type|_pkts|lqpn' | tr '\n' ' ')"
cntn=$(field "$j" any cntn)
a1=$(field "$j" sum sent_pkts)
check "the counters are for RC QPs" test "$(field "$j" "$cntn" qp-type)" = RC
check "the counters count the QPs' packets ($a1 sent)" test "${a1:-0}" -gt 0
check "the QPs' packets received too" test "$(field "$j" sum rcvd_pkts)" -gt 0
sleep 1
a2=$(field "$(counters_json)" sum sent_pkts)
check "and keep counting ($a1 -> $a2)" test "${a2:-0}" -gt "${a1:-0}"
p=$(cat $hw/sent_pkts)
check "the port's counters include the counters' ($((p - sent0)) >= $a2)" \
	test $((p - sent0)) -ge "$a2"
bw_done 18950
check "the counter went with its QPs" \
	wait_for 20 bash -c "[ -z \"\$(rdma -j statistic qp show link $DEV/1 | grep -o cntn)\" ]"
check "the port's counters kept its packets (history): agent totals = hw counters" at_rest
check "auto mode off" rdma statistic qp set link "$DEV/1" auto off

# By hand: bind one of the running QPs, then unbind it.
bw 18952
wait_for 30 bash -c "rdma res show qp link $DEV/1 | grep -q 'comm ib_write_bw'" ||
	fail "no ib_write_bw QP: $(rdma res show qp link "$DEV/1")"
sleep 1
qpn=$(rdma res show qp link "$DEV/1" | awk '/comm ib_write_bw/ {
	for (i = 1; i < NF; i++) if ($i == "lqpn") v = $(i + 1) } END { print v }')
check "bind QP $qpn by hand" rdma statistic qp bind link "$DEV/1" lqpn "$qpn"
j=$(counters_json)
diag "bound: $(echo "$j" | tr ',' '\n' | grep -E 'cntn|qp-type|_pkts|lqpn' | tr '\n' ' ')"
cntn=$(field "$j" any cntn)
lq=$(field "$j" "$cntn" lqpn)
check "the counter lists QP $qpn ($lq)" test "$lq" = "$qpn"
# The client's QP sends, the server's receives: either is the one bound.
pkts() { echo $(($(field "$1" "$cntn" sent_pkts) + $(field "$1" "$cntn" rcvd_pkts))); }
b1=$(pkts "$j")
sleep 1
b2=$(pkts "$(counters_json)")
check "the bound QP counts in its counter ($b1 -> $b2)" test "${b2:-0}" -gt "${b1:-0}"
check "unbind QP $qpn" rdma statistic qp unbind link "$DEV/1" cntn "$cntn" lqpn "$qpn"
check "the counter went with its last QP" test -z "$(field "$(counters_json)" any cntn)"
bw_done 18952
check "agent totals = hw counters after bind and unbind" at_rest
exit 0
