#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Structure-aware packet fuzzing of live QPs. fuzz_victim (tests/verbs) holds an RC, a UC and a
# UD QP on $DEV (over veth pfb, 192.168.81.2), the RC and UC ones connected to a peer at
# 192.168.81.1 that does not exist, and writes their live state to a file: QPNs, the PSNs the
# responders expect, keys, addresses and lengths of its regions and of a memory window. From
# network namespace rrpf, over the veth, packet_fuzz.py plays that peer with a raw socket and
# sends PFUZZ_COUNT (default 3000) packets built around that state, seeded by PFUZZ_SEED
# (default random, printed): requests at and around the expected PSNs with edge addresses,
# lengths, keys and opcodes (multi-packet messages with right and wrong sizes, READ, atomics,
# ATOMIC_WRITE, FLUSH, SEND with immediate and invalidate, duplicates), responses to the
# victim's own requests (ACKs and NAKs of every syndrome, READ responses, atomic ACKs), UD
# sends, wrong QP types, congestion notifications (CNPs) into the live connections, MADs of every
# method to QP1, some broken packets and some from other addresses. So the responder and the
# completer are reached, not only the header checks. Sending stops after PFUZZ_SECONDS
# (default 100) in any case.
#
# Then: the kernel must be clean (vm-run checks the log); the victim must have received SENDs
# on its RC, UC and UD QPs and had requests answered (the fuzzer reached the transport); every
# work request it posted must have completed, if only flushed; every RC SEND and WRITE it saw
# complete with success must have gone on the wire (the oracle: the victim stamps them, the
# fuzzer lists the stamps it saw; a forged answer must never complete a WQE not sent); only
# Gets, Sets and Deletes among the MADs may be answered, once; it must tear down cleanly; the
# address check must have dropped the packets from other addresses; and a data-checked
# ibv_rc_pingpong on the device must pass. The victim's counters and the device's counters that
# moved are printed as diagnostics. PFUZZ_KEEP=DIR (a directory the guest may write) keeps the
# victim's log and the fuzzer's trace in DIR/SEED.
#
# rrxe only. The C rxe (the oracle) has known bugs with hostile packets on live QPs, fixed over
# many kernel releases (a splat there would fail the oracle run for C rxe, not for rrxe), retries
# forever with a retry count of 7, and has no drop counters for the address check; PFUZZ_ORACLE=1
# runs it anyway, with the checks that need rrxe's counters left out.
. "$(dirname "$0")/lib.sh"
is_rrxe || [ "${PFUZZ_ORACLE:-0}" = 1 ] ||
	skip "rrxe only: C rxe has known bugs with hostile packets on live QPs (PFUZZ_ORACLE=1 runs it)"
need_bin fuzz_victim
need_bin rrxe-oracle
command -v python3 >/dev/null || skip "no python3"
ns=rrpf
PEER=192.168.81.1 ADDR=192.168.81.2
vic='' srv='' dir=''
cleanup() {
	[ -n "$vic" ] && kill "$vic" 2>/dev/null
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	# shellcheck disable=SC2086 # unset ones drop out
	wait $vic $srv 2>/dev/null
	cleanup_driver
	ip netns del "$ns" 2>/dev/null
	ip link del pfb 2>/dev/null
	[ -n "$dir" ] && rm -rf "$dir"
}
trap cleanup EXIT

modprobe ib_uverbs
modprobe veth 2>/dev/null
ip netns del "$ns" 2>/dev/null
ip link del pfb 2>/dev/null
ip netns add "$ns" || skip "no network namespaces"
ip link add pfa type veth peer name pfb || skip "no veth"
check "pfa to $ns" ip link set pfa netns "$ns"
check "pfa address" ip -n "$ns" addr add $PEER/24 dev pfa
check "pfa up" ip -n "$ns" link set pfa up
ip -n "$ns" link set lo up
check "pfb address" ip addr add $ADDR/24 dev pfb
check "pfb up" ip link set pfb up
check "add $DEV" link_add "$DEV" pfb
gidx=$(wait_for 20 gid_index "$DEV" ffff:c0a8:5102) || fail "no IPv4 GID for $ADDR"
dir=$(mktemp -d /tmp/packet_fuzz.XXXXXX)
count=${PFUZZ_COUNT:-3000}
seed=${PFUZZ_SEED:-$RANDOM}
secs=${PFUZZ_SECONDS:-100}
diag "seed $seed (PFUZZ_SEED=$seed repeats the packet choices; the timing differs), $count packets"

# The device's counters as NAME VALUE lines.
counters() {
	timeout 10 rdma statistic show link "$DEV/1" 2>/dev/null | tr -s ' \t\n' '\n' | paste - - |
		awk 'NF == 2 && $2 ~ /^[0-9]+$/'
}
counters >"$dir/before"
# Packets the network below the driver dropped: the neighbour layer's queue of packets waiting
# for an address (every CPU's unresolved_discards) and the veth pair. What the model cannot
# see on the wire for that reason it does not hold against the driver.
below() {
	local n=0 v
	for v in $(awk 'NR > 1 { print $12 }' /proc/net/stat/arp_cache); do
		n=$((n + 16#$v))
	done
	n=$((n + $(cat /sys/class/net/pfb/statistics/tx_dropped)))
	n=$((n + $(ip netns exec "$ns" cat /sys/class/net/pfa/statistics/rx_dropped)))
	echo $n
}
below_before=$(below)

timeout $((secs + 300)) "$BIN/fuzz_victim" -d "$DEV" -g "$gidx" -a $PEER -o "$dir/state" \
	-s "$seed" -t $((secs + 240)) -c "$dir/stamps_ok" -l "$dir/vlog" >"$dir/victim" 2>&1 &
vic=$!
# It writes the state file, then says it is ready.
ready() { grep -q '^# victim ready' "$dir/victim" || ! kill -0 "$vic" 2>/dev/null; }
wait_for 60 ready
if ! grep '^# victim ready' "$dir/victim"; then
	sed 's/^\([^#]\)/# \1/' "$dir/victim"
	fail "the victim did not start"
fi

ip netns exec "$ns" timeout $((secs + 60)) python3 "$(dirname "$0")/packet_fuzz.py" \
	"$dir/state" "$count" "$seed" --max-seconds "$secs" --stamps "$dir/stamps_seen" \
	--trace "$dir/trace" >"$dir/fuzzer" 2>&1
frc=$?
sed 's/^\([^#]\)/# \1/' "$dir/fuzzer"
[ $frc -eq 0 ] || fail "the fuzzer failed (exit $frc)"

# The victim's last completions, then its counters and its teardown.
sleep 1
kill -0 "$vic" 2>/dev/null || {
	sed 's/^\([^#]\)/# \1/' "$dir/victim"
	fail "the victim died during the fuzzing"
}
kill -TERM "$vic"
wait "$vic"
vrc=$?
vic=
grep -v '^# victim ready' "$dir/victim" | sed 's/^\([^#]\)/# \1/'
below_lost=$(($(below) - below_before))
if [ "$below_lost" -gt 0 ]; then
	diag "the network below the driver dropped $below_lost packets: not judged on the wire"
	echo "lost $below_lost" >>"$dir/trace"
fi
if [ -n "${PFUZZ_KEEP:-}" ]; then
	mkdir -p "$PFUZZ_KEEP/$seed" &&
		cp "$dir/vlog" "$dir/trace" "$dir/stamps_ok" "$dir/stamps_seen" "$PFUZZ_KEEP/$seed/" &&
		diag "the victim's log and the fuzzer's trace kept in $PFUZZ_KEEP/$seed"
fi
[ $vrc -eq 0 ] || fail "the victim failed (exit $vrc)"

counters >"$dir/after"
awk 'NR == FNR { b[$1] = $2; next } $2 - b[$1] > 0 { print $1 "=" $2 - b[$1] }' \
	"$dir/before" "$dir/after" >"$dir/delta"
diag "drops: $(grep '^drop_' "$dir/delta" | tr '\n' ' ')"
diag "other counters: $(grep -v '^drop_' "$dir/delta" | tr '\n' ' ' | fold -s -w 150 |
	sed '2,$s/^/#   /')"

# Every check runs; the test fails at the end naming those that did not pass.
failed=()
# The fuzzer reached the transport: SENDs delivered on every QP, requests answered.
total() { sed -n 's/^# victim totals: //p' "$dir/victim" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
for k in rc_recv_ok uc_recv_ok ud_recv_ok rc_send_ok; do
	v=$(total $k)
	[ "${v:-0}" -gt 0 ] || failed+=("the fuzzer never got through to the victim ($k=${v:-none})")
done
# The oracle: a success completion is a promise that the data went out. Every RC SEND and WRITE
# the victim saw complete with success (its stamp: magic, generation, sequence number) must have
# been on the wire, whatever the fuzzer answered (forged ACKs, READ responses and atomic ACKs at
# PSNs never sent included). Not judged: those of a generation before the first stamp the fuzzer
# saw in it (the victim posts before the fuzzer listens; an answer at a PSN just past the last
# one read may acknowledge them blindly). Judged only if the fuzzer's socket dropped none of
# the victim's packets (it says how many it did); PFUZZ_ORACLE_STRICT=0 only reports.
slost=$(sed -n 's/^totals: .*sniffer_lost=\([0-9]*\).*/\1/p' "$dir/fuzzer")
if [ "${slost:-1}" -ne 0 ] || [ "$below_lost" -gt 0 ]; then
	diag "oracle: of the victim's packets ${slost:-?} dropped by the fuzzer's socket," \
		"$below_lost below the driver: not judged"
elif [ -f "$dir/stamps_ok" ] && [ -f "$dir/stamps_seen" ]; then
	read -r judged early lies < <(python3 -c '
import sys
seen = set(open(sys.argv[1]).read().split())
first = {}
for x in seen:
    g, q = x[4:8], int(x[8:], 16)
    first[g] = min(first.get(g, q), q)
judged = early = lies = 0
for x in open(sys.argv[2]).read().split():
    g, q = x[4:8], int(x[8:], 16)
    if x in seen:
        judged += 1
    elif g not in first or q < first[g]:
        early += 1
    else:
        judged += 1
        lies += 1
print(judged, early, lies)' "$dir/stamps_seen" "$dir/stamps_ok")
	diag "oracle: $judged success completions of RC SENDs and WRITEs judged, $lies never on" \
		"the wire ($early sent before the fuzzer listened, not judged)"
	if [ "$lies" -ne 0 ] && [ "${PFUZZ_ORACLE_STRICT:-1}" = 1 ]; then
		failed+=("$lies of $judged RC SENDs and WRITEs completed with success but never went on the wire")
	fi
else
	failed+=("the oracle's stamp files are missing")
fi
# MADs: only a Get, Set or Delete may be answered, and once.
mads=$(sed -n 's/^totals: .*mads=\([0-9]*\).*/\1/p' "$dir/fuzzer")
madw=$(sed -n 's/^totals: .*mad_wrong=\([0-9]*\).*/\1/p' "$dir/fuzzer")
[ "${madw:-1}" -eq 0 ] ||
	failed+=("${madw:-?} answers to the ${mads:-?} MADs sent were to responses, traps or reports, or more than asked")
# The reference model (rust/proto/model, run as rrxe-oracle): every completion of the RC and
# UC QPs, success or error, send or receive, must be one a QP following the spec may report
# given the packets that went each way (the victim's log, the fuzzer's trace).
"$BIN/rrxe-oracle" "$dir/vlog" "$dir/trace" >"$dir/model" 2>&1
mrc=$?
sed 's/^/# model: /' "$dir/model"
if [ $mrc -ne 0 ] && [ "${PFUZZ_ORACLE_STRICT:-1}" = 1 ]; then
	failed+=("the reference model judged completions the spec does not allow (rrxe-oracle exit $mrc)")
fi
lost=$(total lost_wrs)
[ "${lost:-0}" -eq 0 ] ||
	failed+=("$lost work requests of the victim never completed, not even flushed")
if is_rrxe; then
	spoofed=$(sed -n 's/^totals: .*spoofed=\([0-9]*\).*/\1/p' "$dir/fuzzer")
	am=$(sed -n 's/^drop_address_mismatch=//p' "$dir/delta")
	diag "packets from other addresses: ${spoofed:-0} sent, ${am:-0} dropped by the address check"
	[ "${am:-0}" -ge $((${spoofed:-0} / 2)) ] ||
		failed+=("the address check dropped ${am:-0} of ${spoofed:-0} packets from other addresses")
fi

# The device still works.
timeout 60 ibv_rc_pingpong -d "$DEV" -g "$gidx" -p 18820 -c -n 20 -s 4096 >/dev/null 2>&1 &
srv=$!
wait_for 30 listening 18820
timeout 60 ibv_rc_pingpong -d "$DEV" -g "$gidx" -p 18820 -c -n 20 -s 4096 localhost >/dev/null 2>&1
rc=$?
wait $srv
src=$?
srv=
if [ $rc -ne 0 ] || [ $src -ne 0 ]; then
	failed+=("a transfer after the fuzzing failed (client $rc, server $src)")
else
	diag "a data-checked transfer after the fuzzing: ok"
fi
[ ${#failed[@]} -eq 0 ] || fail "$(printf '%s; ' "${failed[@]}" | sed 's/; $//')"
exit 0
