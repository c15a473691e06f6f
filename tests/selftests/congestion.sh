#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Congestion control on the wire (Documentation/congestion.rst), across a veth pair between two
# devices, captured with dumpcap; the CNPs are read again by an independent dissector
# (tshark's InfiniBand one):
#  - an RC connection's packets are ECN-capable, ECT(0), both ways; with the client's reaction
#    point off (rp_enable 0 in debugfs cc_params) its packets are Not-ECT;
#  - netem on the client's side marks CE on a share of its ECT packets (netem "ecn": marks
#    instead of dropping): the server answers with CNPs to the client's QP in the format RoCE
#    NICs parse (opcode 0x81, BECN, P_Key 0xffff, the connection's UDP port, DSCP 48,
#    Not-ECT), counted (np_ecn_marked_roce_packets, np_cnp_sent); the client's reaction point
#    acts on them (rp_cnp_handled) and paces its packets (rp_pace_waits): with CNPs (and a
#    slow recovery set in its cc_params) its ib_write_bw is below half of the same run with
#    the server's notification point off.
# Against C rdma_rxe (the oracle) only the first check applies, inverted: rxe sends Not-ECT.
. "$(dirname "$0")/lib.sh"
NS=rrcong SIF=vcg0 CIF=vcg1
SRV=192.168.82.1 CLI=192.168.82.2
SD=${DEV}s CD=${DEV}c
CAP=/tmp/congestion
teardown() {
	kill $cap $srv 2>/dev/null
	ip netns exec $NS tc qdisc del dev $CIF root 2>/dev/null
	veth_wire_down >/dev/null 2>&1
	cleanup_driver
}
trap teardown EXIT
command -v dumpcap >/dev/null || skip "dumpcap not installed (tshark, scripts/setup)"
nic_up
modprobe ib_uverbs
veth_wire
sidx=$(gid_index "$SD" "$(v4_gid "$SRV")")
cidx=$(gid_index "$CD" "$(v4_gid "$CLI")")
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
cc() { echo "/sys/kernel/debug/rrxe/$1/cc_params/$2"; }
hw() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"; }

# capture NAME: starts dumpcap on $SIF (both directions of the connection) into $CAP.NAME.pcap.
capture() {
	rm -f "$CAP.$1.pcap"
	dumpcap -q -P -i "$SIF" -f "udp port 4791" -w "$CAP.$1.pcap" >"$CAP.$1.log" 2>&1 &
	cap=$!
	wait_for 30 grep -qs "Capturing on" "$CAP.$1.log" ||
		fail "$1: dumpcap did not start: $(tail -n 3 "$CAP.$1.log")"
}
capture_end() {
	sleep 1
	kill $cap 2>/dev/null
	wait $cap 2>/dev/null
	cap=
}
# fields NAME: one line per RoCEv2 packet of $CAP.NAME.pcap, read here:
# "SRC DSCP ECN OPCODE BYTE4 PKEY DESTQP SPORT" (BYTE4: the BTH byte holding BECN, in hex).
fields() {
	python3 - "$CAP.$1.pcap" <<'PY'
import socket, struct, sys
d = open(sys.argv[1], "rb").read()
off = 24
while off + 16 <= len(d):
    caplen = struct.unpack_from("<I", d, off + 8)[0]
    f = d[off + 16:off + 16 + caplen]
    off += 16 + caplen
    if len(f) < 14 + 20 + 8 + 12 or f[12:14] != b"\x08\x00":
        continue
    ip = f[14:]
    ihl = (ip[0] & 15) * 4
    sport, dport = struct.unpack_from("!HH", ip, ihl)
    if ip[9] != 17 or dport != 4791:
        continue
    b = ip[ihl + 8:]
    print(socket.inet_ntoa(ip[12:16]), ip[1] >> 2, ip[1] & 3, b[0], "%02x" % b[4],
          (b[2] << 8) | b[3], "0x%06x" % int.from_bytes(b[5:8], "big"), sport)
PY
}
# tshark_fields NAME: the same columns, from tshark's InfiniBand dissector (an independent
# reading: slow to start under TCG, so only for the CNPs).
tshark_fields() {
	tshark -r "$CAP.$1.pcap" -Y infiniband -T fields -E separator=' ' -E occurrence=f \
		-e ip.src -e ip.dsfield.dscp -e ip.dsfield.ecn -e infiniband.bth.opcode \
		-e infiniband.reserved -e infiniband.bth.p_key -e infiniband.bth.destqp \
		-e udp.srcport 2>/dev/null
}

# bw NAME ARGS...: ib_write_bw server on $SD, client on $CD in $NS; prints the average Gb/s.
port=18800
bw() {
	local name=$1 rc
	shift
	port=$((port + 1))
	timeout 60 ib_write_bw -d "$SD" -x "$sidx" -p $port -F --report_gbits "$@" \
		>"$CAP.$name.srv" 2>&1 &
	srv=$!
	wait_for 15 listening $port || diag "$name: server not listening"
	ip netns exec "$NS" timeout 60 ib_write_bw -d "$CD" -x "$cidx" -p $port -F \
		--report_gbits "$@" "$SRV" >"$CAP.$name.cli" 2>&1
	rc=$?
	wait $srv
	srv=
	[ $rc -eq 0 ] || { sed "s/^/# $name: /" "$CAP.$name.cli" | tail -3; return 1; }
	# "#bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]"; a timed run's
	# from the iterations it counted (perftest_gbits).
	if [ "$1" = -D ]; then
		perftest_gbits "$CAP.$name.cli" "$2"
	else
		awk '$1 ~ /^[0-9]+$/ && NF >= 5 { v = $4 } END { print v }' "$CAP.$name.cli"
	fi
}

# ECN marking: a short WRITE run, both directions captured.
capture ect
b=$(bw ect -s 65536 -n 200) || fail "ect: ib_write_bw failed"
capture_end
fields ect >"$CAP.ect.txt"
diag "ect: $b Gb/s, $(wc -l <"$CAP.ect.txt") RoCEv2 packets captured"
# ecn_of SRC: the ECN codepoints of SRC's packets, counted ("N ECN" per line).
ecn_of() { awk -v s="$1" '$1 == s { print $3 }' "$CAP.$2.txt" | sort | uniq -c | tr '\n' ' '; }
diag "ECN of the client's packets: $(ecn_of $CLI ect); of the server's: $(ecn_of $SRV ect)"
if is_rrxe; then
	want=2
else
	want=0
fi
check "client's packets all ECN $want" \
	awk -v s=$CLI -v w=$want '$1 == s { n++; if ($3 != w) bad++ } END { exit !(n > 0 && !bad) }' \
	"$CAP.ect.txt"
check "server's packets all ECN $want" \
	awk -v s=$SRV -v w=$want '$1 == s { n++; if ($3 != w) bad++ } END { exit !(n > 0 && !bad) }' \
	"$CAP.ect.txt"
check "no CNPs without CE marks" \
	awk '$4 == 129 { exit 1 }' "$CAP.ect.txt"
if ! is_rrxe; then
	diag "C rxe has no congestion control: the rest is rrxe's"
	exit 0
fi

check "cc_params in debugfs" test -f "$(cc "$SD" rp_time_reset)"
check "cc_params has mlx5's defaults" \
	bash -c "[ \$(cat $(cc "$SD" rp_time_reset)) = 300 ] && [ \$(cat $(cc "$SD" rp_ai_rate)) = 5 ] &&
		[ \$(cat $(cc "$SD" np_cnp_dscp)) = 48 ]"

# CE marks on the client's packets: CNPs back, a slower client.
check "netem marks CE on the client's side" \
	ip netns exec "$NS" tc qdisc add dev "$CIF" root netem loss 20% ecn
echo 0 >"$(cc "$SD" np_enable)"
nocnp=$(bw nocnp -D 3 -s 65536) || fail "nocnp: ib_write_bw failed"
check "marks counted without CNPs (np_enable 0)" test "$(hw "$SD" np_cnp_sent)" -eq 0
echo 1 >"$(cc "$SD" np_enable)"
# The client's reaction point on a slow recovery (10 ms per timer event, none per byte, alpha
# updated every ms), so that a share of CNPs shows whatever the guest's speed: this checks the
# mechanism; how the defaults behave at a bottleneck is the bench's congestion family.
for kv in rp_time_reset=10000 rp_byte_reset=0 rp_dce_tcp_rtt=1000; do
	echo "${kv#*=}" >"$(cc "$CD" "${kv%=*}")"
done
marked0=$(hw "$SD" np_ecn_marked_roce_packets)
sent0=$(hw "$SD" np_cnp_sent)
handled0=$(hw "$CD" rp_cnp_handled)
waits0=$(hw "$CD" rp_pace_waits)
capture cnp
withcnp=$(bw cnp -D 3 -s 65536) || fail "cnp: ib_write_bw failed"
capture_end
marked=$(($(hw "$SD" np_ecn_marked_roce_packets) - marked0))
sent=$(($(hw "$SD" np_cnp_sent) - sent0))
handled=$(($(hw "$CD" rp_cnp_handled) - handled0))
waits=$(($(hw "$CD" rp_pace_waits) - waits0))
diag "CE marks on the client's packets: $nocnp Gb/s without CNPs, $withcnp Gb/s with them"
diag "server: $marked CE-marked packets, $sent CNPs sent;" \
	"client: $handled CNPs handled, $waits pacing waits"
check "CE-marked packets counted" test $marked -gt 0
check "CNPs sent" test $sent -gt 0
check "CNPs handled by the client" test $handled -gt 0
check "the client paced its packets" test $waits -gt 0
check "the client slowed down for the CNPs ($withcnp < 0.5 x $nocnp)" \
	awk -v a="$withcnp" -v b="$nocnp" 'BEGIN { exit !(a < 0.5 * b) }'
for kv in rp_time_reset=300 rp_byte_reset=32767 rp_dce_tcp_rtt=1; do
	echo "${kv#*=}" >"$(cc "$CD" "${kv%=*}")"
done
fields cnp >"$CAP.cnp.txt"
# The client's QP is the destination of the server's other packets (ACKs); its UDP port theirs.
read -r cqp cport < <(awk -v s=$SRV '$1 == s && $4 != 129 { print $7, $8; exit }' "$CAP.cnp.txt")
diag "CNPs on the wire: $(awk '$4 == 129' "$CAP.cnp.txt" | wc -l), to QP $cqp;" \
	"e.g. $(awk '$4 == 129 { print; exit }' "$CAP.cnp.txt")"
check "CNPs on the wire, from the server" \
	awk -v s=$SRV '$4 == 129 { n++; if ($1 != s) bad++ } END { exit !(n > 0 && !bad) }' "$CAP.cnp.txt"
cnp_ok() {
	awk -v q="$cqp" -v p="$cport" '$4 == 129 { n++
		if ($5 != "40" || $6 != 65535 || $7 != q || $8 != p || $2 != 48 || $3 != 0) bad++ }
		END { exit !(n > 0 && !bad) }' "$1"
}
check "each CNP: BECN, P_Key 0xffff, the client's QP and port, DSCP 48, Not-ECT" \
	cnp_ok "$CAP.cnp.txt"
tshark_fields cnp | awk '$4 == 129' >"$CAP.cnp.tshark"
diag "tshark: $(wc -l <"$CAP.cnp.tshark") CNPs, e.g. $(head -n 1 "$CAP.cnp.tshark")"
cnps() { awk '$4 == 129' "$1" | sort; }
check "tshark reads the same CNPs" diff <(cnps "$CAP.cnp.txt") <(cnps "$CAP.cnp.tshark")
check "tshark: each CNP as above" cnp_ok "$CAP.cnp.tshark"
ip netns exec "$NS" tc qdisc del dev "$CIF" root

# The client's reaction point off: its packets are not ECN-capable.
echo 0 >"$(cc "$CD" rp_enable)"
capture off
bw off -s 65536 -n 50 >/dev/null || fail "off: ib_write_bw failed"
capture_end
fields off >"$CAP.off.txt"
check "rp_enable 0: the client's packets Not-ECT" \
	awk -v s=$CLI '$1 == s { n++; if ($3 != 0) bad++ } END { exit !(n > 0 && !bad) }' "$CAP.off.txt"
check "rp_enable 0: the server's still ECT(0)" \
	awk -v s=$SRV '$1 == s { n++; if ($3 != 2) bad++ } END { exit !(n > 0 && !bad) }' "$CAP.off.txt"
echo 1 >"$(cc "$CD" rp_enable)"
exit 0
