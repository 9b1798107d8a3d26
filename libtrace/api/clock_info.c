/* <posixtrace/control.h>: which clock a stream's stamps come from, and
 * which one this process's new streams will use (clock.c chooses). */
#include "../internal.h"
#include "../log/logread.h"
#include <posixtrace/control.h>

_Static_assert(POSIXTRACE_CLOCK_TSC == PT_CLOCK_TSC &&
               POSIXTRACE_CLOCK_REALTIME == PT_CLOCK_REALTIME, "public clock ids");

PT_API int posixtrace_stream_clock(trace_id_t trid, int *source, double *ticks_per_ns)
{
    struct pt_handle *h;
    if (source == NULL)
        return EINVAL;
    int rc = pt_get(trid, &h);
    if (rc != 0)
        return rc;
    uint32_t mode;
    double tpn;
    if (h->kind == PT_H_PRERECORDED) {
        pt_logr_clock(h->logr, &mode, &tpn);
    } else { /* the creator's page of the stream: written once, kept private */
        mode = h->shm->clock_mode;
        tpn = h->shm->ticks_per_ns;
    }
    pt_put(h);
    *source = (int)mode;
    if (ticks_per_ns != NULL)
        *ticks_per_ns = tpn;
    return 0;
}

PT_API int posixtrace_clock_choice(int *source, double *ticks_per_ns, const char **why)
{
    uint32_t mode = pt_clock_mode();
    if (source != NULL)
        *source = (int)mode;
    if (ticks_per_ns != NULL)
        *ticks_per_ns = pt_clock_ticks_per_ns();
    if (why != NULL)
        *why = pt_clock_why();
    return 0;
}
