/*
 * Call stacks. With POSIXTRACE_STACK=N (or posixtrace_shim_set_stack(N)),
 * each recorded call is followed, in the same thread, by a "stack" event
 * holding up to N return addresses, innermost first. Frame 0 is the call's
 * own prog address (the return address into the program); the trace
 * system's frames (the shim's wrappers and recording path, main_wrapper,
 * the thread trampolines, libposixtrace, the unwinder) are left out wherever
 * they are, so the stack is the program's alone.
 *
 * The unwinder is the C compiler's (libgcc's _Unwind_Backtrace, which finds
 * each object's unwind table with glibc's _dl_find_object: no lock, no
 * allocation, no system call), loaded when stacks are turned on (unwind.c).
 * It leaves nothing in the process: libunwind
 * was dropped because it opens a pipe at its first use (to validate memory,
 * libunwind 1.6 x86_64 Ginit.c), which shifted the program's descriptor
 * numbers and later read from whatever descriptor took the pipe's number.
 */
#include "shim.h"

#define SHIM_STACK_LOOK 8 /* the call site is looked for among the first frames */

struct walk {
    uintptr_t ra;       /* the call site: frame 0 */
    uint64_t *out;
    unsigned n, cap;    /* frames kept, room */
    unsigned depth;     /* frames wanted once the call site is seen */
    bool found;
};

static _Unwind_Reason_Code one_frame(struct _Unwind_Context *ctx, void *arg)
{
    struct walk *w = arg;
    int before = 0;
    uintptr_t ip = shim_unw.get_ip_info(ctx, &before);
    if (ip == 0)
        return _URC_END_OF_STACK;
    if (shim_internal_caller((const void *)ip))
        return _URC_NO_REASON; /* the trace system's frame */
    if (!w->found && ip == w->ra) {
        w->found = true;
        w->n = 0; /* what came before the call site is not the program's stack */
    }
    w->out[w->n++] = ip;
    if (w->found ? w->n >= w->depth : w->n >= w->cap)
        return _URC_END_OF_STACK;
    return _URC_NO_REASON;
}

/* Up to depth frames of the calling thread, frame 0 = ra. */
static unsigned capture(const void *ra, uint64_t *out, unsigned depth)
{
    uint64_t raw[SHIM_STACK_MAX + SHIM_STACK_LOOK];
    struct walk w = { (uintptr_t)ra, raw, 0, depth + SHIM_STACK_LOOK, depth, false };
    shim_unw_backtrace_fn bt = __atomic_load_n(&shim_unw.backtrace, __ATOMIC_ACQUIRE);
    if (bt != NULL) /* else not loaded: stacks are not turned on without it */
        bt(one_frame, &w);
    unsigned n = 0;
    if (!w.found) /* the call site was not unwound to (a frame without unwind info) */
        out[n++] = (uint64_t)(uintptr_t)ra;
    for (unsigned i = 0; i < w.n && n < depth; i++)
        out[n++] = raw[i];
    return n;
}

void shim_record_stack(const void *ra, uint32_t tid)
{
    uint32_t depth = shim_cfg.stack_depth;
    /* No call site (process_start, modules): no program stack to show. */
    if (ra == NULL || depth == 0 || !posixtrace_wanted(POSIXTRACE_EV_STACK))
        return;
    if (depth > SHIM_STACK_MAX)
        depth = SHIM_STACK_MAX;
    uint64_t addrs[SHIM_STACK_MAX];
    unsigned count = capture(ra, addrs, depth);
    struct shim_call c;
    shim_begin(&c, POSIXTRACE_EV_STACK, ra);
    shim_fix_stack(&c);
    shim_var(&c, addrs, (size_t)count * 8, SIZE_MAX);
    c.tid = tid;
    shim_record(&c);
}

/* Extension for programs that run under the shim (<posixtrace/events.h>).
 * Stacks need the unwinder: loaded here the first time (not from a signal
 * handler: dlopen). */
SHIM_API int posixtrace_shim_set_stack(unsigned depth)
{
    if (depth > SHIM_STACK_MAX)
        return EINVAL;
    if (depth != 0 && !shim_unwind_load())
        return ENOTSUP;
    __atomic_store_n(&shim_cfg.stack_depth, depth, __ATOMIC_RELAXED);
    return 0;
}
