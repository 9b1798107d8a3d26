/* XXH3-64 from xxHash's header, compiled here once (xxh.h). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "xxh.h"

uint64_t pt_xxh3(const void *p, size_t n)
{
    return XXH3_64bits(p, n);
}

struct pt_xxh *pt_xxh_new(void)
{
    return (struct pt_xxh *)XXH3_createState();
}

void pt_xxh_free(struct pt_xxh *x)
{
    XXH3_freeState((XXH3_state_t *)x);
}

void pt_xxh_reset(struct pt_xxh *x)
{
    (void)XXH3_64bits_reset((XXH3_state_t *)x);
}

void pt_xxh_update(struct pt_xxh *x, const void *p, size_t n)
{
    (void)XXH3_64bits_update((XXH3_state_t *)x, p, n);
}

uint64_t pt_xxh_digest(const struct pt_xxh *x)
{
    return XXH3_64bits_digest((const XXH3_state_t *)x);
}
