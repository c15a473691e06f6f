#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2015,SC2034,SC2154 # sourced by bench.sh, which sets and reads the globals
#
# scripts/guest/bench-wire.sh agent [IDLE_SECONDS]   (runs in guest a of the bench's wire pair)
#
# The wire family of the bench (scripts/bench starts the two guests): guests a and b of the fast
# test kernel, one vCPU each, joined by a QEMU socket netdev on the host's loopback and nothing
# else. Each renames its NIC on that wire (found by its MAC) to rbw and gives it its address at
# MTU 1500 (RoCE path MTU 1024):
#   a  192.168.91.1  52:54:00:00:bb:01   the servers: perftest, iperf3 and the NVMe-oF target
#   b  192.168.91.2  52:54:00:00:bb:02   the controller, scripts/guest/bench.sh --peer: the
#                                        clients, fio and the table
# Guest a runs this script with "agent": the NIC, ib_uverbs, then scripts/guest/bench-agent.py
# on 192.168.91.1:18990 until the controller says quit (or nothing comes for IDLE_SECONDS).
# Everything the controller does on a goes through that agent, over the wire itself: the
# module loads and swaps (rxe on both, then rrxe on both), the devices, every server (the
# controller starts it, waits until it listens, then starts its client), and the kernel CPU
# samples of a's side at the start and end of each row's measured iterations.
#
# One vCPU per guest shapes the latency: a SEND or WRITE round trip, where perftest busy-polls
# on both sides, took some 25 ms with either driver, a READ, whose server sleeps, about 2 ms
# (2026-12-02); likely work deferred to a kworker that, woken on a CPU where a user process
# spins, runs only at the next tick (the fast kernel is PREEMPT_LAZY, HZ=250; not profiled).
# The wire's latency rows therefore make a tenth of the round trips of the others.
#
# Sourced by scripts/guest/bench.sh (guest b), it gives the controller's helpers: wire_nic_up,
# remote, remote_sh, agent_wait, agent_quit, and the peer's CPU samples (peer_kcpu_*).

WIRE_NIC=rbw
WIRE_ADDR_A=192.168.91.1 WIRE_ADDR_B=192.168.91.2
WIRE_MAC_A=52:54:00:00:bb:01 WIRE_MAC_B=52:54:00:00:bb:02
WIRE_GID_A=ffff:c0a8:5b01 WIRE_GID_B=ffff:c0a8:5b02
AGENT_PORT=18990
EXIT_MARK=@@rrxe-exit:

# wire_nic_up ADDR MAC: the NIC with MAC, renamed to $WIRE_NIC, up at MTU 1500 with ADDR/24.
wire_nic_up() {
	local n
	for n in /sys/class/net/*; do
		[ "$(cat "$n/address" 2>/dev/null)" = "$2" ] || continue
		n=${n##*/}
		if [ "$n" != $WIRE_NIC ]; then
			ip link set "$n" down && ip link set "$n" name $WIRE_NIC || return 1
		fi
		ip link set $WIRE_NIC mtu 1500 up && ip addr replace "$1/24" dev $WIRE_NIC
		return
	done
	return 1
}

# remote CMD...: CMD on guest a through its agent; its output (stdout and stderr together) on
# our stdout, its exit status ours (255 when the agent cannot be reached). Killing the caller
# closes the connection, and the agent then ends CMD.
remote() {
	local fd line rc=255
	exec {fd}<>"/dev/tcp/$WIRE_ADDR_A/$AGENT_PORT" || return 255
	printf 'run %s\n' "$(printf '%q ' "$@")" >&"$fd"
	while IFS= read -r line <&"$fd" || [ -n "$line" ]; do
		if [[ $line == *"$EXIT_MARK"* ]]; then
			rc=${line##*"$EXIT_MARK"}
			line=${line%"$EXIT_MARK"*}
			[ -z "$line" ] || printf '%s\n' "$line"
			break
		fi
		printf '%s\n' "$line"
	done
	exec {fd}>&-
	[[ $rc =~ ^[0-9]+$ ]] || rc=255
	return "$rc"
}
# remote_sh CODE: CODE run by bash on guest a, with the selftests' helpers (wait_for,
# gid_index, devinfo_field) defined.
remote_sh() { remote bash -c ". tests/selftests/lib.sh; $1"; }
agent_up() { remote true 2>/dev/null; }
# agent_wait SECONDS: until the agent answers (guest a may boot later than b).
agent_wait() {
	local end=$((SECONDS + $1))
	until agent_up; do
		[ $SECONDS -lt $end ] || return 1
		sleep 1
	done
}
agent_quit() {
	local fd
	exec {fd}<>"/dev/tcp/$WIRE_ADDR_A/$AGENT_PORT" 2>/dev/null || return 0
	printf 'quit\n' >&"$fd"
	read -r -t 5 -u "$fd" _ || true
	exec {fd}>&-
}

# The peer's kernel CPU time, sampled by the agent the moment it reads our request; builtins
# only (no process of our own to count). peer_kcpu_open once per family, then for each sample
# peer_kcpu_ask before our own sample and peer_kcpu_read after it: KPEER, empty on failure.
PEER_KFD=''
peer_kcpu_open() {
	exec {PEER_KFD}<>"/dev/tcp/$WIRE_ADDR_A/$AGENT_PORT" || { PEER_KFD=''; return 1; }
	printf 'kcpu\n' >&"$PEER_KFD" && read -r -t 10 -u "$PEER_KFD" _ ||
		{ peer_kcpu_close; return 1; }
}
peer_kcpu_close() {
	[ -z "$PEER_KFD" ] || exec {PEER_KFD}>&-
	PEER_KFD=''
}
peer_kcpu_ask() { [ -z "$PEER_KFD" ] || printf 'k\n' 1>&"$PEER_KFD" 2>/dev/null || true; }
peer_kcpu_read() {
	KPEER=''
	[ -z "$PEER_KFD" ] || read -r -t 5 -u "$PEER_KFD" KPEER || KPEER=''
	[[ $KPEER =~ ^[0-9]+$ ]] || KPEER=''
}

# --- guest a: the agent ----------------------------------------------------------------------
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -uo pipefail
	cd "$(dirname "$0")/../.." || exit 1
	[ "${1:-}" = agent ] || { echo "usage: $0 agent [IDLE_SECONDS]" >&2; exit 2; }
	say() { printf 'bench-agent: %s\n' "$*"; }
	mkdir -p /run/rdma /etc/rdma 2>/dev/null
	wire_nic_up $WIRE_ADDR_A $WIRE_MAC_A || { say "no NIC with MAC $WIRE_MAC_A"; exit 1; }
	modprobe ib_uverbs || { say "modprobe ib_uverbs failed"; exit 1; }
	say "guest a: $WIRE_NIC $WIRE_ADDR_A, kernel $(uname -r), $(nproc) vCPU"
	/usr/bin/python3 scripts/guest/bench-agent.py $WIRE_ADDR_A $AGENT_PORT "${2:-900}"
	rc=$?
	# Whatever the controller left behind: the NVMe-oF target, the devices, the drivers.
	bash scripts/guest/bench-nvme.sh nvmet_down
	for m in rdma_rxe rrxe; do
		[ -d "/sys/module/$m" ] && { rdma link show | awk '{ print $2 }' | cut -d/ -f1 | sort -u |
			while read -r d; do rdma link delete "$d"; done; modprobe -r $m; }
	done
	say "agent exited ($rc) after $SECONDS s"
	exit $rc
fi
