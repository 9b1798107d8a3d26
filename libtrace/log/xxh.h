/*
 * XXH3-64, the trace log's checksum (doc/log-format.md) and the hash of the
 * system-call decoder's names (api/syscalls_table.c). xxHash is used in its
 * header-only form, compiled into the library once (xxh.c): no traced
 * process loads libxxhash.so, one more object to map, relocate and search
 * in every symbol lookup (about 5 page faults and 8 system calls at each
 * process start: bench/README.md, "bench_procs").
 */
#ifndef PT_XXH_H
#define PT_XXH_H

#include <stddef.h>
#include <stdint.h>

uint64_t pt_xxh3(const void *p, size_t n);      /* XXH3_64bits(p, n), seed 0 */

/* A streaming state: reset, update with pieces, digest. NULL: no memory. */
struct pt_xxh;
struct pt_xxh *pt_xxh_new(void);
void pt_xxh_free(struct pt_xxh *x);
void pt_xxh_reset(struct pt_xxh *x);
void pt_xxh_update(struct pt_xxh *x, const void *p, size_t n);
uint64_t pt_xxh_digest(const struct pt_xxh *x);

#endif
