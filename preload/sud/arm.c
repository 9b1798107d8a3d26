/*
 * Turning the system-call mode on: the SIGSYS handler (installed with the
 * raw rt_sigaction, so that its sa_restorer is the region's), and
 * PR_SET_SYSCALL_USER_DISPATCH in each thread (the kernel keeps it per
 * thread, does not pass it to threads or fork children, and resets it at
 * exec): the main thread at the shim's initialisation (after every exec),
 * threads at their start (the pthread_create trampoline), fork children
 * when their first call returns (handler.c) or in the atfork child handler.
 */
#include "../shim.h"
#include "sud.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_OFF 0
#define PR_SYS_DISPATCH_ON 1
#endif
#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif

__thread volatile unsigned char shim_sud_sel __attribute__((tls_model("initial-exec")));
__thread unsigned char shim_sud_armed __attribute__((tls_model("initial-exec")));
__thread uintptr_t shim_sud_resume __attribute__((tls_model("initial-exec")));
/* The thread that armed itself with this thread data (its kernel id): a
 * thread that shares it (a raw clone without CLONE_SETTLS) is not armed. */
static __thread pid_t owner __attribute__((tls_model("initial-exec")));

int shim_sud_on;
struct shim_ksigaction shim_sud_prog_action;
struct shim_ksigaction shim_sud_vact; /* the handler's action, SA_ONSTACK (vfork.c) */

static void say(const char *what, int err)
{
    char m[256];
    int n = snprintf(m, sizeof m, "posixtrace-preload: system calls not traced (%s: %s); "
                     "libc calls are traced as before\n", what, strerror(err));
    if (n > 0)
        (void)!write(2, m, (size_t)n < sizeof m ? (size_t)n : sizeof m - 1);
}

int shim_sud_set_action(int sig, const void *act, void *oact)
{
    long r = syscall(SYS_rt_sigaction, sig, act, oact, 8);
    return r < 0 ? errno : 0;
}

/* SIGSYS must never be blocked in an armed thread: a trapped call would
 * then kill the process. */
static void unblock_sigsys(void)
{
    uint64_t set = 1ull << (SIGSYS - 1);
    (void)syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &set, NULL, 8);
}

/* sel: the selector once armed (BLOCK; a fork child keeps its parent's,
 * which is ALLOW inside a wrapper) */
static bool arm(unsigned char sel)
{
#if defined(__x86_64__)
    if (!shim_sud_on)
        return false;
    pid_t me = (pid_t)syscall(SYS_gettid), o = 0;
    if (!__atomic_compare_exchange_n(&owner, &o, me, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
        o != me) {
        errno = EBUSY;
        return false;
    }
    shim_sud_sel = SHIM_SUD_ALLOW;
    uintptr_t lo = (uintptr_t)shim_sud_region_start;
    if (prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, lo,
              (uintptr_t)shim_sud_region_end - lo, &shim_sud_sel) != 0) {
        shim_sud_armed = 0;
        return false;
    }
    shim_sud_armed = 1;
    /* after: a request of early.c pending on a thread that blocked SIGSYS
     * comes now, and finds it armed */
    unblock_sigsys();
    shim_sud_sel = sel;
    return true;
#else
    (void)sel;
    return false;
#endif
}

bool shim_sud_arm_thread(void)
{
    return arm(SHIM_SUD_BLOCK);
}

void shim_sud_child(void)
{
    owner = 0; /* the parent's thread data, copied: this process's now */
    shim_sud_vfork_forget();
    if (shim_sud_on)
        (void)arm(shim_sud_sel);
}

#if defined(__x86_64__)
/* The trace API's gates (gate.S): their definitions found when the mode is
 * turned on, so that none is looked up later in an armed thread (in a
 * signal handler, say). Without the mode a gate finds its definition at
 * its first call (22 dlsym calls saved at every process start, about
 * 22 000 instructions). */
static void resolve_gates(void)
{
    for (const struct shim_sud_gate *g = shim_sud_gates; g < shim_sud_gates_end; g++)
        (void)shim_get(g->real, g->name);
}
#endif

/* The handler, and the main thread armed; false with a message if the
 * kernel has no Syscall User Dispatch or refuses it. */
static bool turn_on(void)
{
#if defined(__x86_64__)
    resolve_gates();
    /* the descriptors built now, not by the first SIGSYS handler
     * (libtrace/api/syscalls_table.c); the unwinder loaded now, which the
     * handler cannot do (caller.c; without it, said on stderr) */
    (void)posixtrace_event_desc(POSIXTRACE_SYSCALL_FIRST);
    (void)shim_unwind_load();
    struct shim_ksigaction sa = {
        .handler = (void *)shim_sud_handler,
        .flags = SA_SIGINFO | SA_NODEFER | SA_RESTART | SA_RESTORER,
        .restorer = (void *)shim_sud_restorer,
        .mask = 0,
    };
    shim_sud_vact = sa;
    shim_sud_vact.flags |= SA_ONSTACK;
    int e = shim_sud_set_action(SIGSYS, &sa, &shim_sud_prog_action);
    if (e != 0) {
        say("rt_sigaction(SIGSYS)", e);
        return false;
    }
    shim_sud_on = 1;
    if (!shim_sud_arm_thread()) {
        e = errno;
        shim_sud_on = 0;
        (void)shim_sud_set_action(SIGSYS, &shim_sud_prog_action, NULL);
        say(e == EINVAL ? "this kernel has no Syscall User Dispatch (Linux >= 5.11)"
                        : "prctl(PR_SET_SYSCALL_USER_DISPATCH)", e);
        return false;
    }
    shim_sud_arm_early();
    return true;
#else
    say("Syscall User Dispatch is supported on x86-64 only", ENOSYS);
    return false;
#endif
}

void shim_sud_init(void)
{
    const char *v = getenv("POSIXTRACE_SYSCALLS");
    if (v == NULL || strcmp(v, "1") != 0)
        return;
    (void)turn_on();
}

/* <posixtrace/events.h>: the mode for a program that loads the shim itself. */
SHIM_API int posixtrace_shim_set_syscalls(int on)
{
    int saved = errno, rc = 0;
    if (on) {
        if (!shim_sud_on && !turn_on())
            rc = ENOSYS;
        else if (!shim_sud_armed && !shim_sud_arm_thread())
            rc = errno;
    } else {
        shim_sud_on = 0; /* threads created from now on are not armed */
    }
    if (!on && shim_sud_armed) {
        shim_sud_sel = SHIM_SUD_ALLOW;
        (void)prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0);
        shim_sud_armed = 0;
    }
    errno = saved;
    return rc;
}
