/* posix_trace_attr_*: the trace stream attributes object.
 * Defaults and bounds: doc/semantics.md. */
#include "../internal.h"
#include <posixtrace/control.h>
#include <string.h>

static int valid(const trace_attr_t *a)
{
    return a != NULL && a->__magic == PT_ATTR_MAGIC;
}

PT_API int posix_trace_attr_init(trace_attr_t *a)
{
    if (a == NULL)
        return EINVAL;
    memset(a, 0, sizeof *a);
    a->__magic = PT_ATTR_MAGIC;
    clock_getres(CLOCK_REALTIME, &a->__clock_res);
    a->__stream_size = PT_DEF_STREAM_SIZE;
    a->__max_data_size = PT_DEF_MAX_DATA;
    a->__log_size = PT_DEF_LOG_SIZE;
    a->__stream_policy = POSIX_TRACE_LOOP;
    a->__log_policy = POSIX_TRACE_LOOP;
    a->__inheritance = POSIX_TRACE_CLOSE_FOR_CHILD;
    return 0;
}

PT_API int posix_trace_attr_destroy(trace_attr_t *a)
{
    if (!valid(a))
        return EINVAL;
    a->__magic = 0;
    return 0;
}

PT_API int posix_trace_attr_getclockres(const trace_attr_t *a, struct timespec *r)
{
    if (!valid(a) || r == NULL)
        return EINVAL;
    *r = a->__clock_res;
    return 0;
}

PT_API int posix_trace_attr_getcreatetime(const trace_attr_t *a, struct timespec *t)
{
    if (!valid(a) || t == NULL)
        return EINVAL;
    *t = a->__create_time;
    return 0;
}

PT_API int posix_trace_attr_getgenversion(const trace_attr_t *a, char *v)
{
    if (!valid(a) || v == NULL)
        return EINVAL;
    strcpy(v, PT_VERSION_STRING);
    return 0;
}

PT_API int posix_trace_attr_getname(const trace_attr_t *a, char *name)
{
    if (!valid(a) || name == NULL)
        return EINVAL;
    memcpy(name, a->__name, strnlen(a->__name, TRACE_NAME_MAX - 1));
    name[strnlen(a->__name, TRACE_NAME_MAX - 1)] = '\0';
    return 0;
}

PT_API int posix_trace_attr_setname(trace_attr_t *a, const char *name)
{
    if (!valid(a) || name == NULL)
        return EINVAL;
    size_t n = strnlen(name, TRACE_NAME_MAX - 1);
    memcpy(a->__name, name, n);
    a->__name[n] = '\0';
    return 0;
}

PT_API int posix_trace_attr_getinherited(const trace_attr_t *restrict a, int *restrict p)
{
    if (!valid(a) || p == NULL)
        return EINVAL;
    *p = a->__inheritance;
    return 0;
}

PT_API int posix_trace_attr_setinherited(trace_attr_t *a, int p)
{
    if (!valid(a) || (p != POSIX_TRACE_CLOSE_FOR_CHILD && p != POSIX_TRACE_INHERITED))
        return EINVAL;
    a->__inheritance = p;
    return 0;
}

PT_API int posix_trace_attr_getlogfullpolicy(const trace_attr_t *restrict a, int *restrict p)
{
    if (!valid(a) || p == NULL)
        return EINVAL;
    *p = a->__log_policy;
    return 0;
}

PT_API int posix_trace_attr_setlogfullpolicy(trace_attr_t *a, int p)
{
    if (!valid(a) ||
        (p != POSIX_TRACE_LOOP && p != POSIX_TRACE_UNTIL_FULL && p != POSIX_TRACE_APPEND))
        return EINVAL;
    a->__log_policy = p;
    return 0;
}

PT_API int posix_trace_attr_getstreamfullpolicy(const trace_attr_t *restrict a,
                                                int *restrict p)
{
    if (!valid(a) || p == NULL)
        return EINVAL;
    *p = a->__stream_policy;
    return 0;
}

PT_API int posix_trace_attr_setstreamfullpolicy(trace_attr_t *a, int p)
{
    if (!valid(a) ||
        (p != POSIX_TRACE_LOOP && p != POSIX_TRACE_UNTIL_FULL && p != POSIX_TRACE_FLUSH))
        return EINVAL;
    a->__stream_policy = p;
    a->__flags |= PT_ATTR_POLICY_SET;
    return 0;
}

PT_API int posix_trace_attr_getlogsize(const trace_attr_t *restrict a, size_t *restrict n)
{
    if (!valid(a) || n == NULL)
        return EINVAL;
    *n = a->__log_size;
    return 0;
}

PT_API int posix_trace_attr_setlogsize(trace_attr_t *a, size_t n)
{
    if (!valid(a) || n == 0)
        return EINVAL;
    a->__log_size = n;
    return 0;
}

PT_API int posix_trace_attr_getmaxdatasize(const trace_attr_t *restrict a, size_t *restrict n)
{
    if (!valid(a) || n == NULL)
        return EINVAL;
    *n = a->__max_data_size;
    return 0;
}

PT_API int posix_trace_attr_setmaxdatasize(trace_attr_t *a, size_t n)
{
    if (!valid(a) || n > PT_MAX_MAX_DATA)
        return EINVAL;
    a->__max_data_size = n;
    return 0;
}

PT_API int posix_trace_attr_getstreamsize(const trace_attr_t *restrict a, size_t *restrict n)
{
    if (!valid(a) || n == NULL)
        return EINVAL;
    *n = a->__stream_size;
    return 0;
}

PT_API int posix_trace_attr_setstreamsize(trace_attr_t *a, size_t n)
{
    if (!valid(a) || n == 0 || n > PT_MAX_STREAM_SIZE)
        return EINVAL;
    a->__stream_size = n;
    return 0;
}

PT_API int posix_trace_attr_getmaxusereventsize(const trace_attr_t *restrict a, size_t len,
                                                size_t *restrict n)
{
    if (!valid(a) || n == NULL)
        return EINVAL;
    size_t d = len < a->__max_data_size ? len : a->__max_data_size;
    *n = PT_EVENT_OVERHEAD + pt_round4((uint32_t)d);
    return 0;
}

PT_API int posix_trace_attr_getmaxsystemeventsize(const trace_attr_t *restrict a,
                                                  size_t *restrict n)
{
    if (!valid(a) || n == NULL)
        return EINVAL;
    *n = PT_EVENT_OVERHEAD + PT_SYS_DATA_MAX;
    return 0;
}

/* <posixtrace/control.h>: blocking writers (doc/semantics.md). */
PT_API int posixtrace_attr_setblocking(trace_attr_t *a, const struct timespec *timeout)
{
    if (!valid(a))
        return EINVAL;
    if (timeout == NULL) {
        a->__block_sec = a->__block_nsec = 0;
        return 0;
    }
    if (timeout->tv_sec < 0 || timeout->tv_nsec < 0 || timeout->tv_nsec >= 1000000000 ||
        (timeout->tv_sec == 0 && timeout->tv_nsec == 0) ||
        (uint64_t)timeout->tv_sec > PT_BLOCK_MAX_NS / 1000000000u ||
        (uint64_t)timeout->tv_sec * 1000000000u + (uint64_t)timeout->tv_nsec > PT_BLOCK_MAX_NS)
        return EINVAL;
    a->__block_sec = (int)timeout->tv_sec;
    a->__block_nsec = (int)timeout->tv_nsec;
    return 0;
}

PT_API int posixtrace_attr_getblocking(const trace_attr_t *a, struct timespec *timeout)
{
    if (!valid(a) || timeout == NULL)
        return EINVAL;
    timeout->tv_sec = a->__block_sec;
    timeout->tv_nsec = a->__block_nsec;
    return 0;
}

/* <posixtrace/control.h>: the bounds it publishes are the ones above. */
_Static_assert(POSIXTRACE_STREAM_SIZE_MAX == PT_MAX_STREAM_SIZE, "stream size bound");
_Static_assert(POSIXTRACE_MAX_DATA_SIZE_MAX == PT_MAX_MAX_DATA, "max data size bound");
_Static_assert((uint64_t)POSIXTRACE_BLOCK_TIMEOUT_MAX_MS * 1000000u == PT_BLOCK_MAX_NS,
               "blocking timeout bound");
