#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/guest/interop.sh SIDE MOD_A MOD_B OUTDIR     (runs in one of the two interop guests)
# scripts/guest/interop.sh list MOD_A MOD_B            (prints the plan: "K DESCRIPTION")
#
# Two guests (scripts/interop) share one wire, a QEMU socket netdev: side a (192.168.90.1, MAC
# 52:54:00:00:aa:01) runs driver MOD_A, side b (192.168.90.2, MAC ...:aa:02) runs MOD_B. Both
# guests walk the same plan in lock step; every case has a server on one side and a client on
# the other, and the pair is synchronised over the wire itself (TCP on the socket NIC):
#   - the client listens (socat) on CTL = case port + 5 for "go K" from the server;
#   - the server starts its tool, waits until it listens on the case port, then sends "go K"
#     (or "skip K" when over the time budget) to the client's CTL port;
#   - the client runs its tool and sends "done K RC" to the server's CTL port; the server gives
#     its tool 10 s more, then kills it.
# Each side writes "K ROLE RC SECONDS" to OUTDIR/SIDE.results (RC 200: not run; 201: server
# not listening), the device counters after each case to OUTDIR/SIDE.stats ("K link DEV/1 ..."),
# tool output to OUTDIR/SIDE/K.{srv,cli} and its dmesg to OUTDIR/SIDE.dmesg.
# Exit status: 0 when the setup worked (the cases' results are in the files), 1 otherwise.
# INTEROP_N (default 200): iterations of every run; INTEROP_BUDGET (s, default 320): cases
# whose turn comes later are not run; INTEROP_FAULTS=1 adds NVMe-oF under faults (nvme reset
# and link flaps on the host's side during verified I/O: scripts/guest/nvmeof-host --faults) in
# both directions, and the target's port off, rdma link delete and nvme disconnect on the host
# (--faults=LIST) with the host on side a; INTEROP_FAULTS=2 netem loss before those, and those
# in both directions too (INTEROP_NVMEOF_FAULTS=LIST: any of loss,port,unlink,disconnect,bneck);
# INTEROP_LOSS=P: netem loss of P % (burst: in bursts) on both sides' NICs for every case;
# INTEROP_ONLY=REGEX runs only the cases whose tool and arguments match (INTEROP_SERVER=a or b:
# only those served from that side); INTEROP_TRACE=1 records
# the ib_cma, rdma_cma, ib_mad (and rrxe) trace events in OUTDIR/SIDE.trace.
set -u
cd "$(dirname "$0")/../.."
side=$1 MOD_A=$2 MOD_B=$3
N=${INTEROP_N:-200}
BUDGET=${INTEROP_BUDGET:-320}

# The plan, identical on both sides: "K SERVER_SIDE TIMEOUT GIDOPT TOOL ARGS...", in both
# directions (server on a, then server on b).
plan() {
	local k=0 srv t faults='' more='' lvl=${INTEROP_FAULTS:-0} list
	# INTEROP_FAULTS=1: NVMe-oF with faults on the host's side too (nvme reset, link flap), and
	# the other faults (the target's port off, rdma link delete and nvme disconnect on the
	# host) with the host on side a; INTEROP_FAULTS=2: netem loss before those, and all of
	# them in both directions too.
	[[ $lvl =~ ^[0-9]+$ ]] || lvl=0
	list=port,unlink,disconnect
	[ "$lvl" -ge 2 ] && list=loss,$list
	[ "$lvl" -ge 1 ] && faults="240 -x scripts/guest/nvmeof-rdma --faults"
	for srv in a b; do
		more=
		if [ "$lvl" -ge 2 ] || { [ "$lvl" -ge 1 ] && [ $srv = b ]; }; then
			more="420 -x scripts/guest/nvmeof-rdma"
			more+=" --faults=${INTEROP_NVMEOF_FAULTS:-$list}"
		fi
		while read -r t; do
			[ -n "$t" ] || continue
			k=$((k + 1))
			# INTEROP_ONLY=REGEX: only the cases whose tool and arguments match (same numbers).
			[[ $t =~ ${INTEROP_ONLY:-.} ]] || continue
			# INTEROP_SERVER=a or b: only the cases whose server runs on that side.
			[[ ${INTEROP_SERVER:-$srv} = "$srv" ]] || continue
			echo "$k $srv $t"
		done <<-EOF
			60 -g ibv_rc_pingpong -c -s 4096 -m 1024 -n $N
			90 -g ibv_rc_pingpong -c -s 65536 -m 1024 -n $N
			60 -g ibv_uc_pingpong -c -s 4096 -m 1024 -n $N
			60 -g ibv_ud_pingpong -c -s 1024 -n $N
			90 -x ib_write_bw -s 65536 -n $N -F --report_gbits
			90 -x ib_read_bw -s 65536 -n $N -F --report_gbits
			90 -x ib_send_bw -s 65536 -n $N -F --report_gbits
			60 -x ib_atomic_bw -n $N -F --report_gbits
			60 -g verbs_remote
			240 -x scripts/guest/nvmeof-rdma
			180 -x scripts/guest/iser-rdma
			$faults
			$more
		EOF
	done
}

if [ "$side" = list ]; then
	plan | while read -r k srv tmo gopt tool args; do
		if [ "$srv" = a ]; then s=$MOD_A c=$MOD_B; else s=$MOD_B c=$MOD_A; fi
		echo "$k $tool $args (server $s, client $c)"
	done
	exit 0
fi

OUT=$4
case $side in
a) ME=192.168.90.1 PEER=192.168.90.2 MAC=52:54:00:00:aa:01 GIDPAT=ffff:c0a8:5a01 MOD=$MOD_A ;;
b) ME=192.168.90.2 PEER=192.168.90.1 MAC=52:54:00:00:aa:02 GIDPAT=ffff:c0a8:5a02 MOD=$MOD_B ;;
*) echo "usage: $0 a|b MOD_A MOD_B OUTDIR" >&2; exit 2 ;;
esac
# The selftests' helpers (wait_for, gid_index); they take MODULE as $1 when sourced.
. tests/selftests/lib.sh "$MOD"
# Our own test programs (verbs_remote) are found beside the system's tools.
export PATH="$BIN:$PATH"
DEV=i${TYPE}0
mkdir -p "$OUT/$side"
RES=$OUT/$side.results
: >"$RES"
: >"$OUT/$side.stats"
: >"$OUT/$side.mem"

log() { echo "interop[$side]: $*"; }
die() {
	log "SETUP FAILED: $*"
	dmesg >"$OUT/$side.dmesg" 2>&1
	exit 1
}

# --- setup ---------------------------------------------------------------------------------------
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
mkdir -p /run/rdma /etc/rdma 2>/dev/null
command -v socat >/dev/null || die "no socat in the guest"
NIC=
for n in /sys/class/net/*; do
	[ "$(cat "$n/address" 2>/dev/null)" = "$MAC" ] && NIC=$(basename "$n")
done
[ -n "$NIC" ] || die "no NIC with MAC $MAC"
ip link set "$NIC" up || die "ip link set $NIC up"
ip addr add "$ME/24" dev "$NIC" || die "ip addr add $ME/24 dev $NIC"
modprobe ib_uverbs || die "modprobe ib_uverbs"
if [ "$MOD" = rdma_rxe ]; then
	modprobe rdma_rxe || die "modprobe rdma_rxe"
elif [ -n "${INTEROP_RRXE_ARGS:-}" ]; then
	# shellcheck disable=SC2086 # the parameters are words
	modprobe rrxe $INTEROP_RRXE_ARGS || die "modprobe rrxe $INTEROP_RRXE_ARGS"
fi
timeout 30 rdma link add "$DEV" type "$TYPE" netdev "$NIC" || die "rdma link add $DEV type $TYPE"
port_active() { grep -q ACTIVE "/sys/class/infiniband/$DEV/ports/1/state"; }
wait_for 20 port_active || die "$DEV port not ACTIVE"
GIDX=$(wait_for 20 gid_index "$DEV" "$GIDPAT") || die "no IPv4 RoCE v2 GID ($GIDPAT) on $DEV"
log "$DEV ($MOD, type $TYPE) on $NIC $MAC $ME, GID index $GIDX;" \
	"$(ibv_devinfo -d "$DEV" | awk '$1 == "active_mtu:" { print "active_mtu", $2 }')"
# stats K: the device's counters after case K, and the guest's free memory (SIDE.mem).
stats() {
	echo "$1 $(timeout 10 rdma statistic show link "$DEV/1" 2>&1 | tr '\n' ' ')" >>"$OUT/$side.stats"
	echo "$1 $(awk '/^(MemAvailable|Slab):/ { printf "%s %s kB ", $1, $2 }' /proc/meminfo)" \
		>>"$OUT/$side.mem"
}
stats 0
# The modules' symbols for scripts/vm-stacks.py (a guest stopped for overrunning is sampled
# from outside): OUTDIR/SIDE.kallsyms, kept current as modules come and go.
modsyms() {
	local now last=
	while :; do
		now=$(cut -d' ' -f1 /proc/modules | sort | tr '\n' ' ')
		if [ "$now" != "$last" ]; then
			grep '\[' /proc/kallsyms >"$OUT/$side.kallsyms.new" &&
				mv "$OUT/$side.kallsyms.new" "$OUT/$side.kallsyms"
			last=$now
		fi
		sleep 5
	done
}
modsyms &
MODSYMS=$!
# INTEROP_TRACE=1: the connection managers' and the MAD layer's trace events (ib_cma, rdma_cma,
# ib_mad; and rrxe's drops) into OUTDIR/SIDE.trace at the end.
TRACE=/sys/kernel/tracing
if [ "${INTEROP_TRACE:-0}" = 1 ]; then
	mountpoint -q $TRACE || mount -t tracefs nodev $TRACE
	echo 8192 >$TRACE/buffer_size_kb
	modprobe rdma_cm # its events and ib_cm's exist once loaded
	for e in ib_cma rdma_cma ib_mad rrxe; do
		[ -d $TRACE/events/$e ] && echo 1 >$TRACE/events/$e/enable
	done
	log "tracing: $(cat $TRACE/set_event | cut -d: -f1 | sort -u | tr '\n' ' ')"
fi

# --- the plan ------------------------------------------------------------------------------------
peer_dead=0
# send PORT MSG WINDOW: deliver MSG to the peer's PORT, retrying for WINDOW seconds.
send() {
	local port=$1 msg=$2 end=$((SECONDS + $3))
	while [ $SECONDS -le $end ]; do
		(echo "$msg" >"/dev/tcp/$PEER/$port") 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}
# recv PORT WINDOW: one message sent to our PORT within WINDOW seconds.
recv() {
	timeout "$2" socat -u "TCP-LISTEN:$1,bind=$ME,reuseaddr" STDOUT 2>/dev/null
}
listening() { ss -ltnH "sport = :$1" 2>/dev/null | grep -q .; }
result() {
	echo "$1 $2 $3 $4" >>"$RES"
	log "case $1 $2: exit $3 in $4 s"
}
# How long one side waits for the other: one case at most (the boot is waited for below).
window() { echo 150; }

# watch_qps TMO FILE: shortly before a tool's timeout kills it, what its QPs looked like (the
# tool's own output is line-buffered through stdbuf, so what it printed survives the kill).
watch_qps() {
	sleep $(($1 > 5 ? $1 - 3 : 1))
	{
		echo "# rdma res show qp -dd, 3 s before the timeout"
		timeout 5 rdma res show qp -dd
	} >"$2.qp" 2>&1
}

run_server() {
	local k=$1 tmo=$2 gopt=$3 port=$4 tool=$5 pid rc t0 msg end
	shift 5
	local ctl=$((port + 5)) f=$OUT/$side/$k
	t0=$SECONDS
	if [ $peer_dead = 1 ] || [ $SECONDS -gt "$BUDGET" ]; then
		[ $peer_dead = 1 ] || send $ctl "skip $k" "$(window "$k")" || peer_dead=1
		result "$k" server 200 0
		return
	fi
	# The client's "done" arrives here; listen before anything can be sent.
	recv $ctl $((tmo + $(window "$k"))) >"$f.done" &
	local rpid=$!
	watch_qps "$tmo" "$f.srv" &
	local wpid=$!
	timeout -k 10 "$tmo" stdbuf -oL "$tool" -d "$DEV" "$gopt" "$GIDX" -p "$port" "$@" \
		>"$f.srv" 2>&1 &
	pid=$!
	if ! wait_for 15 listening "$port"; then
		kill $pid 2>/dev/null
		wait $pid
		send $ctl "skip $k" "$(window "$k")" || peer_dead=1
		kill $rpid 2>/dev/null
		result "$k" server 201 $((SECONDS - t0))
		return
	fi
	if ! send $ctl "go $k" "$(window "$k")"; then
		log "case $k: the peer never listened for 'go'"
		peer_dead=1
	fi
	# Wait for our tool; once the client is done, give it 10 s more.
	end=
	while kill -0 $pid 2>/dev/null; do
		if [ -z "$end" ] && [ -s "$f.done" ]; then
			end=$((SECONDS + 10))
		fi
		if [ -n "$end" ] && [ $SECONDS -ge "$end" ]; then
			log "case $k: server still running 10 s after the client finished, killed"
			kill $pid
			break
		fi
		sleep 0.2
	done
	wait $pid
	rc=$?
	kill $rpid $wpid 2>/dev/null
	wait $rpid $wpid 2>/dev/null
	msg=$(cat "$f.done" 2>/dev/null)
	[ -n "$msg" ] && log "case $k: client reported: $msg"
	result "$k" server "$rc" $((SECONDS - t0))
}

run_client() {
	local k=$1 tmo=$2 gopt=$3 port=$4 tool=$5 msg rc t0
	shift 5
	local ctl=$((port + 5)) f=$OUT/$side/$k
	t0=$SECONDS
	if [ $peer_dead = 1 ]; then
		result "$k" client 200 0
		return
	fi
	msg=$(recv $ctl "$(window "$k")")
	case $msg in
	"go $k") ;;
	"skip $k")
		result "$k" client 200 $((SECONDS - t0))
		return
		;;
	*)
		log "case $k: no 'go' from the server (got '${msg}')"
		peer_dead=1
		result "$k" client 200 $((SECONDS - t0))
		return
		;;
	esac
	watch_qps "$tmo" "$f.cli" &
	local wpid=$!
	timeout -k 10 "$tmo" stdbuf -oL "$tool" -d "$DEV" "$gopt" "$GIDX" -p "$port" "$@" "$PEER" \
		>"$f.cli" 2>&1
	rc=$?
	kill $wpid 2>/dev/null
	wait $wpid 2>/dev/null
	send $ctl "done $k $rc" 10 || log "case $k: could not tell the server"
	result "$k" client "$rc" $((SECONDS - t0))
}

# Both guests set up: b says "hello" once its device is ready, a waits for it (the two guests
# boot at different times).
if [ "$side" = a ]; then
	msg=$(recv 18990 300)
	[ "$msg" = "hello" ] || { log "no hello from the peer (got '$msg')"; peer_dead=1; }
else
	send 18990 hello 300 || { log "could not say hello to the peer"; peer_dead=1; }
fi
log "peer $([ $peer_dead = 1 ] && echo "not reachable" || echo ready) after $SECONDS s"
# INTEROP_LOSS=P: netem drops P % of what each side sends (P=burst: in bursts), for every case
# (the goodput that recovery keeps between the two drivers; the cases' own control messages are
# TCP).
loss_on() {
	local how="loss $INTEROP_LOSS%"
	[ -n "${INTEROP_LOSS:-}" ] || return 0
	# "burst": Gilbert-Elliott bursts, as make bench's loss rows (bench-perf.sh).
	[ "$INTEROP_LOSS" = burst ] && how='loss gemodel 0.5% 20% 70% 0.1%'
	# shellcheck disable=SC2086
	tc qdisc replace dev "$NIC" root netem $how || log "netem $how on $NIC refused"
}
loss_on

while read -r k srv tmo gopt tool args; do
	port=$((19000 + 10 * k))
	# shellcheck disable=SC2086
	if [ "$srv" = "$side" ]; then
		run_server "$k" "$tmo" "$gopt" "$port" "$tool" $args
	else
		run_client "$k" "$tmo" "$gopt" "$port" "$tool" $args
	fi
	stats "$k"
	# A case that failed half-way may leave netem on the wire (--faults=loss): not for the next.
	if [ -z "${INTEROP_LOSS:-}" ] && tc qdisc show dev "$NIC" 2>/dev/null | grep -q netem; then
		log "case $k left netem on $NIC: removed"
		tc qdisc del dev "$NIC" root
	fi
	loss_on
done < <(plan)

kill $MODSYMS 2>/dev/null
dmesg >"$OUT/$side.dmesg" 2>&1
[ "${INTEROP_TRACE:-0}" = 1 ] && cat $TRACE/trace >"$OUT/$side.trace" 2>&1
timeout 30 rdma link delete "$DEV" || log "rdma link delete $DEV failed"
timeout 30 modprobe -r "$MOD" 2>/dev/null
log "finished in $SECONDS s"
exit 0
