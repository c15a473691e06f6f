#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NFS over RDMA across the veth wire: a veth pair, one end (vns0, 192.168.78.1) in the initial
# network namespace with the NFS server (nfsd exporting a tmpfs, RDMA listener on port 20049,
# rpcbind, rpc.mountd and nfsdcld started here by hand: the guest has no systemd), the other
# (vns1, 192.168.78.2) in the namespace rrnfs with the client; a device of the module's type
# on each end (${DEV}s, ${DEV}c). The kernel NFS client takes the netns of the process that
# mounts (nsenter --net), and xprtrdma creates its rdma_cm id there; nfsd's svcrdma listens in
# the initial namespace: every RPC crosses the veth as RoCEv2.
#
# For NFSv4.1 and then NFSv3 (NFS_RDMA_VERS, default "4.1 3"; the test kernels have no NFSv4.2
# client, CONFIG_NFS_V4_2): mount with proto=rdma, check
# that /proc/self/mountstats says "xprt: rdma", copy NFS_RDMA_MB (default 8) MiB of random data
# from the client to the server (fsync'd; compared on the server's tmpfs) and from the server
# to the client (a new file read through the mount), sha256 both; check that the server's
# device received (its RDMA READs of the client's WRITE data) and sent (its RDMA WRITEs of READ
# data) at least one packet per 2 KiB moved; then (NFSv4 only) fio random writes of 4-128 KiB
# with direct I/O, verified with crc32c (NFS_RDMA_FIO, default 8M). State the server writes
# (/var/lib/nfs, rpc_pipefs, /proc/fs/nfsd) is on mounts of its own, all removed at the end
# with the daemons and the NFS modules, so the next test in the same boot starts clean.
. "$(dirname "$0")/lib.sh"
NS=rrnfs SIF=vns0 CIF=vns1
SRV=192.168.78.1 CLI=192.168.78.2
PORT=20049
MB=${NFS_RDMA_MB:-8}
T=$(mktemp -d /tmp/nfs_rdma.XXXXXX)
EXP=$T/export MNT=$T/mnt
SD=${DEV}s CD=${DEV}c
pids=()
mounted=()

# cx CMD...: CMD in the client's network namespace (its mount namespace stays the initial one,
# so what it mounts is visible here).
cx() { nsenter --net="/run/netns/$NS" "$@"; }
cnt() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null || echo 0; }
counters() {
	local d c s
	for d in "$SD" "$CD"; do
		dev_exists "$d" || continue
		s=
		for c in sent_pkts rcvd_pkts rdma_sends rdma_recvs duplicate_request out_of_seq_request \
			rcvd_seq_err completer_retry_err retry_exceeded_err send_err ack_deferred \
			drop_psn_out_of_window drop_duplicate drop_inbox_full; do
			s="$s $c=$(cnt "$d" $c)"
		done
		diag "$d:$s"
	done
	# Packets the stack dropped: each CPU's backlog (softnet_stat's second column, hex).
	local l drops=
	while read -r _ l _; do drops="$drops $((16#$l))"; done </proc/net/softnet_stat
	diag "softnet drops per CPU:$drops"
}
logs() {
	local f
	for f in "$T"/*.log; do
		[ -s "$f" ] && tail -5 "$f" | sed "s|^|# $(basename "$f"): |"
	done
	dmesg | grep -iE 'nfs|rpc|svcrdma|rdma' | tail -15 | sed 's/^/# dmesg: /'
}
cleanup() {
	local m p
	for m in "${mounted[@]}"; do
		timeout 30 umount "$m" 2>/dev/null || timeout 10 umount -f -l "$m" 2>/dev/null
	done
	if [ -e /proc/fs/nfsd/threads ]; then
		timeout 30 rpc.nfsd 0 2>/dev/null
		timeout 10 exportfs -ua 2>/dev/null
	fi
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	counters
	mountpoint -q /proc/fs/nfsd && umount /proc/fs/nfsd
	mountpoint -q /run/rpc_pipefs && umount /run/rpc_pipefs
	mountpoint -q /var/lib/nfs && umount /var/lib/nfs
	mountpoint -q "$EXP" && umount "$EXP"
	rm -rf "$T"
	modprobe -r nfsv4 nfsv3 nfsd rpcrdma nfs lockd 2>/dev/null
	veth_wire_down
	cleanup_driver
}
trap cleanup EXIT

for p in rpc.nfsd rpc.mountd rpcbind exportfs nfsdcld mount.nfs nsenter sha256sum; do
	command -v $p >/dev/null || skip "$p not installed (nfs-kernel-server, nfs-common)"
done
modprobe veth || skip "no veth"
modprobe nfsd || skip "no nfsd"
modprobe rpcrdma || skip "no rpcrdma (SUNRPC_XPRT_RDMA)"
modprobe nfsv4 || skip "no NFSv4 client"
modprobe nfsv3 || skip "no NFSv3 client"
modprobe ib_uverbs
modprobe rdma_cm

veth_wire

# The server: its writable state on mounts of its own.
mkdir -p "$EXP" "$MNT"
check "tmpfs to export" mount -t tmpfs -o size=128m nfsexport "$EXP"
check "tmpfs on /var/lib/nfs" mount -t tmpfs -o mode=0755 nfsstate /var/lib/nfs
mkdir -p /var/lib/nfs/nfsdcld /var/lib/nfs/v4recovery /var/lib/nfs/sm /var/lib/nfs/sm.bak \
	/run/rpc_pipefs /run/rpcbind
: >/var/lib/nfs/etab
: >/var/lib/nfs/rmtab
mountpoint -q /run/rpc_pipefs || check "rpc_pipefs" mount -t rpc_pipefs sunrpc /run/rpc_pipefs
mountpoint -q /proc/fs/nfsd || check "nfsd fs" mount -t nfsd nfsd /proc/fs/nfsd
rpcbind -f >"$T/rpcbind.log" 2>&1 &
pids+=($!)
# nfsdcld: with it, and no client to reclaim, nfsd skips the NFSv4 grace period (without it,
# every OPEN waits out the grace time).
nfsdcld -F -p /run/rpc_pipefs >"$T/nfsdcld.log" 2>&1 &
pids+=($!)
# fsid=0: the tmpfs is NFSv4's pseudo-root (mounted as SRV:/; the guest's root file system, 9p,
# cannot be exported, so mountd cannot build a pseudo-root above it); NFSv3 mounts it by path.
check "export $EXP" exportfs -i -o rw,insecure,no_root_squash,no_subtree_check,fsid=0 \
	"$CLI/24:$EXP"
rpc.mountd -F >"$T/mountd.log" 2>&1 &
pids+=($!)
wait_for 20 rpcinfo -t 127.0.0.1 mountd 3 >/dev/null 2>&1 || { logs; fail "rpc.mountd not registered"; }
# The grace period of NFSv4 (and NLM) at its minimum in case nfsdcld is not used.
echo 10 >/proc/fs/nfsd/nfsv4gracetime
echo 10 >/proc/fs/nfsd/nfsv4leasetime
timeout 60 rpc.nfsd --rdma=$PORT 4 >"$T/nfsd.log" 2>&1 || { logs; fail "rpc.nfsd --rdma=$PORT"; }
grep -q "rdma $PORT" /proc/fs/nfsd/portlist ||
	{ logs; fail "nfsd not listening on RDMA port $PORT: $(tr '\n' ' ' </proc/fs/nfsd/portlist)"; }
diag "nfsd listening: $(tr '\n' ' ' </proc/fs/nfsd/portlist); versions $(cat /proc/fs/nfsd/versions); open files $(cut -f1 /proc/sys/fs/file-nr)"

head -c $((MB << 20)) /dev/urandom >"$T/up"
head -c $((MB << 20)) /dev/urandom >"$EXP/down.src"
up_sum=$(sha256sum <"$T/up" | cut -d' ' -f1)
down_sum=$(sha256sum <"$EXP/down.src" | cut -d' ' -f1)
min=$(((MB << 20) / 2048))

# one VERS: mount, prove RDMA, checked copies both ways (and fio for NFSv4).
one() {
	local v=$1 opts t0 s0 r0 s1 r1 xprt got path=/
	opts=vers=$v,proto=rdma,port=$PORT
	# NFSv3: no lock manager on the client (no rpc.statd), MOUNT over TCP.
	[ "$v" = 3 ] && opts=$opts,nolock,mountproto=tcp path=$EXP
	t0=$SECONDS
	cx timeout 60 mount -t nfs -o "$opts" $SRV:"$path" "$MNT" >"$T/mount.log" 2>&1 ||
		{ logs; fail "v$v: mount -t nfs -o $opts: $(tail -1 "$T/mount.log")"; }
	mounted=("$MNT")
	xprt=$(awk -v m="$MNT" '$1 == "device" { on = ($5 == m) } on && $1 == "xprt:" { print $2; exit }' \
		/proc/self/mountstats)
	[ "$xprt" = rdma ] || fail "v$v: mountstats says xprt: '$xprt', not rdma"
	diag "v$v: mounted with $opts in $((SECONDS - t0)) s ($(awk -v m="$MNT" \
		'$2 == m { print $3 }' /proc/mounts); mountstats xprt: $xprt)"

	# Client to server: the server's RDMA READs pull the data.
	r0=$(cnt "$SD" rcvd_pkts)
	t0=$SECONDS
	check "v$v: write $MB MiB through the mount" cx dd if="$T/up" of="$MNT/up.$v" bs=1M \
		conv=fsync status=none
	r1=$(cnt "$SD" rcvd_pkts)
	got=$(sha256sum <"$EXP/up.$v" | cut -d' ' -f1)
	[ "$got" = "$up_sum" ] || fail "v$v: the file written by the client differs on the server"
	[ $((r1 - r0)) -ge $min ] ||
		{ counters; fail "v$v: $SD received $((r1 - r0)) packets for $MB MiB (< $min)"; }
	diag "v$v: client -> server $MB MiB in $((SECONDS - t0)) s, sha256 equal; $SD rcvd_pkts +$((r1 - r0))"

	# Server to client: a file the client has never seen; the server's RDMA WRITEs push it.
	cp "$EXP/down.src" "$EXP/down.$v"
	s0=$(cnt "$SD" sent_pkts)
	t0=$SECONDS
	got=$(cx sha256sum "$MNT/down.$v" | cut -d' ' -f1)
	s1=$(cnt "$SD" sent_pkts)
	[ "$got" = "$down_sum" ] || fail "v$v: the file read by the client differs from the server's"
	[ $((s1 - s0)) -ge $min ] ||
		{ counters; fail "v$v: $SD sent $((s1 - s0)) packets for $MB MiB (< $min)"; }
	diag "v$v: server -> client $MB MiB in $((SECONDS - t0)) s, sha256 equal; $SD sent_pkts +$((s1 - s0))"

	if [ "$v" != 3 ] && command -v fio >/dev/null; then
		t0=$SECONDS
		out=$(cx timeout 120 fio --name=nfsrdma --filename="$MNT/fio.$v" \
			--rw=randwrite --bsrange=4k-128k --size="${NFS_RDMA_FIO:-8M}" --direct=1 \
			--ioengine=libaio --iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 \
			--output-format=terse --terse-version=3 2>&1)
		rc=$?
		[ $rc -eq 0 ] || { printf '%s\n' "$out" | tail -5 | sed 's/^/# /'; counters;
			fail "v$v: fio write+verify failed ($rc)"; }
		diag "v$v: fio random writes of 4-128 KiB (direct) verified (crc32c) in $((SECONDS - t0)) s"
	fi
	check "v$v: umount" cx timeout 60 umount "$MNT"
	mounted=()
}
for v in ${NFS_RDMA_VERS:-4.1 3}; do
	one "$v"
done
exit 0
