/*
 * Building an event payload (<posixtrace/events.h>): fixed fields are added
 * inline (shim.h), variable fields here, each cut so that the whole payload
 * stays within 1024 bytes (every later variable field keeps room for its
 * length word); a cut field sets POSIXTRACE_CALL_DATA_CUT.
 */
#include "shim.h"
#include "../libtrace/ring/copy_small.h"

#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* shim_var's body, inlined into the callers here (one call per field, not two) */
static inline __attribute__((always_inline)) void var_field(struct shim_call *c, const void *p,
                                                            size_t len, size_t limit)
{
    if (unlikely(c->vleft <= 0)) { /* more variable fields than the definition has */
        c->defect = true;
        return;
    }
    uint32_t room = shim_room(c);
    size_t n = len;
    if (n > limit)
        n = limit;
    if (n > room)
        n = room;
    if (n < len)
        c->flags |= POSIXTRACE_CALL_DATA_CUT;
    uint32_t n32 = (uint32_t)n;
    __builtin_memcpy(c->p.buf + c->n, &n32, 4);
    pt_copy_small(c->p.buf + c->n + 4, p, n);
    c->n += 4 + n32;
    c->vleft--;
}

void shim_var(struct shim_call *c, const void *p, size_t len, size_t limit)
{
    var_field(c, p, len, limit);
}

void shim_nodata(struct shim_call *c)
{
    c->flags |= POSIXTRACE_CALL_NODATA;
    shim_var(c, NULL, 0, 0);
}

void shim_str(struct shim_call *c, const char *s)
{
    if (s == NULL) {
        shim_var(c, NULL, 0, 0);
        return;
    }
    /* never read past what can be stored: strnlen to the room + 1 */
    size_t room = shim_room(c);
    var_field(c, s, strnlen(s, room + 1), SIZE_MAX);
}

void shim_buf(struct shim_call *c, const void *p, ssize_t len)
{
    if (len < 0)
        shim_nodata(c);
    else
        var_field(c, p, p != NULL ? (size_t)len : 0, shim_cfg.strsize);
}

/* argv, its strings read directly (pg NULL) or over probed pages only (an
 * unreadable pointer or string: the field is empty, NODATA). */
static void argv_field(struct shim_call *c, char *const *argv, struct shim_pages *pg)
{
    if (argv == NULL || unlikely(c->vleft <= 0)) {
        shim_var(c, NULL, 0, 0); /* an empty field (or the defect noted) */
        return;
    }
    uint32_t room = shim_room(c);
    uint32_t start = c->n, n = 0;
    c->n += 4;
    for (size_t i = 0;; i++) {
        if (pg != NULL && !shim_readable(pg, &argv[i], sizeof argv[i]))
            goto fault;
        const char *s = argv[i];
        if (s == NULL)
            break;
        size_t len = pg != NULL ? shim_strnlen_safe(pg, s, room - n) : strnlen(s, room - n);
        if (len == SIZE_MAX)
            goto fault;
        len++;
        if (n + len > room) { /* no room for this string and its NUL */
            c->flags |= POSIXTRACE_CALL_DATA_CUT;
            break;
        }
        pt_copy_small(c->p.buf + c->n, (const unsigned char *)s, len);
        c->n += (uint32_t)len;
        n += (uint32_t)len;
    }
    __builtin_memcpy(c->p.buf + start, &n, 4);
    c->vleft--;
    return;
fault:
    c->n = start;
    shim_nodata(c);
}

void shim_argv(struct shim_call *c, char *const *argv)
{
    argv_field(c, argv, NULL);
}

/* ---- memory that may not be readable ----
 * A page is probed with a system call that reads user memory and reports
 * EFAULT instead of faulting. The usual probe is rt_sigprocmask with an
 * invalid `how`: the kernel copies the new set (8 bytes) from the caller
 * before it looks at `how`, so it fails with EFAULT when they are not
 * readable and with EINVAL when they are, changing nothing either way; it is
 * cheap and allowed wherever the C library works (which uses it itself).
 * Initialisation checks that the kernel behaves so (EINVAL for a local,
 * EFAULT for the last page of the address space, the kernel's); otherwise
 * (a seccomp filter refuses it, or a kernel checks `how` first)
 * process_vm_readv of one byte of the own process; if neither works, no page
 * is readable: the fields are recorded NODATA. Readability is a property of
 * whole pages: the probe steps 4096 bytes, the smallest page size. */
#define PAGE 4096u
#define SIGSET_BYTES ((_NSIG - 1) / 8) /* the kernel's sigset_t */
enum { PROBE_UNKNOWN, PROBE_SIGMASK, PROBE_VMREAD, PROBE_NONE };
static int probe_mode;

static int sigmask_probe(const void *p)
{
    long r = syscall(SYS_rt_sigprocmask, -1, p, NULL, (size_t)SIGSET_BYTES);
    return r == 0 ? 0 : errno;
}

static int vmread_probe(const void *p)
{
    char b;
    struct iovec local = { &b, 1 }, remote = { (void *)p, 1 };
    ssize_t r = syscall(SYS_process_vm_readv, (pid_t)syscall(SYS_getpid), &local, 1UL,
                        &remote, 1UL, 0UL);
    return r == 1 ? 0 : r < 0 ? errno : EFAULT;
}

void shim_probe_init(void)
{
    if (__atomic_load_n(&probe_mode, __ATOMIC_RELAXED) != PROBE_UNKNOWN)
        return;
    int saved = errno;
    static const uint64_t good[2];
    const void *bad = (const void *)(uintptr_t)-(uintptr_t)PAGE; /* never user memory */
    int mode = PROBE_NONE;
    if (sigmask_probe(good) == EINVAL && sigmask_probe(bad) == EFAULT)
        mode = PROBE_SIGMASK;
    else if (vmread_probe(good) == 0 && vmread_probe(bad) == EFAULT)
        mode = PROBE_VMREAD;
    __atomic_store_n(&probe_mode, mode, __ATOMIC_RELAXED);
    errno = saved;
}

/* The page holding address a (which is in it) is readable. */
static bool probe_page(uintptr_t a)
{
    int mode = __atomic_load_n(&probe_mode, __ATOMIC_RELAXED);
    if (unlikely(mode == PROBE_UNKNOWN)) {
        shim_probe_init();
        mode = __atomic_load_n(&probe_mode, __ATOMIC_RELAXED);
    }
    int saved = errno;
    unsigned char sel = shim_sud_enter(); /* the shim's call, not the program's */
    bool ok = mode == PROBE_SIGMASK
                  ? sigmask_probe((const void *)(a & ~(uintptr_t)(SIGSET_BYTES - 1))) == EINVAL
              : mode == PROBE_VMREAD ? vmread_probe((const void *)a) == 0
                                     : false;
    shim_sud_restore(sel);
    errno = saved;
    return ok;
}

bool shim_readable(struct shim_pages *pg, const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p;
    if (n == 0)
        return true;
    if (a + n - 1 < a)
        return false;
    uintptr_t last = (a + n - 1) & ~(uintptr_t)(PAGE - 1);
    for (uintptr_t page = a & ~(uintptr_t)(PAGE - 1);; page += PAGE) {
        bool known = false;
        for (unsigned i = 0; i < SHIM_PAGES_N; i++)
            known |= pg->page[i] == page;
        if (!known) {
            if (!probe_page(page > a ? page : a))
                return false;
            pg->page[pg->next++ % SHIM_PAGES_N] = page;
        }
        if (page == last)
            return true;
    }
}

size_t shim_strnlen_safe(struct shim_pages *pg, const char *s, size_t max)
{
    size_t n = 0;
    while (n < max) {
        uintptr_t a = (uintptr_t)s + n;
        if (!shim_readable(pg, (const void *)a, 1))
            return SIZE_MAX;
        size_t take = PAGE - (a & (PAGE - 1)); /* to the end of the page */
        if (take > max - n)
            take = max - n;
        size_t l = strnlen(s + n, take);
        n += l;
        if (l < take)
            break; /* the NUL */
    }
    return n;
}

void shim_str_safe(struct shim_call *c, const char *s)
{
    if (s == NULL) {
        shim_var(c, NULL, 0, 0);
        return;
    }
    struct shim_pages pg = SHIM_PAGES_INIT;
    size_t len = shim_strnlen_safe(&pg, s, (size_t)shim_room(c) + 1);
    if (len == SIZE_MAX)
        shim_nodata(c);
    else
        shim_var(c, s, len, SIZE_MAX);
}

void shim_argv_safe(struct shim_call *c, char *const *argv)
{
    struct shim_pages pg = SHIM_PAGES_INIT;
    argv_field(c, argv, &pg);
}

bool shim_peek(void *out, const void *p, size_t n, const void *frame)
{
    uintptr_t a = (uintptr_t)p, f = (uintptr_t)frame & ~(uintptr_t)(PAGE - 1);
    bool in_frame_page = a >= f && a + n >= a && a + n <= f + PAGE;
    if (!in_frame_page) {
        struct shim_pages pg = SHIM_PAGES_INIT;
        if (!shim_readable(&pg, p, n))
            return false;
    }
    memcpy(out, p, n);
    return true;
}
