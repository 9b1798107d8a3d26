/*
 * bench/bench_lttng_tp.h - the LTTng-UST tracepoint bench_lttng compares
 * posix_trace_event with: the same 16-byte payload as bench_event's (two
 * 64-bit integers, a sequence number and a tag).
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER posixtrace_bench
#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "bench_lttng_tp.h"

#if !defined(PT_BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define PT_BENCH_LTTNG_TP_H
#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(posixtrace_bench, event16,
    LTTNG_UST_TP_ARGS(uint64_t, seq, uint64_t, tag),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, seq, seq)
        lttng_ust_field_integer(uint64_t, tag, tag)))
#endif

#include <lttng/tracepoint-event.h>
