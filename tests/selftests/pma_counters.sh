#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The performance management agent (process_mad: ClassPortInfo, PortCounters and
# PortCountersExt), as rxe has it: /sys/class/infiniband/DEV/ports/1/counters exists, its data
# and packet counters move under traffic and agree with the hardware counters they come from,
# and link_downed counts the port going down.
. "$(dirname "$0")/lib.sh"
trap 'kill $srv 2>/dev/null; nic_up; cleanup_driver' EXIT
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
exit 0
