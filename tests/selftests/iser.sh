#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# iSER (iSCSI Extensions for RDMA) with the kernel's target and initiator on one device: the
# LIO target (ib_isert) serving a ramdisk through a portal with iSER enabled, and the open-iscsi
# initiator (iscsid started by hand, iscsiadm with the iser interface) logging in through
# ib_iser. Both ends create their rdma_cm ids in the initial network namespace (iser_verbs.c,
# ib_isert.c), so one guest has no second namespace to put either end in: this runs on one
# device, a dummy netdev with 192.168.77.1; the interop tier runs iSER across a wire between
# two guests (scripts/guest/iser-rdma).
#
# The target is configured with targetcli as a user would type it, or (ISER_TARGET=configfs,
# the debug kernel's short form: targetcli's start-ups take minutes under KASAN) through
# configfs directly (lib_iscsi.sh). The disk the login attaches is written with ISER_MB
# (default 8) MiB of random data with direct I/O and read back (sha256 equal), then fio random
# writes of 4-128 KiB verified with crc32c (ISER_FIO, default 8M). The session must be an iSER
# one (its transport, iser) and the device must have carried the data (direct messages or
# packets, at least one per 2 KiB moved). Logout and target teardown at the end.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_iscsi.sh"
NIC=rriser0 ADDR=192.168.77.1
IQN=iqn.2026-12.org.rrxe:iser
MB=${ISER_MB:-8}
T=$(mktemp -d /tmp/iser.XXXXXX)
export TARGETCLI_HOME=$T/targetcli
loaded=
started=
bus_pid=
target=

cnt() { cat "/sys/class/infiniband/$DEV/ports/1/hw_counters/$1" 2>/dev/null || echo 0; }
tcli() { timeout 60 targetcli "$@" >>"$T/targetcli.log" 2>&1; }
cleanup() {
	# Only what this test set up: a skip before it leaves another user's iSCSI alone.
	if [ -n "$started" ]; then
		iscsi_logout $IQN $ADDR
		iscsi_stop
	fi
	if [ "$target" = targetcli ]; then
		tcli /iscsi delete $IQN
		tcli /backstores/ramdisk delete rrxe
		# The fabric's directory holds references on iscsi_target_mod.
		rmdir /sys/kernel/config/target/iscsi 2>/dev/null
	elif [ -n "$target" ]; then
		lio_iser_down $IQN
	fi
	[ "${bus_pid:-0}" -gt 1 ] && kill "$bus_pid" 2>/dev/null
	if [ -n "$loaded" ]; then
		timeout 30 modprobe -r ib_iser || diag "ib_iser did not unload"
		timeout 30 modprobe -r ib_isert || diag "ib_isert did not unload"
	fi
	rm -rf "$T"
	dev_exists "$DEV" && timeout 30 rdma link delete "$DEV"
	ip link del $NIC 2>/dev/null
	cleanup_driver
}
trap cleanup EXIT

WAY=${ISER_TARGET:-targetcli}
need="iscsid iscsiadm sha256sum fio"
[ "$WAY" = targetcli ] && need+=" targetcli dbus-daemon"
for p in $need; do
	command -v $p >/dev/null || skip "$p not installed (open-iscsi, targetcli-fb, dbus-daemon)"
done
pgrep -x iscsid >/dev/null && skip "iscsid already running"
modprobe sd_mod || skip "no SCSI disks (BLK_DEV_SD)"
modprobe ib_isert || skip "no ib_isert (INFINIBAND_ISERT)"
modprobe ib_iser || skip "no ib_iser (INFINIBAND_ISER)"
ls -d /sys/kernel/config/target/iscsi/iqn.* >/dev/null 2>&1 && skip "an iSCSI target is already configured"
loaded=1
modprobe rdma_cm

dummy_add $NIC $ADDR/24
check "add $DEV on $NIC" timeout 30 rdma link add "$DEV" type "$TYPE" netdev $NIC
wait_for 20 gid_index "$DEV" "$(v4_gid $ADDR)" >/dev/null || fail "no IPv4 GID on $DEV"

# target_targetcli: the target, as a user would type it (targetcli keeps its preferences in
# TARGETCLI_HOME and saves nothing).
target_targetcli() {
	mkdir -p "$TARGETCLI_HOME"
	# targetcli-fb 2.1.53 asks the system D-Bus for tcmu-runner's backstores, and gives up when
	# there is no bus: a guest without one gets a private bus of its own.
	if [ ! -S /run/dbus/system_bus_socket ]; then
		dbus-daemon --session --fork --nopidfile --address="unix:path=$T/bus" >/dev/null ||
			fail "no D-Bus for targetcli"
		bus_pid=$(pgrep -f "unix:path=$T/bus" | head -n1)
		export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$T/bus
	fi
	tcli set global auto_save_on_exit=false || { cat "$T/targetcli.log"; fail "targetcli preferences"; }
	target=targetcli
	tcli /backstores/ramdisk create name=rrxe size=$((2 * MB))M || { cat "$T/targetcli.log"; fail "ramdisk backstore"; }
	tcli /iscsi create $IQN || { cat "$T/targetcli.log"; fail "iSCSI target"; }
	tcli /iscsi/$IQN/tpg1/luns create /backstores/ramdisk/rrxe || fail "LUN"
	tcli /iscsi/$IQN/tpg1/portals delete 0.0.0.0 3260
	tcli /iscsi/$IQN/tpg1/portals create $ADDR 3260 || { tail -5 "$T/targetcli.log"; fail "portal"; }
	tcli /iscsi/$IQN/tpg1/portals/$ADDR:3260 enable_iser boolean=true ||
		{ tail -5 "$T/targetcli.log"; fail "enable iSER on the portal"; }
	tcli /iscsi/$IQN/tpg1 set attribute authentication=0 demo_mode_write_protect=0 \
		generate_node_acls=1 cache_dynamic_acls=1 || fail "open the target to every initiator"
}
if [ "$WAY" = targetcli ]; then
	target_targetcli
else
	target=configfs
	lio_iser_up $IQN $ADDR $((2 * MB)) || fail "the target through configfs"
fi
np=/sys/kernel/config/target/iscsi/$IQN/tpgt_1/np/$ADDR:3260/iser
[ "$(cat $np 2>/dev/null)" = 1 ] || { tail -10 "$T/targetcli.log" 2>/dev/null; fail "the portal is not an iSER one ($np)"; }
diag "target ($WAY): $IQN, ramdisk $((2 * MB)) MiB, iSER portal $ADDR:3260"

# The initiator: iscsid with its own name, a node record on the iser interface, the login.
check "iscsid" iscsi_start iqn.2026-12.org.rrxe:initiator
started=1
m0=$(cnt direct_msgs) p0=$(cnt sent_pkts)
iscsi_login $IQN $ADDR ||
	{ sed 's/^/# /' "$T/login"; dmesg | tail -15 | sed 's/^/# dmesg: /'; fail "iSER login"; }
disk=$(wait_for 20 iscsi_disk) || fail "no disk after the login"
sess=$(iscsiadm -m session 2>/dev/null | head -1)
case $sess in
iser:*) ;;
*) fail "the session is not an iSER one: $sess" ;;
esac
diag "logged in: $sess; /dev/$disk ($(cat "/sys/block/$disk/size") sectors)"

disk_check iser "$disk" "$MB" "${ISER_FIO:-8M}"

# The data went through the device: rrxe moves it between QPs of one device directly (direct
# messages, which count as sent packets too), C rxe as looped-back packets.
moved=$(($(cnt sent_pkts) - p0))
[ $moved -ge $(((MB << 20) / 2048)) ] || fail "$DEV carried $moved packets for $MB MiB"
diag "$DEV: direct_msgs +$(($(cnt direct_msgs) - m0)), sent_pkts +$(($(cnt sent_pkts) - p0))"
check "logout" iscsi_logout $IQN $ADDR
exit 0
