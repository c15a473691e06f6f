#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NVMe over Fabrics (RDMA) through one device: the kernel target (nvmet-rdma) and the kernel host (nvme-rdma) connect through rdma_cm, then fio writes random
# blocks of several sizes with direct I/O and verifies every one (crc32c), then the host
# disconnects. Kernel ULPs on both ends: FRWR registration, SEND with invalidate, RDMA READ and
# WRITE from the target; on rrxe most of them through the direct loopback path (direct_msgs).
# The namespace is a memory-backed null_blk device.
. "$(dirname "$0")/lib.sh"
NQN=rrxe-selftest
CFG=/sys/kernel/config/nvmet
NB=/sys/kernel/config/nullb/nullb9
cleanup() {
	nvme disconnect -n $NQN >/dev/null 2>&1
	rm -f $CFG/ports/1/subsystems/$NQN 2>/dev/null
	rmdir $CFG/ports/1 2>/dev/null
	[ -d $CFG/subsystems/$NQN ] && {
		echo 0 >$CFG/subsystems/$NQN/namespaces/1/enable 2>/dev/null
		rmdir $CFG/subsystems/$NQN/namespaces/1 $CFG/subsystems/$NQN 2>/dev/null
	}
	modprobe -r nvme-rdma nvmet-rdma 2>/dev/null
	[ -d $NB ] && { echo 0 >$NB/power; rmdir $NB; } 2>/dev/null
	modprobe -r null_blk 2>/dev/null
	cleanup_driver
}
trap cleanup EXIT
command -v nvme >/dev/null || skip "nvme-cli not installed"
command -v fio >/dev/null || skip "fio not installed"
nic_up
modprobe ib_uverbs
modprobe rdma_cm
check "add $DEV" link_add "$DEV" "$NIC"
check "IPv4 GID" wait_for 20 gid_index "$DEV" "ffff:0a00:020f"
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
modprobe nvmet-rdma || skip "no nvmet-rdma"
modprobe nvme-rdma || skip "no nvme-rdma"

modprobe null_blk nr_devices=0 || skip "no null_blk"
mkdir $NB || skip "null_blk has no configfs"
echo 1 >$NB/memory_backed
echo 64 >$NB/size
echo 4096 >$NB/blocksize
check "a memory-backed null_blk device" eval "echo 1 >$NB/power"
mkdir $CFG/subsystems/$NQN
echo 1 >$CFG/subsystems/$NQN/attr_allow_any_host
mkdir $CFG/subsystems/$NQN/namespaces/1
# The disk is named after the configfs item (index-based on older kernels).
bdev=/dev/nullb9
[ -b $bdev ] || bdev=/dev/nullb$(cat $NB/index)
[ -b $bdev ] || fail "no null_blk block device"
echo $bdev >$CFG/subsystems/$NQN/namespaces/1/device_path
check "enable the namespace" eval "echo 1 >$CFG/subsystems/$NQN/namespaces/1/enable"
mkdir $CFG/ports/1
echo rdma >$CFG/ports/1/addr_trtype
echo ipv4 >$CFG/ports/1/addr_adrfam
echo 10.0.2.15 >$CFG/ports/1/addr_traddr
echo 4420 >$CFG/ports/1/addr_trsvcid
check "expose the subsystem on an RDMA port" ln -s $CFG/subsystems/$NQN $CFG/ports/1/subsystems/$NQN

check "nvme connect -t rdma" timeout 60 nvme connect -t rdma -a 10.0.2.15 -s 4420 -n $NQN
dev=
for i in $(seq 50); do
	dev=$(grep -l "^$NQN\$" /sys/class/nvme/nvme*/subsysnqn 2>/dev/null | head -n1)
	[ -n "$dev" ] && dev=$(ls -d "$(dirname "$dev")"/nvme*n1 2>/dev/null | head -n1)
	[ -n "$dev" ] && [ -b "/dev/$(basename "$dev")" ] && break
	dev=
	sleep 0.2
done
[ -n "$dev" ] || fail "no namespace block device after connect"
blk=/dev/$(basename "$dev")
diag "connected: $blk ($(cat /sys/block/$(basename "$dev")/size) sectors)"
hw() { cat /sys/class/infiniband/$DEV/ports/1/hw_counters/$1 2>/dev/null || echo 0; }
direct0=$(hw direct_msgs) recvs0=$(hw rdma_recvs)
out=$(timeout 300 fio --name=verify --filename="$blk" --rw=randwrite --bsrange=4k-128k \
	--size=${NVMEOF_SIZE:-16M} --direct=1 --ioengine=libaio --iodepth=8 --verify=crc32c \
	--do_verify=1 --verify_fatal=1 --output-format=terse --terse-version=3 2>&1)
rc=$?
[ $rc -eq 0 ] || { printf '%s\n' "$out" | tail -5 | sed 's/^/# /'; fail "fio write+verify failed ($rc)"; }
diag "fio: random writes of 4-128 KiB verified (crc32c)"
# rrxe executes the target's WRITEs and READs on the host's FRWR memory and its SENDs with
# invalidate between the QPs of the device directly, without packets: besides the two SENDs of
# each command (capsule and response, one receive each), its data moves so.
if is_rrxe; then
	direct=$(($(hw direct_msgs) - direct0)) recvs=$(($(hw rdma_recvs) - recvs0))
	diag "direct messages: $direct, receives: $recvs"
	[ "$direct" -gt "$recvs" ] || fail "the data did not take the direct path ($direct messages, $recvs receives)"
fi
check "nvme disconnect" timeout 60 nvme disconnect -n $NQN
exit 0
