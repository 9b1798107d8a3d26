/*
 * The program address of a trapped system call (preload/README.md, "System
 * calls"): the return address into the code that called the function
 * holding the `syscall` instruction (libc's read, syscall(), a program's
 * own stub), as the shim's other events and strace -k's second frame show
 * a call; the kernel gives only the address after the instruction
 * (si_call_addr).
 *
 * Unwinding from the SIGSYS handler with libgcc's _Unwind_Backtrace
 * (lock-free through glibc's _dl_find_object, no allocation, no system
 * call; loaded before the mode is turned on, ../unwind.c, and without it a
 * call keeps the instruction's address; the handler's sa_restorer has the
 * bytes of glibc's __restore_rt, so libgcc steps through the signal frame)
 * finds it, at about the cost of the trap itself. So it is done once per
 * call site: the interrupted function's
 * canonical frame address (CFA) less the trapped stack pointer is the same
 * at every call from one instruction when the CFA is computed from rsp
 * (not from rbp: a frame-pointer frame), and the caller's address is then
 * the word below the CFA. A site's offset is used once two unwinds agreed
 * on it (and it is at most 4 KiB: a syscall's function has a small frame);
 * a site with a frame-pointer frame (CFA = rbp + 16), whose
 * offsets disagreed, or where the word below the CFA is not what the
 * unwinder found, is unwound at every call; a site without unwind
 * information (assembly without CFI, JIT code) keeps the instruction's
 * own address.
 */
#include "../shim.h"
#include "sud.h"

#define LOOK 16       /* frames looked at: the handler's own, the signal frame, the call's */
#define SITES 1024    /* call sites remembered (direct-mapped) */

/* A site: address << 16 | (offset / 8) << 3 | state. */
enum { ONCE = 1, SURE, UNWIND, NONE };
static uint64_t sites[SITES];

struct find {
    uintptr_t at;     /* si_call_addr */
    uintptr_t caller; /* 0 until found */
    uintptr_t cfa;    /* the interrupted function's CFA */
    int seen;         /* the interrupted frame was reached */
    int left;
};

static _Unwind_Reason_Code frame(struct _Unwind_Context *ctx, void *arg)
{
    struct find *f = arg;
    int before = 0;
    uintptr_t ip = shim_unw.get_ip_info(ctx, &before);
    if (ip == 0 || --f->left < 0)
        return _URC_END_OF_STACK;
    if (f->seen) { /* the caller's frame: the CFA is the callee's */
        f->caller = ip;
        f->cfa = shim_unw.get_cfa(ctx);
        return _URC_END_OF_STACK;
    }
    f->seen = ip == f->at;
    return _URC_NO_REASON;
}

/* What the site's entry becomes after an unwind that found f. */
static uint64_t learn(uint64_t old, const struct find *f, uintptr_t sp, uintptr_t fp)
{
    uint64_t key = (uint64_t)f->at << 16;
    if (f->caller == 0)
        return key | NONE;
    uintptr_t off = f->cfa - sp;
    if (f->cfa <= sp || off > 4096 || off % 8 != 0 || f->cfa == fp + 16 ||
        *(const uintptr_t *)(f->cfa - 8) != f->caller)
        return key | UNWIND;
    uint64_t mine = key | (off / 8) << 3;
    if ((old & ~(uint64_t)7) == mine && (old & 7) == ONCE)
        return mine | SURE;
    if ((old >> 16) == f->at && (old & 7) == ONCE)
        return key | UNWIND; /* another offset than last time */
    return mine | ONCE;
}

const void *shim_sud_caller(const void *call_addr, uintptr_t sp, uintptr_t fp)
{
    uintptr_t at = (uintptr_t)call_addr;
    uint64_t *slot = &sites[(at ^ at >> 10) % SITES];
    uint64_t w = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if ((w >> 16) == at && (w & 7) == SURE)
        return *(const void *const *)(sp + ((w & 0xffff) >> 3) * 8 - 8);
    if ((w >> 16) == at && (w & 7) == NONE)
        return call_addr;
    shim_unw_backtrace_fn bt = __atomic_load_n(&shim_unw.backtrace, __ATOMIC_ACQUIRE);
    if (bt == NULL) /* libgcc_s could not be loaded (said when the mode was turned on) */
        return call_addr;
    struct find f = { at, 0, 0, 0, LOOK };
    bt(frame, &f);
    if (at >> 47 == 0 && ((w >> 16) != at || (w & 7) != UNWIND))
        __atomic_store_n(slot, learn(w, &f, sp, fp), __ATOMIC_RELAXED);
    return f.caller != 0 ? (const void *)f.caller : call_addr;
}
