#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SRP (the SCSI RDMA Protocol) with the kernel's target and initiator: ib_srpt on the LIO target
# core, serving a ramdisk, and ib_srp logging in by hand through rdma_cm, as on RoCE (no subnet
# manager: SRP's IB CM discovery has nothing to ask). Two topologies in one run:
#  - across the veth wire: the target on the device on vsr0 (192.168.78.1, initial namespace;
#    ib_srpt listens there only), the initiator's login written from the namespace rrsrp,
#    whose device on vsr1 (192.168.78.2) then carries the channel: every SRP command and every
#    RDMA READ and WRITE of the data crosses the veth;
#  - on one device: the login to the target's own address, from the initial namespace.
# Each time: the SCSI disk the login attaches, written with SRP_MB (default 8) MiB of random
# data with direct I/O and read back (sha256 equal), then fio random writes of 4-128 KiB
# verified with crc32c (SRP_FIO, default 8M); across the wire, the target device must have
# received and sent a packet per 2 KiB moved. The remote port is deleted and the target torn
# down at the end.
#
# The target's configuration (configfs, as targetcli writes it): the WWN is the port's GUID name
# (the interface ID of GID 0, as xxxx:xxxx:xxxx:xxxx), the ACL is named by the initiator's IP
# address (rdma_cm logins), and srpt_service_guid is set at load to the device's node GUID: the
# target port ID the initiator sends (id_ext, ioc_guid) must be that.
. "$(dirname "$0")/lib.sh"
NS=rrsrp SIF=vsr0 CIF=vsr1
SRV=192.168.78.1 CLI=192.168.78.2
SD=${DEV}s CD=${DEV}c
PORT=5555
MB=${SRP_MB:-8}
CFG=/sys/kernel/config/target
BS=$CFG/core/rd_mcp_77/rrxe
T=$(mktemp -d /tmp/srp.XXXXXX)
tpg=
wwn=
loaded=

cx() { nsenter --net="/run/netns/$NS" "$@"; }
cnt() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null || echo 0; }

# The SCSI hosts ib_srp attached on device $1.
srp_hosts() {
	local h
	for h in /sys/class/scsi_host/host*; do
		[ "$(cat "$h/local_ib_device" 2>/dev/null)" = "$1" ] && basename "$h"
	done
}
# The disk of SCSI host $1, once it is there.
srp_disk() {
	local b
	for b in /sys/class/scsi_host/"$1"/device/target*/*:*:*:*/block/*; do
		[ -e "$b" ] && basename "$b" && return 0
	done
	return 1
}
# Deletes every remote port ib_srp holds.
srp_logout() {
	local p
	for p in /sys/class/srp_remote_ports/port-*; do
		[ -e "$p/delete" ] && echo 1 >"$p/delete"
	done
}
target_down() {
	local a
	if [ -n "$tpg" ] && [ -d "$tpg" ]; then
		echo 0 >"$tpg/enable" 2>/dev/null
		for a in "$tpg"/acls/*/; do
			[ -d "$a" ] || continue
			rm -f "$a"lun_0/lun_0
			rmdir "$a"lun_0 "$a" 2>/dev/null
		done
		rm -f "$tpg"/lun/lun_0/rrxe
		rmdir "$tpg"/lun/lun_0 "$tpg" 2>/dev/null
	fi
	[ -n "$wwn" ] && rmdir "$wwn" 2>/dev/null
	# The fabric's directory holds a reference on ib_srpt.
	[ -d "$CFG/srpt" ] && rmdir "$CFG/srpt" 2>/dev/null
	rmdir "$BS" "$(dirname "$BS")" 2>/dev/null
}
cleanup() {
	# Only what this test set up: a skip before it leaves another user's SRP alone.
	if [ -n "$loaded" ]; then
		srp_logout
		target_down
		timeout 30 modprobe -r ib_srp || diag "ib_srp did not unload"
		timeout 30 modprobe -r ib_srpt || diag "ib_srpt did not unload"
	fi
	rm -rf "$T"
	veth_wire_down
	cleanup_driver
}
trap cleanup EXIT

for p in nsenter sha256sum fio; do
	command -v $p >/dev/null || skip "no $p"
done
modprobe veth || skip "no veth"
modprobe sd_mod || skip "no SCSI disks (BLK_DEV_SD)"
modprobe target_core_mod || skip "no LIO target core (TARGET_CORE)"
modprobe -n ib_srpt 2>/dev/null || skip "no ib_srpt (INFINIBAND_SRPT)"
modprobe -n ib_srp 2>/dev/null || skip "no ib_srp (INFINIBAND_SRP)"
lsmod | grep -qE '^ib_srpt? ' && skip "ib_srp or ib_srpt already loaded"
modprobe rdma_cm

veth_wire

guid=$(tr -d : <"/sys/class/infiniband/$SD/node_guid")
loaded=1
check "modprobe ib_srpt" modprobe ib_srpt srpt_service_guid=0x"$guid"
check "modprobe ib_srp" modprobe ib_srp

# The target: a ramdisk, one LUN, ACLs for both initiator addresses, rdma_cm on PORT.
mkdir -p "$BS" || fail "no ramdisk backstore"
echo "rd_pages=$((2 * MB * 256))" >"$BS/control" && echo 1 >"$BS/enable" ||
	fail "ramdisk of $((2 * MB)) MiB"
mkdir -p "$CFG/srpt" || fail "no srpt fabric in configfs"
echo $PORT >"$CFG/srpt/discovery_auth/rdma_cm_port" || fail "srpt rdma_cm_port $PORT"
gid0=$(cat "/sys/class/infiniband/$SD/ports/1/gids/0")
name=$(echo "$gid0" | cut -d: -f5-8)
wwn=$CFG/srpt/$name
mkdir "$wwn" || fail "srpt target $name (GID 0 $gid0)"
tpg=$wwn/tpgt_1
mkdir -p "$tpg/lun/lun_0" && ln -s "$BS" "$tpg/lun/lun_0/rrxe" || fail "LUN 0"
for a in "$CLI" "$SRV"; do
	mkdir -p "$tpg/acls/$a/lun_0" && ln -s "$tpg/lun/lun_0" "$tpg/acls/$a/lun_0/lun_0" ||
		fail "ACL $a"
done
echo 1 >"$tpg/enable" || fail "enable the target"
diag "target: srpt $name, service GUID 0x$guid, ramdisk $((2 * MB)) MiB, rdma_cm port $PORT"

# run WHERE DEV: log in from WHERE (veth: the namespace; one: the initial one) through DEV,
# then move and check data.
run() {
	local where=$1 dev=$2 in=() h disk s0 r0 s1 r1 c0 c1 min
	[ "$where" = veth ] && in=(nsenter --net="/run/netns/$NS")
	s0=$(cnt "$SD" sent_pkts) r0=$(cnt "$SD" rcvd_pkts) c0=$(cnt "$CD" rcvd_pkts)
	echo "id_ext=$guid,ioc_guid=$guid,dest=$SRV:$PORT" >"$T/login"
	"${in[@]}" dd if="$T/login" of="/sys/class/infiniband_srp/srp-$dev-1/add_target" \
		status=none 2>"$T/err" || { dmesg | tail -15 | sed 's/^/# dmesg: /'; cat "$T/err";
		fail "$where: SRP login through $dev"; }
	h=$(srp_hosts "$dev")
	[ -n "$h" ] || fail "$where: no SCSI host on $dev after the login"
	disk=$(wait_for 20 srp_disk "$h") || fail "$where: no disk on $h"
	diag "$where: logged in through $dev: $h, /dev/$disk" \
		"($(cat "/sys/block/$disk/size") sectors, $(cat "/sys/block/$disk/device/vendor" | tr -d ' '))"

	disk_check "$where" "$disk" "$MB" "${SRP_FIO:-8M}"

	if [ "$where" = veth ]; then
		s1=$(cnt "$SD" sent_pkts) r1=$(cnt "$SD" rcvd_pkts) c1=$(cnt "$CD" rcvd_pkts)
		min=$(((MB << 20) / 2048))
		# The initiator's device received what the target's sent: the wire, not a loopback.
		[ $((r1 - r0)) -ge $min ] && [ $((s1 - s0)) -ge $min ] && [ $((c1 - c0)) -ge $min ] ||
			fail "$where: $SD sent $((s1 - s0)) and received $((r1 - r0)) packets," \
				"$CD received $((c1 - c0)) (< $min each)"
		diag "$where: $SD sent_pkts +$((s1 - s0)), rcvd_pkts +$((r1 - r0)); $CD rcvd_pkts +$((c1 - c0))"
	fi
	srp_logout
	wait_for 20 eval '! srp_disk "$h" >/dev/null' || fail "$where: /dev/$disk still there after the logout"
}

run veth "$CD"
run one "$SD"
exit 0
