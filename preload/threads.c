/*
 * Threads: pthread_create (in the creator), thread_start (in the new thread,
 * before its start routine), pthread_exit (recorded before; also when the
 * start routine returns, which is an implicit pthread_exit), pthread_join.
 *
 * The new thread reaches the shim through a trampoline whose (routine, arg,
 * creator) record comes from a fixed pool: no allocation. When the pool is
 * exhausted (more than POOL threads being created at the same instant), the
 * thread starts without a trampoline and has no thread_start event.
 */
#include "shim.h"

#include <pthread.h>

#define POOL 256
struct tramp {
    _Atomic int used;
    void *(*fn)(void *);
    void *arg;
    uint32_t creator;
};
static struct tramp pool[POOL];
static _Atomic unsigned hint;

static struct tramp *tramp_get(void)
{
    unsigned start = hint++;
    for (unsigned i = 0; i < POOL; i++) {
        struct tramp *t = &pool[(start + i) % POOL];
        int zero = 0;
        if (t->used == 0 && __atomic_compare_exchange_n(&t->used, &zero, 1, false,
                                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return t;
    }
    return NULL;
}

static void record_exit(void *retval, const void *ra)
{
    struct shim_call c;
    if (!posixtrace_wanted(POSIXTRACE_EV_PTHREAD_EXIT) ||
        !shim_begin(&c, POSIXTRACE_EV_PTHREAD_EXIT, ra))
        return;
    shim_noreturn(&c);
    shim_fix_pthread_exit(&c, (uintptr_t)retval);
    shim_emit(&c);
}

static void *tramp_run(void *p)
{
    struct tramp *t = p;
    void *(*fn)(void *) = t->fn;
    void *arg = t->arg;
    uint32_t creator = t->creator;
    __atomic_store_n(&t->used, 0, __ATOMIC_RELEASE);
    if (shim_sud_on)
        (void)shim_sud_arm_thread();
    struct shim_call c;
    if (posixtrace_wanted(POSIXTRACE_EV_THREAD_START) &&
        shim_begin(&c, POSIXTRACE_EV_THREAD_START, (const char *)fn + 1)) {
        shim_fix_thread_start(&c, (uintptr_t)fn, (uintptr_t)arg, creator);
        shim_emit(&c);
    }
    void *r = fn(arg);
    record_exit(r, (const char *)fn + 1); /* like a return address into fn */
    return r;
}

REAL(int, pthread_create, pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

/* The thread through a trampoline when one is needed (its start or exit
 * recorded, or the system-call mode arming it) and one is free. */
static int create_tramp(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    struct tramp *t = NULL;
    if (posixtrace_wanted(POSIXTRACE_EV_THREAD_START) ||
        posixtrace_wanted(POSIXTRACE_EV_PTHREAD_EXIT) || shim_sud_on)
        t = tramp_get();
    if (t == NULL)
        return NEXT(pthread_create)(th, attr, fn, arg);
    t->fn = fn;
    t->arg = arg;
    t->creator = shim_tid();
    int rc = NEXT(pthread_create)(th, attr, tramp_run, t);
    if (rc != 0)
        __atomic_store_n(&t->used, 0, __ATOMIC_RELEASE);
    return rc;
}

static SHIM_NOINLINE int create_rec(pthread_t *th, const pthread_attr_t *attr,
                                    void *(*fn)(void *), void *arg, const void *ra)
{
    struct shim_call c;
    if (shim_internal_caller(ra)) /* the trace system's threads: never armed */
        return NEXT(pthread_create)(th, attr, fn, arg);
    if (!posixtrace_wanted(POSIXTRACE_EV_PTHREAD_CREATE)) {
        unsigned char was = shim_sud_enter(); /* its clone is not the program's */
        int rc = create_tramp(th, attr, fn, arg);
        shim_sud_restore(was);
        return rc;
    }
    if (!shim_begin(&c, POSIXTRACE_EV_PTHREAD_CREATE, ra))
        return NEXT(pthread_create)(th, attr, fn, arg);
    int rc = create_tramp(th, attr, fn, arg);
    shim_end_rc(&c, rc);
    shim_fix_pthread_create(&c, rc == 0 ? (uint64_t)*th : 0, (uintptr_t)fn, (uintptr_t)arg);
    shim_emit(&c);
    return rc;
}

SHIM_API int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
                            void *arg)
{
    if (likely(!posixtrace_wanted(POSIXTRACE_EV_PTHREAD_CREATE) &&
               !posixtrace_wanted(POSIXTRACE_EV_THREAD_START) &&
               !posixtrace_wanted(POSIXTRACE_EV_PTHREAD_EXIT) && !shim_sud_on))
        return NEXT(pthread_create)(th, attr, fn, arg);
    return create_rec(th, attr, fn, arg, RA());
}

REAL(void, pthread_exit, void *);

SHIM_API __attribute__((noreturn)) void pthread_exit(void *retval)
{
    record_exit(retval, RA());
    NEXT(pthread_exit)(retval);
    __builtin_unreachable();
}

REAL(int, pthread_join, pthread_t, void **);

static SHIM_NOINLINE int join_rec(pthread_t th, void **ret, const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_PTHREAD_JOIN, ra))
        return NEXT(pthread_join)(th, ret);
    void *v = NULL;
    int rc = NEXT(pthread_join)(th, &v);
    shim_end_rc(&c, rc);
    if (rc == 0 && ret != NULL)
        *ret = v;
    shim_fix_pthread_join(&c, (uint64_t)th, (uintptr_t)v);
    shim_emit(&c);
    return rc;
}

SHIM_API int pthread_join(pthread_t th, void **ret)
{
    if (likely(!posixtrace_wanted(POSIXTRACE_EV_PTHREAD_JOIN)))
        return NEXT(pthread_join)(th, ret);
    return join_rec(th, ret, RA());
}

/* A fork child: its own thread id; system calls traced again (the
 * kernel does not pass Syscall User Dispatch to children). */
static void shim_fork_child(void)
{
    shim_tid_reset();
    shim_sud_child();
}

void shim_threads_init(void)
{
    pthread_atfork(NULL, NULL, shim_fork_child);
}
