// SPDX-License-Identifier: GPL-2.0
/*
 * The rrxe tracepoints (rrxe_trace.h) and the one-line forwarder Rust calls them through.
 */
#define CREATE_TRACE_POINTS
#include "rrxe_trace.h"
#include "helpers.h"

void rrxe_helper_trace_drop(const char *dev, u32 qpn, u32 psn, u8 opcode, const char *reason)
{
	trace_rrxe_drop(dev, qpn, psn, opcode, reason);
}
