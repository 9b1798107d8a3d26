/*
 * Writers that died. A process killed (or exec'd) while it recorded leaves
 * its slots OWNED forever, and maybe a record announced (PENDING) but never
 * committed, which would hold the reader back for good. The consumer (reader
 * or flusher, in the controller, where system calls are allowed) looks now
 * and then at the processes owning slots: the slots of one that is gone
 * (/proc says so, or its pid now names a process started at another time)
 * become orphans; the consumer (consume.c) then withdraws their pending
 * record, counting it lost, and reclaims them once drained.
 */
#include "../internal.h"

#define PT_REAP_PERIOD_NS (50 * 1000 * 1000)

void pt_reap_dead_writers(struct pt_handle *h)
{
    struct pt_shm *s = h->shm;
    int64_t now = pt_monotonic_ns();
    if (now - h->reap_ns < PT_REAP_PERIOD_NS)
        return;
    h->reap_ns = now;
    uint32_t hwm = atomic_load(&s->slots_hwm);
    uint32_t dead_pid = 0, live_pid = 0;
    uint64_t dead_start = 0, live_start = 0;
    for (uint32_t i = 0; i < hwm && i < PT_NSLOTS; i++) {
        struct pt_slot *sl = &pt_slots(s)[i];
        if (atomic_load_explicit(&sl->state, memory_order_acquire) != PT_SLOT_OWNED)
            continue;
        uint32_t pid = sl->pid;
        uint64_t start = sl->pid_start;
        if (start == 0 || (pid == pt_pid && start == pt_start))
            continue; /* a controller's slot, or ours */
        bool dead;
        if (pid == dead_pid && start == dead_start)
            dead = true;
        else if (pid == live_pid && start == live_start)
            dead = false;
        else
            dead = !pt_proc_alive((pid_t)pid, start);
        if (dead) {
            dead_pid = pid;
            dead_start = start;
            uint32_t owned = PT_SLOT_OWNED;
            if (sl->pid == pid && sl->pid_start == start)
                atomic_compare_exchange_strong(&sl->state, &owned, PT_SLOT_ORPHAN);
        } else {
            live_pid = pid;
            live_start = start;
        }
    }
}
