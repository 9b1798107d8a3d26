/*
 * The program's signal handlers run with the selector BLOCK: a signal that
 * arrives while the selector is ALLOW (inside a wrapper's real call, which
 * the wrapper records) would otherwise run its handler untraced. A
 * handler the program installs with rt_sigaction while the mode is on (the
 * call traps: handler.c) is replaced, in the action the kernel gets, by
 * shim_sud_sigtramp, which sets BLOCK, calls the program's handler and puts
 * the selector back; the old action given back names the program's
 * handler. Handlers installed before the shim's initialisation are left
 * as they are.
 */
#include "../shim.h"
#include "sud.h"

#include <signal.h>
#include <string.h>
#include <sys/syscall.h>

#define NSIG_K 65
static void *prog_handler[NSIG_K]; /* the program's handler of each signal, when wrapped */

static void shim_sud_sigtramp(int sig, siginfo_t *si, void *uc)
{
    unsigned char was = shim_sud_sel, mute = shim_sud_mute;
    void *h = (unsigned)sig < NSIG_K ? __atomic_load_n(&prog_handler[sig], __ATOMIC_ACQUIRE) : NULL;
    if (shim_sud_armed)
        shim_sud_sel = SHIM_SUD_BLOCK;
    shim_sud_mute = 0; /* a wrapper's muted calls (vfork.c) are its, not the handler's */
    if (h != NULL)
        ((void (*)(int, siginfo_t *, void *))h)(sig, si, uc);
    shim_sud_mute = mute;
    shim_sud_sel = was;
}

/* rt_sigaction(sig, act, oact) as the program asked, made with the
 * trampoline in place of a handler it installs (the program's noted before
 * the call, since a signal may come at once) and SIGSYS out of the
 * handler's mask; the old action given back names the program's handler. */
long shim_sud_sigaction(long sig, const struct shim_ksigaction *act, struct shim_ksigaction *oact,
                        long size)
{
    struct shim_pages pg = SHIM_PAGES_INIT;
    struct shim_ksigaction copy;
    const struct shim_ksigaction *use = act;
    bool ok_sig = sig > 0 && sig < NSIG_K;
    void *old_prog = ok_sig ? shim_sud_prog_handler((int)sig) : NULL;
    bool wrap = false;
    if (ok_sig && act != NULL && shim_readable(&pg, act, sizeof copy)) {
        memcpy(&copy, act, sizeof copy);
        copy.mask &= ~(1ull << (SIGSYS - 1));
        /* not in a vfork child (vfork.c): the handlers noted are its parent's too */
        wrap = copy.handler != (void *)SIG_DFL && copy.handler != (void *)SIG_IGN &&
               shim_sud_vdepth == 0;
        if (wrap) {
            __atomic_store_n(&prog_handler[sig], copy.handler, __ATOMIC_RELEASE);
            copy.handler = (void *)shim_sud_sigtramp;
        }
        use = &copy;
    }
    shim_sud_sel = SHIM_SUD_BLOCK;
    long r = shim_sud_raw(SYS_rt_sigaction, sig, (long)use, (long)oact, size, 0, 0);
    shim_sud_sel = SHIM_SUD_ALLOW;
    if (r != 0 && wrap)
        __atomic_store_n(&prog_handler[sig], old_prog, __ATOMIC_RELEASE);
    if (r == 0 && oact != NULL && oact->handler == (void *)shim_sud_sigtramp)
        oact->handler = old_prog;
    return r;
}

void *shim_sud_prog_handler(int sig)
{
    return sig > 0 && sig < NSIG_K ? __atomic_load_n(&prog_handler[sig], __ATOMIC_ACQUIRE) : NULL;
}
