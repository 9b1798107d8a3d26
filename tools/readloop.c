/*
 * Reading events with the getnext family into a sink.
 */
#include "ptools.h"
#include "readloop.h"

#include <errno.h>

static unsigned char buf[PT_DATA_MAX];

int pt_read_all(trace_id_t trid, struct pt_names *n, struct pt_sink *k)
{
    struct posix_trace_event_info info;
    size_t len;
    int unavailable = 0;
    for (;;) {
        int rc = posix_trace_getnext_event(trid, &info, buf, sizeof buf, &len, &unavailable);
        if (rc != 0)
            return rc;
        if (unavailable)
            return 0;
        pt_sink_event(k, n, &info, buf, len);
    }
}

int pt_read_until(trace_id_t trid, struct pt_names *n, struct pt_sink *k,
                  const struct timespec *deadline, int max)
{
    struct posix_trace_event_info info;
    size_t len;
    int unavailable = 0;
    for (int i = 0; i < max; i++) {
        int rc = posix_trace_timedgetnext_event(trid, &info, buf, sizeof buf, &len, &unavailable,
                                                deadline);
        if (rc != 0)
            return rc;
        if (unavailable)
            return ETIMEDOUT;
        pt_sink_event(k, n, &info, buf, len);
    }
    return 0;
}

int pt_drain(trace_id_t trid, struct pt_names *n, struct pt_sink *k)
{
    struct posix_trace_event_info info;
    size_t len;
    int unavailable = 0;
    for (;;) {
        int rc = posix_trace_trygetnext_event(trid, &info, buf, sizeof buf, &len, &unavailable);
        if (rc != 0)
            return rc;
        if (unavailable)
            return 0;
        pt_sink_event(k, n, &info, buf, len);
    }
}
