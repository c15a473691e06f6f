# SPDX-License-Identifier: GPL-2.0
# iSCSI helpers of the iSER tests (iser.sh, and scripts/guest/iser-rdma across the interop
# tier's wire). Source after lib.sh; the caller sets T to a private directory.
#
# The target side is the LIO target configured through configfs directly, the same objects
# targetcli creates in iser.sh: a ramdisk backstore, an iSCSI target with TPG 1 and LUN 0, a
# portal on one address with iSER enabled, open to every initiator without authentication. The
# initiator side is open-iscsi: iscsid started by hand with its own initiator name, a node
# record on the "iser" interface, login and logout with iscsiadm.

LIO=/sys/kernel/config/target
LIO_RD=$LIO/core/rd_mcp_77/rrxe

# lio_put FILE VALUE: write a configfs attribute, saying which one failed.
lio_put() {
	echo "$2" >"$1" 2>/dev/null || { diag "lio: cannot write '$2' to $1"; return 1; }
}
# lio_iser_up IQN ADDR MB: the target IQN serving a ramdisk of MB MiB on the iSER portal
# ADDR:3260 (ADDR must be one of this machine's addresses). Non-zero when a step failed.
lio_iser_up() {
	local tpg=$LIO/iscsi/$1/tpgt_1 np=$LIO/iscsi/$1/tpgt_1/np/$2:3260 a
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	mkdir -p "$LIO_RD" || return 1
	# The ramdisk's size in pages of 4 KiB.
	lio_put "$LIO_RD/control" "rd_pages=$(($3 * 256))" || return 1
	lio_put "$LIO_RD/enable" 1 || return 1
	# The iscsi fabric's directory loads iscsi_target_mod.
	mkdir -p "$tpg/lun/lun_0" || return 1
	ln -s "$LIO_RD" "$tpg/lun/lun_0/rrxe" || return 1
	mkdir "$np" || return 1
	lio_put "$np/iser" 1 || return 1
	for a in authentication=0 generate_node_acls=1 cache_dynamic_acls=1 \
		demo_mode_write_protect=0; do
		lio_put "$tpg/attrib/${a%=*}" "${a#*=}" || return 1
	done
	lio_put "$tpg/enable" 1
}
# lio_iser_down IQN: undo lio_iser_up, as far as it got.
lio_iser_down() {
	local t=$LIO/iscsi/$1 np
	if [ -d "$t/tpgt_1" ]; then
		echo 0 >"$t/tpgt_1/enable" 2>/dev/null
		for np in "$t"/tpgt_1/np/*; do
			[ -d "$np" ] || continue
			echo 0 >"$np/iser" 2>/dev/null
			rmdir "$np"
		done
		rm -f "$t"/tpgt_1/lun/lun_0/rrxe
		rmdir "$t/tpgt_1/lun/lun_0" "$t/tpgt_1" 2>/dev/null
	fi
	[ -d "$t" ] && rmdir "$t"
	[ -d "$LIO_RD" ] && rmdir "$LIO_RD" "${LIO_RD%/*}"
	# The fabric's directory holds references on iscsi_target_mod.
	rmdir $LIO/iscsi 2>/dev/null
	return 0
}

ISCSID_PID=
# iscsi_start NAME: iscsid in the foreground with initiator name NAME (its own session:
# iscsid signals its process group when it stops). Non-zero if it did not start.
iscsi_start() {
	echo "InitiatorName=$1" >"$T/initiatorname"
	setsid iscsid -f -n -i "$T/initiatorname" >"$T/iscsid.log" 2>&1 &
	ISCSID_PID=$!
	sleep 1
	kill -0 "$ISCSID_PID" 2>/dev/null || { sed 's/^/# iscsid: /' "$T/iscsid.log"; return 1; }
}
# iscsi_login IQN ADDR: a node record on the iser interface, and the login (its output in
# $T/login).
iscsi_login() {
	timeout 30 iscsiadm -m node -o new -T "$1" -p "$2:3260" -I iser >/dev/null &&
		timeout 60 iscsiadm -m node -T "$1" -p "$2:3260" -I iser --login >"$T/login" 2>&1
}
# iscsi_disk: the block device of the iSCSI session, once it is there.
iscsi_disk() {
	local b
	for b in /sys/class/iscsi_session/session*/device/target*/*:*:*:*/block/*; do
		[ -e "$b" ] && basename "$b" && return 0
	done
	return 1
}
# iscsi_logout IQN ADDR: logout, the node record deleted.
iscsi_logout() {
	timeout 60 iscsiadm -m node -T "$1" -p "$2:3260" --logout >/dev/null 2>&1
	local rc=$?
	timeout 30 iscsiadm -m node -T "$1" -p "$2:3260" -o delete >/dev/null 2>&1
	return $rc
}
# iscsi_stop: iscsid ended (after the logout).
iscsi_stop() {
	[ -n "$ISCSID_PID" ] || return 0
	kill "$ISCSID_PID" 2>/dev/null
	wait "$ISCSID_PID" 2>/dev/null
	ISCSID_PID=
}
