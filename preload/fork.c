/*
 * New processes: fork (recorded in the parent, ret = the child's pid, and in
 * the child, ret = 0, into the streams it inherits), vfork and
 * posix_spawn[p].
 *
 * vfork cannot be wrapped by a C function: the child returns through the
 * wrapper's frame, which the parent then finds overwritten. On x86-64 an
 * assembly stub records the call at entry (POSIXTRACE_CALL_ENTRY) and jumps
 * to the real vfork with the caller's return address untouched. Elsewhere
 * vfork is not interposed (doc/events.md).
 */
#include "shim.h"

#include <spawn.h>
#include <unistd.h>

REAL(pid_t, fork, void);

static SHIM_NOINLINE pid_t fork_rec(const void *ra)
{
    struct shim_call c;
    if (!shim_begin(&c, POSIXTRACE_EV_FORK, ra))
        return NEXT(fork)();
    pid_t r = NEXT(fork)();
    if (r == 0)
        shim_tid_reset();
    shim_end(&c, r, r < 0);
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

/* Called by the stub with the caller's return address; returns the real vfork. */
__attribute__((used)) void *shim_vfork_pre(const void *ra)
{
    struct shim_call c;
    if (posixtrace_wanted(POSIXTRACE_EV_VFORK) && shim_begin(&c, POSIXTRACE_EV_VFORK, ra)) {
        c.flags |= POSIXTRACE_CALL_ENTRY;
        shim_emit(&c);
    }
    return (void *)NEXT(vfork);
}

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
        "  jmp *%rax\n"
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
    int rc = next(&child, path, fa, at, argv, envp);
    shim_end_rc(&c, rc);
    if (rc == 0 && pid != NULL)
        *pid = child;
    shim_fix(&c, (uint64_t)(int64_t)(rc == 0 ? child : -1));
    shim_fix(&c, (uint64_t)search);
    /* The child's exec read them if it succeeded, but a spawn that failed
     * (EFAULT from the child's exec) proves nothing: probed pages only. */
    shim_str_safe(&c, path, 1);
    shim_argv_safe(&c, argv, 0);
    shim_emit(&c);
    return rc;
}

SHIM_API int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                         const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
    SHIM_ENV(envp);
    if (likely(!posixtrace_wanted(POSIXTRACE_EV_SPAWN)))
        return ((spawn_fn)shim_get(&real_posix_spawn, "posix_spawn"))(pid, path, fa, at, argv,
                                                                       envp);
    return spawn_rec(0, pid, path, fa, at, argv, envp, RA());
}

SHIM_API int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                          const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
    SHIM_ENV(envp);
    if (likely(!posixtrace_wanted(POSIXTRACE_EV_SPAWN)))
        return ((spawn_fn)shim_get(&real_posix_spawnp, "posix_spawnp"))(pid, file, fa, at, argv,
                                                                         envp);
    return spawn_rec(1, pid, file, fa, at, argv, envp, RA());
}
