/*
 * New processes: fork (recorded in the parent, ret = the child's pid, and in
 * the child, ret = 0, into the streams it inherits), vfork and
 * posix_spawn[p].
 *
 * vfork cannot be wrapped by a C function: the child returns through the
 * wrapper's frame, which the parent then finds overwritten. On x86-64 an
 * assembly stub keeps the caller's return address in thread-local storage
 * and calls the real vfork; the child comes back first and switches to its
 * own identity (posixtrace_vfork_child: its events carry its pid and thread
 * id, in slots of its own), the parent comes back when the child has exec'd
 * or exited, switches back and records the call with its result and
 * duration. Elsewhere vfork is not interposed (doc/events.md).
 */
#include "shim.h"

#include <spawn.h>
#include <sys/syscall.h>
#include <unistd.h>

REAL(pid_t, fork, void);

static SHIM_NOINLINE pid_t fork_rec(const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_FORK, ra))
        return NEXT(fork)();
    /* the child's parent, taken before the fork: a getppid in the child
     * would name its new parent if this one had died meanwhile */
    pid_t self = (pid_t)syscall(SYS_getpid);
    pid_t r = NEXT(fork)();
    if (r == 0)
        shim_tid_reset();
    shim_end(&c, r, r < 0);
    shim_fix_fork(&c, r == 0 ? self : 0);
    shim_emit(&c);
    return r;
}

SHIM_API pid_t fork(void)
{
    if (likely(!posixtrace_wanted(POSIXTRACE_EV_FORK)))
        return NEXT(fork)();
    return fork_rec(RA());
}

#if defined(__x86_64__)
REAL(pid_t, vfork, void);

/* One vfork under way on this thread (nested: a vfork child that vforks).
 * In thread-local storage, which the child shares but does not write: the
 * child's stub reads its frame, the parent's pops it. */
#define VFORK_MAX 8
struct vfork_frame {
    const void *ra; /* the caller's return address */
    uint64_t t0;    /* the call's start, if recorded */
    uint32_t tid;   /* the parent's cached thread id */
    uint8_t sud;    /* the system-call mode's vfork depth before the call (at most 8) */
    bool rec;       /* the call is recorded */
    bool own;       /* the child switched here (not in the system-call mode's trap) */
    unsigned char mute; /* the mode's mute before the call */
};
static __thread struct vfork_frame vf_frames[VFORK_MAX] __attribute__((tls_model("initial-exec")));
static __thread uint32_t vf_depth __attribute__((tls_model("initial-exec")));

struct vfork_target {
    void *fn;        /* the real vfork */
    uintptr_t track; /* 0: too deep, the stub jumps to it as it was called */
};

/* Entry (the parent): the frame, then the real vfork for the stub to call. */
__attribute__((used)) struct vfork_target shim_vfork_pre(const void *ra)
{
    struct vfork_target t = { (void *)NEXT(vfork), 0 };
    uint32_t d = vf_depth;
    if (d >= VFORK_MAX)
        return t;
    struct vfork_frame *f = &vf_frames[d];
    f->ra = ra;
    f->tid = shim_tid();
    f->rec = posixtrace_wanted(POSIXTRACE_EV_VFORK) && !shim_internal_caller(ra);
    f->t0 = f->rec ? posixtrace_call_begin(POSIXTRACE_EV_VFORK) : 0;
    f->sud = (uint8_t)shim_sud_vdepth;
    f->own = false;
    /* recorded here: not again as a system call; but made through the
     * system-call mode's stub all the same (muted), which arms the child */
    f->mute = f->rec ? shim_sud_mute_enter() : shim_sud_mute;
    vf_depth = d + 1;
    t.track = 1;
    return t;
}

/* vfork returned 0: the child records as itself from now on. Returns where
 * the caller called vfork from. */
__attribute__((used)) const void *shim_vfork_child(void)
{
    struct vfork_frame *f = &vf_frames[vf_depth - 1];
    if (shim_sud_vdepth == f->sud) { /* not done by the system-call mode (sud/vfork.c) */
        shim_tid_swap(0); /* its own thread id, cached at its first event */
        posixtrace_vfork_child();
        f->own = true;
    }
    return f->ra;
}

/* The parent's frame, before shim_vfork_parent pops it. */
__attribute__((used)) const void *shim_vfork_ra(void)
{
    return vf_frames[vf_depth - 1].ra;
}

struct vfork_back {
    const void *ra;
    intptr_t ret;
};

/* vfork returned in the parent (the child's pid, or -1): the parent's
 * identity back, then its event with the result. */
__attribute__((used)) struct vfork_back shim_vfork_parent(int r)
{
    struct vfork_frame *f = &vf_frames[--vf_depth];
    if (f->own)
        posixtrace_vfork_parent();
    shim_tid_swap(f->tid);
    shim_sud_mute_leave(f->mute);
    shim_sud_leave(); /* the child shared the selector, and may have left it ALLOW */
    struct shim_call c;
    if (f->rec && shim_begin(&c, POSIXTRACE_EV_VFORK, f->ra)) {
        c.t0 = f->t0;
        shim_end(&c, r, r < 0);
        shim_fix_vfork(&c);
        shim_emit(&c);
    }
    return (struct vfork_back){ f->ra, r };
}

/* The real vfork is called with the stub's return address in place of the
 * caller's (kept in vf_frames): both the child (first) and the parent (when
 * the child has exec'd or exited) come back to the stub, which keeps nothing
 * on the stack across the call; each then returns to the caller (push and
 * ret rather than a jump: the call and its return stay paired for the
 * processor's return predictor). */
__asm__(".text\n"
        ".globl vfork\n"
        ".type vfork,@function\n"
        "vfork:\n"
        ".cfi_startproc\n"
        "  movq (%rsp), %rdi\n"
        "  subq $8, %rsp\n"
        ".cfi_adjust_cfa_offset 8\n"
        "  call shim_vfork_pre\n"
        "  addq $8, %rsp\n"
        ".cfi_adjust_cfa_offset -8\n"
        "  testq %rdx, %rdx\n"
        "  jnz 1f\n"
        "  jmp *%rax\n" /* untracked: as called */
        "1:\n"
        "  addq $8, %rsp\n"
        ".cfi_adjust_cfa_offset -8\n"
        ".cfi_undefined rip\n"
        "  call *%rax\n"
        "  testl %eax, %eax\n"
        "  jnz 2f\n"
        "  call shim_vfork_child\n"
        "  movq %rax, %rcx\n"
        "  xorl %eax, %eax\n"
        "  pushq %rcx\n"
        "  ret\n"
        "2:\n" /* the caller's return address back in place (for stacks), the result below */
        "  subq $8, %rsp\n"
        ".cfi_adjust_cfa_offset 8\n"
        "  pushq %rax\n"
        ".cfi_adjust_cfa_offset 8\n"
        "  call shim_vfork_ra\n"
        "  movq %rax, 8(%rsp)\n"
        ".cfi_offset %rip, -8\n"
        "  movl (%rsp), %edi\n"
        "  call shim_vfork_parent\n"
        "  movq %rdx, %rax\n"
        "  addq $8, %rsp\n"
        ".cfi_adjust_cfa_offset -8\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size vfork, .-vfork\n");
#endif

/* ---- posix_spawn, posix_spawnp ---- */
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);
static void *real_posix_spawn, *real_posix_spawnp;

static SHIM_NOINLINE int spawn_rec(int search, pid_t *pid, const char *path,
                                   const posix_spawn_file_actions_t *fa,
                                   const posix_spawnattr_t *at, char *const argv[],
                                   char *const envp[], const void *ra)
{
    spawn_fn next = search ? (spawn_fn)shim_get(&real_posix_spawnp, "posix_spawnp")
                           : (spawn_fn)shim_get(&real_posix_spawn, "posix_spawn");
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_SPAWN, ra))
        return next(pid, path, fa, at, argv, envp);
    pid_t child = -1;
    /* its system calls made through the system-call mode's stubs (which
     * arm the child), not recorded again */
    unsigned char mute = shim_sud_mute_enter();
    int rc = next(&child, path, fa, at, argv, envp);
    shim_sud_mute_leave(mute);
    shim_end_rc(&c, rc);
    if (rc == 0 && pid != NULL)
        *pid = child;
    shim_fix_spawn(&c, rc == 0 ? child : -1, search);
    /* The child's exec read them if it succeeded, but a spawn that failed
     * (EFAULT from the child's exec) proves nothing: probed pages only. */
    shim_str_safe(&c, path);
    shim_argv_safe(&c, argv);
    shim_emit(&c);
    return rc;
}

SHIM_API int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                         const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
    SHIM_ENV(envp);
    SHIM_QUIET(posixtrace_reserved_fd_repair()); /* fdkeep.c */
    if (likely(!posixtrace_wanted(POSIXTRACE_EV_SPAWN)))
        return ((spawn_fn)shim_get(&real_posix_spawn, "posix_spawn"))(pid, path, fa, at, argv,
                                                                       envp);
    return spawn_rec(0, pid, path, fa, at, argv, envp, RA());
}

SHIM_API int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                          const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
    SHIM_ENV(envp);
    SHIM_QUIET(posixtrace_reserved_fd_repair()); /* fdkeep.c */
    if (likely(!posixtrace_wanted(POSIXTRACE_EV_SPAWN)))
        return ((spawn_fn)shim_get(&real_posix_spawnp, "posix_spawnp"))(pid, file, fa, at, argv,
                                                                         envp);
    return spawn_rec(1, pid, file, fa, at, argv, envp, RA());
}
