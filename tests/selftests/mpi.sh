#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# An MPI job over UCX: Open MPI (Debian's 4.1) starts two ranks of mpi_pingpong (tests/verbs),
# rank 0 in the initial network namespace on the device of vmp0 (192.168.84.1), rank 1 in the
# namespace rrmpi on the device of vmp1 (192.168.84.2): mpirun reaches the namespace through
# its rsh launcher, an agent that is `ip netns exec`, and its daemon calls back across the veth.
# The ranks talk through the UCX PML over rc_verbs and ud_verbs only (UCX_TLS: no shared memory,
# though both ranks are on one machine), each on its own device (UCX_NET_DEVICES, set per rank
# by a wrapper), with UCX_UD_VERBS_ETH_DGID_CHECK=n as for ucx_perftest (stacks.sh, ulps.rst).
#
# mpi_pingpong checks every byte of a ping-pong of 1 B to 4 MiB, measures the latency of 8 B and
# the bandwidth of windows of 1 MiB sends, and checks an MPI_Allreduce and an MPI_Bcast; the
# job must end with "mpi: ok", and both devices must have carried the data (a packet per 2 KiB
# of the ping-pong's bytes, each way).
. "$(dirname "$0")/lib.sh"
NS=rrmpi SIF=vmp0 CIF=vmp1
SRV=192.168.84.1 CLI=192.168.84.2
SD=${DEV}s CD=${DEV}c
T=$(mktemp -d /tmp/mpi.XXXXXX)
# A rank or daemon left in the namespace (mpirun timed out) would keep its device open.
trap 'ip netns pids $NS 2>/dev/null | xargs -r kill -9; rm -rf "$T"
	veth_wire_down >/dev/null 2>&1; cleanup_driver' EXIT
command -v mpirun >/dev/null || skip "no mpirun (openmpi-bin)"
need_bin mpi_pingpong
cnt() { cat "/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null || echo 0; }
nic_up
modprobe ib_uverbs
veth_wire

# The launcher's agent: "AGENT HOST COMMAND..." runs the shell command COMMAND (a string, as
# for ssh) in the namespace HOST.
cat >"$T/nsexec" <<'EOF'
#!/bin/sh
ns=$1
shift
exec ip netns exec "$ns" sh -c "$*"
EOF
# Each rank on its own device.
cat >"$T/rank" <<EOF
#!/bin/sh
if [ "\$OMPI_COMM_WORLD_RANK" = 0 ]; then dev=$SD; else dev=$CD; fi
export UCX_NET_DEVICES=\$dev:1 UCX_TLS=rc_v,ud_v,self UCX_UD_VERBS_ETH_DGID_CHECK=n
exec "\$@"
EOF
chmod +x "$T/nsexec" "$T/rank"
# The ranks' hosts: this namespace (the name mpirun sees as local) and the other.
here=$(hostname)
s0=$(cnt "$SD" sent_pkts) r0=$(cnt "$SD" rcvd_pkts)
timeout 240 mpirun --allow-run-as-root --oversubscribe -np 2 --host "$here,$NS" \
	--mca plm_rsh_agent "$T/nsexec" --mca plm_rsh_no_tree_spawn 1 \
	--mca oob_tcp_if_include 192.168.84.0/24 --mca btl self,tcp \
	--mca btl_tcp_if_include 192.168.84.0/24 --mca pml ucx --mca osc ucx \
	--mca orte_tmpdir_base "$T" \
	"$T/rank" "$BIN/mpi_pingpong" >"$T/out" 2>&1
rc=$?
s1=$(cnt "$SD" sent_pkts) r1=$(cnt "$SD" rcvd_pkts)
grep '^mpi:' "$T/out" | sed 's/^/# /'
if [ $rc -ne 0 ] || ! grep -q '^mpi: ok' "$T/out"; then
	grep -v '^mpi:' "$T/out" | tail -25 | sed 's/^/# mpirun: /'
	fail "the MPI job failed (exit $rc)"
fi
# The ping-pong alone moves about 2 x 4 x 5.6 MiB each way.
min=$(((20 << 20) / 2048))
[ $((s1 - s0)) -ge $min ] && [ $((r1 - r0)) -ge $min ] ||
	fail "$SD sent $((s1 - s0)) and received $((r1 - r0)) packets (< $min each): not over RDMA"
diag "$SD: sent_pkts +$((s1 - s0)), rcvd_pkts +$((r1 - r0))"
exit 0
