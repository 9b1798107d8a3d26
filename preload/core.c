/*
 * The shim's core: configuration from the environment, recognising the
 * trace system's own calls, thread ids, and recording one call.
 *
 * Calls made by the trace system itself (libposixtrace: its log writer, its
 * flusher thread, mapping streams; the unwinder (libgcc_s) while it captures
 * a stack; this shim) are not the program's and are not recorded: their call site lies in
 * one of those objects, whose address ranges shim_init notes (the
 * unwinder's when unwind.c loads it).
 */
#include "shim.h"

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct shim_config shim_cfg = { .strsize = 32, .stack_depth = 0, .keep_preload = 1 };

#define NRANGES 3
_Static_assert(sizeof shim_ranges / sizeof shim_ranges[0] == NRANGES, "shim.h tests each");
struct shim_range shim_ranges[NRANGES];

bool shim_libtrace_caller(const void *ra)
{
    const struct shim_range *r = &shim_ranges[SHIM_RANGE_LIBTRACE];
    return (uintptr_t)ra - r->lo < r->size;
}

static __thread uint32_t tls_tid __attribute__((tls_model("initial-exec")));

uint32_t shim_tid_fresh(void)
{
    return (uint32_t)syscall(SYS_gettid);
}

uint32_t shim_tid(void)
{
    uint32_t t = tls_tid;
    if (unlikely(t == 0))
        tls_tid = t = shim_tid_fresh();
    return t;
}

/* The cell of the call in flight (shim.h) carries the thread id: set when
 * the cell is found, again when the cached id changes (fork, vfork). */
__thread struct posixtrace_inflight_cell *shim_cell __attribute__((tls_model("initial-exec")));

void shim_tid_reset(void)
{
    tls_tid = 0;
    shim_cell = NULL; /* a fork child: found again (the same entry), with its tid */
}

uint32_t shim_tid_swap(uint32_t t)
{
    uint32_t old = tls_tid;
    tls_tid = t;
    if (shim_cell != NULL) /* a vfork child writes its parent thread's cell */
        shim_cell->tid = t != 0 ? t : shim_tid_fresh();
    return old;
}

/* A wrapper built its payload against another event's definition, or with
 * too few or too many variable fields: a bug of the shim that tests catch.
 * The payload would not decode: it is not recorded, and said once. */
static SHIM_NOINLINE void shim_defect(const struct shim_call *c)
{
    static int said;
    if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        return;
    char m[160];
    int n = snprintf(m, sizeof m, "posixtrace-preload: internal error: event %u built "
                     "against another definition than events.def's; not recorded\n", c->id);
    if (n > 0)
        (void)!write(2, m, (size_t)n < sizeof m ? (size_t)n : sizeof m - 1);
}

static inline __attribute__((always_inline)) bool record_call(struct shim_call *c)
{
    if (unlikely(c->defect || c->vleft != 0)) {
        shim_defect(c);
        return false;
    }
    c->p.hdr.version = POSIXTRACE_PAYLOAD_VERSION;
    c->p.hdr.hdr_size = sizeof c->p.hdr;
    c->p.hdr.tid = c->tid != 0 ? c->tid : shim_tid();
    c->p.hdr.flags = c->flags;
    if (c->timed)
        posixtrace_sys_call(c->id, c->p.buf, c->n, c->ra, c->t0);
    else
        posixtrace_sys_event(c->id, c->p.buf, c->n, c->ra);
    return true;
}

bool shim_record(struct shim_call *c)
{
    return record_call(c);
}

struct posixtrace_inflight_cell *shim_cell_find(void)
{
    static __thread struct posixtrace_inflight_cell none
        __attribute__((tls_model("initial-exec"))); /* no entry: written, never read */
    struct posixtrace_inflight_cell *w = posixtrace_inflight_cell();
    if (w == NULL)
        w = &none;
    w->tid = shim_tid();
    shim_cell = w;
    return w;
}

void shim_emit(struct shim_call *c)
{
    if (likely(record_call(c)) && unlikely(shim_cfg.stack_depth != 0))
        shim_record_stack(c->ra, c->p.hdr.tid);
    /* recorded (or refused): no longer in flight; after the record, so that
     * a controller ending the trace sees the call one way or the other */
    struct posixtrace_inflight_cell *w = shim_cell; /* NULL: a fork child's, not yet found */
    if (likely(SHIM_IS_CALL(c->id) && w != NULL))
        __atomic_store_n(&w->id, 0, __ATOMIC_RELEASE);
    /* The selector back as it was (system-call mode). An exec, recorded
     * before it is made, is made with the selector ALLOW (not recorded
     * again; the new image starts without dispatch); if it fails, its
     * second event puts BLOCK back. */
    if (c->id != POSIXTRACE_EV_EXEC)
        shim_sud_restore(c->sud);
    else if (!(c->flags & POSIXTRACE_CALL_NORETURN))
        shim_sud_leave();
    *c->errp = c->saved_errno;
}

/* ---- initialisation ---- */

struct range_query {
    uintptr_t addr[NRANGES];
};

static int find_ranges(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct range_query *q = data;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    for (int k = 0; k < NRANGES; k++) {
        if (q->addr[k] != 0 && q->addr[k] >= lo && q->addr[k] < hi) {
            __atomic_store_n(&shim_ranges[k].lo, lo, __ATOMIC_RELAXED);
            __atomic_store_n(&shim_ranges[k].size, hi - lo, __ATOMIC_RELEASE); /* shim.h */
        }
    }
    return 0;
}

static uint32_t env_uint(const char *name, uint32_t def, uint32_t max)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return def;
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    if (*end != '\0')
        return def;
    return n > max ? max : (uint32_t)n;
}

static void read_config(void)
{
    shim_cfg.strsize = env_uint("POSIXTRACE_STRSIZE", 32, SHIM_PAYLOAD_MAX);
    shim_cfg.stack_depth = env_uint("POSIXTRACE_STACK", 0, SHIM_STACK_MAX);
    shim_cfg.keep_preload = env_uint("POSIXTRACE_KEEP_PRELOAD", 1, 1);
}

/* Stacks asked for by the environment need the unwinder (unwind.c); loaded
 * once the shim's ranges are known, so that its own calls are not recorded. */
static void load_unwinder(void)
{
    if (shim_cfg.stack_depth != 0 && !shim_unwind_load())
        shim_cfg.stack_depth = 0; /* said on stderr */
}

void shim_process_start(int argc, char **argv);
void shim_preload_init(void);
void shim_threads_init(void);
void shim_exec_init(void);

/* Set once the shim has initialised in this image (shim.h, shim_begin). */
int shim_started;
static int ranges_noted;

/* libposixtrace's and the shim's ranges; the unwinder's when it is loaded
 * (unwind.c): until then addr 0 matches no object. */
static void note_ranges(void)
{
    struct range_query q = { { [SHIM_RANGE_LIBTRACE] = (uintptr_t)&posixtrace_sys_event,
                               [SHIM_RANGE_SHIM] = (uintptr_t)&note_ranges } };
    dl_iterate_phdr(find_ranges, &q);
    __atomic_store_n(&ranges_noted, 1, __ATOMIC_RELEASE);
}

void shim_note_range(int k, uintptr_t addr)
{
    struct range_query q = { { 0 } };
    q.addr[k] = addr;
    dl_iterate_phdr(find_ranges, &q);
}

/* Once per image: from the constructor, or earlier from the first recorded
 * call when another object's constructor makes one before the shim's runs
 * (argc -1, argv NULL: process_start reads /proc/self/cmdline). The flag is
 * set first, so the calls made here never come back. */
static void shim_setup(int argc, char **argv)
{
    if (__atomic_exchange_n(&shim_started, 1, __ATOMIC_ACQ_REL))
        return;
    read_config();
    if (!__atomic_load_n(&ranges_noted, __ATOMIC_ACQUIRE))
        note_ranges();
    load_unwinder();
    shim_preload_init();
    shim_exec_init();
    shim_threads_init();
    shim_process_start(argc, argv);
}

/* A call to record before the constructor ran: the program's (not the trace
 * system's own, such as libposixtrace's initialisation) and with a stream
 * attached to take it, else the constructor starts the shim as usual. */
void shim_setup_early(const void *ra)
{
    int saved = errno;
    if (!__atomic_load_n(&ranges_noted, __ATOMIC_ACQUIRE))
        note_ranges();
    if (!shim_internal_caller(ra) && posixtrace_call_begin(POSIXTRACE_EV_PROCESS_START) != 0)
        shim_setup(-1, NULL);
    errno = saved;
}

/* glibc passes (argc, argv, envp) to the initialisers of every object. */
__attribute__((constructor)) static void shim_init(int argc, char **argv, char **envp)
{
    (void)envp;
    int saved = errno;
    shim_setup(argc, argv);
    shim_sud_init();
    errno = saved;
}
