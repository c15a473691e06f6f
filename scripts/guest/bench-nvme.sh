# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154 # sourced by bench.sh, which sets the globals
#
# scripts/guest/bench-nvme.sh: NVMe over Fabrics rows for scripts/guest/bench.sh, which sources
# it. The kernel target (nvmet-rdma) exports a memory-backed null_blk namespace; the kernel host
# (nvme-rdma) connects to it through the loopback family's device, and fio runs time-based jobs
# on the namespace with direct I/O: sequential 128 KiB reads and writes (MB/s) and random 4 KiB
# reads at queue depth 1 and 32 (IOPS).
#
# Loopback only: nvmet-rdma and nvme-rdma create their rdma_cm IDs in the initial network
# namespace whatever namespace the nvme command runs in, so a target cannot listen on an address
# that only a namespace has, and the veth families have no NVMe rows.

NQN=rrxe-bench
NVMET=/sys/kernel/config/nvmet
NULLB=/sys/kernel/config/nullb/rrxebench
NVME_BLK=''
# "WORKLOAD SIZE UNIT FIO-ARGS...": the rows, in table order.
NVME_ROWS=(
	"nvme_seq_read 131072 MB/s --rw=read --bs=128k --iodepth=16"
	"nvme_seq_write 131072 MB/s --rw=write --bs=128k --iodepth=16"
	"nvme_rand_read_qd1 4096 IOPS --rw=randread --bs=4k --iodepth=1"
	"nvme_rand_read_qd32 4096 IOPS --rw=randread --bs=4k --iodepth=32"
)

# nvme_down: disconnect, take the target apart, unload the NVMe and null_blk modules.
nvme_down() {
	if [ -n "$NVME_BLK" ]; then
		timeout -k 5 60 nvme disconnect -n $NQN >/dev/null 2>&1 || say "$DRV nvme: disconnect failed"
	fi
	NVME_BLK=''
	rm -f $NVMET/ports/1/subsystems/$NQN 2>/dev/null || true
	rmdir $NVMET/ports/1 2>/dev/null || true
	if [ -d $NVMET/subsystems/$NQN ]; then
		echo 0 >$NVMET/subsystems/$NQN/namespaces/1/enable 2>/dev/null || true
		rmdir $NVMET/subsystems/$NQN/namespaces/1 $NVMET/subsystems/$NQN 2>/dev/null || true
	fi
	modprobe -r nvme-rdma nvmet-rdma 2>/dev/null || true
	if [ -d $NULLB ]; then
		echo 0 >$NULLB/power 2>/dev/null || true
		rmdir $NULLB 2>/dev/null || true
	fi
	modprobe -r null_blk 2>/dev/null || true
}

# nvme_up ADDR: the target on ADDR port 4420 and the host connected to it; NVME_BLK is the
# namespace's block device. Says why and fails when something is missing.
nvme_up() {
	local addr=$1 bdev i d
	command -v nvme >/dev/null && command -v fio >/dev/null ||
		{ say "$DRV nvme: nvme-cli or fio not installed"; return 1; }
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	modprobe rdma_cm && modprobe nvmet-rdma && modprobe nvme-rdma && modprobe null_blk nr_devices=0 ||
		{ say "$DRV nvme: modules missing (nvmet-rdma, nvme-rdma, null_blk)"; return 1; }
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

# nvme_row ROW: one fio run of ROW on NVME_BLK, --nvme-secs seconds after a 1 s ramp.
nvme_row() {
	local w size unit rest log mbs iops v t0=$SECONDS
	local -a args
	read -r w size unit rest <<<"$1"
	read -r -a args <<<"$rest"
	log=$logs/$DRV-$FAM-$w-r$RUN
	timeout -k 5 $((nvme_secs + tmo)) fio --name="$w" --filename="$NVME_BLK" "${args[@]}" \
		--ioengine=libaio --direct=1 --time_based --ramp_time=1 --runtime="$nvme_secs" \
		--output-format=json >"$log.fio" 2>&1 || true
	read -r mbs iops <<<"$(fio_json "$log.fio" 2>"$log.parse")" || true
	if [ -z "${mbs:-}" ]; then
		say "$DRV $FAM run $RUN $w: fail ($(cat "$log.parse"); $log.fio)"
		return 0
	fi
	v=$mbs
	[ "$unit" = IOPS ] && v=$iops
	add_result "$DRV|$FAM|$w|$size" "$v"
	say "$DRV $FAM run $RUN $w $size: $mbs MB/s, $iops IOPS ($((SECONDS - t0)) s)"
}

# nvme_rows ADDR: the NVMe rows on the current family's device, --runs times but at most three
# (each fio run takes some 8 s under TCG: the default bench stays within its time).
nvme_rows() {
	local row
	if nvme_up "$1"; then
		for ((RUN = 1; RUN <= runs && RUN <= 3; RUN++)); do
			for row in "${NVME_ROWS[@]}"; do
				[[ ${row%% *} =~ $rows_re ]] && nvme_row "$row"
			done
		done
	fi
	nvme_down
}
