#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The traffic class of a connection on the wire, and the priority its packets get on the way
# out: a VLAN on each end of a veth pair whose egress map sends priority P as 802.1Q PCP P, a
# device on each end with the VLAN's address as a GID, and ib_write_bw with --tclass 104 (DSCP
# 26, as RoCE NICs' lossless class) at both ends. A sniffer on the veth reads every RoCEv2 packet's PCP and DSCP. rrxe: every
# packet, requests and ACKs, leaves through the VLAN (tagged) and carries DSCP 26 and priority 3
# (the DSCP's class selector, as RoCE NICs map DSCP to priority by default:
# Documentation/congestion.rst, "Path control"). C rxe 7.2 carries the DSCP and leaves the
# priority 0: against it (the oracle) PCP 0 is expected and said so. An untagged packet (one
# routed out of the real netdev: rrxe did so before 2026-12-06) shows as PCP "-" and fails.
. "$(dirname "$0")/lib.sh"
NS=rrprio SIF=vpr0 CIF=vpr1 VID=81
SRV=192.168.82.1 CLI=192.168.82.2
SD=${DEV}s CD=${DEV}c
CAP=/tmp/tc_priority.cap
TCLASS=104
trap 'kill $snf $srv 2>/dev/null; veth_wire_down >/dev/null 2>&1; cleanup_driver' EXIT
nic_up
modprobe ib_uverbs
modprobe 8021q 2>/dev/null
MAP="0:0 1:1 2:2 3:3 4:4 5:5 6:6 7:7"

veth_pair
# shellcheck disable=SC2086 # the map is a list
check "VLAN $VID on $SIF" ip link add link "$SIF" name "$SIF.$VID" type vlan id $VID \
	egress-qos-map $MAP
# shellcheck disable=SC2086
check "VLAN $VID on $CIF" ip -n "$NS" link add link "$CIF" name "$CIF.$VID" type vlan id $VID \
	egress-qos-map $MAP
check "$SIF.$VID address" ip addr add "$SRV/24" dev "$SIF.$VID"
check "$CIF.$VID address" ip -n "$NS" addr add "$CLI/24" dev "$CIF.$VID"
check "$SIF.$VID up" ip link set "$SIF.$VID" up
check "$CIF.$VID up" ip -n "$NS" link set "$CIF.$VID" up
# Devices go on the real netdevs (both drivers refuse a VLAN's); the VLAN's address is a GID of
# the device with the VLAN's ID, and a connection on that GID leaves through the VLAN.
check "add $SD on $SIF" timeout 30 rdma link add "$SD" type "$TYPE" netdev "$SIF"
check "add $CD on $CIF in $NS" ip netns exec "$NS" timeout 30 rdma link add "$CD" \
	type "$TYPE" netdev "$CIF"
wait_for 20 gid_index "$SD" "$(v4_gid "$SRV")" >/dev/null || fail "no IPv4 GID on $SD"
wait_for 20 gid_index "$CD" "$(v4_gid "$CLI")" >/dev/null || fail "no IPv4 GID on $CD"
sidx=$(gid_index "$SD" "$(v4_gid "$SRV")")
cidx=$(gid_index "$CD" "$(v4_gid "$CLI")")

# The sniffer: "SRC PCP DSCP" for each tagged RoCEv2 packet on $SIF, until killed.
python3 -u - "$SIF" >"$CAP" 2>&1 <<'PY' &
import socket, struct, sys
SOL_PACKET, PACKET_AUXDATA, TP_STATUS_VLAN_VALID = 263, 8, 1 << 4
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
s.bind((sys.argv[1], 0))
print("ready", flush=True)
while True:
    f, anc, _, _ = s.recvmsg(65535, socket.CMSG_SPACE(32))
    # The tag: in the packet's auxiliary data when the stack holds it apart from the frame
    # (veth's VLAN offload), else in the frame.
    tci = None
    for level, kind, data in anc:
        if level == SOL_PACKET and kind == PACKET_AUXDATA and len(data) >= 20:
            status, _, _, _, _, vtci, _ = struct.unpack("IIIHHHH", data[:20])
            if status & TP_STATUS_VLAN_VALID:
                tci = vtci
    if f[12:14] == b"\x81\x00":
        tci, f = struct.unpack("!H", f[14:16])[0], f[:12] + f[16:]
    if len(f) < 14 + 20 + 8 + 12 or f[12:14] != b"\x08\x00":
        continue
    ip = f[14:]
    ihl = (ip[0] & 15) * 4
    if ip[9] != 17 or struct.unpack("!H", ip[ihl + 2:ihl + 4])[0] != 4791:
        continue
    # Untagged: "-" (the packet left by the real device, not the VLAN).
    print(socket.inet_ntoa(ip[12:16]), "-" if tci is None else tci >> 13, ip[1] >> 2,
          flush=True)
PY
snf=$!
wait_for 10 grep -q ready "$CAP" || fail "the sniffer did not start"
port=18760
timeout 60 ib_write_bw -d "$SD" -x "$sidx" -p $port -s 4096 -n 200 --tclass=$TCLASS \
	>/tmp/tp_srv 2>&1 &
srv=$!
wait_for 30 listening $port
ip netns exec "$NS" timeout 60 ib_write_bw -d "$CD" -x "$cidx" -p $port -s 4096 -n 200 \
	--tclass=$TCLASS "$SRV" >/tmp/tp_cli 2>&1
rc=$?
wait $srv
src=$?
sleep 1
kill $snf 2>/dev/null
wait $snf 2>/dev/null
if [ $rc -ne 0 ] || [ $src -ne 0 ]; then
	sed 's/^/# client: /' /tmp/tp_cli | tail -3
	sed 's/^/# server: /' /tmp/tp_srv | tail -3
	fail "ib_write_bw: client $rc, server $src"
fi

# judge WANT_PCP: every packet from both ends with DSCP 26 and priority WANT_PCP.
judge() {
	python3 - "$CAP" "$1" "$SRV" "$CLI" "$((TCLASS >> 2))" <<'PY'
import sys
cap, want, srv, cli, dscp = sys.argv[1:6]
want, dscp = int(want), int(dscp)
seen = {}
for line in open(cap):
    f = line.split()
    if len(f) == 3 and f[0] in (srv, cli):
        seen.setdefault(f[0], []).append((f[1], int(f[2])))
bad = []
for src in (srv, cli):
    pk = seen.get(src, [])
    marks = sorted(set(pk))
    print(f"# from {src}: {len(pk)} packets, (PCP, DSCP) {marks}")
    if not pk:
        bad.append(f"no packets from {src}")
    elif marks != [(str(want), dscp)]:
        bad.append(f"{src}: {marks}, expected [({want}, {dscp})]")
for b in bad:
    print("# FAIL:", b)
sys.exit(1 if bad else 0)
PY
}
if [ "$MOD" = rdma_rxe ]; then
	diag "C rxe leaves the priority 0: PCP 0 expected"
	check "C rxe: DSCP 26 both ways, priority 0" judge 0
else
	check "DSCP 26 both ways, priority 3 (PCP 3 on the VLAN)" judge 3
fi
exit 0
