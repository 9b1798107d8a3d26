/*
 * t043_log_race: concurrent use of a stream with log, then the log read back
 * in the same process and checked here.
 *
 *   t043_log_race PATH flushers   4 threads record NEV events each, back to back,
 *                                 while 2 threads call posix_trace_flush in a loop
 *                                 (and the FLUSH policy's own flusher runs)
 *   t043_log_race PATH clear      1 thread records (until stopped), 1 thread
 *                                 flushes in a loop, main calls posix_trace_clear
 *                                 100 times (1 ms apart), then lets it record at
 *                                 least AFTER_CLEAR (10000) more events
 *   t043_log_race PATH clearauto  the same without the flushing thread (only the
 *                                 FLUSH policy's own flusher runs)
 *
 * Event "seq" data: w = (thread << 48) | n, then w * K.  After shutdown the log
 * is read with posix_trace_open and checked: every "seq" event intact, each
 * thread's numbers strictly increasing, no POSIX_TRACE_ERROR event, lost
 * counts (OVERFLOW) summed.  Prints
 *   "result recorded= read= lost= bad_data= bad_order= errors= other= flush_fail="
 * and in the clear modes "after last clear recorded= read=": the events numbered
 * above the writer's last number seen when the last clear had returned.
 */
#include "tcommon.h"

#include <fcntl.h>
#include <stdatomic.h>

#define SEQ_K 0x9E3779B97F4A7C15ULL
#define NWRITERS 4
#define NEV 200000
#define AFTER_CLEAR 10000 /* clear modes: events recorded after the last clear, at least */

static trace_id_t trid;
static trace_event_id_t ev;
static _Atomic int stop_flush, stop_write;
static uint64_t limit = NEV;   /* events per writer (clear mode: until stopped) */
static _Atomic long flush_fail;
static uint64_t recorded[NWRITERS];
static _Atomic uint64_t published;  /* clear mode: the writer's last event number */
static uint64_t after_clear = UINT64_MAX; /* events numbered above it began after the last clear */

static void *writer(void *arg)
{
    uint64_t t = (uint64_t)(uintptr_t)arg, d[2];
    for (uint64_t n = 0;; n++) {
        if (atomic_load_explicit(&stop_write, memory_order_relaxed) || n == limit) {
            recorded[t] = n;
            break;
        }
        d[0] = (t << 48) | n;
        d[1] = d[0] * SEQ_K;
        posix_trace_event(ev, d, sizeof d);
        atomic_store_explicit(&published, n, memory_order_release);
    }
    return NULL;
}

static void *flusher(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_flush)) {
        int rc = posix_trace_flush(trid);
        if (rc != 0)
            atomic_fetch_add(&flush_fail, 1);
    }
    return NULL;
}

static void check_log(const char *path, uint64_t total)
{
    static tc_event e;
    trace_id_t rd;
    int fd = open(path, O_RDONLY);
    CHECK(fd < 0);
    int rc = posix_trace_open(fd, &rd);
    if (rc != 0) {
        printf("open rc=%s\n", tc_errname(rc));
        exit(2);
    }
    int64_t last[NWRITERS];
    for (int i = 0; i < NWRITERS; i++)
        last[i] = -1;
    long nread = 0, bad_data = 0, bad_order = 0, errors = 0, other = 0, nafter = 0;
    uint64_t lost = 0;
    int un = 0;
    for (;;) {
        CHECK(posix_trace_getnext_event(rd, &e.info, e.data, sizeof e.data, &e.len, &un));
        if (un)
            break;
        trace_event_id_t id = e.info.posix_event_id;
        if (id == ev) {
            uint64_t d[2];
            if (e.len != sizeof d) {
                bad_data++;
                continue;
            }
            memcpy(d, e.data, sizeof d);
            uint64_t t = d[0] >> 48;
            int64_t n = (int64_t)(d[0] & ((1ULL << 48) - 1));
            if (d[1] != d[0] * SEQ_K || t >= NWRITERS) {
                bad_data++;
                continue;
            }
            if (n <= last[t])
                bad_order++;
            if ((uint64_t)n > after_clear)
                nafter++;
            last[t] = n;
            nread++;
        } else if (id == POSIX_TRACE_OVERFLOW && e.len == sizeof(uint64_t)) {
            uint64_t k;
            memcpy(&k, e.data, sizeof k);
            lost += k;
        } else if (id == POSIX_TRACE_ERROR) {
            errors++;
        } else if (id > POSIX_TRACE_ERROR) {
            other++;
        }
    }
    CHECK(posix_trace_close(rd));
    close(fd);
    printf("result recorded=%" PRIu64 " read=%ld lost=%" PRIu64 " bad_data=%ld bad_order=%ld "
           "errors=%ld other=%ld flush_fail=%ld\n", total, nread, lost, bad_data, bad_order,
           errors, other, (long)flush_fail);
    if (after_clear != UINT64_MAX)
        printf("after last clear recorded=%" PRIu64 " read=%ld\n", total - after_clear - 1,
               nafter);
}

int main(int argc, char **argv)
{
    trace_attr_t a;
    pthread_t w[NWRITERS], f[2];
    tc_init();
    tc_watchdog(60);
    if (argc != 3) {
        printf("usage: t043_log_race PATH flushers|clear|clearauto\n");
        return 2;
    }
    int clearauto = strcmp(argv[2], "clearauto") == 0;
    int clear = clearauto || strcmp(argv[2], "clear") == 0;
    if (clear)
        limit = UINT64_MAX;
    ev = tc_open("seq");
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(fd < 0);
    CHECK(posix_trace_attr_init(&a));
    CHECK(posix_trace_attr_setlogfullpolicy(&a, clear ? POSIX_TRACE_LOOP : POSIX_TRACE_APPEND));
    CHECK(posix_trace_attr_setlogsize(&a, 64 << 20)); /* no wrap after the last clear */
    CHECK(posix_trace_create_withlog(0, &a, fd, &trid));
    CHECK(posix_trace_attr_destroy(&a));
    CHECK(posix_trace_start(trid));
    int nw = clear ? 1 : NWRITERS, nf = clearauto ? 0 : clear ? 1 : 2;
    for (int i = 0; i < nf; i++)
        CHECK(pthread_create(&f[i], NULL, flusher, NULL));
    for (int i = 0; i < nw; i++)
        CHECK(pthread_create(&w[i], NULL, writer, (void *)(uintptr_t)i));
    long clears = 0, clear_fail = 0;
    if (clear) {
        for (int i = 0; i < 100; i++) {
            tc_sleep_ms(1);
            clear_fail += posix_trace_clear(trid) != 0;
            clears++;
        }
        /* published = the last event whose posix_trace_event() had returned; the
         * next one may have been under way during the clear ("no guarantee for
         * trace events that occurred during the posix_trace_clear() call"):
         * events numbered above published + 1 began after the clear returned */
        after_clear = atomic_load_explicit(&published, memory_order_acquire) + 1;
        /* events after the last clear: wait for AFTER_CLEAR of them (bounded by
         * the watchdog), not for a time the writer may spend descheduled */
        while (atomic_load_explicit(&published, memory_order_acquire) < after_clear + AFTER_CLEAR)
            tc_sleep_ms(1);
        atomic_store(&stop_write, 1);
    }
    for (int i = 0; i < nw; i++)
        pthread_join(w[i], NULL);
    atomic_store(&stop_flush, 1);
    for (int i = 0; i < nf; i++)
        pthread_join(f[i], NULL);
    printf("clears n=%ld failed=%ld\n", clears, clear_fail);
    SHOW("shutdown", posix_trace_shutdown(trid));
    close(fd);
    uint64_t total = 0;
    for (int i = 0; i < nw; i++)
        total += recorded[i];
    check_log(argv[1], total);
    return 0;
}
