/*
 * vfork children in the system-call mode (preload/README.md, "System calls:
 * Syscall User Dispatch", "vfork children"): vfork, and clone/clone3 with
 * CLONE_VM | CLONE_VFORK (glibc's posix_spawn, and so system() and popen();
 * Python's subprocess through vfork()). The child runs on its parent
 * thread's thread data (same memory, same thread pointer) while the parent
 * is suspended, until it execs or exits.
 *
 * The handler (handler.c) pushes a frame here before the call (what the
 * child may change, the call; every signal but SIGSYS blocked until each
 * side's trap, so that no handler of the program runs with the other
 * side's identity), and sends it to one of the region's vfork stubs
 * (region.S). After the call:
 *  - the child turns dispatch on with a prctl made from the stub (the
 *    kernel gives no child its parent's), with the parent's selector byte
 *    (the parent is suspended: one thread at a time uses it), then traps
 *    (shim_sud_vtrap, outside the region): shim_sud_vfork_back() gives it
 *    an identity of its own (its thread id cached afresh, libposixtrace's
 *    entry set aside: posixtrace_vfork_child(), its events carry its own
 *    pid and go to slots of its own), its calls recorded (the parent's
 *    mute, below, not its), and it goes on where the call returns;
 *  - the parent traps too, when the child has exec'd or exited: its
 *    identity, mute and return address back (the child may have changed
 *    them all), and the call recorded with its result (the child's pid).
 * The kernel saves and restores every register across a trap, so this
 * C code runs without disturbing the program's registers.
 *
 * Mute: a wrapper that records a call whose own system calls must not be
 * recorded again (posix_spawn, vfork: fork.c) but whose child must be armed
 * keeps the selector BLOCK with shim_sud_mute set: the calls trap, are made
 * (the vfork-like clone through the stubs) and not recorded.
 */
#include "../shim.h"
#include "sud.h"

#include <linux/sched.h>
#include <stddef.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define VF_MAX 8     /* a vfork child that vforks...: deeper ones are not armed */
#define VF_FRAMES 64 /* calls under way in the process at once; more: not armed */

enum vf_kind { VF_VM, VF_STACK, VF_CL3_VM, VF_CL3_STACK };

/* A call under way. Not in the thread's data: the static TLS block a
 * preloaded library may take is small (an LD_AUDIT namespace leaves little).
 * The first two fields are read by the child's stub (region.S). */
struct vf_frame {
    stack_t *ss;            /* the child's alternate stack, or NULL */
    uint64_t mask;          /* the program's signal mask */
    stack_t ss_mem;
    struct vf_frame *prev;  /* the thread's frame before (a vfork child's parent's) */
    uintptr_t resume;       /* the program's address after the call */
    uintptr_t rdi;          /* clone3: the program's rdi */
    long nr, a[6];          /* the call, recorded when it returns in the parent */
    const void *ra;         /* its program address */
    uint64_t t0;            /* its start */
    uint32_t tid;           /* the parent's cached thread id */
    unsigned char kind;
    unsigned char mute;     /* the parent's */
    signed char stack;      /* the child's alternate stack (pool index), or -1 */
    struct shim_ksigaction sigsys; /* the program's SIGSYS action (handler.c emulates it) */
    bool rec;               /* recorded when it returns */
    volatile bool switched; /* the child took an identity of its own */
};

_Static_assert(offsetof(struct vf_frame, ss) == 0 && offsetof(struct vf_frame, mask) == 8,
               "region.S reads them there");
static struct vf_frame frames[VF_FRAMES];
static uint64_t frames_used; /* a bit per frame */
__thread struct vf_frame *shim_sud_vtop __attribute__((tls_model("initial-exec")));
__thread uint32_t shim_sud_vdepth __attribute__((tls_model("initial-exec")));
__thread long shim_sud_vret __attribute__((tls_model("initial-exec")));
__thread unsigned char shim_sud_mute __attribute__((tls_model("initial-exec")));

/* The child's SIGSYS handler runs on an alternate stack of the shim's own:
 * the child may be on a stack sized for its own needs only (posix_spawn's:
 * 36 KiB; a program's clone: any), and the handler with the kernel's signal
 * frame takes about 6 KiB. A pool of VF_STACKS stacks mapped once, at the
 * first such call, one taken by the parent before the call and given back
 * when it returns there (nested children take another); none free: the
 * child's handler runs on its own stack. The stub (region.S) gives the
 * child sigaltstack(frame->ss) and the SIGSYS action with SA_ONSTACK
 * (shim_sud_vact: its own copy of the actions, without CLONE_SIGHAND). */
#define VF_STACKS 8
#define VF_STACK_SIZE ((size_t)64 << 10)
static char *pool;
static unsigned long pool_used;

static char *pool_map(void)
{
    char *p = __atomic_load_n(&pool, __ATOMIC_ACQUIRE);
    if (p != NULL)
        return p;
    void *m = mmap(NULL, VF_STACKS * VF_STACK_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    if (!__atomic_compare_exchange_n(&pool, &p, (char *)m, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        munmap(m, VF_STACKS * VF_STACK_SIZE); /* another thread mapped it first */
        return p;
    }
    return (char *)m;
}

/* A stack for the child of a call with these clone flags, or -1. */
static int stack_take(stack_t *ss, uint64_t flags)
{
    char *p;
    if ((flags & CLONE_SIGHAND) || (p = pool_map()) == NULL)
        return -1;
    for (int i = 0; i < VF_STACKS; i++) {
        unsigned long bit = 1ul << i;
        if (!(__atomic_fetch_or(&pool_used, bit, __ATOMIC_ACQUIRE) & bit)) {
            ss->ss_sp = p + (size_t)i * VF_STACK_SIZE;
            ss->ss_size = VF_STACK_SIZE;
            ss->ss_flags = 0;
            return i;
        }
    }
    return -1;
}

static void stack_give(int i)
{
    if (i >= 0)
        __atomic_fetch_and(&pool_used, ~(1ul << i), __ATOMIC_RELEASE);
}

/* The call's clone flags (vfork's: CLONE_VM | CLONE_VFORK); 0 if none or
 * unreadable. */
static uint64_t clone_flags(long nr, const long *a)
{
    uint64_t flags = 0;
    if (nr == SYS_vfork)
        return CLONE_VM | CLONE_VFORK;
    if (nr == SYS_clone)
        return (uint64_t)a[0];
#ifdef SYS_clone3
    struct shim_pages pg = SHIM_PAGES_INIT;
    if (nr == SYS_clone3 && a[0] != 0 && (unsigned long)a[1] >= 8 &&
        shim_readable(&pg, (const void *)a[0], 8))
        memcpy(&flags, (const void *)a[0], 8);
#endif
    return flags;
}

bool shim_sud_vforks(long nr, const long *a)
{
    /* with its own thread data (CLONE_SETTLS) the shim's variables are not
     * where the stubs look for them */
    return (clone_flags(nr, a) & (CLONE_VM | CLONE_VFORK | CLONE_SETTLS)) ==
           (CLONE_VM | CLONE_VFORK);
}

/* Signals (but SIGSYS, which must never be) are blocked from the call to
 * each side's trap: a handler of the program that ran in between would
 * record with the other's identity. The program's mask is then given back
 * (the trap's rt_sigreturn puts in place the one its frame holds). */
static void mask_all(struct vf_frame *f, ucontext_t *uc)
{
    uint64_t all = ~(1ull << (SIGSYS - 1));
    memcpy(&f->mask, &uc->uc_sigmask, sizeof f->mask);
    memcpy(&uc->uc_sigmask, &all, sizeof all);
}

static void mask_back(const struct vf_frame *f, ucontext_t *uc)
{
    memcpy(&uc->uc_sigmask, &f->mask, sizeof f->mask);
}

static struct vf_frame *frame_take(void)
{
    for (int i = 0; i < VF_FRAMES; i++) {
        uint64_t bit = 1ull << i;
        if (!(__atomic_fetch_or(&frames_used, bit, __ATOMIC_ACQUIRE) & bit))
            return &frames[i];
    }
    return NULL;
}

static void frame_give(struct vf_frame *f)
{
    __atomic_fetch_and(&frames_used, ~(1ull << (f - frames)), __ATOMIC_RELEASE);
}

bool shim_sud_vfork_push(long nr, const long *a, ucontext_t *uc)
{
    const greg_t *g = uc->uc_mcontext.gregs;
    uint32_t d = shim_sud_vdepth;
    struct vf_frame *f = d < VF_MAX ? frame_take() : NULL;
    if (f == NULL)
        return false;
    f->prev = shim_sud_vtop;
    f->resume = (uintptr_t)g[REG_RIP];
    f->rdi = (uintptr_t)g[REG_RDI];
    f->nr = nr;
    memcpy(f->a, a, sizeof f->a);
    f->rec = false;
    f->switched = false;
    f->mute = shim_sud_mute;
    f->stack = (signed char)stack_take(&f->ss_mem, clone_flags(nr, a));
    f->ss = f->stack >= 0 ? &f->ss_mem : NULL;
    f->sigsys = shim_sud_prog_action; /* a child's rt_sigaction(SIGSYS) is its own */
    mask_all(f, uc);
    shim_sud_vtop = f;
    shim_sud_vdepth = d + 1;
    return true;
}

/* A fork child (its own copy of the memory): the calls under way are its
 * parent's, whose traps come back there. */
void shim_sud_vfork_forget(void)
{
    shim_sud_vtop = NULL;
    shim_sud_vdepth = 0;
}

/* The frame goes (the parent's trap, or the call not made through a stub). */
static void pop(struct vf_frame *f)
{
    shim_sud_vtop = f->prev;
    shim_sud_vdepth--;
    stack_give(f->stack);
    frame_give(f);
}

void shim_sud_vfork_record_later(const struct shim_call *c)
{
    struct vf_frame *f = shim_sud_vtop;
    f->rec = true;
    f->t0 = c->t0;
    f->ra = c->ra;
}

/* The stub the handler sends the call to (the frame's kind set with it). */
void shim_sud_vfork_redirect(greg_t *g)
{
    struct vf_frame *f = shim_sud_vtop;
    uintptr_t rip = (uintptr_t)g[REG_RIP];
    if (rip == (uintptr_t)shim_sud_clone3_vm_stub) {
        f->kind = VF_CL3_VM;
        g[REG_RIP] = (greg_t)(uintptr_t)shim_sud_vfork_cl3_vm_stub;
    } else if (rip == (uintptr_t)shim_sud_clone3_stack_stub) {
        f->kind = VF_CL3_STACK;
        g[REG_RIP] = (greg_t)(uintptr_t)shim_sud_vfork_cl3_stack_stub;
    } else if (rip == (uintptr_t)shim_sud_stack_stub) {
        f->kind = VF_STACK;
        g[REG_RIP] = (greg_t)(uintptr_t)shim_sud_vfork_stack_stub;
    } else {
        f->kind = VF_VM;
        g[REG_RIP] = (greg_t)(uintptr_t)shim_sud_vfork_vm_stub;
    }
}

/* The handler could not make the call through the stubs (clone3's
 * arguments refused): the frame goes. */
void shim_sud_vfork_drop(ucontext_t *uc)
{
    struct vf_frame *f = shim_sud_vtop;
    mask_back(f, uc);
    pop(f);
}

/* In the child: where the stub would have gone on (region.S). */
static void child_resume(const struct vf_frame *f, greg_t *g)
{
    uintptr_t *sp = (uintptr_t *)(uintptr_t)g[REG_RSP];
    switch (f->kind) {
    case VF_STACK: /* its new stack's top holds the return address */
        g[REG_RIP] = (greg_t)sp[0];
        g[REG_RSP] = (greg_t)(uintptr_t)(sp + 1);
        break;
    case VF_CL3_STACK: /* the program's rdi, then the return address */
        g[REG_RDI] = (greg_t)sp[0];
        g[REG_RIP] = (greg_t)sp[1];
        g[REG_RSP] = (greg_t)(uintptr_t)(sp + 2);
        break;
    case VF_CL3_VM:
        g[REG_RDI] = (greg_t)f->rdi;
        /* fall through */
    default:
        g[REG_RIP] = (greg_t)f->resume;
        break;
    }
}

static void child(struct vf_frame *f, ucontext_t *uc)
{
    greg_t *g = uc->uc_mcontext.gregs;
    f->tid = shim_tid_swap(0); /* its own, cached at its first event */
    posixtrace_vfork_child();
    f->switched = true;
    shim_sud_mute = 0; /* its calls are its own, whatever its parent was in */
    g[REG_RAX] = 0;
    child_resume(f, g);
    mask_back(f, uc);
}

static void parent(struct vf_frame *f, ucontext_t *uc, long r)
{
    greg_t *g = uc->uc_mcontext.gregs;
    shim_sud_prog_action = f->sigsys;
    mask_back(f, uc);
    if (f->switched) {
        posixtrace_vfork_parent();
        (void)shim_tid_swap(f->tid);
    }
    shim_sud_mute = f->mute;
    shim_sud_resume = f->resume;
    g[REG_RAX] = r;
    g[REG_RIP] = (greg_t)f->resume;
    if (f->kind == VF_CL3_VM || f->kind == VF_CL3_STACK)
        g[REG_RDI] = (greg_t)f->rdi;
    if (f->rec)
        shim_sud_record_return(f->nr, f->a, f->ra, f->t0, r);
    pop(f);
}

void shim_sud_vfork_back(ucontext_t *uc)
{
    greg_t *g = uc->uc_mcontext.gregs;
    struct vf_frame *f = shim_sud_vtop;
    long r = shim_sud_vret;
    if (f == NULL) { /* not from a stub (cannot happen): as an unknown call */
        g[REG_RAX] = -ENOSYS;
        return;
    }
    if (r == 0)
        child(f, uc);
    else
        parent(f, uc, r);
}
