# SPDX-License-Identifier: GPL-2.0
#
# scripts/guest/stuck-tasks.sh    (sourced by the NVMe-oF scripts in the interop guests)
#
# stuck_tasks: every task in uninterruptible sleep (state D) with the first lines of its kernel
# stack, through the caller's say(). The test kernels have no hung-task detector (nor sysrq), so
# this is how a case that cannot end says where the kernel holds it.
stuck_tasks() {
	local p line
	for p in /proc/[0-9]*; do
		grep -q '^State:.*D' "$p/status" 2>/dev/null || continue
		say "D state: ${p#/proc/} $(cat "$p/comm" 2>/dev/null)"
		head -n 12 "$p/stack" 2>/dev/null | while read -r line; do say "  $line"; done
	done
}
