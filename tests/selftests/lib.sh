# SPDX-License-Identifier: GPL-2.0
# Helpers for rrxe selftests. Source it from a test script.
#
# Every test takes the driver module and its link type as parameters, so the same suite runs
# against rrxe and, as an oracle, against the C rdma_rxe (never both in one kernel):
#   test.sh [MODULE [LINK_TYPE]]      defaults: rrxe rrxe (rdma_rxe -> rxe)
# Exit status: 0 pass, 1 fail, 4 skip (kselftest's KSFT_SKIP). Diagnostics start with "# ".

MOD=${1:-${RRXE_MOD:-rrxe}}
if [ -n "${2:-}" ]; then
	TYPE=$2
elif [ "$MOD" = rdma_rxe ]; then
	TYPE=rxe
else
	TYPE=$MOD
fi
KSFT_SKIP=4
DEV=t${TYPE}0

# Test programs built on the host (scripts/build-tests) into the cache, visible in the guest
# (RRXE_TESTS_BIN: another build of them, e.g. one inside a snapshot of the tree).
BIN=${RRXE_TESTS_BIN:-${RRXE_CACHE:-$HOME/.cache/rrxe}/tests}
need_bin() { [ -x "$BIN/$1" ] || skip "$BIN/$1 not built (scripts/build-tests)"; }

diag() { printf '# %s\n' "$*"; }
fail() { diag "FAIL: $*"; exit 1; }
skip() { diag "SKIP: $*"; exit $KSFT_SKIP; }
# check DESC CMD...: run CMD, fail the test with DESC if it fails.
check() {
	local desc=$1
	shift
	"$@" || fail "$desc"
}
is_rrxe() { [ "$MOD" = rrxe ]; }

# The guest's Ethernet NIC (virtio), brought up with the slirp address. Traffic stays in the
# guest: RDMA loopback needs no peer.
nic() {
	local n
	for n in /sys/class/net/*; do
		[ -e "$n/device" ] && { basename "$n"; return 0; }
	done
	return 1
}
nic_up() {
	NIC=$(nic) || skip "no NIC in the guest"
	ip link set "$NIC" up
	ip -4 addr show dev "$NIC" | grep -q 10.0.2.15 || ip addr add 10.0.2.15/24 dev "$NIC"
}

# A fresh dummy netdev NAME with an IPv4 address.
dummy_add() {
	local name=$1 addr=$2
	modprobe dummy
	ip link add "$name" type dummy
	ip link set "$name" up
	ip addr add "$addr" dev "$name"
}

# listening PORT: a TCP server listens on PORT (the pingpong and perftest address exchange).
listening() { ss -ltn 2>/dev/null | grep -q ":$1 "; }

# rdma device helpers
link_add() { rdma link add "$1" type "$TYPE" netdev "$2"; }
link_del() { rdma link delete "$1"; }
dev_exists() { [ -e "/sys/class/infiniband/$1" ]; }
# wait_for SECONDS CMD...: poll CMD every 0.2 s.
wait_for() {
	local t=$1 i
	shift
	for ((i = 0; i < t * 5; i++)); do
		"$@" && return 0
		sleep 0.2
	done
	"$@"
}
# The GID index of type "RoCE v2" whose value contains PATTERN (first 16 entries only: each
# read is a process, and TCG is slow).
gid_index() {
	local dev=$1 pat=$2 i g
	for i in $(seq 0 15); do
		g=$(cat "/sys/class/infiniband/$dev/ports/1/gids/$i" 2>/dev/null) || continue
		[[ $g == *"$pat"* ]] || continue
		[ "$(cat "/sys/class/infiniband/$dev/ports/1/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] ||
			continue
		echo "$i"
		return 0
	done
	return 1
}
devinfo_field() { ibv_devinfo -d "$1" | awk -v k="$2:" '$1 == k { print $2; exit }'; }

# Remove every device of our link type and unload the driver; leave the guest as we found it.
cleanup_driver() {
	local d
	for d in $(rdma link show 2>/dev/null | awk '{print $2}' | cut -d/ -f1 | sort -u); do
		[ -e "/sys/class/infiniband/$d" ] && rdma link delete "$d" 2>/dev/null
	done
	modprobe -r "$MOD" 2>/dev/null || true
}

# The veth wire of the ULP tests: $SIF with $SRV here and $CIF with $CLI in namespace $NS, and a
# device of the module's type on each end ($SD, $CD) with its IPv4 GID. veth_wire_down undoes it.
v4_gid() {
	local a b c d
	IFS=. read -r a b c d <<<"$1"
	printf 'ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d"
}
# veth_pair: namespace $NS and the veth pair $SIF (here) and $CIF (in $NS), both up, without
# addresses (anything left of an earlier run removed first).
veth_pair() {
	ip netns del "$NS" 2>/dev/null
	ip link del "$SIF" 2>/dev/null
	check "netns $NS" ip netns add "$NS"
	check "veth pair" ip link add "$SIF" type veth peer name "$CIF"
	check "$CIF to $NS" ip link set "$CIF" netns "$NS"
	ip -n "$NS" link set lo up
	check "$SIF up" ip link set "$SIF" up
	check "$CIF up" ip -n "$NS" link set "$CIF" up
}
veth_wire() {
	veth_pair
	check "$SIF address" ip addr add "$SRV/24" dev "$SIF"
	check "$CIF address" ip -n "$NS" addr add "$CLI/24" dev "$CIF"
	check "add $SD on $SIF" timeout 30 rdma link add "$SD" type "$TYPE" netdev "$SIF"
	check "add $CD on $CIF in $NS" ip netns exec "$NS" timeout 30 rdma link add "$CD" \
		type "$TYPE" netdev "$CIF"
	wait_for 20 gid_index "$SD" "$(v4_gid "$SRV")" >/dev/null || fail "no IPv4 GID on $SD"
	wait_for 20 gid_index "$CD" "$(v4_gid "$CLI")" >/dev/null || fail "no IPv4 GID on $CD"
}
veth_wire_down() {
	local p
	for p in "$CD" "$SD"; do
		dev_exists "$p" && timeout 30 rdma link delete "$p"
	done
	ip netns del "$NS" 2>/dev/null
	ip link del "$SIF" 2>/dev/null
}

# now_ms: the time in milliseconds.
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# mib_rate MB MS: "MS ms, R MiB/s" for MB MiB moved in MS milliseconds.
mib_rate() { echo "$2 ms, $(($1 * 1000 / ($2 > 0 ? $2 : 1))) MiB/s"; }
# fio_verify NAME FILE SIZE: fio random writes of 4-128 KiB to FILE (SIZE bytes, direct I/O,
# depth 8), each block verified with crc32c; sets FIO_BW to the write and verify bandwidths,
# fails the test with fio's last lines if it fails. Not in a command substitution: fail must
# end the test, not a subshell.
fio_verify() {
	local out rc
	out=$(timeout 180 fio --name="$1" --filename="$2" --rw=randwrite --bsrange=4k-128k \
		--size="$3" --direct=1 --ioengine=libaio --iodepth=8 --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --verify_state_save=0 --output-format=terse --terse-version=3 2>&1)
	rc=$?
	[ $rc -eq 0 ] || { printf '%s\n' "$out" | tail -5 | sed 's/^/# /'; fail "$1: fio write+verify failed ($rc)"; }
	# Terse v3: field 48 is the write bandwidth, 7 the read's (here: the verification), KiB/s.
	FIO_BW=$(printf '%s\n' "$out" |
		awk -F';' 'NF > 48 { print $48 " KiB/s written, " $7 " KiB/s read back" }' | tail -n1)
}
# disk_check WHAT DISK MB FIO: MB MiB of random data written to /dev/DISK with direct I/O and
# read back (sha256 equal), then fio_verify of FIO bytes; diagnostics start with WHAT.
disk_check() {
	local what=$1 disk=$2 mb=$3 t0 sum got
	head -c $((mb << 20)) /dev/urandom >"$T/data"
	sum=$(sha256sum <"$T/data" | cut -d' ' -f1)
	t0=$(now_ms)
	check "$what: write $mb MiB" dd if="$T/data" of="/dev/$disk" bs=1M oflag=direct status=none
	diag "$what: wrote $mb MiB in $(mib_rate "$mb" $(($(now_ms) - t0)))"
	t0=$(now_ms)
	got=$(dd if="/dev/$disk" bs=1M count="$mb" iflag=direct status=none | sha256sum | cut -d' ' -f1)
	[ "$got" = "$sum" ] || fail "$what: the data read back differs from what was written"
	diag "$what: read $mb MiB back in $(mib_rate "$mb" $(($(now_ms) - t0))), sha256 equal"
	fio_verify "$what" "/dev/$disk" "$4"
	diag "$what: fio random writes of 4-128 KiB (direct) verified (crc32c): $FIO_BW"
}

# perftest_gbits FILE SECS: the bandwidth of a perftest -D SECS run whose output is FILE, in
# Gbit/s, from the iterations it counted over its sample (SECS minus twice a margin of SECS/4,
# timed by alarm()). Its own figure divides by the TSC's frequency, which it samples against
# gettimeofday and takes as 0 when they disagree ("Correlation coefficient r^2 < 0.9", which a
# busy TCG guest sees): 0 Gb/s printed, and latencies of inf us.
perftest_gbits() {
	awk -v secs="$2" '$1 ~ /^[0-9]+$/ && NF >= 5 { v = $1 * $2 * 8 }
		END { print v / (secs - 2 * int(secs / 4)) / 1e9 }' "$1"
}
