# SPDX-License-Identifier: GPL-2.0
#
# Sourced by scripts/guest/nvmeof-host and nvmeof-target: a bottleneck on what a guest's NIC
# sends, as a switch port with ECN marking would be (the two-guest form of
# tests/selftests/bottleneck.sh, for the kernel's NVMe-oF, which runs in the initial namespace
# only).
#
# bneck_on NIC MBIT PEER_IP PEER_MAC: an htb class of MBIT Mbit/s with a RED queue under it
# that marks ECT packets and drops the others, for all the NIC sends (the test kernels have no
# tc classifiers). The peer's neighbour entry is made permanent: ARP is not ECN-capable, and a
# probe the queue drops leaves the entry FAILED and the peer unreachable until the queue drains.
# The marking range is 6-18 ms of the rate (at the few Mbit/s of two TCG guests, bottleneck.sh's
# 2-6 ms would be two packets), the bucket 10 ms of it (a TCG guest's timers fire late).
bneck_on() {
	local nic=$1 mbit=$2 kmin kmax
	kmin=$((mbit * 750)) kmax=$((mbit * 2250))
	ip neigh replace "$3" lladdr "$4" dev "$nic" nud permanent || return 1
	tc qdisc del dev "$nic" root 2>/dev/null
	tc qdisc add dev "$nic" root handle 1: htb default 1 &&
		tc class add dev "$nic" parent 1: classid 1:1 htb rate "${mbit}mbit" \
			ceil "${mbit}mbit" burst $((mbit * 1250)) cburst $((mbit * 1250)) quantum 1500 &&
		tc qdisc add dev "$nic" parent 1:1 handle 10: red limit $((kmax * 8)) min $kmin \
			max $kmax avpkt 1000 burst $(((2 * kmin + kmax) / 3000 + 1)) probability 0.1 \
			bandwidth "${mbit}mbit" ecn
}

# bneck_off NIC [PEER_IP]: the bottleneck gone, the peer's neighbour entry learned again.
bneck_off() {
	tc qdisc del dev "$1" root 2>/dev/null
	[ -z "${2:-}" ] || ip neigh del "$2" dev "$1" 2>/dev/null
	true
}

# bneck_stats NIC: "PKTS DROPPED MARKED EARLY" of the RED queue so far: packets sent, dropped,
# CE-marked, and of the dropped those RED dropped early (with ecn, only Not-ECT packets: CNPs,
# TCP; the rest it drops at its limit).
bneck_stats() {
	tc -s qdisc show dev "$1" | awk '
		/^qdisc red/ { red = 1; next }
		/^qdisc/ { red = 0 }
		red && /Sent/ { p = $4; d = $7; sub(/,/, "", d) }
		red { for (i = 1; i < NF; i++) {
			if ($i == "marked") m = $(i + 1)
			if ($i == "early") e = $(i + 1) } }
		END { print p + 0, d + 0, m + 0, e + 0 }'
}

# cc_enable DEV 0|1: DCQCN's reaction point of rrxe device DEV on or off (off: its packets are
# Not-ECT, and the queue drops what it would mark). Fails for a device without cc_params (C rxe).
cc_enable() {
	local f=/sys/kernel/debug/rrxe/$1/cc_params/rp_enable
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	[ -w "$f" ] && echo "$2" >"$f"
}
