/*
 * The SIGSYS handler of the system-call mode: a call trapped by Syscall
 * User Dispatch is recorded and made (re-issued from the allowed region,
 * its result put in the program's rax), with the selector ALLOW while the
 * handler itself works and BLOCK while the call runs (so that the calls of
 * a program's signal handler that interrupts it are recorded too).
 *
 * Calls that cannot be made from the handler's frame:
 *  - rt_sigreturn: recorded, then made from the region with the program's
 *    own stack pointer (the handler returns to shim_sud_restorer);
 *  - vfork, clone and clone3 with CLONE_VM: the child must not start in
 *    the handler's frame (it would return through it, or run it on a new
 *    stack): they are made through the region's stubs in the program's
 *    frame and recorded at entry only (POSIXTRACE_CALL_ENTRY); clone3's
 *    arguments are copied (clone3.c: its stack is in them);
 *  - fork-like calls (fork, clone and clone3 without CLONE_VM) are made
 *    here: the child has its own copy of the frame; it is armed again
 *    (dispatch is not inherited) and both record the result.
 * Other signals' SIGSYS (seccomp's SECCOMP_RET_TRAP, kill) go to the
 * program's own SIGSYS action, which the handler keeps for it.
 */
#include "../shim.h"
#include "sud.h"

#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <posixtrace/record.h>

#ifndef SYS_USER_DISPATCH
#define SYS_USER_DISPATCH 2
#endif
#define SIGSYS_BIT (1ull << (SIGSYS - 1))

/* ---- the program's own SIGSYS action ---- */

static void chain(int sig, siginfo_t *si, void *uc)
{
    struct shim_ksigaction a = shim_sud_prog_action;
    if (a.handler == (void *)SIG_IGN)
        return;
    if (a.handler == (void *)SIG_DFL) {
        struct shim_ksigaction dfl = { 0 };
        (void)shim_sud_set_action(SIGSYS, &dfl, NULL);
        (void)syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGSYS);
        return;
    }
    if (a.flags & SA_SIGINFO)
        ((void (*)(int, siginfo_t *, void *))a.handler)(sig, si, uc);
    else
        ((void (*)(int))a.handler)(sig);
}

/* rt_sigaction(SIGSYS, ...): kept for the program, the handler stays. */
static long sigsys_action(const long *a)
{
    struct shim_pages pg = SHIM_PAGES_INIT;
    struct shim_ksigaction old = shim_sud_prog_action;
    const void *act = (const void *)a[1];
    void *oact = (void *)a[2];
    if ((unsigned long)a[3] != 8)
        return -EINVAL;
    if ((act != NULL && !shim_readable(&pg, act, sizeof old)) ||
        (oact != NULL && !shim_readable(&pg, oact, sizeof old)))
        return -EFAULT;
    if (act != NULL)
        memcpy(&shim_sud_prog_action, act, sizeof old);
    if (oact != NULL)
        memcpy(oact, &old, sizeof old);
    return 0;
}

/* The program's own PR_SET_SYSCALL_USER_DISPATCH (an emulator, a sandbox)
 * would take the thread's dispatch and the process's SIGSYS from the shim:
 * it fails with EINVAL, as on a kernel without it (said once). */
static long refuse_dispatch(void)
{
    static int said;
    if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED)) {
        static const char m[] = "posixtrace-preload: the program's own Syscall User Dispatch "
                                "is refused (EINVAL) while system calls are traced\n";
        (void)!write(2, m, sizeof m - 1);
    }
    return -EINVAL;
}

/* ---- masks that would block SIGSYS ---- */

/* The arguments the call is made with: a set without SIGSYS (in *local),
 * the program's own otherwise. Only for SIG_BLOCK and SIG_SETMASK: with
 * another `how` the call changes nothing (the shim's page probe passes an
 * invalid one, with an address that may end an object within 8 bytes). */
static void unmask_sigsys(long nr, long *use, uint64_t *local)
{
    struct shim_pages pg = SHIM_PAGES_INIT;
    int how = (int)use[0];
    if (nr == SYS_rt_sigprocmask && (how == SIG_BLOCK || how == SIG_SETMASK) && use[1] != 0 &&
        shim_readable(&pg, (const void *)use[1], 8)) {
        memcpy(local, (const void *)use[1], 8);
        if (*local & SIGSYS_BIT) {
            *local &= ~SIGSYS_BIT;
            use[1] = (long)local;
        }
    }
}

/* ---- recording ---- */

static void set_result(struct shim_call *c, long r)
{
    bool failed = r < 0 && r > -4096;
    c->p.hdr.ret = failed ? -1 : r;
    c->p.hdr.err = failed ? (int32_t)-r : 0;
    c->timed = true;
}

static void record(struct shim_call *c, const struct posixtrace_event_desc *d, const long *a,
                   long r, uint32_t flags)
{
    c->flags |= flags;
    if (!(flags & (POSIXTRACE_CALL_NORETURN | POSIXTRACE_CALL_ENTRY)))
        set_result(c, r);
    shim_sud_capture(c, d, a, r, (flags & (POSIXTRACE_CALL_NORETURN | POSIXTRACE_CALL_ENTRY)) != 0);
    /* -k: the stack from the caller's frame (the handler's, the signal
     * frame and the call's function are left out) */
    if (shim_record(c) && __builtin_expect(shim_cfg.stack_depth != 0, 0))
        shim_record_stack(c->ra, c->p.hdr.tid);
}

/* The call's descriptor if it is to be recorded (and c begun with program
 * address ra); not while a wrapper mutes its calls (vfork.c). */
static const struct posixtrace_event_desc *begin_at(struct shim_call *c, long nr, const void *ra)
{
    if ((unsigned long)nr > POSIXTRACE_SYSCALL_LAST - POSIXTRACE_SYSCALL_FIRST || shim_sud_mute)
        return NULL;
    unsigned id = POSIXTRACE_SYSCALL_FIRST + (unsigned)nr;
    if (!posixtrace_wanted(id))
        return NULL;
    const struct posixtrace_event_desc *d = posixtrace_event_desc(id);
    if (d == NULL)
        return NULL;
    return shim_begin(c, id, ra) ? d : NULL;
}

/* The same, its program address the caller's (caller.c); at: si_call_addr,
 * g: the registers. */
static const struct posixtrace_event_desc *begin(struct shim_call *c, long nr, const void *at,
                                                 const greg_t *g)
{
    if ((unsigned long)nr > POSIXTRACE_SYSCALL_LAST - POSIXTRACE_SYSCALL_FIRST || shim_sud_mute ||
        !posixtrace_wanted(POSIXTRACE_SYSCALL_FIRST + (unsigned)nr))
        return NULL;
    /* rt_sigreturn's function is the signal trampoline: no caller; a
     * call libposixtrace made through libc (posix_trace_event's futex wakes
     * and gettid: the one entry point without a gate, gate.S) is the trace
     * system's: not recorded; a function the trace system called (main,
     * through its main wrapper) is the program's own: its address is the
     * call's */
    const void *ra = nr == SYS_rt_sigreturn
                         ? at : shim_sud_caller(at, (uintptr_t)g[REG_RSP], (uintptr_t)g[REG_RBP]);
    if (nr != SYS_rt_sigreturn && shim_libtrace_caller(ra))
        return NULL;
    if (shim_internal_caller(ra))
        ra = at;
    return begin_at(c, nr, ra);
}

static bool noreturn_call(long nr)
{
    return nr == SYS_execve || nr == SYS_execveat || nr == SYS_exit || nr == SYS_exit_group;
}

/* fork-like: the child gets a copy of the handler's frame */
static bool forks(long nr, const long *a)
{
    if (nr == SYS_fork)
        return true;
    if (nr == SYS_clone)
        return !(a[0] & CLONE_VM);
#ifdef SYS_clone3
    if (nr == SYS_clone3) {
        struct shim_pages pg = SHIM_PAGES_INIT;
        uint64_t flags;
        if (a[0] == 0 || !shim_readable(&pg, (const void *)a[0], 8))
            return true; /* fails with EFAULT */
        memcpy(&flags, (const void *)a[0], 8);
        return !(flags & CLONE_VM);
    }
#endif
    return false;
}

/* ---- a call the shim makes in pieces for the program (sud.h) ---- */

const struct posixtrace_event_desc *shim_sud_call_begin(struct shim_call *c, long nr,
                                                        const void *ra)
{
    return shim_sud_armed ? begin_at(c, nr, ra) : NULL;
}

/* As record(), then what a wrapper's shim_emit does besides (the selector
 * and errno back, the call no longer in flight). */
void shim_sud_call_end(struct shim_call *c, const struct posixtrace_event_desc *d, const long *a,
                       long r)
{
    set_result(c, r);
    shim_sud_capture(c, d, a, r, false);
    shim_emit(c);
}

/* ---- calls made in the program's frame ---- */

static void redirect(greg_t *g, void (*stub)(void))
{
    shim_sud_resume = (uintptr_t)g[REG_RIP];
    g[REG_RIP] = (greg_t)(uintptr_t)stub;
}

/* true: the call is made after the handler returns. Not inlined, nor is
 * in_handler: one payload buffer on the handler's stack at a time. */
static SHIM_NOINLINE bool in_program_frame(long nr, const long *a, ucontext_t *uc, const void *ra)
{
    greg_t *g = uc->uc_mcontext.gregs;
    struct shim_call c;
    const struct posixtrace_event_desc *d;
    if (nr == SYS_rt_sigreturn) {
        if ((d = begin(&c, nr, ra, g)) != NULL)
            record(&c, d, a, 0, POSIXTRACE_CALL_NORETURN);
        g[REG_RIP] = (greg_t)(uintptr_t)shim_sud_restorer;
        return true;
    }
    bool vm = nr == SYS_vfork || (nr == SYS_clone && (a[0] & CLONE_VM));
#ifdef SYS_clone3
    bool vm3 = nr == SYS_clone3 && !forks(nr, a);
#else
    bool vm3 = false;
#endif
    if (!vm && !vm3)
        return false;
    /* a vfork-like child is armed and recorded as itself (vfork.c), and the
     * call recorded when it returns in the parent; other CLONE_VM children
     * are not armed: the call is recorded at entry */
    bool vfk = shim_sud_vforks(nr, a) && shim_sud_vfork_push(nr, a, uc);
    if ((d = begin(&c, nr, ra, g)) != NULL) {
        if (vfk)
            shim_sud_vfork_record_later(&c);
        else
            record(&c, d, a, 0, POSIXTRACE_CALL_ENTRY);
    }
    if (vm3) {
        if (!shim_sud_clone3_vm(a, g)) {
            g[REG_RAX] = -ENOSYS; /* arguments the copy cannot hold: glibc then uses clone */
            if (vfk)
                shim_sud_vfork_drop(uc);
            return true;
        }
    } else if (nr == SYS_clone && a[1] != 0) {
        uintptr_t *top = (uintptr_t *)(uintptr_t)a[1] - 1;
        *top = (uintptr_t)g[REG_RIP];
        g[REG_RSI] = (greg_t)(uintptr_t)top;
        redirect(g, shim_sud_stack_stub);
    } else {
        redirect(g, shim_sud_vm_stub);
    }
    if (vfk)
        shim_sud_vfork_redirect(g);
    return true;
}

/* A call made through a vfork stub, when it returns in the parent (vfork.c). */
void shim_sud_record_return(long nr, const long *a, const void *ra, uint64_t t0, long r)
{
    struct shim_call c;
    const struct posixtrace_event_desc *d = begin_at(&c, nr, ra);
    if (d != NULL) {
        c.t0 = t0;
        record(&c, d, a, r, 0);
    }
}

/* ---- calls made here ---- */

static long make(long nr, const long *a)
{
    long use[6];
    uint64_t set;
    memcpy(use, a, sizeof use);
    if (nr == SYS_rt_sigaction && a[0] == SIGSYS)
        return sigsys_action(a);
    if (nr == SYS_rt_sigaction)
        return shim_sud_sigaction(a[0], (const void *)a[1], (void *)a[2], a[3]);
    if (nr == SYS_prctl && a[0] == 59 /* PR_SET_SYSCALL_USER_DISPATCH */)
        return refuse_dispatch();
    unmask_sigsys(nr, use, &set);
    shim_sud_sel = SHIM_SUD_BLOCK;
    long r = shim_sud_raw(nr, use[0], use[1], use[2], use[3], use[4], use[5]);
    shim_sud_sel = SHIM_SUD_ALLOW;
    return r;
}

/* The handler's rt_sigreturn puts back the mask saved in its frame: a
 * change of the mask made here goes to that saved mask (the handler runs
 * with the program's mask: SA_NODEFER, no sa_mask). */
static void keep_mask(ucontext_t *uc)
{
    uint64_t cur;
    if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &cur, 8) == 0) {
        cur &= ~SIGSYS_BIT;
        memcpy(&uc->uc_sigmask, &cur, sizeof cur);
    }
}

static SHIM_NOINLINE void in_handler(long nr, const long *a, ucontext_t *uc, const void *ra)
{
    greg_t *g = uc->uc_mcontext.gregs;
    struct shim_call c;
    const struct posixtrace_event_desc *d = begin(&c, nr, ra, g);
    if (d != NULL && noreturn_call(nr)) {
        record(&c, d, a, 0, POSIXTRACE_CALL_NORETURN);
        d = begin(&c, nr, ra, g);
    }
    long r = make(nr, a);
    g[REG_RAX] = r;
    if (nr == SYS_rt_sigprocmask && r == 0)
        keep_mask(uc);
    if (r == 0 && forks(nr, a)) { /* the child: its own thread id, dispatch again */
        shim_tid_reset();
        shim_sud_child();
        shim_sud_sel = SHIM_SUD_ALLOW;
    }
    if (d != NULL)
        record(&c, d, a, r, 0);
}

void shim_sud_handler(int sig, void *siv, void *ucv)
{
    siginfo_t *si = siv;
    if (si->si_code != SYS_USER_DISPATCH) {
        if (shim_sud_arm_request(si))
            shim_sud_arm_requested(); /* early.c: a thread older than the mode */
        else
            chain(sig, si, ucv);
        return;
    }
    shim_sud_sel = SHIM_SUD_ALLOW;
    int saved = errno;
    ucontext_t *uc = ucv;
    greg_t *g = uc->uc_mcontext.gregs;
    long nr = (long)g[REG_RAX];
    if (nr == SHIM_SUD_VTRAP_NR && si->si_call_addr == (void *)shim_sud_vtrap_ret) {
        shim_sud_vfork_back(uc); /* a vfork stub's, after the call */
        errno = saved;
        shim_sud_sel = SHIM_SUD_BLOCK;
        return;
    }
    const long a[6] = { (long)g[REG_RDI], (long)g[REG_RSI], (long)g[REG_RDX],
                        (long)g[REG_R10], (long)g[REG_R8], (long)g[REG_R9] };
    if (!in_program_frame(nr, a, uc, si->si_call_addr))
        in_handler(nr, a, uc, si->si_call_addr);
    errno = saved;
    shim_sud_sel = SHIM_SUD_BLOCK;
}
