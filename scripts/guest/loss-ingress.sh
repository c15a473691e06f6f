# SPDX-License-Identifier: GPL-2.0
#
# Sourced by scripts/guest/nvmeof-host and nvmeof-target: random loss of single packets on what
# a guest's NIC receives, for the NVMe-oF loss fault.
#
# loss_set NIC P: P % of the packets NIC receives are dropped (P a divisor of 100; 0 removes
# the loss): a gact drop at the NIC's ingress, each packet with a chance of 1 in 100/P. Not
# netem on the sender's root qdisc: that sits before UDP GSO segmentation and drops a whole
# train of up to 16 of rrxe's packets at once (C rxe sends no trains), so "5 %" there is 5 % of
# rrxe's trains, an easier loss than C rxe meets. Here both drivers lose the same packets.
loss_set() {
	local nic=$1 p=$2
	tc qdisc del dev "$nic" ingress 2>/dev/null
	[ "$p" = 0 ] && return 0
	[ $((100 % p)) = 0 ] || return 1
	tc qdisc add dev "$nic" ingress &&
		tc filter add dev "$nic" parent ffff: matchall \
			action gact pass random netrand drop $((100 / p))
}

# loss_dropped NIC: how many packets loss_set's drop took since it was set.
loss_dropped() {
	tc -s filter show dev "$1" ingress 2>/dev/null | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' | head -n1
}
