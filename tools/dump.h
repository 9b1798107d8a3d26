/* posixtrace-dump: the trace analyzer (dump_*.c). */
#ifndef POSIXTRACE_DUMP_H
#define POSIXTRACE_DUMP_H

#include "ptools.h"

/* --info: what a log says about itself (dump_info.c). */
void dump_info(FILE *fp, const char *path, trace_id_t trid);
/* Damage of an opened log: 0 if none is known, else writes a message
 * (where reading stopped) and returns 1 (dump_damage.c). */
int dump_damage(const char *path, int fd, trace_id_t trid, const struct pt_sink *k,
                uint64_t events_before);
/* Blocks missing from an opened log (a message, returns 1), and a warning
 * (returns 0) when it does not end with its writer's final status: it was
 * not closed (dump_damage.c). */
int dump_missing(const char *path, trace_id_t trid);
/* A log that records it is incomplete (its status has a flush error: a
 * write failed and events were lost with it): writes a message, returns 1
 * (dump_damage.c). */
int dump_incomplete(const char *path, trace_id_t trid);

#endif
