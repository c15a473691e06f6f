#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The performance management agent (process_mad: ClassPortInfo, PortCounters and
# PortCountersExt), as rxe has it: /sys/class/infiniband/DEV/ports/1/counters exists, its data
# and packet counters move under traffic and agree with the hardware counters they come from,
# and link_downed counts the port going down. Across a veth every packet counts, READ
# responses too: a READ's data is in its responder's sent_bytes and its requester's rcvd_bytes
# (a WRITE's the other way round), and what one end sent, the other received, byte for byte.
. "$(dirname "$0")/lib.sh"
NS=rrpma SIF=rrpma0 CIF=rrpma1 SRV=192.168.93.1 CLI=192.168.93.2 SD=${DEV}s CD=${DEV}c
trap 'kill $srv 2>/dev/null; veth_wire_down; nic_up; cleanup_driver' EXIT
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
check "IPv4 GID" wait_for 20 gid_index "$DEV" "ffff:0a00:020f"
gidx=$(gid_index "$DEV" ffff:0a00:020f)
c=/sys/class/infiniband/$DEV/ports/1/counters
hw=/sys/class/infiniband/$DEV/ports/1/hw_counters
for f in port_xmit_data port_rcv_data port_xmit_packets port_rcv_packets link_downed \
	symbol_error port_rcv_errors; do
	[ -r "$c/$f" ] || fail "no $c/$f"
done
snap() { cat "$c/port_xmit_data" "$c/port_rcv_data" "$c/port_xmit_packets" "$c/port_rcv_packets"; }
mapfile -t before < <(snap)
diag "before: xmit_data ${before[0]} rcv_data ${before[1]} xmit_packets ${before[2]} rcv_packets ${before[3]}"

# 100 round trips of 4 KiB, data checked.
timeout 60 ibv_rc_pingpong -c -n 100 -s 4096 -d "$DEV" -g "$gidx" -p 18680 >/tmp/pma_srv 2>&1 &
srv=$!
wait_for 30 listening 18680
timeout 60 ibv_rc_pingpong -c -n 100 -s 4096 -d "$DEV" -g "$gidx" -p 18680 localhost \
	>/tmp/pma_cli 2>&1 || fail "ibv_rc_pingpong client: $(tail -2 /tmp/pma_cli)"
wait $srv || fail "ibv_rc_pingpong server: $(tail -2 /tmp/pma_srv)"

mapfile -t after < <(snap)
diag "after:  xmit_data ${after[0]} rcv_data ${after[1]} xmit_packets ${after[2]} rcv_packets ${after[3]}"
# Each side sent 100 x 4096 bytes: at least 200 x 4096 / 4 four-octet units each way.
min=$((200 * 4096 / 4))
[ $((after[0] - before[0])) -ge $min ] || fail "port_xmit_data moved by $((after[0] - before[0])) < $min"
[ $((after[1] - before[1])) -ge $min ] || fail "port_rcv_data moved by $((after[1] - before[1])) < $min"
[ $((after[2] - before[2])) -ge 200 ] || fail "port_xmit_packets moved by $((after[2] - before[2]))"
[ $((after[3] - before[3])) -ge 200 ] || fail "port_rcv_packets moved by $((after[3] - before[3]))"
# No traffic now: the agent reports the hardware counters it is fed from (a straggling ACK may
# land between two reads: read again).
check "port_xmit_packets = sent_pkts" \
	wait_for 2 bash -c "[ \$(cat $c/port_xmit_packets) = \$(cat $hw/sent_pkts) ]"
check "port_rcv_packets = rcvd_pkts" \
	wait_for 2 bash -c "[ \$(cat $c/port_rcv_packets) = \$(cat $hw/rcvd_pkts) ]"
check "port_xmit_data = sent_bytes / 4" \
	wait_for 2 bash -c "[ \$(cat $c/port_xmit_data) = \$((\$(cat $hw/sent_bytes) / 4)) ]"

down=$(cat "$c/link_downed")
ip link set "$NIC" down
check "port down" wait_for 5 bash -c "ibv_devinfo -d $DEV | grep -q PORT_DOWN"
nic_up
check "port active" wait_for 5 bash -c "ibv_devinfo -d $DEV | grep -q PORT_ACTIVE"
check "link_downed counted the port down ($down -> $(cat "$c/link_downed"))" \
	bash -c "[ \$(cat $c/link_downed) -eq $((down + 1)) ]"

# Across the veth: SD serves, CD (in NS) reads and then writes 200 x 64 KiB.
veth_wire
sg=$(gid_index "$SD" "$(v4_gid $SRV)") cg=$(gid_index "$CD" "$(v4_gid $CLI)")
hwc() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2"; }
moved=$((200 * 65536))
for t in read write; do
	s0=$(hwc "$SD" sent_bytes) r0=$(hwc "$CD" rcvd_bytes)
	cs0=$(hwc "$CD" sent_bytes) sr0=$(hwc "$SD" rcvd_bytes)
	timeout 60 ib_${t}_bw -d "$SD" -x "$sg" -s 65536 -n 200 -F -p 18690 >/tmp/pma_srv 2>&1 &
	srv=$!
	wait_for 30 listening 18690
	ip netns exec $NS timeout 60 ib_${t}_bw -d "$CD" -x "$cg" -s 65536 -n 200 -F -p 18690 $SRV \
		>/tmp/pma_cli 2>&1 || fail "ib_${t}_bw client: $(tail -2 /tmp/pma_cli)"
	wait $srv || fail "ib_${t}_bw server: $(tail -2 /tmp/pma_srv)"
	# What each end sent, the other received (an ACK in flight: read again).
	same() { [ $(($(hwc "$1" sent_bytes) - $2)) = $(($(hwc "$3" rcvd_bytes) - $4)) ]; }
	check "$t: $SD sent what $CD received" wait_for 2 same "$SD" "$s0" "$CD" "$r0"
	check "$t: $CD sent what $SD received" wait_for 2 same "$CD" "$cs0" "$SD" "$sr0"
	sd=$(($(hwc "$SD" sent_bytes) - s0)) cd=$(($(hwc "$CD" sent_bytes) - cs0))
	diag "$t of $moved bytes: $SD sent $sd bytes, $CD sent $cd bytes"
	if [ $t = read ]; then
		[ $sd -ge $moved ] || fail "the READ responses' $moved bytes are not in $SD's sent_bytes"
	else
		[ $cd -ge $moved ] || fail "the WRITEs' $moved bytes are not in $CD's sent_bytes"
	fi
done
exit 0
