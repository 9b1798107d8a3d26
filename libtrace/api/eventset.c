/* posix_trace_eventset_*: sets of event types (plain bitmaps). */
#include "../internal.h"
#include <string.h>

static int valid_id(trace_event_id_t id)
{
    return id <= PT_ID_MAX;
}

PT_API int posix_trace_eventset_empty(trace_event_set_t *set)
{
    if (set == NULL)
        return EINVAL;
    memset(set, 0, sizeof *set);
    return 0;
}

static void fill_range(trace_event_set_t *set, uint32_t lo, uint32_t hi)
{
    for (uint32_t id = lo; id <= hi; id++)
        set->__bits[id / 64] |= UINT64_C(1) << (id % 64);
}

PT_API int posix_trace_eventset_fill(trace_event_set_t *set, int what)
{
    if (set == NULL)
        return EINVAL;
    switch (what) {
    case POSIX_TRACE_WOPID_EVENTS:
        memset(set, 0, sizeof *set);
        fill_range(set, 0, POSIX_TRACE_ERROR);
        return 0;
    case POSIX_TRACE_SYSTEM_EVENTS:
        memset(set, 0, sizeof *set);
        fill_range(set, 0, PT_SYS_EVENTS - 1);
        fill_range(set, PT_USER_ID_MAX + 1, PT_ID_MAX); /* probes, system calls */
        return 0;
    case POSIX_TRACE_ALL_EVENTS:
        memset(set, 0, sizeof *set);
        fill_range(set, 0, PT_ID_MAX);
        return 0;
    default:
        return EINVAL;
    }
}

PT_API int posix_trace_eventset_add(trace_event_id_t id, trace_event_set_t *set)
{
    if (set == NULL || !valid_id(id))
        return EINVAL;
    set->__bits[id / 64] |= UINT64_C(1) << (id % 64);
    return 0;
}

PT_API int posix_trace_eventset_del(trace_event_id_t id, trace_event_set_t *set)
{
    if (set == NULL || !valid_id(id))
        return EINVAL;
    set->__bits[id / 64] &= ~(UINT64_C(1) << (id % 64));
    return 0;
}

PT_API int posix_trace_eventset_ismember(trace_event_id_t id,
                                         const trace_event_set_t *restrict set,
                                         int *restrict ismember)
{
    if (set == NULL || ismember == NULL || !valid_id(id))
        return EINVAL;
    *ismember = (set->__bits[id / 64] >> (id % 64)) & 1;
    return 0;
}
