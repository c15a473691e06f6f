# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154 # sourced by bench.sh, which sets the globals
#
# scripts/guest/bench-nvme.sh: NVMe over Fabrics rows for scripts/guest/bench.sh, which sources
# it. The kernel target (nvmet-rdma) exports a memory-backed null_blk namespace; the kernel host
# (nvme-rdma) connects to it, and fio runs time-based jobs on the namespace with direct I/O:
# sequential 128 KiB reads and writes (MB/s) and random 4 KiB reads at queue depth 1 and 32
# (IOPS).
#
# loop: target and host in the bench VM, through the loopback family's device. wire: the
# target on guest a (run there through its agent: "bash scripts/guest/bench-nvme.sh nvmet_up
# ADDR" and "... nvmet_down"), the host and fio on guest b, across the wire. Not on the veth
# families: nvmet-rdma and nvme-rdma create their rdma_cm IDs in the initial network namespace
# whatever namespace the nvme command runs in, so a target cannot listen on an address that only
# a namespace has.

NQN=rrxe-bench
NVMET=/sys/kernel/config/nvmet
NULLB=/sys/kernel/config/nullb/rrxebench
NVME_BLK='' NVME_REMOTE=0
# "WORKLOAD SIZE UNIT FIO-ARGS...": the rows, in table order.
NVME_ROWS=(
	"nvme_seq_read 131072 MB/s --rw=read --bs=128k --iodepth=16"
	"nvme_seq_write 131072 MB/s --rw=write --bs=128k --iodepth=16"
	"nvme_rand_read_qd1 4096 IOPS --rw=randread --bs=4k --iodepth=1"
	"nvme_rand_read_qd8 4096 IOPS --rw=randread --bs=4k --iodepth=8"
	"nvme_rand_read_qd32 4096 IOPS --rw=randread --bs=4k --iodepth=32"
	"nvme_rand_read_qd128 4096 IOPS --rw=randread --bs=4k --iodepth=128"
	"nvme_rand_read_qd32_j2 4096 IOPS --rw=randread --bs=4k --iodepth=32 --numjobs=2 --group_reporting"
)

# nvmet_down: take the target apart, unload nvmet-rdma and null_blk.
nvmet_down() {
	rm -f $NVMET/ports/1/subsystems/$NQN 2>/dev/null || true
	rmdir $NVMET/ports/1 2>/dev/null || true
	if [ -d $NVMET/subsystems/$NQN ]; then
		echo 0 >$NVMET/subsystems/$NQN/namespaces/1/enable 2>/dev/null || true
		rmdir $NVMET/subsystems/$NQN/namespaces/1 $NVMET/subsystems/$NQN 2>/dev/null || true
	fi
	modprobe -r nvmet-rdma 2>/dev/null || true
	if [ -d $NULLB ]; then
		echo 0 >$NULLB/power 2>/dev/null || true
		rmdir $NULLB 2>/dev/null || true
	fi
	modprobe -r null_blk 2>/dev/null || true
}

# nvme_down: disconnect the host, take the target apart (on guest a too for the wire), unload
# the NVMe and null_blk modules.
nvme_down() {
	if [ -n "$NVME_BLK" ]; then
		timeout -k 5 60 nvme disconnect -n $NQN >/dev/null 2>&1 || say "$DRV nvme: disconnect failed"
	fi
	NVME_BLK=''
	modprobe -r nvme-rdma 2>/dev/null || true
	nvmet_down
	if [ "$NVME_REMOTE" = 1 ]; then
		remote timeout -k 5 60 bash scripts/guest/bench-nvme.sh nvmet_down ||
			say "$DRV nvme: target teardown on the peer failed"
		NVME_REMOTE=0
	fi
}

# nvmet_up ADDR: the target on ADDR port 4420, a 256 MiB memory-backed null_blk namespace.
nvmet_up() {
	local addr=$1 bdev
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	modprobe rdma_cm && modprobe nvmet-rdma && modprobe null_blk nr_devices=0 ||
		{ say "$DRV nvme: modules missing (nvmet-rdma, null_blk)"; return 1; }
	mkdir $NULLB && echo 1 >$NULLB/memory_backed && echo 256 >$NULLB/size &&
		echo 4096 >$NULLB/blocksize && echo 1 >$NULLB/power ||
		{ say "$DRV nvme: no memory-backed null_blk device"; return 1; }
	bdev=/dev/rrxebench
	[ -b $bdev ] || bdev=/dev/nullb$(cat $NULLB/index)
	mkdir $NVMET/subsystems/$NQN && echo 1 >$NVMET/subsystems/$NQN/attr_allow_any_host &&
		mkdir $NVMET/subsystems/$NQN/namespaces/1 &&
		echo "$bdev" >$NVMET/subsystems/$NQN/namespaces/1/device_path &&
		echo 1 >$NVMET/subsystems/$NQN/namespaces/1/enable &&
		mkdir $NVMET/ports/1 && echo rdma >$NVMET/ports/1/addr_trtype &&
		echo ipv4 >$NVMET/ports/1/addr_adrfam && echo "$addr" >$NVMET/ports/1/addr_traddr &&
		echo 4420 >$NVMET/ports/1/addr_trsvcid &&
		ln -s $NVMET/subsystems/$NQN $NVMET/ports/1/subsystems/$NQN ||
		{ say "$DRV nvme: target setup on $addr failed"; return 1; }
}

# nvme_up ADDR: the target on ADDR (here, or on guest a for the wire) and the host connected
# to it; NVME_BLK is the namespace's block device. Says why and fails when something is missing.
nvme_up() {
	local addr=$1 i d
	command -v nvme >/dev/null && command -v fio >/dev/null ||
		{ say "$DRV nvme: nvme-cli or fio not installed"; return 1; }
	if [ "$FAM" = wire ]; then
		NVME_REMOTE=1
		remote timeout -k 5 60 env DRV="$DRV" bash scripts/guest/bench-nvme.sh nvmet_up "$addr" ||
			{ say "$DRV nvme: no target on the peer"; return 1; }
	else
		nvmet_up "$addr" || return 1
	fi
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	modprobe rdma_cm && modprobe nvme-rdma || { say "$DRV nvme: module nvme-rdma missing"; return 1; }
	timeout -k 5 60 nvme connect -t rdma -a "$addr" -s 4420 -n $NQN >/dev/null ||
		{ say "$DRV nvme: nvme connect -t rdma -a $addr failed"; return 1; }
	for ((i = 0; i < 50; i++)); do
		d=$(grep -l "^$NQN\$" /sys/class/nvme/nvme*/subsysnqn 2>/dev/null | head -n1)
		[ -n "$d" ] && d=$(ls -d "$(dirname "$d")"/nvme*n1 2>/dev/null | head -n1)
		if [ -n "$d" ] && [ -b "/dev/$(basename "$d")" ]; then
			NVME_BLK=/dev/$(basename "$d")
			d=$(cat "/sys/block/$(basename "$d")/size")
			say "$DRV nvme: connected to $addr: $NVME_BLK ($((d / 2048)) MiB of null_blk)"
			return 0
		fi
		sleep 0.2
	done
	say "$DRV nvme: no namespace block device after connect"
	return 1
}

# fio_json FILE: "MB/s IOPS" of fio's JSON output (reads and writes together).
fio_json() {
	python3 - "$1" <<-'EOF'
		import json, sys
		try:
		    text = open(sys.argv[1]).read()
		    job = json.loads(text[text.index("{"):])["jobs"][0]
		    bw = sum(job[d]["bw_bytes"] for d in ("read", "write"))
		    iops = sum(job[d]["iops"] for d in ("read", "write"))
		    if bw > 0:
		        print("%.2f %.0f" % (bw / 1e6, iops))
		except (OSError, ValueError, KeyError, IndexError) as e:
		    print("no result: %s" % e, file=sys.stderr)
	EOF
}

# nic_kicks: the notifications the wire's virtio NIC had from this guest (ethtool's kicks of
# its transmit queues), empty without ethtool or such a counter.
nic_kicks() {
	ethtool -S "${WIRE_NIC:-rbw}" 2>/dev/null | awk '/^[ \t]*tx[0-9]+_kicks:/ { k += $2; n++ }
		END { if (n) print k }'
}

# nvme_row ROW: one fio run of ROW on NVME_BLK, --nvme-secs seconds after a 1 s ramp.
nvme_row() {
	local w size unit rest log mbs iops v t0=$SECONDS
	local -a args
	read -r w size unit rest <<<"$1"
	read -r -a args <<<"$rest"
	log=$logs/$DRV-$FAM-$w-r$RUN
	local kb0='' ka0='' kb1='' ka1='' kicks=''
	profile_start
	profile_on
	if [ "$FAM" = wire ]; then
		kb0=$(nic_kicks) ka0=$(remote bash -c "$(declare -f nic_kicks); nic_kicks")
	fi
	timeout -k 5 $((nvme_secs + tmo)) fio --name="$w" --filename="$NVME_BLK" "${args[@]}" \
		--ioengine=libaio --direct=1 --time_based --ramp_time=1 --runtime="$nvme_secs" \
		--output-format=json >"$log.fio" 2>&1 || true
	if [ -n "$kb0" ] && [ -n "$ka0" ]; then
		kb1=$(nic_kicks) ka1=$(remote bash -c "$(declare -f nic_kicks); nic_kicks")
	fi
	profile_end "$log"
	read -r mbs iops <<<"$(fio_json "$log.fio" 2>"$log.parse")" || true
	if [ -z "${mbs:-}" ]; then
		say "$DRV $FAM run $RUN $w: fail ($(cat "$log.parse"); $log.fio)"
		return 0
	fi
	v=$mbs
	[ "$unit" = IOPS ] && v=$iops
	add_result "$DRV|$FAM|$w|$size" "$v"
	if [ -n "$kb1" ] && [ -n "$ka1" ] && [ "${iops%.*}" -gt 0 ]; then
		# Over the whole fio run (its ramp too), per I/O of the measured rate.
		kicks=$(awk -v b=$((kb1 - kb0)) -v a=$((ka1 - ka0)) -v i="$iops" -v s="$nvme_secs" \
			'BEGIN { printf ", NIC kicks per I/O: host %.2f, target %.2f", b / (i * (s + 1)),
				a / (i * (s + 1)) }')
	fi
	say "$DRV $FAM run $RUN $w $size: $mbs MB/s, $iops IOPS ($((SECONDS - t0)) s)$kicks"
}

# nvme_rows ADDR: run $RUN of the NVMe rows on the current family's device (the caller runs
# them in the first three rounds only: each fio run takes some 8 s under TCG, and the default
# bench stays within its time).
nvme_rows() {
	local row
	if nvme_up "$1"; then
		for row in "${NVME_ROWS[@]}"; do
			[[ ${row%% *} =~ $rows_re ]] && nvme_row "$row"
		done
	fi
	nvme_down
}

# Run as a script (the wire's target on guest a): "bench-nvme.sh nvmet_up ADDR" or "nvmet_down".
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -uo pipefail
	DRV=${DRV:-?}
	say() { printf 'bench: %s\n' "$*"; }
	case ${1:-} in
	nvmet_up | nvmet_down) "$@" ;;
	*) echo "usage: $0 nvmet_up ADDR | nvmet_down" >&2; exit 2 ;;
	esac
fi
