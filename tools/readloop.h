/* Reading events with the getnext family (readloop.c). */
#ifndef POSIXTRACE_READLOOP_H
#define POSIXTRACE_READLOOP_H

#include "ptools.h"

/* A pre-recorded stream (log) to its end: 0, or getnext's error. */
int pt_read_all(trace_id_t trid, struct pt_names *n, struct pt_sink *k);
/* An active stream: up to max events, blocking until deadline (CLOCK_REALTIME)
 * for each; 0 after max events, ETIMEDOUT when none came in time, or an error. */
int pt_read_until(trace_id_t trid, struct pt_names *n, struct pt_sink *k,
                  const struct timespec *deadline, int max);
/* An active stream: what is available now (trygetnext). */
int pt_drain(trace_id_t trid, struct pt_names *n, struct pt_sink *k);

#endif
