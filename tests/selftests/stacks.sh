#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The communication stacks that run on verbs, as Debian packages them, across a veth pair
# between two devices (server here, client in a namespace): UCX's ucx_perftest (tag_lat,
# tag_bw, ucp_put_bw and ucp_get over rc_verbs with ud_verbs, and tag_lat and tag_bw over
# ud_verbs alone) and libfabric's fi_pingpong (the verbs provider's msg endpoint, and ofi_rxm's
# rdm endpoint over it, with data checks). Runs against C rdma_rxe as well (the oracle).
#
# Two settings work around the stacks' own limits, on both drivers (Documentation/ulps.rst):
#  - UCX_UD_VERBS_ETH_DGID_CHECK=n: UCX 1.11-1.18 drops a non-mlx5 device's IPv4 RoCEv2 UD
#    packets (its destination GID check reads the completion's SL as mlx5 fills it; fixed in
#    UCX 1.19), and its UD and RC endpoints then time out;
#  - FI_UNIVERSE_SIZE=64: libfabric 1.17's ofi_rxm opens a CQ of 256 entries per peer of a
#    1024-peer universe at fi_enable, above a soft-RoCE device's max_cqe (EINVAL).
. "$(dirname "$0")/lib.sh"
NS=rrstk SIF=vst0 CIF=vst1
SRV=192.168.83.1 CLI=192.168.83.2
SD=${DEV}s CD=${DEV}c
trap 'kill $srv 2>/dev/null; veth_wire_down >/dev/null 2>&1; cleanup_driver' EXIT
command -v ucx_perftest >/dev/null || skip "no ucx_perftest (ucx-utils)"
command -v fi_pingpong >/dev/null || skip "no fi_pingpong (libfabric-bin)"
nic_up
modprobe ib_uverbs
veth_wire
port=13400
failed=0

# ucx TLS TEST: one ucx_perftest run; prints its "Final:" figures.
ucx() {
	local tls=$1 t=$2 rc src
	port=$((port + 1))
	env UCX_NET_DEVICES="$SD:1" UCX_TLS="$tls" UCX_UD_VERBS_ETH_DGID_CHECK=n \
		timeout 60 ucx_perftest -p $port >/tmp/stk_srv 2>&1 &
	srv=$!
	wait_for 30 listening $port
	ip netns exec $NS env UCX_NET_DEVICES="$CD:1" UCX_TLS="$tls" UCX_UD_VERBS_ETH_DGID_CHECK=n \
		timeout 50 ucx_perftest "$SRV" -p $port -t "$t" -n 2000 >/tmp/stk_cli 2>&1
	rc=$?
	wait $srv
	src=$?
	# "Final: iterations typical avg overall (usec) bw-avg bw-overall (MB/s) rate-avg
	# rate-overall (msg/s)"
	local fin
	fin=$(awk '$1 == "Final:" { print "latency", $4, "us, bandwidth", $7, "MB/s,", $9, "msg/s" }' \
		/tmp/stk_cli)
	if [ $rc -ne 0 ] || [ $src -ne 0 ] || [ -z "$fin" ]; then
		grep -v -E '^[ +|-]*$' /tmp/stk_cli | tail -4 | sed "s/^/# ucx $t client: /"
		grep -v -E '^[ +|-]*$' /tmp/stk_srv | tail -4 | sed "s/^/# ucx $t server: /"
		diag "FAIL: ucx_perftest -t $t over $tls: client $rc, server $src"
		failed=$((failed + 1))
		return
	fi
	diag "ucx_perftest -t $t over $tls: $fin"
}

# fab EP [ENV...]: fi_pingpong of 200 1 KiB messages with data checks.
fab() {
	local ep=$1 prov rc src
	shift
	prov=verbs
	[ "$ep" = rdm ] && prov='verbs;ofi_rxm'
	port=$((port + 1))
	env "$@" timeout 60 fi_pingpong -p "$prov" -e "$ep" -d "$SD" -B $port -I 200 -S 1024 -c \
		>/tmp/stk_srv 2>&1 &
	srv=$!
	wait_for 30 listening $port
	ip netns exec $NS env "$@" timeout 50 fi_pingpong -p "$prov" -e "$ep" -d "$CD" -P $port \
		-I 200 -S 1024 -c "$SRV" >/tmp/stk_cli 2>&1
	rc=$?
	wait $srv
	src=$?
	local fin
	fin=$(awk '$1 == "1k" && $2 == 200 { print $7, "us per transfer,", $6, "MB/s" }' /tmp/stk_cli)
	if [ $rc -ne 0 ] || [ $src -ne 0 ] || [ -z "$fin" ]; then
		tail -4 /tmp/stk_cli | sed "s/^/# fi_pingpong $ep client: /"
		tail -4 /tmp/stk_srv | sed "s/^/# fi_pingpong $ep server: /"
		diag "FAIL: fi_pingpong -p '$prov' -e $ep: client $rc, server $src"
		failed=$((failed + 1))
		return
	fi
	diag "fi_pingpong -p '$prov' -e $ep -c, 200 x 1 KiB: $fin"
}

for t in tag_lat tag_bw ucp_put_bw ucp_get; do
	ucx rc_v,ud_v,self $t
done
for t in tag_lat tag_bw; do
	ucx ud_v,self $t
done
fab msg
fab rdm FI_UNIVERSE_SIZE=64
[ $failed -eq 0 ] || fail "$failed stack runs failed"
exit 0
