/*
 * The live view's reader: a thread that only copies events out of the
 * stream (posix_trace_trygetnext_event / timedgetnext, straight into a
 * block of a private queue), so that the stream is emptied at the speed it
 * can be read while the printing thread formats and writes. Blocks of 1 MiB
 * hold many events each: one lock per block, nothing allocated per event.
 * At most LQ_BYTES_MAX bytes of blocks exist; when all are full and not yet
 * printed the reader waits for the printer (the stream then fills, and its
 * losses are counted and reported as before). Events keep the stream's order.
 */
#include "live_queue.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

#define LQ_WAIT_MS 20           /* the reader's wait for an event, between checks */
#define LQ_BLOCKS_MAX (LQ_BYTES_MAX / LQ_BLOCK_BYTES)
#define LQ_DATA_BYTES (LQ_BLOCK_BYTES - offsetof(struct lq_block, data))
#define LQ_EVENT_MAX (sizeof(struct lq_event) + PT_DATA_MAX)

struct lq {
    trace_id_t trid;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t filled;      /* a block was queued, or the reader ended */
    pthread_cond_t freed;       /* a block was given back, or the reader must end */
    struct lq_block *head, *tail; /* queued, oldest first */
    struct lq_block *spare;     /* given back, for reuse */
    size_t blocks;              /* allocated */
    int reader_done, error;
    atomic_int finishing, aborting;
};

static size_t align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* A block to fill: a spare one, a new one under the bound, or (all in use)
 * one given back by the printer. NULL: the reader must end. */
static struct lq_block *block_get(struct lq *q)
{
    struct lq_block *b = NULL;
    pthread_mutex_lock(&q->mu);
    while (q->spare == NULL && q->blocks >= LQ_BLOCKS_MAX && !atomic_load(&q->aborting))
        pthread_cond_wait(&q->freed, &q->mu);
    if (atomic_load(&q->aborting)) {
        pthread_mutex_unlock(&q->mu);
        return NULL;
    }
    if (q->spare != NULL) {
        b = q->spare;
        q->spare = b->next;
    } else {
        q->blocks++;
    }
    pthread_mutex_unlock(&q->mu);
    if (b == NULL)
        b = g_malloc(LQ_BLOCK_BYTES);
    b->next = NULL;
    b->used = 0;
    return b;
}

static void block_queue(struct lq *q, struct lq_block *b)
{
    pthread_mutex_lock(&q->mu);
    if (q->tail != NULL)
        q->tail->next = b;
    else
        q->head = b;
    q->tail = b;
    pthread_cond_signal(&q->filled);
    pthread_mutex_unlock(&q->mu);
}

static struct timespec deadline_in(clockid_t clk, int ms)
{
    struct timespec t;
    clock_gettime(clk, &t);
    t.tv_nsec += (long)ms * 1000000L;
    t.tv_sec += t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    return t;
}

/* One event into b (trygetnext, or waiting up to LQ_WAIT_MS): 0, or
 * getnext's error; *got: whether an event came. */
static int read_one(struct lq *q, struct lq_block *b, int wait, int *got)
{
    struct lq_event *ev = (struct lq_event *)(void *)(b->data + b->used);
    size_t len = 0;
    int unavailable = 0, rc;
    if (wait) {
        struct timespec dl = deadline_in(CLOCK_REALTIME, LQ_WAIT_MS);
        rc = posix_trace_timedgetnext_event(q->trid, &ev->info, ev->data, PT_DATA_MAX, &len,
                                            &unavailable, &dl);
        if (rc == ETIMEDOUT)
            rc = 0, unavailable = 1;
    } else {
        rc = posix_trace_trygetnext_event(q->trid, &ev->info, ev->data, PT_DATA_MAX, &len,
                                          &unavailable);
    }
    *got = rc == 0 && !unavailable;
    if (*got) {
        ev->len = len;
        b->used += align8(sizeof *ev + len);
    }
    return rc;
}

static void reader_end(struct lq *q, struct lq_block *b, int rc)
{
    if (b != NULL && b->used > 0) {
        block_queue(q, b);
        b = NULL;
    }
    pthread_mutex_lock(&q->mu);
    if (b != NULL) {
        b->next = q->spare;
        q->spare = b;
    }
    q->error = rc;
    q->reader_done = 1;
    pthread_cond_broadcast(&q->filled);
    pthread_mutex_unlock(&q->mu);
}

/* Reads until the stream is finished and empty, an error, or an abort. A
 * block goes to the printer when full, or as soon as the stream has nothing
 * more for now (so that a slow program's events show at once). */
static void *reader(void *arg)
{
    struct lq *q = arg;
    struct lq_block *b = NULL;
    int rc = 0, got = 0;
    while (!atomic_load(&q->aborting)) {
        if (b == NULL && (b = block_get(q)) == NULL)
            break;
        if (LQ_DATA_BYTES - b->used < LQ_EVENT_MAX) {
            block_queue(q, b);
            b = NULL;
            continue;
        }
        int fin = atomic_load(&q->finishing);
        if ((rc = read_one(q, b, 0, &got)) != 0)
            break;
        if (got)
            continue;
        if (b->used > 0) {
            block_queue(q, b);
            b = NULL;
            continue;
        }
        if (fin)
            break;
        if ((rc = read_one(q, b, 1, &got)) != 0)
            break;
    }
    reader_end(q, b, rc);
    return NULL;
}

struct lq *lq_start(trace_id_t trid)
{
    struct lq *q = g_new0(struct lq, 1);
    pthread_condattr_t ca;
    q->trid = trid;
    pthread_mutex_init(&q->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&q->filled, &ca);
    pthread_cond_init(&q->freed, &ca);
    pthread_condattr_destroy(&ca);
    int rc = pthread_create(&q->thread, NULL, reader, q);
    if (rc != 0) {
        pthread_cond_destroy(&q->filled);
        pthread_cond_destroy(&q->freed);
        pthread_mutex_destroy(&q->mu);
        g_free(q);
        errno = rc;
        return NULL;
    }
    return q;
}

struct lq_block *lq_take(struct lq *q, int timeout_ms)
{
    struct timespec dl = deadline_in(CLOCK_MONOTONIC, timeout_ms);
    pthread_mutex_lock(&q->mu);
    while (q->head == NULL && !q->reader_done)
        if (pthread_cond_timedwait(&q->filled, &q->mu, &dl) == ETIMEDOUT)
            break;
    struct lq_block *b = q->head;
    if (b != NULL) {
        q->head = b->next;
        if (q->head == NULL)
            q->tail = NULL;
        b->next = NULL;
    }
    pthread_mutex_unlock(&q->mu);
    return b;
}

void lq_give_back(struct lq *q, struct lq_block *b)
{
    pthread_mutex_lock(&q->mu);
    b->next = q->spare;
    q->spare = b;
    pthread_cond_signal(&q->freed);
    pthread_mutex_unlock(&q->mu);
}

const struct lq_event *lq_next(const struct lq_block *b, size_t *off)
{
    if (*off >= b->used)
        return NULL;
    const struct lq_event *ev = (const struct lq_event *)(const void *)(b->data + *off);
    *off += align8(sizeof *ev + ev->len);
    return ev;
}

int lq_empty(struct lq *q)
{
    pthread_mutex_lock(&q->mu);
    int e = q->head == NULL;
    pthread_mutex_unlock(&q->mu);
    return e;
}

void lq_finish(struct lq *q)
{
    atomic_store(&q->finishing, 1);
}

int lq_done(struct lq *q)
{
    pthread_mutex_lock(&q->mu);
    int d = q->reader_done && q->head == NULL;
    pthread_mutex_unlock(&q->mu);
    return d;
}

int lq_error(struct lq *q)
{
    pthread_mutex_lock(&q->mu);
    int e = q->error;
    pthread_mutex_unlock(&q->mu);
    return e;
}

static void free_list(struct lq_block *b)
{
    while (b != NULL) {
        struct lq_block *n = b->next;
        g_free(b);
        b = n;
    }
}

void lq_free(struct lq *q)
{
    if (q == NULL)
        return;
    pthread_mutex_lock(&q->mu);
    atomic_store(&q->aborting, 1);
    pthread_cond_broadcast(&q->freed);
    pthread_mutex_unlock(&q->mu);
    pthread_join(q->thread, NULL);
    free_list(q->head);
    free_list(q->spare);
    pthread_cond_destroy(&q->filled);
    pthread_cond_destroy(&q->freed);
    pthread_mutex_destroy(&q->mu);
    g_free(q);
}
