# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154 # sourced by bench.sh, which sets the globals
#
# scripts/guest/bench-limits.sh: the limits beside the perftest rows and the veth wire, for
# scripts/guest/bench.sh, which sources it.
#
# Loopback's limit is one copy per byte: copy_to_user from a tmpfs file (dd to /dev/null) in
# 4 KiB and 64 KiB reads, on one vCPU. The wire's limits are what the kernel's own stack moves
# over the same veth (or, for the wire family, the same socket wire between the two guests,
# the server on guest a): iperf3 TCP, and UDP with datagrams the size of a RoCE packet of the
# family's path MTU (payload + BTH 12 + ICRC 4: 1040 bytes at 1024, 4112 at 4096) at unlimited
# rate, counted as delivered (sender rate x (1 - loss)). Each limit is measured once per driver
# and round, and stored like a row with a run per round (V[DRIVER|FAMILY|limit_...|SIZE]).

# The wire: network namespaces WA and WB joined by the veth pair va (in WA) and vb (in WB).
WA=rrxe-bench-a WB=rrxe-bench-b
ADDR_A=192.168.78.1 ADDR_B=192.168.78.2
GID_A=ffff:c0a8:4e01 GID_B=ffff:c0a8:4e02

wire_down() {
	ip netns del $WA 2>/dev/null || true
	ip netns del $WB 2>/dev/null || true
}
# wire_up: the namespaces and the veth pair, addressed and up (MTU 1500). Once per run.
wire_up() {
	wire_down
	modprobe veth &&
		ip netns add $WA && ip netns add $WB &&
		ip link add va type veth peer name vb &&
		ip link set va netns $WA && ip link set vb netns $WB &&
		ip -n $WA addr add $ADDR_A/24 dev va && ip -n $WB addr add $ADDR_B/24 dev vb &&
		ip -n $WA link set lo up && ip -n $WB link set lo up &&
		ip -n $WA link set va up && ip -n $WB link set vb up
}
# wire_mtu MTU: both ends of the veth to MTU.
wire_mtu() { ip -n $WA link set va mtu "$1" && ip -n $WB link set vb mtu "$1"; }

# dd_gbps DD-ARGS...: dd's rate in Gb/s, from its byte count and elapsed seconds.
dd_gbps() {
	LC_ALL=C timeout "$tmo" dd "$@" 2>&1 | awk '/ copied, / {
		for (i = 1; i < NF; i++) if ($(i + 1) == "s,") t = $i
		if (t > 0) printf "%.3f\n", $1 * 8 / t / 1e9 }'
}
# best_of N CMD...: the largest of N numeric outputs of CMD (nothing if none is numeric).
best_of() {
	local n=$1 i v best=
	shift
	for ((i = 0; i < n; i++)); do
		v=$("$@" || true)
		[[ $v =~ ^[0-9.]+$ ]] || continue
		if [ -z "$best" ] || awk -v a="$v" -v b="$best" 'BEGIN { exit !(a > b) }'; then
			best=$v
		fi
	done
	[ -n "$best" ] && echo "$best"
}
# A tmpfs directory: /dev/shm or /tmp if they are tmpfs, else a fresh tmpfs mount.
tmpfs_dir() {
	local d
	for d in /dev/shm /tmp /run; do
		[ "$(stat -f -c %T "$d" 2>/dev/null)" = tmpfs ] && [ -w "$d" ] && { echo "$d"; return 0; }
	done
	d=$(mktemp -d)
	mount -t tmpfs -o size=300m rrxe-bench "$d" && echo "$d"
}
# copy_limits: the loopback limits, copy_to_user from tmpfs in 4 KiB and 64 KiB reads (best of
# three each), as rows limit_copy_to_user 4096 and 65536 of the family loop.
copy_limits() {
	local dir f bs v4='' v64=''
	if dir=$(tmpfs_dir); then
		f=$dir/rrxe-bench.$$
		if timeout "$tmo" dd if=/dev/zero of="$f" bs=1M count=256 status=none; then
			v4=$(best_of 3 dd_gbps if="$f" of=/dev/null bs=4k) || v4=''
			v64=$(best_of 3 dd_gbps if="$f" of=/dev/null bs=64k) || v64=''
		fi
		rm -f "$f"
	fi
	for bs in 4096 65536; do
		local v=$v64
		[ $bs = 4096 ] && v=$v4
		[ -n "$v" ] && add_result "$DRV|$FAM|limit_copy_to_user|$bs" "$v"
	done
	say "$DRV $FAM limits: copy_to_user from tmpfs ${v4:-fail} Gb/s in 4 KiB reads," \
		"${v64:-fail} Gb/s in 64 KiB reads"
}

# iperf_json FILE tcp|udp: the delivered rate in Gb/s from iperf3's JSON (-J) client output:
# TCP, what the receiver got; UDP, the sender's rate x (1 - loss).
iperf_json() {
	python3 - "$1" "$2" <<-'EOF'
		import json, sys
		try:
		    end = json.load(open(sys.argv[1]))["end"]
		    if sys.argv[2] == "tcp":
		        bps = end.get("sum_received", end.get("sum", {}))["bits_per_second"]
		    else:
		        s = end.get("sum", end.get("sum_sent"))
		        bps = s["bits_per_second"] * (1 - s.get("lost_percent", 0) / 100)
		        print("loss %.1f%%" % s.get("lost_percent", 0), file=sys.stderr)
		    if bps > 0:
		        print("%.4f" % (bps / 1e9))
		except (OSError, ValueError, KeyError, TypeError) as e:
		    print("no result: %s" % e, file=sys.stderr)
	EOF
}
# iperf_once NAME PROTO-ARGS...: one iperf3 run, server where the family's servers run (WA, or
# guest a; one client, then it exits), client where its clients run, for --iperf-secs seconds;
# prints the delivered Gb/s.
iperf_once() {
	local name=$1 log srv
	shift
	log=$logs/$DRV-$FAM-iperf3-$name
	port=$((port + 1))
	"${SRV_NS[@]}" timeout -k 5 "$tmo" iperf3 -s -1 -p "$port" >"$log.server" 2>&1 &
	srv=$!
	wait_for 20 srv_listening "$port" || true
	"${CLI_NS[@]}" timeout -k 5 "$tmo" iperf3 -c "$SRV_ADDR" -p "$port" -t "$iperf_secs" -J "$@" \
		>"$log.client" 2>&1 || true
	wait "$srv" || true
	iperf_json "$log.client" "${name%%-*}" 2>"$log.parse"
}
# wire_limits PATH_MTU MTU: iperf3 over the wire, rows limit_iperf3_tcp (size: the veth MTU) and
# limit_iperf3_udp (size: the datagram) of the current family.
wire_limits() {
	local veth=$2 dgram=$(($1 + 16)) tcp udp
	if ! command -v iperf3 >/dev/null; then
		say "$DRV $FAM limits: no iperf3 (scripts/setup installs it)"
		return 0
	fi
	tcp=$(iperf_once tcp) || tcp=''
	udp=$(iperf_once "udp-$dgram" -u -b 0 -l "$dgram") || udp=''
	[ -n "$tcp" ] && add_result "$DRV|$FAM|limit_iperf3_tcp|$veth" "$tcp"
	[ -n "$udp" ] && add_result "$DRV|$FAM|limit_iperf3_udp|$dgram" "$udp"
	say "$DRV $FAM limits: iperf3 TCP ${tcp:-fail} Gb/s, UDP $dgram-byte datagrams" \
		"${udp:-fail} Gb/s delivered ($(cat "$logs/$DRV-$FAM-iperf3-udp-$dgram.parse" 2>/dev/null))"
}
