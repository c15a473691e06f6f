#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A seeded, time-bounded uverbs fuzzer (tests/verbs/verbs_fuzz.c): worker processes, SIGKILLed
# at random points and replaced, create, use and destroy verbs objects with random attributes,
# move QPs through random states, post random work requests, write raw uverbs commands with
# valid, stale and random handles, and scribble on their mapped rings. The kernel must not crash,
# leak or hang (vm-run checks the log); afterwards a SEND still arrives intact and the device
# deletes cleanly and the module unloads.
#
# FUZZ_SEED (default: $RANDOM) and FUZZ_SECONDS (default 30) from the environment. Every worker
# generation's seed is printed; replay one with FUZZ_WORKERS=1 FUZZ_SEED=<that seed> (and
# FUZZ_NOKILL=1 to let it run to the end).
#
# rrxe only by default: C rxe reads the WQEs of user rings unchecked (see verbs_hostile.sh) and
# has known bugs the random operations can reach, and the oracle run must pass. FUZZ_ORACLE=1
# runs it against rdma_rxe anyway, with --rxe-compatible (the scribbler then writes CQ rings
# only, and no receive WR goes through a raw POST_RECV).
. "$(dirname "$0")/lib.sh"
trap cleanup_driver EXIT
is_rrxe || [ -n "${FUZZ_ORACLE:-}" ] || skip "rrxe only (C rxe trusts user rings; FUZZ_ORACLE=1 runs it)"
need_bin verbs_fuzz
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
check "IPv4 GID" wait_for 20 gid_index "$DEV" "ffff:0a00:020f"
seed=${FUZZ_SEED:-$RANDOM}
diag "seed $seed (replay: FUZZ_SEED=$seed)"
is_rrxe || compat=--rxe-compatible
# shellcheck disable=SC2086
"$BIN/verbs_fuzz" "$DEV" "$(gid_index "$DEV" ffff:0a00:020f)" "$seed" "${FUZZ_SECONDS:-30}" \
	${compat:-} || fail "verbs_fuzz (seed $seed)"
# The device is still whole: listed, deleted, gone, and nothing holds the module.
check "rdma link shows $DEV" bash -c "rdma link show | grep -q '$DEV/'"
check "delete $DEV" link_del "$DEV"
check "$DEV gone" wait_for 10 bash -c "! test -e /sys/class/infiniband/$DEV"
check "unload $MOD" wait_for 10 modprobe -r "$MOD"
exit 0
