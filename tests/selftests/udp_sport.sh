#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# RoCEv2 UDP source ports on the wire, across a veth pair between two devices. An RC or UC
# connection's packets, requests and ACKs alike, leave both ends on one port: the one ib_core's
# rdma_get_udp_sport derives from the two QP numbers when the address vector has no flow label
# (ibv_rc_pingpong and ibv_uc_pingpong set none), as C rxe 7.2 and RoCE NICs send, so ECMP and
# RSS keep a connection on one path and both directions of it together. A UD QP keeps one port
# in 0xc000-0xffff for every destination. A sniffer on the veth reads every UDP 4791 packet's
# addresses, source port and destination QP; the expected port is computed here, from the QP
# numbers on the wire. Runs against C rdma_rxe as well (the oracle).
. "$(dirname "$0")/lib.sh"
NS=rrsport SIF=vsp0 CIF=vsp1
SRV=192.168.81.1 CLI=192.168.81.2
SD=${DEV}s CD=${DEV}c
CAP=/tmp/udp_sport.cap
trap 'kill $snf $srv 2>/dev/null; veth_wire_down >/dev/null 2>&1; cleanup_driver' EXIT
nic_up
modprobe ib_uverbs
veth_wire
sidx=$(gid_index "$SD" "$(v4_gid "$SRV")")
cidx=$(gid_index "$CD" "$(v4_gid "$CLI")")

# sniff: one line per RoCEv2 packet seen on $SIF, "SRC DST SPORT DQPN", until killed.
sniff() {
	python3 -u - "$SIF" <<'PY'
import socket, struct, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
s.bind((sys.argv[1], 0))
print("ready", flush=True)
while True:
    f = s.recv(65535)
    if len(f) < 14 + 20 + 8 + 12 or f[12:14] != b"\x08\x00":
        continue
    ip = f[14:]
    ihl = (ip[0] & 15) * 4
    if ip[9] != 17:
        continue
    sport, dport = struct.unpack("!HH", ip[ihl:ihl + 4])
    if dport != 4791:
        continue
    bth = ip[ihl + 8:]
    dqpn = int.from_bytes(bth[5:8], "big")
    print(socket.inet_ntoa(ip[12:16]), socket.inet_ntoa(ip[16:20]), sport, dqpn, flush=True)
PY
}

# run_pp NAME PROG ARGS...: PROG's server on $SD, its client on $CD in $NS, with the sniffer
# running; the packets they exchanged are left in $CAP.NAME.
port=18700
run_pp() {
	local name=$1
	shift
	port=$((port + 1))
	sniff >"$CAP.$name" 2>&1 &
	snf=$!
	wait_for 10 grep -q ready "$CAP.$name" || fail "$name: the sniffer did not start"
	timeout 60 "$@" -d "$SD" -g "$sidx" -p $port >"/tmp/sp_srv_$name" 2>&1 &
	srv=$!
	wait_for 30 listening $port
	ip netns exec "$NS" timeout 60 "$@" -d "$CD" -g "$cidx" -p $port "$SRV" \
		>"/tmp/sp_cli_$name" 2>&1
	local rc=$?
	wait $srv
	local src=$?
	sleep 1
	kill $snf 2>/dev/null
	wait $snf 2>/dev/null
	if [ $rc -ne 0 ] || [ $src -ne 0 ]; then
		sed "s/^/# $name client: /" "/tmp/sp_cli_$name" | tail -3
		sed "s/^/# $name server: /" "/tmp/sp_srv_$name" | tail -3
		fail "$name: client $rc, server $src"
	fi
}

# judge NAME connected|datagram: the verdict on $CAP.NAME's packets (QP1's left out).
judge() {
	python3 - "$CAP.$1" "$2" "$SRV" "$CLI" <<'PY'
import sys
cap, kind, srv, cli = sys.argv[1:]
pkts = []
for line in open(cap):
    f = line.split()
    if len(f) == 4 and f[0] in (srv, cli) and int(f[3]) != 1:
        pkts.append((f[0], f[1], int(f[2]), int(f[3])))
def calc(l, r):
    v = l * r
    v ^= v >> 20
    v ^= v >> 40
    return v & 0xFFFFF
def port(fl):
    return 0xC000 | ((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14))
bad = []
for src in (srv, cli):
    mine = [p for p in pkts if p[0] == src]
    if not mine:
        bad.append(f"no packets from {src}")
        continue
    ports = {p[2] for p in mine}
    print(f"# from {src}: {len(mine)} packets, source ports {sorted(hex(x) for x in ports)}, "
          f"to QPs {sorted({p[3] for p in mine})}")
    if len(ports) != 1 or min(ports) < 0xC000:
        bad.append(f"{src}: one port in 0xc000-0xffff expected")
if kind == "connected" and not bad:
    to_srv = {p[3] for p in pkts if p[0] == cli}
    to_cli = {p[3] for p in pkts if p[0] == srv}
    if len(to_srv) != 1 or len(to_cli) != 1:
        bad.append("one QP each way expected")
    else:
        want = port(calc(to_srv.pop(), to_cli.pop()))
        got = {p[2] for p in pkts}
        print(f"# expected {hex(want)} both ways")
        if got != {want}:
            bad.append(f"ports {sorted(hex(x) for x in got)}, expected {hex(want)}")
for b in bad:
    print("# FAIL:", b)
sys.exit(1 if bad else 0)
PY
}

run_pp rc ibv_rc_pingpong -n 100 -s 4096
check "RC: both ends on rdma_get_udp_sport's port" judge rc connected
run_pp uc ibv_uc_pingpong -n 100 -s 1024
check "UC: both ends on rdma_get_udp_sport's port" judge uc connected
run_pp ud ibv_ud_pingpong -n 100 -s 1024
check "UD: one port per QP" judge ud datagram
exit 0
