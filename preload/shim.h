/*
 * libposixtrace-preload.so internals: how a wrapper finds the function it
 * wraps, builds its event payload (<posixtrace/events.h>) and records it.
 *
 * Every wrapper has the same shape:
 *
 *   SHIM_API ssize_t write(int fd, const void *buf, size_t n)
 *   {
 *       if (likely(!posixtrace_wanted(POSIXTRACE_EV_WRITE)))   // one load, one branch
 *           return NEXT(write)(fd, buf, n);
 *       return write_rec(fd, buf, n, RA());                     // noinline, big frame
 *   }
 *
 * and the recording half:
 *   struct shim_call c;
 *   if (!shim_begin(&c, ID, ra))        // the trace system's own calls: not recorded
 *       return NEXT(...)(...);
 *   r = NEXT(...)(...);
 *   shim_end(&c, r, r < 0);             // keeps errno, the result, the duration
 *   shim_fix_write(&c, fd, n);  shim_buf(&c, buf, r);  // fixed fields, then the variable ones
 *   shim_emit(&c);                      // records (+ stack), restores errno
 *
 * shim_begin reports the address map first when it changed (modules.c).
 *
 * Nothing here allocates: the payload is built on the stack and recorded by
 * posixtrace_sys_event() (async-signal-safe, lock-free).
 */
#undef _FORTIFY_SOURCE
#ifndef POSIXTRACE_SHIM_H
#define POSIXTRACE_SHIM_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <unwind.h>

#include <posixtrace/events.h>
#include <posixtrace/record.h>
#include "../libtrace/ring/pt_sizes.h"
#include "sud/sud.h"

#define SHIM_API __attribute__((visibility("default")))
#define SHIM_NOINLINE __attribute__((noinline))
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
/* The call site in the program: the exported wrapper's return address. */
#define RA() __builtin_return_address(0)

/* ---- resolve.c: the next definition of a symbol (libposixtrace's or libc's) ---- */
void *shim_resolve(void **slot, const char *name); /* stores into *slot */
static inline void *shim_get(void **slot, const char *name)
{
    void *p = __atomic_load_n(slot, __ATOMIC_RELAXED);
    return likely(p != NULL) ? p : shim_resolve(slot, name);
}
/* REAL(ret, name, params...) once per wrapped function, then NEXT(name). */
#define REAL(ret, name, ...) \
    typedef ret (*name##_fn)(__VA_ARGS__); \
    static void *real_##name
#define NEXT(name) ((name##_fn)shim_get(&real_##name, #name))

/* ---- core.c: configuration, the trace system's own code, thread ids ---- */
/* A payload is a system event's data: the one limit (libtrace/ring/pt_sizes.h). */
#define SHIM_PAYLOAD_MAX PT_SYS_DATA_BYTES
#define SHIM_STACK_MAX 64u
_Static_assert(SHIM_PAYLOAD_MAX <= PT_SYS_DATA_BYTES,
               "a shim payload must fit a system event, or logs lose blocks");
_Static_assert(sizeof(struct posixtrace_call_hdr) + 4 + 8 * SHIM_STACK_MAX <= SHIM_PAYLOAD_MAX,
               "a full stack (header, count, addresses) fits one payload");
struct shim_config {
    uint32_t strsize;     /* POSIXTRACE_STRSIZE: buffer bytes recorded, default 32 */
    uint32_t stack_depth; /* POSIXTRACE_STACK: frames per call, 0 = no stacks */
    int keep_preload;     /* POSIXTRACE_KEEP_PRELOAD (default 1) */
};
extern struct shim_config shim_cfg;
/* The address ranges of libposixtrace, the unwinder and the shim (core.c) */
struct shim_range {
    uintptr_t lo, size;
};
extern struct shim_range shim_ranges[3];
enum { SHIM_RANGE_LIBTRACE, SHIM_RANGE_UNWINDER, SHIM_RANGE_SHIM };
/* Notes range k as the object holding addr (the unwinder's, once loaded:
 * unwind.c). A recording thread may read the pair meanwhile: lo is stored
 * before size, and a size read with the old lo (0) covers only the first
 * pages of the address space, where no program code lies. */
void shim_note_range(int k, uintptr_t addr);
/* ra lies in one of them: no early exit, the program's own call sites (the
 * usual case) are in none */
static inline bool shim_internal_caller(const void *ra)
{
    uintptr_t a = (uintptr_t)ra;
    return (a - shim_ranges[0].lo < shim_ranges[0].size) |
           (a - shim_ranges[1].lo < shim_ranges[1].size) |
           (a - shim_ranges[2].lo < shim_ranges[2].size);
}
bool shim_libtrace_caller(const void *ra); /* libposixtrace only */
uint32_t shim_tid(void);                   /* cached kernel thread id */
void shim_tid_reset(void);                 /* in a fork child */
uint32_t shim_tid_fresh(void);             /* gettid(), not cached (vfork children) */
uint32_t shim_tid_swap(uint32_t t);        /* sets the cached id (0: none), returns the old */

/* ---- fdkeep.c: the trace system's descriptor survives the program's closes ---- */
/* Before a call that closes or replaces descriptor `fd`: if it is the trace
 * system's own (posixtrace_reserved_fd), give that one another number. */
static inline void shim_fd_vacate(int fd)
{
    if (unlikely(fd >= 0 && fd == posixtrace_reserved_fd()))
        posixtrace_reserved_fd_move();
}

/* ---- env.c: what tracing needs in a child's environment ---- */
#define SHIM_ENV_ENTRY_MAX 4096 /* an LD_PRELOAD entry the shim builds, NUL included */
#define SHIM_ENV_KEEP 4         /* POSIXTRACE_STRSIZE, _STACK, _CLOCK, _SYSCALLS */
struct shim_envfix {
    size_t n;                   /* entries of the program's environment */
    size_t replace;             /* index of the LD_PRELOAD entry replaced by preload, or SIZE_MAX */
    uint8_t add_preload;        /* no LD_PRELOAD entry: one is added */
    uint8_t add_keep[SHIM_ENV_KEEP];
    char preload[SHIM_ENV_ENTRY_MAX]; /* the program's LD_PRELOAD with the shim appended */
};
/* 0: use envp as it is; else the size of the array the new one needs */
size_t shim_env_need(char *const *envp, struct shim_envfix *fx);
char *const *shim_env_fix(char *const *envp, char **v, size_t need, struct shim_envfix *fx);
/* envp, or a copy on the caller's stack with what tracing needs put back */
#define SHIM_ENV(envp) \
    struct shim_envfix envp##_fx; \
    size_t envp##_need = shim_env_need(envp, &envp##_fx); \
    char *envp##_v[envp##_need ? envp##_need : 1]; \
    envp = shim_env_fix(envp, envp##_v, envp##_need, &envp##_fx)

/* ---- modules.c: the address map ---- */
extern volatile int shim_map_pending;      /* modules to report (init, dlopen) */
void shim_report_modules(void);
const char *shim_exe_path(void);

/* ---- fds.c: the descriptors an image starts with (event fds) ---- */
void shim_report_fds(void);
/* The inode of descriptor fd (pipe:[INODE], socket:[INODE]), 0 if none:
 * one fstat, after a call that made fd (pipe, socket, socketpair). */
uint64_t shim_fd_ino(int fd);

/* ---- unwind.c: libgcc's unwinder, loaded on demand ---- */
typedef _Unwind_Reason_Code (*shim_unw_backtrace_fn)(_Unwind_Trace_Fn, void *);
typedef _Unwind_Ptr (*shim_unw_ip_fn)(struct _Unwind_Context *, int *);
typedef _Unwind_Word (*shim_unw_cfa_fn)(struct _Unwind_Context *);
struct shim_unwinder {
    shim_unw_backtrace_fn backtrace; /* NULL until loaded, then never changes */
    shim_unw_ip_fn get_ip_info;
    shim_unw_cfa_fn get_cfa;
};
extern struct shim_unwinder shim_unw;
/* Loads libgcc_s.so.1 (once; said once on stderr if it cannot): true when
 * shim_unw is usable. Not async-signal-safe (dlopen): ordinary code only. */
bool shim_unwind_load(void);

/* ---- stack.c ---- */
/* The stack event of the call made from ra (NULL: none), by thread tid. */
void shim_record_stack(const void *ra, uint32_t tid);

/* ---- core.c: the call in flight (doc/design.md "Calls in flight") ----
 * Each thread's cell in its inbox (<posixtrace/record.h>), cached here; a
 * thread that cannot have one writes a cell of its own nobody reads. Plain
 * stores only: seq odd, the fields, seq even with release order. */
extern __thread struct posixtrace_inflight_cell *shim_cell __attribute__((tls_model("initial-exec")));
struct posixtrace_inflight_cell *shim_cell_find(void);
static inline struct posixtrace_inflight_cell *shim_cell_get(void)
{
    struct posixtrace_inflight_cell *w = shim_cell;
    return likely(w != NULL) ? w : shim_cell_find();
}
/* Events of calls (not the address map, stacks, process_start, probe_def,
 * which are recorded without shim_emit or outside any call). */
#define SHIM_IS_CALL(id) ((id) >= POSIXTRACE_EV_OPEN)
static inline uint32_t shim_cell_open(struct posixtrace_inflight_cell *w)
{
    uint32_t s = w->seq;
    __atomic_store_n(&w->seq, s + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE); /* seq odd before the fields change */
    return s + 2;
}
static inline void shim_cell_close(struct posixtrace_inflight_cell *w, uint32_t s)
{
    __atomic_store_n(&w->seq, s, __ATOMIC_RELEASE);
}

/* ---- building and recording one call ---- */
struct shim_call {
    unsigned id;
    uint32_t n;          /* payload bytes so far */
    uint32_t flags;      /* POSIXTRACE_CALL_* */
    int saved_errno;
    int *errp;           /* &errno, this thread's: looked up once per call */
    uint32_t tid;        /* 0: shim_tid() at emit */
    bool timed;          /* shim_end ran: the library sets the duration */
    int vleft;           /* variable fields still to write; -1: fixed part not written */
    bool defect;         /* built against another event's definition */
    unsigned char sud;   /* the selector at shim_begin (system-call mode) */
    uint64_t t0;         /* posixtrace_call_begin() */
    const void *ra;
    union {
        struct posixtrace_call_hdr hdr;
        unsigned char buf[SHIM_PAYLOAD_MAX];
        uint64_t align;
    } p;
};

/* core.c: the shim's initialisation, once per image (process_start first). */
extern int shim_started;
void shim_setup_early(const void *ra);

/* A call into libposixtrace outside a wrapper's recorded call (the exec and
 * spawn wrappers' posixtrace_before_exec, posixtrace_reserved_fd_repair):
 * its system calls are the trace system's, made with the selector ALLOW in
 * the system-call mode, so that they are never recorded as the program's
 * (the handler's test of the caller needs an unwind, which may fail). */
#define SHIM_QUIET(call) \
    do { \
        unsigned char shim_quiet_was_ = shim_sud_enter(); \
        call; \
        shim_sud_restore(shim_quiet_was_); \
    } while (0)

static inline bool shim_begin(struct shim_call *c, unsigned id, const void *ra)
{
    /* A call recorded before the shim's constructor ran (another object's
     * constructor): process_start goes first all the same. */
    if (unlikely(!__atomic_load_n(&shim_started, __ATOMIC_RELAXED)))
        shim_setup_early(ra);
    if (unlikely(shim_internal_caller(ra)))
        return false;
    c->sud = shim_sud_enter(); /* the real call is not recorded again as a system call */
    c->id = id;
    c->ra = ra;
    c->n = sizeof c->p.hdr;
    c->flags = 0;
    c->tid = 0;
    c->p.hdr.err = 0;
    c->p.hdr.ret = 0;
    c->p.hdr.duration_ns = 0;
    c->errp = &errno;
    c->saved_errno = *c->errp;
    c->timed = false;
    c->vleft = -1;
    c->defect = false;
    c->t0 = posixtrace_call_begin(id);
    /* The address map goes before the call (not in its duration), so that a
     * reader can symbolize the call and its stack: at the first call after
     * start-up or a dlopen. process_start begins the map: it goes first. */
    if (unlikely(shim_map_pending) && id != POSIXTRACE_EV_PROCESS_START &&
        posixtrace_wanted(POSIXTRACE_EV_MODULE)) {
        shim_report_modules();
        c->t0 = posixtrace_call_begin(id);
    }
    if (likely(SHIM_IS_CALL(id))) { /* in flight until shim_emit */
        struct posixtrace_inflight_cell *w = shim_cell_get(); /* its tid set there */
        uint32_t s = shim_cell_open(w);
        w->id = id;
        w->nargs = 0;
        w->t0 = c->t0;
        shim_cell_close(w, s);
    }
    return true;
}

/* The call's first integer arguments, published before the call is made
 * (after shim_begin), in the order of the event's fixed fields, so that a
 * controller can show a call still in progress at the end (doc/events.md
 * posixtrace:call_unfinished). */
static inline void shim_args(unsigned n, int64_t a0, int64_t a1, int64_t a2)
{
    struct posixtrace_inflight_cell *w = shim_cell;
    uint32_t s = shim_cell_open(w);
    w->arg[0] = a0;
    w->arg[1] = a1;
    w->arg[2] = a2;
    w->nargs = n;
    shim_cell_close(w, s);
}

/* After the call: its result, errno if it failed. errno as the call left it
 * is restored by shim_emit. The duration is measured by the library when
 * shim_emit records the event (posixtrace_sys_call: one clock read serves
 * the duration's end and the timestamp). */
static inline void shim_end(struct shim_call *c, int64_t ret, bool failed)
{
    c->saved_errno = *c->errp;
    c->p.hdr.ret = ret;
    c->p.hdr.err = failed ? c->saved_errno : 0;
    c->timed = true;
}

/* For functions that return an error number (pthread_*). */
static inline void shim_end_rc(struct shim_call *c, int rc)
{
    c->saved_errno = *c->errp;
    c->p.hdr.ret = rc;
    c->p.hdr.err = rc;
    c->timed = true;
}

/* Recorded before a call that may not return. */
static inline void shim_noreturn(struct shim_call *c)
{
    c->flags |= POSIXTRACE_CALL_NORETURN;
}

/* The fixed part of event `ev`'s payload, `n` bytes (8 a field, in
 * definition order), followed by `nvar` variable fields. Called through the
 * generated shim_fix_<event>() (shim_emit.h), never directly. */
static inline void shim_fixed(struct shim_call *c, unsigned ev, const void *p, uint32_t n,
                              unsigned nvar)
{
    if (unlikely(ev != c->id || c->vleft != -1))
        c->defect = true;
    if (n != 0)
        __builtin_memcpy(c->p.buf + c->n, p, n); /* fixed fields always fit */
    c->n += n;
    c->vleft = (int)nvar;
}

/* Room for the next variable field's bytes: the payload limit less what is
 * written and a length word for it and each variable field after it. */
static inline uint32_t shim_room(const struct shim_call *c)
{
    uint32_t need = c->n + 4 * (uint32_t)(c->vleft > 0 ? c->vleft : 1);
    return need < SHIM_PAYLOAD_MAX ? SHIM_PAYLOAD_MAX - need : 0;
}

/* The variable fields, each written by one call of the functions below, in
 * the order of the event's definition (shim_emit checks their number). */
/* A variable field: `len` bytes of p, cut to `limit` and to the room left. */
void shim_var(struct shim_call *c, const void *p, size_t len, size_t limit);
/* A string (no NUL); NULL gives an empty field. */
void shim_str(struct shim_call *c, const char *s);
/* The first shim_cfg.strsize bytes of a buffer of which `len` are valid;
 * len < 0 (the call failed): not read, empty field marked NODATA. */
void shim_buf(struct shim_call *c, const void *p, ssize_t len);
/* An argv array: the strings NUL-terminated, back to back (NULL: empty). */
void shim_argv(struct shim_call *c, char *const *argv);
/* An empty variable field, marked NODATA (pointer not read). */
void shim_nodata(struct shim_call *c);

/* ---- payload.c: memory the program passed that may not be readable ----
 * A call that fails (or that does not read an argument at all) proves
 * nothing about its pointers; the exec family is recorded before the call.
 * Such memory is read only after a system call has probed each of its pages
 * (EFAULT instead of a fault; the probe leaves errno alone): see
 * preload/README.md. `struct shim_pages` remembers the last pages found
 * readable, so that a run of reads (argv, envp) probes each page once. */
#define SHIM_PAGES_N 8
struct shim_pages {
    uintptr_t page[SHIM_PAGES_N];
    unsigned next;
};
#define SHIM_PAGES_INIT { { 1, 1, 1, 1, 1, 1, 1, 1 }, 0 } /* 1: no page */
void shim_probe_init(void);                   /* chooses the probe (at initialisation) */
/* Every page of [p, p + n) readable (n = 0: true). */
bool shim_readable(struct shim_pages *pg, const void *p, size_t n);
/* strnlen(s, max) over readable pages only; SIZE_MAX if s runs into a page
 * that is not readable before its NUL or `max` bytes. */
size_t shim_strnlen_safe(struct shim_pages *pg, const char *s, size_t max);
/* shim_str and shim_argv for memory not known to be readable: a field that
 * runs into an unreadable page is empty and marked NODATA. */
void shim_str_safe(struct shim_call *c, const char *s);
void shim_argv_safe(struct shim_call *c, char *const *argv);
/* A string argument after the call: read directly if the call succeeded
 * (it read the string), over probed pages if it failed. */
static inline void shim_str_after(struct shim_call *c, const char *s, bool ok)
{
    if (likely(ok))
        shim_str(c, s);
    else
        shim_str_safe(c, s);
}
/* Before the call, n bytes at p that the call will read (an address length,
 * a msghdr field): false if not readable (then the call fails with EFAULT).
 * Read directly when they lie in the page of the calling wrapper's frame
 * (SHIM_FRAME(): that page is mapped), else after a probe. */
bool shim_peek(void *out, const void *p, size_t n, const void *frame);
#define SHIM_FRAME() __builtin_frame_address(0)

/* Record the call (and its stack if asked), restore errno. */
void shim_emit(struct shim_call *c);
/* Record the event only (the header's version, size, tid and flags filled
 * in); false if it was not built as its definition says (then not recorded). */
bool shim_record(struct shim_call *c);

/* shim_fix_<event>(): generated from <posixtrace/events.def> (tools/gen-payloads) */
#include "shim_emit.h"

#endif
