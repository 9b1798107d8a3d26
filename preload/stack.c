/*
 * Call stacks. With POSIXTRACE_STACK=N (or posixtrace_shim_set_stack(N)),
 * each recorded call is followed, in the same thread, by a "stack" event
 * holding up to N return addresses captured with libunwind's unw_backtrace
 * (no allocation: the addresses go to the stack, the event is recorded like
 * any other). Frame 0 is the call's own prog address (the return address
 * into the caller); the shim's frames are left out.
 */
#include "shim.h"

#include <libunwind.h>

void shim_record_stack(const void *ra)
{
    if (!posixtrace_wanted(POSIXTRACE_EV_STACK))
        return;
    void *ips[SHIM_STACK_MAX + 8];
    uint32_t depth = shim_cfg.stack_depth;
    int n = unw_backtrace(ips, (int)depth + 8);
    int start = 0;
    for (int i = 0; i < n && i < 8; i++) {
        if (ips[i] == ra) {
            start = i;
            break;
        }
    }
    int count = n - start;
    if (count > (int)depth)
        count = (int)depth;
    if (count < 0)
        count = 0;
    uint64_t addrs[SHIM_STACK_MAX];
    for (int i = 0; i < count; i++)
        addrs[i] = (uint64_t)(uintptr_t)ips[start + i];
    struct shim_call c;
    shim_begin(&c, POSIXTRACE_EV_STACK, ra);
    shim_fix_stack(&c);
    shim_var(&c, addrs, (size_t)count * 8, SIZE_MAX);
    shim_record(&c);
}

/* Extension for programs that run under the shim (<posixtrace/events.h>). */
SHIM_API int posixtrace_shim_set_stack(unsigned depth)
{
    if (depth > SHIM_STACK_MAX)
        return EINVAL;
    __atomic_store_n(&shim_cfg.stack_depth, depth, __ATOMIC_RELAXED);
    return 0;
}
