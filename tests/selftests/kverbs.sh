#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Kernel verbs as ULPs use them (tests/kverbs/rrxe_kverbs_test.c): PD with the DMA lkey, CQs
# polled directly and from softirq, QP states, posting and flushing in ERR, ib_drain_qp, SRQs,
# the move to ERR racing SENDs, READs and atomics of kernel QPs (err_race).
# ERR_ROUNDS (environment) sets err_race's rounds (default 40, random seed when set: make soak).
# Prints "kverbs: N passed, N failed" for the summary of `make check`.
. "$(dirname "$0")/lib.sh"
trap 'modprobe -r rrxe_kverbs_test 2>/dev/null; cleanup_driver' EXIT
modinfo rrxe_kverbs_test >/dev/null 2>&1 || skip "rrxe_kverbs_test.ko not built"
nic_up
check "add $DEV" link_add "$DEV" "$NIC"
dmesg -C
# rrxe is stricter than the C rxe in a few places (see the module); the oracle skips those.
is_rrxe || strict=strict=0
[ -n "${ERR_ROUNDS:-}" ] && err="err_rounds=$ERR_ROUNDS err_seed=$(( (RANDOM << 15) | RANDOM ))"
# shellcheck disable=SC2086
check "run the kernel verbs test" modprobe rrxe_kverbs_test dev="$DEV" ${strict:-} ${err:-}
modprobe -r rrxe_kverbs_test
dmesg | grep "kverbs:" | sed 's/^\[[^]]*\] /# /'
line=$(dmesg | grep -E "kverbs: [0-9]+ passed, [0-9]+ failed" | tail -n1)
[ -n "$line" ] || fail "no result line"
echo "# ${line#*] }"
echo "$line" | grep -q " 0 failed" || fail "kernel verbs checks failed"
exit 0
