/*
 * libgcc's unwinder, loaded only when a process asks for what needs it:
 * call stacks (stack.c) or the system-call mode (sud/caller.c). Loading
 * libgcc_s.so.1 costs a process 120 to 180 us on this project's virtual
 * machines, mostly its constructor's CPU identification (cpuid leaves the
 * guest each time), and most traced processes never unwind.
 *
 * shim_unwind_load() calls dlopen, which is not async-signal-safe: it is
 * called from ordinary code only (the shim's initialisation,
 * posixtrace_shim_set_stack, turning the system-call mode on), never from
 * a recording path or a signal handler. Those read shim_unw, whose
 * functions are set once and never change.
 */
#include "shim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

struct shim_unwinder shim_unw;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int failed; /* said once */

static void say_failed(const char *why)
{
    char m[256];
    int n = snprintf(m, sizeof m, "posixtrace-preload: libgcc_s.so.1 (the unwinder) could not "
                     "be loaded: %s; no call stacks, and system calls are shown at their "
                     "instruction's address\n", why != NULL ? why : "unknown error");
    if (n > 0)
        (void)!write(2, m, (size_t)n < sizeof m ? (size_t)n : sizeof m - 1);
}

/* Under load_lock: the three functions, or false. */
static bool load_locked(void)
{
    void *h = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL)
        return false;
    struct shim_unwinder u = {
        .get_ip_info = (shim_unw_ip_fn)dlsym(h, "_Unwind_GetIPInfo"),
        .get_cfa = (shim_unw_cfa_fn)dlsym(h, "_Unwind_GetCFA"),
    };
    shim_unw_backtrace_fn bt = (shim_unw_backtrace_fn)dlsym(h, "_Unwind_Backtrace");
    if (bt == NULL || u.get_ip_info == NULL || u.get_cfa == NULL)
        return false; /* the handle stays: libgcc_s is never unloaded */
    shim_unw.get_ip_info = u.get_ip_info;
    shim_unw.get_cfa = u.get_cfa;
    /* its address range first: the unwinder's own calls are the trace system's */
    shim_note_range(SHIM_RANGE_UNWINDER, (uintptr_t)bt);
    __atomic_store_n(&shim_unw.backtrace, bt, __ATOMIC_RELEASE);
    return true;
}

bool shim_unwind_load(void)
{
    if (__atomic_load_n(&shim_unw.backtrace, __ATOMIC_ACQUIRE) != NULL)
        return true;
    int saved = errno;
    pthread_mutex_lock(&load_lock);
    bool ok = shim_unw.backtrace != NULL || (!failed && load_locked());
    if (!ok && !failed) {
        failed = 1;
        say_failed(dlerror());
    }
    pthread_mutex_unlock(&load_lock);
    errno = saved;
    return ok;
}
