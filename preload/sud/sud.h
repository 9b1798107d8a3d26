/*
 * The shim's system-call mode (preload/README.md, "System calls: Syscall
 * User Dispatch"): every system call a thread makes outside the allowed
 * region (region.S) traps, while the thread's selector byte says BLOCK, to
 * the SIGSYS handler (handler.c), which records it and makes it.
 *
 * Selector rules: BLOCK while the program runs in an armed thread; ALLOW
 * while inside the trace system (the handler, a wrapper between shim_begin
 * and shim_emit, so that a call a wrapper records is not recorded twice).
 */
#ifndef POSIXTRACE_SHIM_SUD_H
#define POSIXTRACE_SHIM_SUD_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <ucontext.h>

struct shim_call;
struct posixtrace_event_desc;

#define SHIM_SUD_ALLOW 0 /* SYSCALL_DISPATCH_FILTER_ALLOW */
#define SHIM_SUD_BLOCK 1 /* SYSCALL_DISPATCH_FILTER_BLOCK */

extern __thread volatile unsigned char shim_sud_sel __attribute__((tls_model("initial-exec")));
extern __thread unsigned char shim_sud_armed __attribute__((tls_model("initial-exec")));
/* Where a call made through a region stub returns (region.S). */
extern __thread uintptr_t shim_sud_resume __attribute__((tls_model("initial-exec")));

/* Entering the trace system (a wrapper's recorded call): ALLOW; returns
 * the selector as it was, for shim_sud_restore (BLOCK in a thread not armed:
 * one armed meanwhile, by early.c's signal, goes on traced). */
static inline unsigned char shim_sud_enter(void)
{
    unsigned char was = shim_sud_armed ? shim_sud_sel : SHIM_SUD_BLOCK;
    if (__builtin_expect(shim_sud_armed, 0))
        shim_sud_sel = SHIM_SUD_ALLOW;
    return was;
}
static inline void shim_sud_restore(unsigned char was)
{
    if (__builtin_expect(shim_sud_armed, 0))
        shim_sud_sel = was;
}
/* Mute (vfork.c): a wrapper recording a call whose child must be armed
 * (posix_spawn, vfork) lets its system calls trap, made and not recorded:
 * the selector BLOCK, shim_sud_mute set; returns the mute as it was. */
extern __thread unsigned char shim_sud_mute __attribute__((tls_model("initial-exec")));
static inline unsigned char shim_sud_mute_enter(void)
{
    unsigned char was = shim_sud_mute;
    if (__builtin_expect(shim_sud_armed, 0)) {
        shim_sud_mute = 1;
        shim_sud_sel = SHIM_SUD_BLOCK;
    }
    return was;
}
/* Back inside the wrapper (ALLOW), the mute as it was. */
static inline void shim_sud_mute_leave(unsigned char was)
{
    if (__builtin_expect(shim_sud_armed, 0))
        shim_sud_sel = SHIM_SUD_ALLOW;
    shim_sud_mute = was;
}
/* Leaving it: BLOCK again in an armed thread. */
static inline void shim_sud_leave(void)
{
    if (__builtin_expect(shim_sud_armed, 0))
        shim_sud_sel = SHIM_SUD_BLOCK;
}

/* ---- arm.c ---- */
extern int shim_sud_on;               /* the mode is on in this process */
void shim_sud_init(void);             /* constructor: POSIXTRACE_SYSCALLS */
bool shim_sud_arm_thread(void);       /* this thread (new threads, fork children) */
void shim_sud_child(void);            /* a fork child: re-arm (dispatch is not inherited),
                                         the selector kept */
int shim_sud_set_action(int sig, const void *act, void *oact); /* raw rt_sigaction */
/* The program's own SIGSYS action (the handler emulates it). */
struct shim_ksigaction {
    void *handler;
    unsigned long flags;
    void *restorer;
    uint64_t mask;
};
extern struct shim_ksigaction shim_sud_prog_action;
extern struct shim_ksigaction shim_sud_vact; /* the same, SA_ONSTACK (vfork children) */

/* ---- early.c: threads started before the mode was on ---- */
void shim_sud_arm_early(void);              /* asks every other thread to arm itself */
bool shim_sud_arm_request(const siginfo_t *si); /* a SIGSYS that is such a request */
void shim_sud_arm_requested(void);          /* in the thread asked */

/* ---- sigwrap.c: the program's signal handlers run with BLOCK ---- */
long shim_sud_sigaction(long sig, const struct shim_ksigaction *act, struct shim_ksigaction *oact,
                        long size);
void *shim_sud_prog_handler(int sig);

/* ---- region.S ---- */
long shim_sud_raw(long nr, long a0, long a1, long a2, long a3, long a4, long a5);
extern const char shim_sud_region_start[], shim_sud_region_end[];
void shim_sud_restorer(void);
void shim_sud_vm_stub(void);
void shim_sud_stack_stub(void);
void shim_sud_clone3_vm_stub(void);
void shim_sud_clone3_stack_stub(void);
void shim_sud_vfork_vm_stub(void);
void shim_sud_vfork_stack_stub(void);
void shim_sud_vfork_cl3_vm_stub(void);
void shim_sud_vfork_cl3_stack_stub(void);
/* Outside the region: where a vfork stub traps back to the handler, with
 * this number in rax (shim_sud_vtrap_ret: the address after its syscall). */
#define SHIM_SUD_VTRAP_NR 0x5d5d
extern const char shim_sud_vtrap_ret[];

/* ---- gate.S: the trace API's entry points, run with the selector ALLOW ---- */
struct shim_sud_gate {
    void **real;      /* the library's definition, once found */
    const char *name;
};
extern const struct shim_sud_gate shim_sud_gates[], shim_sud_gates_end[];

/* ---- caller.c ---- */
/* The return address into the caller of the function that made the call
 * trapped at call_addr (si_call_addr) with stack pointer sp and frame
 * pointer fp, or call_addr if it cannot be found. */
const void *shim_sud_caller(const void *call_addr, uintptr_t sp, uintptr_t fp);

/* ---- clone3.c ---- */
extern __thread uintptr_t shim_sud_cl3_rdi __attribute__((tls_model("initial-exec")));
/* clone3 with CLONE_VM (a[0] its clone_args, a[1] their size): the
 * registers g set for the region's stub; false if the arguments cannot be
 * copied (unreadable, larger than the copy): the call is then refused. */
bool shim_sud_clone3_vm(const long *a, greg_t *g);

/* ---- vfork.c: vfork and CLONE_VM | CLONE_VFORK children armed ---- */
extern __thread uint32_t shim_sud_vdepth __attribute__((tls_model("initial-exec")));
extern __thread long shim_sud_vret __attribute__((tls_model("initial-exec")));
bool shim_sud_vforks(long nr, const long *a);   /* the call makes such a child */
/* Before the call (the handler, uc as the program left it): false if too
 * deep (the child is then not armed). Signals stay blocked (but SIGSYS)
 * until the child's trap, and the parent's. */
bool shim_sud_vfork_push(long nr, const long *a, ucontext_t *uc);
void shim_sud_vfork_record_later(const struct shim_call *c); /* begun: recorded at return */
void shim_sud_vfork_redirect(greg_t *g); /* the handler's stub replaced by its vfork one */
void shim_sud_vfork_drop(ucontext_t *uc); /* not made through a stub after all */
void shim_sud_vfork_back(ucontext_t *uc);  /* the trap at shim_sud_vtrap_ret */
void shim_sud_vfork_forget(void);          /* a fork child: no call of its own under way */

/* ---- handler.c ---- */
void shim_sud_handler(int sig, void *si, void *uc);
/* A system call the shim makes in pieces for the program (fdkeep.c: a
 * close_range split around the reserved descriptor), recorded as the one
 * call the program made: begin (NULL: not recorded; else its descriptor, and
 * the pieces are then made with the selector ALLOW), then end with that
 * descriptor, the arguments the program passed and the raw result (-errno). */
const struct posixtrace_event_desc *shim_sud_call_begin(struct shim_call *c, long nr,
                                                        const void *ra);
void shim_sud_call_end(struct shim_call *c, const struct posixtrace_event_desc *d, const long *a,
                       long r);
/* A call made through a vfork stub, recorded when it returns in the parent. */
void shim_sud_record_return(long nr, const long *a, const void *ra, uint64_t t0, long r);

/* ---- capture.c: one trapped call's event ---- */
/* The arguments as the descriptor says; before: the call is not made yet
 * (pointers read over probed pages only). */
void shim_sud_capture(struct shim_call *c, const struct posixtrace_event_desc *d,
                      const long *a, long ret, bool before);

#endif
