#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SMB Direct across the veth wire: a veth pair, one end (vsm0, 192.168.79.1) in the initial
# network namespace with the ksmbd server (ksmbd.mountd started by hand with a configuration,
# a user database and a tmpfs share of its own in a scratch directory), the other end (vsm1,
# 192.168.79.2) in the namespace rrsmb with the cifs client; a device of the module's type on
# each end (${DEV}s, ${DEV}c). ksmbd's smbdirect listener (port 445 for RoCE) lives in the
# initial namespace; cifs creates its rdma_cm id in the netns of the process that mounts
# (nsenter --net), so every SMB2 message and every RDMA READ and WRITE crosses the veth.
#
# Mount with -o rdma, check that /proc/fs/cifs/DebugData shows the session's SMBDirect
# transport connected, copy SMB_DIRECT_MB (default 8) MiB of random data from the client to the
# server (fsync'd; compared on the server's tmpfs) and from the server to the client (a new
# file read through the mount), sha256 both; check that the server's device received (its RDMA
# READs of the client's WRITE data) and sent (its RDMA WRITEs of READ data) at least one packet
# per 2 KiB moved; then fio random writes of 4-128 KiB with direct I/O, verified with crc32c
# (SMB_DIRECT_FIO, default 8M). ksmbd and cifs are unloaded at the end.
. "$(dirname "$0")/lib.sh"
NS=rrsmb SIF=vsm0 CIF=vsm1
SRV=192.168.79.1 CLI=192.168.79.2
MB=${SMB_DIRECT_MB:-8}
T=$(mktemp -d /tmp/smb_direct.XXXXXX)
SHARE=$T/share MNT=$T/mnt
SD=${DEV}s CD=${DEV}c
USER_=rrxe PASS=rrxe-selftest
mounted=
mountd=

cx() { nsenter --net="/run/netns/$NS" "$@"; }
cnt() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null || echo 0; }
counters() {
	local d c s
	for d in "$SD" "$CD"; do
		dev_exists "$d" || continue
		s=
		for c in sent_pkts rcvd_pkts rdma_sends rdma_recvs duplicate_request out_of_seq_request \
			rcvd_seq_err retry_exceeded_err send_err ack_deferred; do
			s="$s $c=$(cnt "$d" $c)"
		done
		diag "$d:$s"
	done
}
logs() {
	[ -s "$T/mountd.log" ] && tail -8 "$T/mountd.log" | sed 's/^/# ksmbd.mountd: /'
	dmesg | grep -iE 'ksmbd|cifs|smb|rdma' | tail -15 | sed 's/^/# dmesg: /'
}
cleanup() {
	if [ -n "$mounted" ]; then
		cx timeout 30 umount "$MNT" 2>/dev/null || timeout 10 umount -f -l "$MNT" 2>/dev/null
	fi
	if [ -n "$mountd" ]; then
		timeout 30 ksmbd.control -s >/dev/null 2>&1
		kill "$mountd" 2>/dev/null
		wait "$mountd" 2>/dev/null
		rm -f /run/ksmbd.lock
	fi
	counters
	modprobe -r cifs 2>/dev/null
	timeout 30 modprobe -r ksmbd 2>/dev/null
	mountpoint -q "$SHARE" && umount "$SHARE"
	rm -rf "$T"
	veth_wire_down
	cleanup_driver
}
trap cleanup EXIT

for p in ksmbd.mountd ksmbd.adduser ksmbd.control mount.cifs nsenter sha256sum; do
	command -v $p >/dev/null || skip "$p not installed (ksmbd-tools, cifs-utils)"
done
# ksmbd-tools before 3.5 (Debian 12 has 3.4.7; scripts/setup installs 3.5 from
# bookworm-backports) answer a share's configuration in the kernel's older layout (reserved[112],
# veto_list_sz): the kernel's response carries payload_sz since, and it refuses every such
# answer (ipc_validate_msg), so every tree connect ends in BAD_NETWORK_NAME.
tools=$(ksmbd.mountd -V 2>&1 | grep -o 'version : [0-9][0-9.]*' | grep -o '[0-9][0-9.]*$')
case $tools in
3.[0-4].* | [0-2].*)
	skip "ksmbd-tools $tools cannot serve a share to this kernel (3.5 or later needed)" ;;
esac
# The daemon's lock holds its pid; ksmbd-tools 3.5 leaves it behind when it stops.
lockpid=$(cat /run/ksmbd.lock 2>/dev/null)
if [ -n "$lockpid" ] && [ "$(cat "/proc/$lockpid/comm" 2>/dev/null)" = ksmbd.mountd ]; then
	skip "ksmbd.mountd already running (pid $lockpid, /run/ksmbd.lock)"
fi
rm -f /run/ksmbd.lock
modprobe veth || skip "no veth"
modprobe ksmbd || skip "no ksmbd (SMB_SERVER)"
modprobe cifs || skip "no cifs"
modprobe ib_uverbs
modprobe rdma_cm

veth_wire

# The server: configuration, user database and share in the scratch directory.
mkdir -p "$SHARE" "$MNT"
check "tmpfs to share" mount -t tmpfs -o size=128m smbshare "$SHARE"
cat >"$T/ksmbd.conf" <<EOF
[global]
	netbios name = RRXE
	bind interfaces only = yes
	interfaces = $SIF
	server min protocol = SMB3
[share]
	path = $SHARE
	read only = no
	writeable = yes
	force user = root
	force group = root
	valid users = $USER_
EOF
check "ksmbd.adduser" ksmbd.adduser -a -p $PASS -P "$T/ksmbdpwd.db" -C "$T/ksmbd.conf" $USER_
runs=$(dmesg | grep -c 'ksmbd: running')
ksmbd.mountd -n -C "$T/ksmbd.conf" -P "$T/ksmbdpwd.db" >"$T/mountd.log" 2>&1 &
mountd=$!
# ksmbd starts its transports (TCP, then the RDMA listeners) once the daemon has started it.
ksmbd_running() { [ "$(dmesg | grep -c 'ksmbd: running')" -gt "$runs" ]; }
wait_for 20 ksmbd_running || { logs; fail "ksmbd not running 20 s after ksmbd.mountd"; }

head -c $((MB << 20)) /dev/urandom >"$T/up"
head -c $((MB << 20)) /dev/urandom >"$SHARE/down"
up_sum=$(sha256sum <"$T/up" | cut -d' ' -f1)
down_sum=$(sha256sum <"$SHARE/down" | cut -d' ' -f1)
min=$(((MB << 20) / 2048))

t0=$SECONDS
cx timeout 60 mount -t cifs "//$SRV/share" "$MNT" \
	-o "rdma,username=$USER_,password=$PASS,vers=3.1.1" >"$T/mount.log" 2>&1 || {
	sed 's/^/# mount: /' "$T/mount.log"
	logs
	fail "mount -t cifs -o rdma"
}
mounted=1
grep -q '^RDMA' /proc/fs/cifs/DebugData && grep -q 'SMBDirect.*transport status: .*CONNECTED' \
	/proc/fs/cifs/DebugData ||
	{ sed 's/^/# DebugData: /' /proc/fs/cifs/DebugData | head -40; fail "no connected SMBDirect transport in DebugData"; }
diag "mounted //$SRV/share with rdma in $((SECONDS - t0)) s; DebugData: $(grep -o \
	'SMBDirect.*transport status: [^ ]* ([0-9]*)' /proc/fs/cifs/DebugData | head -1)"

# Client to server: ksmbd RDMA READs the data (writes above rdma_readwrite_threshold, 4 KiB).
r0=$(cnt "$SD" rcvd_pkts)
t0=$(now_ms)
check "write $MB MiB through the mount" cx dd if="$T/up" of="$MNT/up" bs=1M conv=fsync status=none
r1=$(cnt "$SD" rcvd_pkts)
dt=$(($(now_ms) - t0))
got=$(sha256sum <"$SHARE/up" | cut -d' ' -f1)
[ "$got" = "$up_sum" ] || fail "the file written by the client differs on the server"
[ $((r1 - r0)) -ge $min ] || { counters; fail "$SD received $((r1 - r0)) packets for $MB MiB (< $min)"; }
diag "client -> server $MB MiB in $(mib_rate "$MB" $dt), sha256 equal; $SD rcvd_pkts +$((r1 - r0))"

# Server to client: ksmbd RDMA WRITEs the data into the client's registered pages.
s0=$(cnt "$SD" sent_pkts)
t0=$(now_ms)
got=$(cx sha256sum "$MNT/down" | cut -d' ' -f1)
dt=$(($(now_ms) - t0))
s1=$(cnt "$SD" sent_pkts)
[ "$got" = "$down_sum" ] || fail "the file read by the client differs from the server's"
[ $((s1 - s0)) -ge $min ] || { counters; fail "$SD sent $((s1 - s0)) packets for $MB MiB (< $min)"; }
diag "server -> client $MB MiB in $(mib_rate "$MB" $dt), sha256 equal; $SD sent_pkts +$((s1 - s0))"

if command -v fio >/dev/null; then
	t0=$SECONDS
	out=$(cx timeout 120 fio --name=smbdirect --filename="$MNT/fio" --rw=randwrite \
		--bsrange=4k-128k --size="${SMB_DIRECT_FIO:-8M}" --direct=1 --ioengine=libaio \
		--iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 \
		--output-format=terse \
		--terse-version=3 2>&1)
	rc=$?
	[ $rc -eq 0 ] || { printf '%s\n' "$out" | tail -5 | sed 's/^/# /'; counters;
		fail "fio write+verify failed ($rc)"; }
	# Terse v3: field 7 is the read (here: verify) bandwidth, 48 the write's, in KiB/s.
	bw=$(printf '%s\n' "$out" | awk -F';' 'NF > 48 { print $48 " KiB/s written, " $7 " KiB/s read back" }' | tail -1)
	diag "fio random writes of 4-128 KiB (direct) verified (crc32c) in $((SECONDS - t0)) s: $bw"
fi
check "umount" cx timeout 60 umount "$MNT"
mounted=
exit 0
