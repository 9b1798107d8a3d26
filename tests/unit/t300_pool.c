/*
 * t300_pool: libtrace's free-chunk pool (libtrace/ring/pool.c) called directly: a
 * lock-free LIFO of chunk indices whose top word carries a tag against ABA,
 * and a bump counter for chunks never used. Cases: fresh chunks in order,
 * LIFO order, exhaustion, the tag bumped by every push and pop (and a stale
 * compare-and-swap failing after pop, pop, push of the same chunk), a
 * corrupt top, the cap's refund, and threads popping and pushing at once
 * (no chunk ever held twice, none lost). Prints one line per case and a
 * summary; exits 1 if a check failed.
 */
#include "unit.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "internal.h" /* libtrace's (-I libtrace: tests/unit/local.mk) */
#include "unit_shm.h"

static uint32_t top_tag(struct pt_shm *s)
{
    return (uint32_t)(atomic_load(&s->pool_top) >> 32);
}

static uint32_t top_idx(struct pt_shm *s)
{
    return (uint32_t)atomic_load(&s->pool_top);
}

/* Chunks never used come out in index order, each once, then none. */
static void fresh_in_order(void)
{
    struct pt_shm *s = ut_shm_new(16, 256);
    UT_EQ(atomic_load(&s->free_count), 16);
    for (uint32_t i = 0; i < 16; i++) {
        UT_EQ(pt_pool_pop(s), i);
        UT_EQ(atomic_load(&s->free_count), 15 - i);
    }
    UT_EQ(pt_pool_pop(s), PT_NONE);
    UT_EQ(atomic_load(&s->fresh_next), 16);
    UT_EQ(top_idx(s), PT_NONE);
    ut_shm_free(s);
}

/* Pushed chunks come back last in, first out, before any fresh one; each
 * links to the top it replaced. */
static void lifo(void)
{
    struct pt_shm *s = ut_shm_new(16, 256);
    UT_EQ(pt_pool_pop(s), 0);
    UT_EQ(pt_pool_pop(s), 1);
    UT_EQ(pt_pool_pop(s), 2);
    pt_pool_push(s, 1);
    pt_pool_push(s, 2);
    UT_EQ(top_idx(s), 2);
    UT_EQ(atomic_load(&pt_chunk(s, 2)->next_free), 1);
    UT_EQ(atomic_load(&pt_chunk(s, 1)->next_free), PT_NONE);
    UT_EQ(atomic_load(&s->free_count), 15);
    UT_EQ(pt_pool_pop(s), 2);
    UT_EQ(pt_pool_pop(s), 1);
    UT_EQ(pt_pool_pop(s), 3); /* the stack is empty: a fresh one */
    UT_EQ(atomic_load(&s->free_count), 12);
    ut_shm_free(s);
}

/* With every chunk taken the pool is empty until one comes back. */
static void exhaustion(void)
{
    struct pt_shm *s = ut_shm_new(4, 256);
    for (uint32_t i = 0; i < 4; i++)
        UT_EQ(pt_pool_pop(s), i);
    UT_EQ(pt_pool_pop(s), PT_NONE);
    UT_EQ(pt_pool_pop(s), PT_NONE);
    UT_EQ(atomic_load(&s->free_count), 0);
    pt_pool_push(s, 2);
    UT_EQ(atomic_load(&s->free_count), 1);
    UT_EQ(pt_pool_pop(s), 2);
    UT_EQ(pt_pool_pop(s), PT_NONE);
    UT_EQ(atomic_load(&s->fresh_next), 4);
    ut_shm_free(s);
}

/* Every push and every pop from the stack adds one to the tag. A popper
 * that read top (tag t, chunk A) and A's next_free (B), then stalled while
 * others popped A, popped B and pushed A back, must not install B (taken) as
 * the top: the top word differs from what it read although the chunk is A
 * again, so its compare-and-swap fails. */
static void aba_tag(void)
{
    struct pt_shm *s = ut_shm_new(8, 256);
    uint32_t t0 = top_tag(s);
    UT_EQ(pt_pool_pop(s), 0); /* fresh: the stack's word is not touched */
    UT_EQ(pt_pool_pop(s), 1);
    UT_EQ(top_tag(s), t0);
    pt_pool_push(s, 1);
    UT_EQ(top_tag(s), t0 + 1);
    pt_pool_push(s, 0);
    UT_EQ(top_tag(s), t0 + 2);
    uint64_t stale = atomic_load(&s->pool_top); /* (t0+2, chunk 0), next_free 1 */
    uint32_t stale_next = atomic_load(&pt_chunk(s, 0)->next_free);
    UT_EQ((uint32_t)stale, 0);
    UT_EQ(stale_next, 1);
    UT_EQ(pt_pool_pop(s), 0);
    UT_EQ(top_tag(s), t0 + 3);
    UT_EQ(pt_pool_pop(s), 1); /* chunk 1 is now held */
    UT_EQ(top_tag(s), t0 + 4);
    pt_pool_push(s, 0);
    UT_EQ(top_tag(s), t0 + 5);
    UT_EQ(top_idx(s), 0);
    UT_CHECK(atomic_load(&s->pool_top) != stale);
    uint64_t expect = stale;
    bool won = atomic_compare_exchange_strong(&s->pool_top, &expect,
                                              (((stale >> 32) + 1) << 32) | stale_next);
    UT_CHECK(!won);
    UT_EQ(pt_pool_pop(s), 0);
    UT_EQ(pt_pool_pop(s), 2); /* not 1: the held chunk never comes out again */
    ut_shm_free(s);
}

/* A top naming no chunk of the stream (memory anyone may write) is an empty
 * pool, never an index out of range. */
static void corrupt_top(void)
{
    struct pt_shm *s = ut_shm_new(8, 256);
    atomic_store(&s->pool_top, ((uint64_t)7 << 32) | 8);
    UT_EQ(pt_pool_pop(s), PT_NONE);
    atomic_store(&s->pool_top, ((uint64_t)7 << 32) | 0x7fffffff);
    UT_EQ(pt_pool_pop(s), PT_NONE);
    ut_shm_free(s);
}

/* A closed chunk (its next set) gives its written bytes back to the cap
 * when pushed; an open one (an orphan's) was never charged. */
static void refund(void)
{
    struct pt_shm *s = ut_shm_new(8, 256);
    for (int i = 0; i < 3; i++)
        pt_pool_pop(s);
    atomic_store(&s->used, 1000);
    atomic_store(&pt_chunk(s, 0)->next, 5);
    atomic_store(&pt_chunk(s, 0)->end, 300);
    pt_pool_push(s, 0);
    UT_EQ(atomic_load(&s->used), 700);
    atomic_store(&pt_chunk(s, 1)->end, 200); /* next is PT_NONE: open */
    pt_pool_push(s, 1);
    UT_EQ(atomic_load(&s->used), 700);
    atomic_store(&pt_chunk(s, 2)->next, 0);
    atomic_store(&pt_chunk(s, 2)->end, 5000); /* more than used: down to 0 */
    pt_pool_push(s, 2);
    UT_EQ(atomic_load(&s->used), 0);
    ut_shm_free(s);
}

/* ---- threads ------------------------------------------------------------ */
#define TH_N      4
#define TH_CHUNKS 8u
#define TH_ITERS  200000
static struct pt_shm *th_shm;
static _Atomic uint32_t th_owner[TH_CHUNKS]; /* 0 free, else 1 + the holder */
static _Atomic uint64_t th_double, th_pops, th_pushes, th_empty;

static void *churn(void *arg)
{
    uint32_t me = (uint32_t)(uintptr_t)arg, held[3];
    uint64_t rnd = 0x9e3779b97f4a7c15u * (me + 1);
    for (int it = 0; it < TH_ITERS; it++) {
        unsigned want = 1 + (unsigned)(ut_rnd(&rnd) % 3), n = 0;
        while (n < want) {
            uint32_t c = pt_pool_pop(th_shm);
            if (c == PT_NONE) { /* the others hold every chunk */
                atomic_fetch_add(&th_empty, 1);
                break;
            }
            if (c >= TH_CHUNKS || atomic_exchange(&th_owner[c], me + 1) != 0)
                atomic_fetch_add(&th_double, 1);
            atomic_fetch_add(&th_pops, 1);
            held[n++] = c;
        }
        if (ut_rnd(&rnd) % 8 == 0)
            sched_yield();
        while (n > 0) {
            uint32_t c = held[--n];
            if (c < TH_CHUNKS && atomic_exchange(&th_owner[c], 0) != me + 1)
                atomic_fetch_add(&th_double, 1);
            pt_pool_push(th_shm, c);
            atomic_fetch_add(&th_pushes, 1);
        }
    }
    return NULL;
}

/* Four threads take one to three chunks at a time from a pool of eight and
 * give them back: no chunk is ever held by two at once, and at the end every
 * chunk is in the pool exactly once. */
static void threads(void)
{
    th_shm = ut_shm_new(TH_CHUNKS, 256);
    pthread_t t[TH_N];
    for (uint32_t i = 0; i < TH_N; i++)
        UT_EQ(pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)i), 0);
    for (uint32_t i = 0; i < TH_N; i++)
        pthread_join(t[i], NULL);
    UT_EQ(atomic_load(&th_double), 0);
    UT_EQ(atomic_load(&th_pops), atomic_load(&th_pushes));
    UT_CHECK(atomic_load(&th_pops) >= TH_ITERS);
    UT_EQ(atomic_load(&th_shm->free_count), TH_CHUNKS);
    unsigned seen[TH_CHUNKS] = { 0 };
    for (uint32_t i = 0; i < TH_CHUNKS; i++) {
        uint32_t c = pt_pool_pop(th_shm);
        UT_CHECK(c < TH_CHUNKS);
        if (c < TH_CHUNKS)
            seen[c]++;
    }
    for (uint32_t i = 0; i < TH_CHUNKS; i++)
        UT_EQ(seen[i], 1);
    UT_EQ(pt_pool_pop(th_shm), PT_NONE);
    printf("threads: %" PRIu64 " pops, %" PRIu64 " times empty\n", atomic_load(&th_pops),
           atomic_load(&th_empty));
    ut_shm_free(th_shm);
}

int main(void)
{
    ut_watchdog(120);
    UT_RUN(fresh_in_order);
    UT_RUN(lifo);
    UT_RUN(exhaustion);
    UT_RUN(aba_tag);
    UT_RUN(corrupt_top);
    UT_RUN(refund);
    UT_RUN(threads);
    return ut_end("t300_pool");
}
