#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# libibverbs (stock rxe provider) sees the device with true attributes: ibv_devices,
# ibv_devinfo [-v]; rxe's sysfs attributes: parent, a writable node_desc; rrxe's driver attributes
# of QPs, CQs, MRs and SRQs in `rdma -dd res show` (to root only).
. "$(dirname "$0")/lib.sh"
srq_srv=
trap 'kill $srq_srv 2>/dev/null; cleanup_driver' EXIT
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
out=$(ibv_devices) || fail "ibv_devices"
diag "$(echo "$out" | grep "$DEV")"
mac=$(cat "/sys/class/net/$NIC/address")
# Modified EUI-64 of the MAC: flip the U/L bit, insert ff:fe.
IFS=: read -r m0 m1 m2 m3 m4 m5 <<<"$mac"
guid=$(printf '%02x%s%sfffe%s%s%s' $((0x$m0 ^ 2)) "$m1" "$m2" "$m3" "$m4" "$m5")
check "ibv_devices lists $DEV with GUID $guid" bash -c "ibv_devices | grep -q '$DEV.*$guid'"
info=$(ibv_devinfo -d "$DEV") || fail "ibv_devinfo -d $DEV"
echo "$info" | sed 's/^/# /'
expect() { echo "$info" | grep -q -E "$1" || fail "ibv_devinfo: expected /$1/"; }
expect "transport:[[:space:]]+InfiniBand"
expect "state:[[:space:]]+PORT_ACTIVE"
expect "link_layer:[[:space:]]+Ethernet"
expect "max_mtu:[[:space:]]+4096"
expect "active_mtu:[[:space:]]+1024"
expect "vendor_id:[[:space:]]+0xffffff"
expect "phys_port_cnt:[[:space:]]+1"
v=$(ibv_devinfo -v -d "$DEV") || fail "ibv_devinfo -v"
expectv() { echo "$v" | grep -q -E "$1" || fail "ibv_devinfo -v: expected /$1/"; }
expectv "max_qp:[[:space:]]+1048560"
expectv "max_qp_wr:[[:space:]]+1048576"
expectv "max_sge:[[:space:]]+32"
expectv "max_cqe:[[:space:]]+32767"
expectv "max_qp_rd_atom:[[:space:]]+128"
expectv "atomic_cap:[[:space:]]+ATOMIC_HCA"
expectv "max_pkeys:[[:space:]]+64"
expectv "gid_tbl_len:[[:space:]]+1024"
expectv "max_msg_sz:[[:space:]]+0x80000000"
expectv "sys_image_guid:[[:space:]]+$(echo "$guid" | sed 's/\(....\)\(....\)\(....\)\(....\)/\1:\2:\3:\4/')"
check "pkey 0 is the default P_Key" bash -c "grep -q 0xffff /sys/class/infiniband/$DEV/ports/1/pkeys/0"
check "link layer in sysfs" bash -c "grep -q Ethernet /sys/class/infiniband/$DEV/ports/1/link_layer"
# One virtual lane, VL0 (IB_VL_VL0 = 1), as rxe.
expectv "max_vl_num:[[:space:]]+1 \(1\)"
# rxe's driver attribute: the name of the netdev (rdma-core's udev rules read it).
sys=/sys/class/infiniband/$DEV
check "parent is $NIC" bash -c "[ \"\$(cat $sys/parent)\" = $NIC ]"
# modify_device: the node description is writable (root only) and reads back.
check "write node_desc" bash -c "echo 'rrxe selftest node' >$sys/node_desc"
check "node_desc reads back" grep -q '^rrxe selftest node$' "$sys/node_desc"
# A description longer than the field is cut to it, not refused.
check "write a 100-byte node_desc" bash -c "printf '%0100d' 0 >$sys/node_desc"
len=$(head -1 "$sys/node_desc" | tr -d '\n' | wc -c)
diag "node_desc after a 100-byte write: $len bytes"
[ "$len" -ge 63 ] && [ "$len" -le 64 ] || fail "node_desc of $len bytes after a 100-byte write"
# rrxe's sysfs parent is the NIC's bus device, so device/net/ names the netdev (rdma-core's
# rdma_cm tests look there); rxe has no parent.
if is_rrxe; then
	check "device/net/$NIC" test -e "$sys/device/net/$NIC"
	# The pipeline's state of each QP as driver attributes of `rdma -dd res show qp` (QP1,
	# the GSI QP, exists on every device); C rxe reports none.
	# To root, from a request for the one QP and from a dump.
	for q in "lqpn 1" ""; do
		# shellcheck disable=SC2086
		res=$(timeout 10 rdma -dd res show qp link "$DEV/1" $q 2>&1)
		diag "QP1 (${q:-dump}): $(echo "$res" | tr -s ' \n' ' ')"
		for a in sq_next_psn sq_unacked_psn timer_armed rq_expected_psn inbox 'run idle'; do
			echo "$res" | grep -q "$a" || fail "rdma -dd res show qp $q: no $a"
		done
	done
	# Live PSNs and retry state are what a packet injector needs: a reader without
	# CAP_NET_ADMIN gets the core's attributes only, as from C rxe, from a dump and from a
	# request for the one QP alike.
	for q in "" "lqpn 1"; do
		# shellcheck disable=SC2086
		res=$(timeout 10 setpriv --reuid=65534 --regid=65534 --clear-groups \
			rdma -dd res show qp link "$DEV/1" $q 2>&1)
		diag "QP1 to nobody (${q:-dump}): $(echo "$res" | grep -w "lqpn 1" | tr -s ' \n' ' ')"
		echo "$res" | grep -qw "lqpn 1" || fail "rdma -dd res show qp $q as nobody: no QP1"
		# The driver's names (the core's have dashes: sq-psn).
		for a in sq_ rq_ timer_ inbox ' run ' tx_ odp_; do
			! echo "$res" | grep -q -- "$a" ||
				fail "rdma -dd res show qp $q as nobody shows $a"
		done
	done
	# Driver attributes of CQs (ib_mad's, a kernel CQ), and of the MRs, SRQ and CQ of an
	# ibv_srq_pingpong server (it holds them while it waits for its client).
	res=$(timeout 10 rdma -dd res show cq dev "$DEV" 2>&1)
	diag "CQs: $(echo "$res" | head -n 1 | tr -s ' \n' ' ')"
	for a in 'unread [0-9]+' 'armed 0x[0-3]' 'overrun 0'; do
		echo "$res" | grep -qwE "drv_$a" || fail "rdma -dd res show cq: no $a"
	done
	timeout 30 ibv_srq_pingpong -d "$DEV" -g "$(gid_index "$DEV" ffff:0a00:020f)" -p 18690 \
		>/dev/null 2>&1 &
	srq_srv=$!
	wait_for 10 listening 18690 || fail "ibv_srq_pingpong: not listening"
	res=$(timeout 10 rdma -dd res show srq dev "$DEV" 2>&1)
	diag "SRQ: $(echo "$res" | tr -s ' \n' ' ')"
	for a in 'queued [1-9][0-9]*' 'limit 0' 'max_sge 1'; do
		echo "$res" | grep -qw "drv_$a" || fail "rdma -dd res show srq: no $a"
	done
	res=$(timeout 10 rdma -dd res show mr dev "$DEV" 2>&1)
	diag "MRs: $(echo "$res" | head -n 1 | tr -s ' \n' ' ')"
	for a in 'kind pinned' 'access 0x[0-9a-f]+' 'windows 0'; do
		echo "$res" | grep -qwE "drv_$a" || fail "rdma -dd res show mr: no $a"
	done
	# As for QPs, to root only.
	for o in cq srq mr; do
		res=$(timeout 10 setpriv --reuid=65534 --regid=65534 --clear-groups \
			rdma -dd res show $o dev "$DEV" 2>&1)
		! echo "$res" | grep -q drv_ || fail "rdma -dd res show $o as nobody shows drv_"
	done
	kill $srq_srv 2>/dev/null
	wait $srq_srv 2>/dev/null
	srq_srv=
else
	diag "device: $(readlink "$sys/device" || echo none)"
fi
exit 0
