#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# MADs on QP1 (process_mad, IBA 13.4): a umad agent sends PerfMgt MADs through QP1 to the
# device's own GID, then across a veth pair to another device and back. The GIDs are the IPv6
# link-local ones: ib_core matches a response to its request by the GIDs it reads from the
# receive buffer's GRH, which for RoCEv2 over IPv4 holds an IPv4 header, so with an IPv4 GID
# no response would reach the agent that asked. A Get of ClassPortInfo
# or PortCounters gets exactly one GetResp with status 0, a Get of an attribute the agent lacks
# and a Set (clearing the counters is not implemented) get status 0x000c; a forged GetResp,
# Trap or TrapRepress gets no answer. After each, the devices' packet counters stay still:
# an agent that answered answers (the storm of issue #33) keeps them moving.
#
# Not perfquery (infiniband-diags): it cannot open a RoCE port at all. It registers an SMI
# (class 1) agent first, and a RoCE port has no QP0 ("mad_rpc_open_port: client_register for
# mgmt 1 failed"; tried on rrxe, and the same holds for C rxe and RoCE NICs), and it addresses
# ports by LID, which RoCE does not have. umad_probe sends the PerfMgt Gets it would, by GID.
#
# The C rdma_rxe answers a PerfMgt Get of its attributes, and every PerfMgt MAD but a Get
# (responses included), with a zeroed MAD, which ib_core at the other end drops as a bad base
# version: no PerfMgt answer reaches the asker there (not even the one ib_core makes for an
# attribute rxe lacks, which rxe's process_mad swallows). The answers are only reported there,
# but the counters must stay still all the same.
. "$(dirname "$0")/lib.sh"
NS=rrmad SIF=vmad0 CIF=vmad1
SRV=192.168.79.1 CLI=192.168.79.2
SD=${DEV}s CD=${DEV}c
trap 'veth_wire_down >/dev/null 2>&1; cleanup_driver' EXIT
need_bin umad_probe
nic_up
modprobe ib_umad || skip "no ib_umad"
check "add $DEV" link_add "$DEV" "$NIC"

# ll DEV: the index of DEV's IPv6 link-local RoCE v2 GID; gid DEV INDEX: its value.
ll() { wait_for 20 gid_index "$1" "fe80:0000:0000:0000" >/dev/null && gid_index "$1" fe80:0000; }
gid() { cat "/sys/class/infiniband/$1/ports/1/gids/$2"; }
gidx=$(ll "$DEV") || fail "no IPv6 link-local GID on $DEV"

# sent DEV, rcvd DEV: the device's packet counters.
sent() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/sent_pkts"; }
rcvd() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/rcvd_pkts"; }

# still DESC DEV...: over 2 s, no device sends or receives more than a handful of packets.
still() {
	local desc=$1 d ds dr
	shift
	local -A s0 r0
	for d; do s0[$d]=$(sent "$d") r0[$d]=$(rcvd "$d"); done
	sleep 2
	for d; do
		ds=$(($(sent "$d") - ${s0[$d]})) dr=$(($(rcvd "$d") - ${r0[$d]}))
		[ $ds -le 4 ] && [ $dr -le 4 ] ||
			fail "$desc: $d sent $ds and received $dr packets in the 2 s after it"
	done
}

# probe DESC DEV SGID_INDEX DGID METHOD ATTR: one MAD from DEV's umad agent; the agent's
# output in $out, the packets DEV sent meanwhile in $took; then the devices must stay still.
probe() {
	local desc=$1 dev=$2 s0
	shift
	s0=$(sent "$dev")
	out=$(timeout 30 "$BIN/umad_probe" "$@" 2>&1) || fail "$desc: umad_probe: $out"
	took=$(($(sent "$dev") - s0))
	printf '%s\n' "$out" | sed "s/^/# $desc: /"
	diag "$desc: $dev sent $took packets"
	still "$desc" "$dev" "${peer[@]}"
}
replies() { grep -c '^recv' <<<"$out"; }

# exchange DEV SGID_INDEX DGID: every probe from DEV to DGID.
exchange() {
	local dev=$1 sg=$2 dg=$3 m what
	probe "Get(ClassPortInfo) $dev -> $dg" "$dev" "$sg" "$dg" 0x01 0x0001
	if is_rrxe; then
		[ "$(replies)" -eq 1 ] || fail "Get(ClassPortInfo): $(replies) answers, not 1"
		# Base and class version 1, CapabilityMask: PortCountersExt.
		grep -q '^recv method=0x81 status=0x0000 attr=0x0001 .* word=0x01010200$' <<<"$out" ||
			fail "Get(ClassPortInfo): not a GetResp of ClassPortInfo with status 0"
	else
		[ "$(replies)" -le 1 ] || fail "Get(ClassPortInfo): $(replies) answers"
	fi
	probe "Get(PortCounters) $dev -> $dg" "$dev" "$sg" "$dg" 0x01 0x0012
	if is_rrxe; then
		[ "$(replies)" -eq 1 ] || fail "Get(PortCounters): $(replies) answers, not 1"
		# PortSelect 1.
		grep -q '^recv method=0x81 status=0x0000 attr=0x0012 .* word=0x0001' <<<"$out" ||
			fail "Get(PortCounters): not a GetResp of PortCounters with status 0"
	fi
	# PortSamplesControl: an attribute of the class the agent does not have.
	probe "Get(PortSamplesControl) $dev -> $dg" "$dev" "$sg" "$dg" 0x01 0x0010
	if is_rrxe; then
		[ "$(replies)" -eq 1 ] || fail "Get(PortSamplesControl): $(replies) answers, not 1"
		grep -q '^recv method=0x81 status=0x000c attr=0x0010 ' <<<"$out" ||
			fail "Get(PortSamplesControl): not answered with status 0x000c"
	fi
	probe "Set(PortCounters) $dev -> $dg" "$dev" "$sg" "$dg" 0x02 0x0012
	if is_rrxe; then
		[ "$(replies)" -eq 1 ] || fail "Set(PortCounters): $(replies) answers, not 1"
		grep -q '^recv method=0x81 status=0x000c attr=0x0012 ' <<<"$out" ||
			fail "Set(PortCounters): not answered with status 0x000c"
	fi
	# Nothing answers a response, a trap or a trap repress: only the MAD itself leaves.
	for m in 0x81 0x05 0x07; do
		what="method $m (PortCounters) $dev -> $dg"
		probe "$what" "$dev" "$sg" "$dg" $m 0x0012 500
		[ "$(replies)" -eq 0 ] || fail "$what: $(replies) answers"
		! is_rrxe || [ "$took" -eq 1 ] || fail "$what: $dev sent $took packets, not 1"
	done
}

peer=()
exchange "$DEV" "$gidx" "$(gid "$DEV" "$gidx")"

# Two devices on a veth pair: each asks the other, the other answers once. The link-local
# addresses must be past duplicate address detection, or neighbour discovery fails.
veth_wire
check "$SIF's IPv6 address" wait_for 10 bash -c "! ip -6 addr show dev $SIF | grep -q tentative"
check "$CIF's IPv6 address" \
	wait_for 10 bash -c "! ip -n $NS -6 addr show dev $CIF | grep -q tentative"
sg=$(ll "$SD") || fail "no IPv6 link-local GID on $SD"
cg=$(ll "$CD") || fail "no IPv6 link-local GID on $CD"
peer=("$CD")
exchange "$SD" "$sg" "$(gid "$CD" "$cg")"
peer=("$SD")
exchange "$CD" "$cg" "$(gid "$SD" "$sg")"
exit 0
