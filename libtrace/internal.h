/* libposixtrace internals shared between the library's files. */
#ifndef PT_INTERNAL_H
#define PT_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <trace.h>

#include "ring/clock.h"
#include "ring/copy_small.h"
#include "ring/shm_layout.h"
#include "ring/pt_sizes.h"

#define PT_API __attribute__((visibility("default")))
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define PT_ATTR_MAGIC 0x50544154u /* "PTAT" */
#define PT_VERSION_STRING "posixtrace 0.1"

/* Attribute defaults and bounds (doc/semantics.md). */
#define PT_DEF_STREAM_SIZE  ((size_t)1 << 20)
#define PT_MAX_STREAM_SIZE  ((size_t)1 << 30)
#define PT_DEF_MAX_DATA     ((size_t)256)
#define PT_MAX_MAX_DATA     ((size_t)PT_MAX_MAX_DATA_SIZE)
#define PT_DEF_LOG_SIZE     ((size_t)16 << 20)
#define PT_BLOCK_MAX_NS     UINT64_C(10000000000) /* blocking writers wait at most 10 s */
/* System events' data (pt_sizes.h): FILTER's old + new sets, the shim's
 * events; 1024 bytes keep 4 KiB chunks (shm.c). */
#define PT_SYS_DATA_MAX     ((size_t)PT_SYS_DATA_BYTES)
_Static_assert(2 * sizeof(trace_event_set_t) == PT_FILTER_DATA_BYTES,
               "FILTER carries two event sets");
/* Per-event budget (recfmt.h), its data aside (padded to 4): the most an
 * event can write, an ANCHOR it may need, then a CLASS record and a compact
 * event with its length, or an EVENT record. */
#define PT_EVENT_OVERHEAD   (PT_ANCHOR_BYTES + PT_CLASS_BYTES + 8u)
_Static_assert(PT_CLASS_BYTES + 8u >= PT_FULL_HDR, "the budget covers an EVENT record");
#define PT_ATTR_POLICY_SET  1u /* __flags: stream policy set explicitly */

/* The blocking timeout of attributes a, in ns (0: off); more than
 * PT_BLOCK_MAX_NS: not one (posixtrace_attr_setblocking refuses it). */
static inline uint64_t pt_attr_block_ns(const trace_attr_t *a)
{
    if (a->__block_sec < 0 || a->__block_nsec < 0 || a->__block_nsec >= 1000000000)
        return UINT64_MAX;
    return (uint64_t)a->__block_sec * 1000000000u + (uint64_t)a->__block_nsec;
}

static inline uint32_t pt_round8(size_t n) { return (uint32_t)((n + 7) & ~(size_t)7); }

/* Limits of this process (proc/proc.h). */
#define PT_MAX_ATTACH  TRACE_SYS_MAX /* streams one process records into at once */
#define PT_MAX_THREADS 1024u /* threads recording at once */

/* ---- futex ---- */
int pt_futex_wait(_Atomic uint32_t *addr, uint32_t val, const struct timespec *abs_realtime);
int pt_futex_wake(_Atomic uint32_t *addr, int n);

/* The subsystems, each with its header stating its invariants, in the
 * order their declarations need each other (doc/design.md "Source map"). */
#include "ring/ring.h"      /* a stream's shared memory, recording, reading */
#include "proc/proc.h"      /* this process as a traced process */
#include "xproc/xproc.h"    /* other processes: inbox, discovery, remote */
#include "ring/consume.h"   /* the consumer of a slot's chain */
#include "api/api.h"        /* handles, names, the standard's functions */
#include "log/log.h"        /* the Trace Log option */

#endif
