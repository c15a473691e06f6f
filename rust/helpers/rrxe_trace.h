/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rrxe tracepoints: every packet the pipeline drops, with its reason.
 *   echo 1 > /sys/kernel/tracing/events/rrxe/rrxe_drop/enable
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rrxe

#if !defined(_RRXE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RRXE_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(rrxe_drop,
	TP_PROTO(const char *dev, u32 qpn, u32 psn, u8 opcode, const char *reason),
	TP_ARGS(dev, qpn, psn, opcode, reason),
	TP_STRUCT__entry(
		__string(dev, dev)
		__field(u32, qpn)
		__field(u32, psn)
		__field(u8, opcode)
		__string(reason, reason)
	),
	TP_fast_assign(
		__assign_str(dev);
		__entry->qpn = qpn;
		__entry->psn = psn;
		__entry->opcode = opcode;
		__assign_str(reason);
	),
	TP_printk("%s qpn=%#x psn=%#x opcode=%#x reason=%s", __get_str(dev), __entry->qpn,
		  __entry->psn, __entry->opcode, __get_str(reason))
);

#endif /* _RRXE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rrxe_trace
#include <trace/define_trace.h>
