/*
 * The reader: merges the writer slots' chains into one oldest-first sequence.
 *
 * Each slot's chain is in its writer's order. The reader looks at the next
 * event of every slot and reports the one with the smallest timestamp, among
 * those stamped before `now`, a tick count read before the look: a call that
 * ended before another began has a smaller stamp, and if it ended before `now`
 * was read it was visible to the look. So events of calls that do not overlap
 * are reported in order (doc/semantics.md).
 *
 * A slot's events come from the consumer iterator (consume.c), a record at a
 * time. The shared memory is untrusted: every offset, size, index and length
 * read from it is checked; a bad record is skipped with the rest of its chunk
 * and reported as POSIX_TRACE_ERROR (EBADMSG).
 *
 * LOOP stealers may take the chunk being read: every read of a chunk is
 * validated afterwards against the slot's rhead word (a seqlock: the
 * iterator's look, and deliver's copy of the data), and a stolen chunk's
 * events not yet reported are counted lost exactly.
 */
#include "../internal.h"
#include <posixtrace/control.h>
#include "../log/logread.h"
#include <string.h>

#define PT_READER_NAP_NS (1000 * 1000) /* 1 ms */

int pt_reader_init(struct pt_handle *h)
{
    struct pt_shm *s = h->shm;
    h->decs = calloc(PT_NSLOTS, sizeof *h->decs);
    if (h->decs == NULL)
        return ENOMEM;
    for (uint32_t i = 0; i < PT_NSLOTS; i++) {
        struct pt_rslot *r = &h->rs[i];
        memset(r, 0, sizeof *r);
        r->rhead = atomic_load(&pt_slots(s)[i].rhead);
        r->chunk = (uint32_t)r->rhead;
        r->stolen_seen = atomic_load(&pt_slots(s)[i].stolen);
    }
    h->ticks_per_ns = s->ticks_per_ns > 0 ? s->ticks_per_ns : 1.0;
    h->lost_reported = atomic_load(&s->lost);
    return 0;
}

static int64_t ticks_to_ns(struct pt_handle *h, struct pt_rslot *r, uint64_t ts)
{
    struct pt_shm *s = h->shm;
    if (s->clock_mode != PT_CLOCK_TSC)
        return (int64_t)ts;
    if (r != NULL && r->has_anchor) /* anchors are the writers': anything (pt_ns_after) */
        return pt_ns_after(r->anchor_ns, (int64_t)(ts - r->anchor_ts), h->ticks_per_ns);
    return pt_ns_after(s->real0_ns, (int64_t)(ts - s->tick0), h->ticks_per_ns);
}

/*
 * Events are reported in tick order, but two anchors of different chunks map
 * ticks to CLOCK_REALTIME with slightly different offsets (tens of ns: the
 * clock read and the rate estimate). Reported timestamps are kept
 * non-decreasing by holding one back to the previous one, unless the clock
 * itself stepped back by more than PT_CLAMP_NS, which must show. The same
 * holds back the event of a writer preempted between reading the clock and
 * announcing its record, which the reader may report after events recorded
 * meanwhile by other threads (calls that overlap: semantics.md): the value
 * held lies between its call's own start and end.
 */
#define PT_CLAMP_NS (100 * 1000 * 1000)
static int64_t report_ns(struct pt_handle *h, int64_t ns)
{
    if (ns < h->last_ns && h->last_ns - ns < PT_CLAMP_NS)
        ns = h->last_ns;
    h->last_ns = ns;
    return ns;
}

static uint64_t now_ticks(struct pt_shm *s)
{
    return s->clock_mode == PT_CLOCK_TSC ? pt_rdtsc_ordered() : (uint64_t)pt_realtime_ns();
}

static void push_synth(struct pt_handle *h, trace_event_id_t id, int64_t ns, const void *d,
                       uint32_t len)
{
    if (h->nsynth == PT_RD_SYNTH_MAX)
        return;
    struct pt_synth *e = &h->synth[h->nsynth++];
    e->id = id;
    e->ns = ns;
    e->len = len;
    if (len)
        memcpy(e->data, d, len);
}

/* Copy the chosen event out, then check it was not stolen meanwhile. */
static bool deliver(struct pt_handle *h, uint32_t i, const struct pt_cons_rec *p,
                    struct posix_trace_event_info *ev, void *data, size_t num, size_t *len)
{
    struct pt_shm *s = h->shm;
    struct pt_rslot *r = &h->rs[i];
    struct pt_chunk *ch = pt_chunk(s, r->chunk);
    size_t n = p->rec.len < num ? p->rec.len : num;
    if (n)
        memcpy(data, pt_rec_at(ch, r->off) + p->rec.doff, n);
    if (pt_cons_stolen(&pt_slots(s)[i], r))
        return false;
    ev->posix_event_id = p->rec.id;
    ev->posix_pid = (pid_t)p->pid;
    ev->posix_prog_address = (void *)(uintptr_t)p->rec.addr;
    ev->posix_thread_id = (pthread_t)p->thread;
    pt_ns_to_ts(report_ns(h, ticks_to_ns(h, r, p->rec.ts)), &ev->posix_timestamp);
    if (n < p->rec.len)
        ev->posix_truncation_status = POSIX_TRACE_TRUNCATED_READ;
    else
        ev->posix_truncation_status = p->rec.flags & PT_RF_TRUNCATED
                                          ? POSIX_TRACE_TRUNCATED_RECORD
                                          : POSIX_TRACE_NOT_TRUNCATED;
    *len = n;
    pt_cons_past(h, i, p);
    r->delivered++;
    return true;
}

static void deliver_synth(struct pt_handle *h, struct posix_trace_event_info *ev, void *data,
                          size_t num, size_t *len)
{
    struct pt_synth *e = &h->synth[h->synth_pos++];
    if (h->synth_pos == h->nsynth)
        h->synth_pos = h->nsynth = 0;
    size_t n = e->len < num ? e->len : num;
    if (n)
        memcpy(data, e->data, n);
    memset(ev, 0, sizeof *ev);
    ev->posix_event_id = e->id;
    ev->posix_pid = (pid_t)h->shm->target_pid;
    pt_ns_to_ts(report_ns(h, e->ns), &ev->posix_timestamp);
    ev->posix_truncation_status = n < e->len ? POSIX_TRACE_TRUNCATED_READ
                                             : POSIX_TRACE_NOT_TRUNCATED;
    *len = n;
}

/* A system event to deliver (gaps.c): `when` is its CLOCK_REALTIME ns. */
static void put_synth(struct pt_handle *h, trace_event_id_t id, uint64_t when, const void *d,
                      uint32_t len)
{
    push_synth(h, id, (int64_t)when, d, len);
}

/* Losses and internal errors not yet reported become events at ns. */
static void queue_losses(struct pt_handle *h, int64_t ns)
{
    pt_report_losses(h, put_synth, (uint64_t)ns, atomic_load(&h->shm->lost));
}

/* UNTIL_FULL: report the stop, and restart once everything was read. */
static void handle_full(struct pt_handle *h)
{
    struct pt_shm *s = h->shm;
    if (!h->stop_reported) {
        int aut = 1;
        push_synth(h, POSIX_TRACE_STOP, ticks_to_ns(h, NULL, atomic_load(&s->full_ts)), &aut,
                   sizeof aut);
        h->stop_reported = 1;
        return;
    }
    pt_restart_full(h, put_synth, (uint64_t)pt_realtime_ns());
}

/* One attempt: 1 = an event was reported, 0 = none available now.
 *
 * `now` is read again only when a look found nothing to report before it:
 * an earlier `now` is as good a bound (the look comes after it was read, so
 * a call that ended before it is visible), it only leaves out more events,
 * and never the earliest of those it lets in (they are all stamped before
 * it, those left out after). A reader behind its writers reports events
 * stamped long before the last `now`: one clock read (lfence, rdtsc: 10 ns
 * and more, a sixth of a reader's time per event, measured) serves many. */
static int try_read(struct pt_handle *h, struct posix_trace_event_info *ev, void *data,
                    size_t num, size_t *len)
{
    struct pt_shm *s = h->shm;
    bool fresh = false; /* h->rnow read in this call */
    for (int round = 0; round < 1000; round++) {
        if (h->nsynth > h->synth_pos) {
            deliver_synth(h, ev, data, num, len);
            return 1;
        }
        uint64_t now = h->rnow;
        uint32_t hwm = atomic_load_explicit(&s->slots_hwm, memory_order_acquire);
        if (hwm > PT_NSLOTS)
            hwm = PT_NSLOTS;
        uint32_t best = PT_NONE, pending = 0;
        bool busy = false;        /* a writer mid-record: hold back later events */
        uint64_t busy_ts = 0;     /* the earliest such record's stamp; 0: unknown */
        struct pt_cons_rec bp = {0}, p = {0};
        for (uint32_t i = 0; i < hwm; i++) {
            /* each slot's next event (consume.c); PT_CONS_PENDING: its writer
             * is in the middle of a record stamped p.rec.ts, or of a chunk
             * switch or steal (ts unknown: 0), and no later event may be
             * reported before it */
            int k = pt_cons_record(h, i, &p);
            if (k == PT_CONS_NONE)
                continue;
            pending++;
            if (k == PT_CONS_PENDING) {
                if (!busy || p.rec.ts == 0 || (busy_ts != 0 && (int64_t)(p.rec.ts - busy_ts) < 0))
                    busy_ts = p.rec.ts;
                busy = true;
                continue;
            }
            if (s->clock_mode == PT_CLOCK_TSC && (int64_t)(p.rec.ts - now) >= 0)
                continue;
            if (best == PT_NONE || (int64_t)(p.rec.ts - bp.rec.ts) < 0) {
                best = i;
                bp = p;
            }
        }
        if (busy)
            pt_reap_dead_writers(h); /* a writer mid-record may have died */
        if (best != PT_NONE && busy && (busy_ts == 0 || (int64_t)(busy_ts - bp.rec.ts) < 0))
            best = PT_NONE; /* an earlier-stamped record is still being written */
        if (best == PT_NONE && !fresh) { /* look again after a new `now` */
            h->rnow = now_ticks(s);
            fresh = true;
            round--;
            continue;
        }
        uint32_t st = atomic_load(&s->state);
        if (best != PT_NONE) {
            if (st != PT_ST_FULL &&
                (atomic_load(&s->lost) > h->lost_reported || atomic_load(&s->error_pending))) {
                queue_losses(h, ticks_to_ns(h, &h->rs[best], bp.rec.ts));
                continue;
            }
            if (deliver(h, best, &bp, ev, data, num, len))
                return 1;
            continue;
        }
        if (pending > 0) {
            h->rnow = now_ticks(s); /* stamped after `now`: look again */
            continue;
        }
        if (st == PT_ST_FULL)
            handle_full(h);
        else if (atomic_load(&s->lost) > h->lost_reported || atomic_load(&s->error_pending))
            queue_losses(h, pt_realtime_ns());
        if (h->nsynth > h->synth_pos)
            continue;
        pt_reap_dead_writers(h);
        return 0;
    }
    return 0;
}

/*
 * Sleep until woken, the deadline, or `cap_ns` from now. Writers wake only a
 * reader that announced itself in `waiters`; a reader that just found the
 * stream empty first naps briefly without announcing itself, so that a writer
 * recording back to back is not asked for a wake-up per event it records.
 */
static int wait_for_events(struct pt_handle *h, uint32_t seq, int mode,
                           const struct timespec *abstime, int64_t cap_ns)
{
    struct timespec dl;
    int64_t now = pt_realtime_ns();
    int64_t wake = now + cap_ns;
    if (mode == PT_READ_TIMED) {
        int64_t a = pt_ts_ns(abstime);
        if (now >= a)
            return ETIMEDOUT;
        if (a < wake)
            wake = a;
    }
    pt_ns_to_ts(wake, &dl);
    int rc = pt_futex_wait(&h->shm->wake_seq, seq, &dl);
    if (rc == EINTR)
        return EINTR;
    if (mode == PT_READ_TIMED && pt_realtime_ns() >= pt_ts_ns(abstime))
        return ETIMEDOUT;
    return 0;
}

int pt_read_next(struct pt_handle *h, struct posix_trace_event_info *ev, void *data,
                 size_t num, size_t *len, int *unavailable, int mode,
                 const struct timespec *abstime)
{
    struct pt_shm *s = h->shm;
    if (ev == NULL || len == NULL || unavailable == NULL || (data == NULL && num != 0))
        return EINVAL;
    pthread_mutex_lock(&h->rlock);
    if (unlikely(s->block_ns != 0))
        pt_block_consumer(s); /* writers may wait for this thread (block.c) */
    int rc = 0, napped = 0;
    for (;;) {
        if (atomic_load(&s->state) == PT_ST_SHUTDOWN || h->dying) {
            rc = EINVAL;
            break;
        }
        if (try_read(h, ev, data, num, len)) {
            *unavailable = 0;
            break;
        }
        if (mode == PT_READ_TRY) {
            *unavailable = 1;
            break;
        }
        if (mode == PT_READ_TIMED &&
            (abstime == NULL || abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000)) {
            rc = EINVAL;
            break;
        }
        uint32_t seq = atomic_load(&s->wake_seq);
        if (!napped) {
            napped = 1;
            rc = wait_for_events(h, seq, mode, abstime, PT_READER_NAP_NS);
            if (rc != 0)
                break;
            continue;
        }
        atomic_store(&s->waiters, 1);
        atomic_thread_fence(memory_order_seq_cst);
        if (try_read(h, ev, data, num, len)) {
            *unavailable = 0;
            break;
        }
        if (atomic_load(&s->state) == PT_ST_SHUTDOWN || h->dying) {
            rc = EINVAL;
            break;
        }
        /* a wake-up may be missed (design.md, "Blocking"): recheck every 10 ms */
        rc = wait_for_events(h, seq, mode, abstime, 10 * 1000 * 1000);
        if (rc != 0)
            break;
    }
    pthread_mutex_unlock(&h->rlock);
    if (rc == ETIMEDOUT)
        *unavailable = 1;
    return rc;
}

/* posix_trace_clear: drop every recorded event. */
void pt_reader_drain(struct pt_handle *h)
{
    struct pt_shm *s = h->shm;
    struct pt_cons_rec p;
    uint32_t hwm = atomic_load(&s->slots_hwm);
    for (uint32_t i = 0; i < hwm && i < PT_NSLOTS; i++) {
        while (pt_cons_record(h, i, &p) == PT_CONS_REC)
            pt_cons_past(h, i, &p);
    }
    h->nsynth = h->synth_pos = 0;
    h->stop_reported = 0;
    h->lost_reported = atomic_load(&s->lost);
    atomic_store(&s->error_pending, 0);
    uint32_t full = PT_ST_FULL;
    atomic_compare_exchange_strong(&s->state, &full, PT_ST_RUNNING);
}

/*
 * getnext and timedgetnext read an active stream without log, or a
 * pre-recorded one (never blocking: its end is the end of the log);
 * trygetnext only an active stream without log.
 */
static int read_any(trace_id_t trid, struct posix_trace_event_info *ev, void *data, size_t num,
                    size_t *len, int *unavailable, int mode, const struct timespec *abstime)
{
    struct pt_handle *h;
    int rc = pt_get(trid, &h);
    if (rc != 0)
        return rc;
    if (h->kind == PT_H_PRERECORDED) {
        if (mode == PT_READ_TRY || ev == NULL || len == NULL || unavailable == NULL ||
            (data == NULL && num != 0)) {
            rc = EINVAL;
        } else {
            pthread_mutex_lock(&h->rlock);
            rc = pt_logr_next(h->logr, ev, data, num, len, unavailable);
            pthread_mutex_unlock(&h->rlock);
        }
    } else if (h->log != NULL) {
        rc = EINVAL; /* its events go to the log; read them there */
    } else {
        rc = pt_read_next(h, ev, data, num, len, unavailable, mode, abstime);
    }
    pt_put(h);
    return rc;
}

/* <posixtrace/control.h>: the calling thread will read the active stream
 * trid (without log): blocking writers wait for it from now on, as after
 * its first getnext call (block.c). */
PT_API int posixtrace_stream_consumer(trace_id_t trid)
{
    struct pt_handle *h;
    int rc = pt_get(trid, &h);
    if (rc != 0)
        return rc;
    if (h->kind == PT_H_PRERECORDED || h->log != NULL)
        rc = EINVAL;
    else if (h->shm->block_ns != 0)
        pt_block_consumer(h->shm);
    pt_put(h);
    return rc;
}

PT_API int posix_trace_getnext_event(trace_id_t trid, struct posix_trace_event_info *restrict ev,
                                     void *restrict data, size_t num, size_t *restrict len,
                                     int *restrict unavailable)
{
    return read_any(trid, ev, data, num, len, unavailable, PT_READ_BLOCK, NULL);
}

PT_API int posix_trace_timedgetnext_event(trace_id_t trid,
                                          struct posix_trace_event_info *restrict ev,
                                          void *restrict data, size_t num,
                                          size_t *restrict len, int *restrict unavailable,
                                          const struct timespec *restrict abstime)
{
    return read_any(trid, ev, data, num, len, unavailable, PT_READ_TIMED, abstime);
}

PT_API int posix_trace_trygetnext_event(trace_id_t trid,
                                        struct posix_trace_event_info *restrict ev,
                                        void *restrict data, size_t num, size_t *restrict len,
                                        int *restrict unavailable)
{
    return read_any(trid, ev, data, num, len, unavailable, PT_READ_TRY, NULL);
}
