#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# On-demand-paging faults that cannot complete do not wedge the system. A FUSE server that never
# answers a READ (tests/verbs/fuse_stall) serves a file; tests/verbs/verbs_odp_stall kills an
# ibv_advise_mr waiting on it and a long one (4 095 x 1 GiB), stalls an RDMA WRITE from an ODP
# MR over the file and tears everything down while the fault is stuck: each step must return
# promptly. Then, with the fault still stuck: the device is deleted, the module refuses to
# unload (the fault holds it) instead of hanging, no task is blocked uninterruptibly; the server
# is killed (its READs fail), the fault ends and the module unloads. No hung task, no warning.
. "$(dirname "$0")/lib.sh"
srv= mnt= pid=
cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	[ -n "$srv" ] && kill -9 "$srv" 2>/dev/null
	[ -n "$mnt" ] && { umount -l "$mnt" 2>/dev/null; rmdir "$mnt" 2>/dev/null; }
	[ -n "$hung_was" ] && echo "$hung_was" >"$hung"
	cleanup_driver
}
trap cleanup EXIT
need_bin verbs_odp_stall
need_bin fuse_stall
[ -c /dev/fuse ] || skip "no /dev/fuse (CONFIG_FUSE_FS)"
# C rxe faults ODP pages with hmm_range_fault from its QP tasks, holding the owner's mmap lock
# across the FUSE READ: the owner's munmap (librxe's QP destroy) then waits for the server.
is_rrxe || skip "C rxe's ODP faults wait for a stalled FUSE server (see Documentation/security.rst)"
nic_up
modprobe ib_uverbs
check "add $DEV" link_add "$DEV" "$NIC"
check "IPv4 GID" wait_for 20 gid_index "$DEV" "ffff:0a00:020f"
gidx=$(gid_index "$DEV" ffff:0a00:020f)
# Tasks in D state (uninterruptible or killable: ps does not tell them apart).
dstate() { ps -eo pid=,stat=,wchan:32=,comm= 2>/dev/null | awk '$2 ~ /^D/'; }
hung=/proc/sys/kernel/hung_task_timeout_secs
hung_was=
# bounded SECS CMD...: runs CMD in the background; its status, or 124 (left running) after SECS.
bounded() {
	local t=$1 p i
	shift
	"$@" &
	p=$!
	for ((i = 0; i < t * 5; i++)); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 "$p" 2>/dev/null; then
		diag "still running after ${t}s: $* (state $(awk '{print $3}' "/proc/$p/stat"))"
		sed 's/^/#   /' "/proc/$p/stack" 2>/dev/null
		return 124
	fi
	wait "$p"
}
dmesg_mark=$(dmesg | wc -l)
# The hung-task detector (the debug kernel has one) looks every 5 s: a task blocked
# uninterruptibly for the ~30 s below is reported. Killable waits are not.
if [ -w "$hung" ]; then
	hung_was=$(cat "$hung")
	echo 5 >"$hung"
fi

mnt=$(mktemp -d /tmp/odp_stall.XXXXXX)
"$BIN/fuse_stall" "$mnt" 16 >/tmp/odp_stall_fuse 2>&1 &
srv=$!
check "FUSE server mounted" wait_for 10 grep -q '^ready' /tmp/odp_stall_fuse
check "the file is there" wait_for 10 test -f "$mnt/file"

"$BIN/verbs_odp_stall" "$DEV" "$gidx" "$mnt/file" >/tmp/odp_stall_verbs 2>&1 &
pid=$!
# 3 s + 1 s before the kills, 3 s of waiting for the WRITE, the rest is setup and teardown.
wait_for 120 bash -c "! kill -0 $pid 2>/dev/null"
if kill -0 "$pid" 2>/dev/null; then
	cat /tmp/odp_stall_verbs
	diag "verbs_odp_stall is stuck (state $(awk '{print $3}' "/proc/$pid/stat")):"
	sed 's/^/#   /' "/proc/$pid/stack" 2>/dev/null
	fail "verbs_odp_stall did not finish"
fi
wait "$pid"
rc=$?
pid=
grep -v -e '^# ok: open' -e '^# ok: GID' -e '^# ok: PD and CQ' /tmp/odp_stall_verbs
[ $rc -eq 0 ] || fail "verbs_odp_stall: exit $rc"
reads=$(grep -c '^READ' /tmp/odp_stall_fuse)
diag "READs the server left unanswered: $reads"
[ "$reads" -ge 2 ] || fail "the faults did not reach the server"

# The QP's fault is still stuck in the server, holding its registration and the module.
check "delete $DEV while a fault is stuck" bounded 30 link_del "$DEV"
check "$DEV is gone" bash -c "! test -e /sys/class/infiniband/$DEV"
bounded 30 modprobe -r "$MOD" 2>/tmp/odp_stall_rmmod
rc=$?
[ $rc -eq 124 ] && fail "rmmod blocks while a fault is stuck"
[ $rc -ne 0 ] || fail "the module unloaded although a fault was stuck"
diag "rmmod while the fault is stuck: refused ($(head -1 /tmp/odp_stall_rmmod))"
diag "tasks in D state while the fault is stuck (killable waits show as D too):"
dstate | sed 's/^/#   /'
[ -n "$hung_was" ] && sleep 12

kill -9 "$srv"
wait "$srv" 2>/dev/null
srv=
umount -l "$mnt"
rmdir "$mnt"
mnt=
check "the module unloads once the server is gone" wait_for 30 modprobe -r "$MOD"
check "module gone" bash -c "! grep -q '^$MOD ' /proc/modules"
if dmesg | tail -n +"$((dmesg_mark + 1))" |
	grep -E 'blocked for more than|BUG:|WARNING:|Call Trace' >/tmp/odp_stall_dmesg; then
	sed 's/^/#   /' /tmp/odp_stall_dmesg
	fail "kernel log: hung task or warning"
fi
exit 0
