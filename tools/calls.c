/*
 * What the decoder knows of the shim's calls beyond their descriptors
 * (<posixtrace/events.h>): which function of an event's family was called
 * (the header's POSIXTRACE_CALL_FN bits), the arguments that function does
 * not take, the fields a failed call does not fill, and the fields whose
 * descriptor type says too little to show them (dup3's and pipe2's flags have
 * no access mode, accept4's no socket type, wait's options are W* flags).
 * Such fields are marked absent: text leaves them out, JSON shows null.
 */
#include "ptools.h"

#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>

#define FN_MAX 10

struct family {
    unsigned id;
    const char *fn[FN_MAX];    /* by POSIXTRACE_FN_* (from 1) */
    const char *untaken[FN_MAX]; /* by function: the fields it has no argument for */
};

static const struct family families[] = {
    { POSIXTRACE_EV_OPEN,
      { NULL, "open", "open", "openat", "openat", "creat", "creat" }, /* 64: the same on LP64 */
      { NULL, "dirfd", "dirfd", NULL, NULL, "dirfd flags", "dirfd flags" } },
    { POSIXTRACE_EV_DUP, { NULL, "dup", "dup2", "dup3" }, { NULL, "newfd flags", "flags" } },
    { POSIXTRACE_EV_PIPE, { NULL, "pipe", "pipe2" }, { NULL, "flags" } },
    { POSIXTRACE_EV_EXEC,
      { NULL, "execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle", "fexecve",
        "execveat" },
      { NULL, "fd", "fd", "fd", "fd", "fd", "fd", "fd", "path" } },
    { POSIXTRACE_EV_WAIT, { NULL, "wait", "waitpid", "wait3", "wait4" },
      { NULL, "pid options", NULL, "pid" } },
    { POSIXTRACE_EV_KILL, { NULL, "kill", "killpg" }, { NULL } },
    { POSIXTRACE_EV_ACCEPT, { NULL, "accept", "accept4" }, { NULL, "flags" } },
};

/* Fields shown by a set other than their descriptor type's. */
static const struct { unsigned id; const char *field; int show; } shows[] = {
    { POSIXTRACE_EV_DUP, "flags", PT_SHOW_FDFLAGS },
    { POSIXTRACE_EV_PIPE, "flags", PT_SHOW_FDFLAGS },
    { POSIXTRACE_EV_ACCEPT, "flags", PT_SHOW_SOCKFLAGS },
    { POSIXTRACE_EV_WAIT, "options", PT_SHOW_WAITOPTS },
    { POSIXTRACE_EV_WAITID, "options", PT_SHOW_WAITOPTS },
};

/* Results written only by a call that succeeded (wait's status: that reaped a child). */
static const struct { unsigned id; const char *fields; } results[] = {
    { POSIXTRACE_EV_PIPE, "rfd wfd ino" },
    { POSIXTRACE_EV_SOCKETPAIR, "sv0 sv1 ino0 ino1" },
    { POSIXTRACE_EV_SOCKET, "ino" },
    { POSIXTRACE_EV_WAIT, "status" },
    { POSIXTRACE_EV_WAITID, "si_pid si_code si_status" },
};

static const struct family *family_of(unsigned id)
{
    for (size_t i = 0; i < G_N_ELEMENTS(families); i++)
        if (families[i].id == id)
            return &families[i];
    return NULL;
}

/* Whether name is one of the space-separated words of list. */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p != NULL && *p != '\0'; p += strspn(p, " ")) {
        size_t w = strcspn(p, " ");
        if (w == n && memcmp(p, name, n) == 0)
            return 1;
        p += w;
    }
    return 0;
}

static struct pt_field *field(struct pt_event *e, const char *name)
{
    return (struct pt_field *)pt_event_field(e, name);
}

static void mark_absent(struct pt_event *e, const char *list)
{
    for (unsigned i = 0; i < e->desc->nfields && i < POSIXTRACE_MAX_FIELDS; i++)
        if (e->f[i].present && listed(list, e->f[i].name))
            e->f[i].absent = 1;
}

static void refine_fn(struct pt_event *e)
{
    const struct family *fam = family_of(e->id);
    unsigned fn = POSIXTRACE_CALL_FN(e->hdr.flags);
    if (fam == NULL || fn == 0 || fn >= FN_MAX || fam->fn[fn] == NULL)
        return;
    e->fn = fam->fn[fn];
    mark_absent(e, fam->untaken[fn]);
}

/* A call that returned and failed (wait: or reaped no child). */
static int unfilled(const struct pt_event *e)
{
    if (!pt_call_returns(e))
        return 0;
    return e->hdr.err != 0 || (e->id == POSIXTRACE_EV_WAIT && e->hdr.ret <= 0);
}

static void refine_results(struct pt_event *e)
{
    for (size_t i = 0; i < G_N_ELEMENTS(results); i++)
        if (results[i].id == e->id && unfilled(e))
            mark_absent(e, results[i].fields);
    /* a pointer argument not read (NODATA), or NULL (an address): an empty field */
    for (unsigned i = 0; i < e->desc->nfields && i < POSIXTRACE_MAX_FIELDS; i++) {
        struct pt_field *f = &e->f[i];
        int ptr = f->type == POSIXTRACE_F_STR || f->type == POSIXTRACE_F_BUF ||
                  f->type == POSIXTRACE_F_ARGV || f->type == POSIXTRACE_F_SOCKADDR;
        if (f->present && ptr && f->n == 0 && !f->short_read &&
            ((e->hdr.flags & POSIXTRACE_CALL_NODATA) || f->type == POSIXTRACE_F_SOCKADDR))
            f->absent = 1;
    }
}

/* fork's parent is recorded in the child only. */
static void refine_fork(struct pt_event *e)
{
    struct pt_field *parent = field(e, "parent");
    if (e->id == POSIXTRACE_EV_FORK && parent != NULL && e->hdr.ret != 0)
        parent->absent = 1;
}

/* open's mode is read only with O_CREAT or O_TMPFILE (the shim records 0). */
static void refine_open(struct pt_event *e)
{
    const struct pt_field *fl = pt_event_field(e, "flags");
    struct pt_field *mode = field(e, "mode");
    if (e->id != POSIXTRACE_EV_OPEN || fl == NULL || mode == NULL)
        return;
    if ((fl->u & O_CREAT) == 0 && (fl->u & O_TMPFILE) != O_TMPFILE)
        mode->absent = 1;
}

/* syscall:fcntl's third argument as its command takes it (strace's way):
 * none for the commands that read nothing, a descriptor or a number, the
 * FD_ flags, the O_ flags; a pointer (locks, owners) in hex as recorded. */
static void refine_fcntl(struct pt_event *e)
{
#ifdef SYS_fcntl
    const struct pt_field *cmd = pt_event_field(e, "cmd");
    struct pt_field *arg = field(e, "arg");
    if (e->id != POSIXTRACE_SYSCALL_FIRST + SYS_fcntl || cmd == NULL || arg == NULL ||
        cmd->type >= POSIXTRACE_F_VARIABLE || arg->type >= POSIXTRACE_F_VARIABLE)
        return;
    switch ((int)cmd->u) {
    case F_GETFD: case F_GETFL: case F_GETOWN: case F_GETSIG: case F_GETLEASE:
    case F_GETPIPE_SZ: case F_GET_SEALS:
        arg->absent = 1;
        break;
    case F_DUPFD: case F_DUPFD_CLOEXEC: case F_SETOWN: case F_SETSIG: case F_SETPIPE_SZ:
        arg->type = POSIXTRACE_F_INT;
        arg->u = (uint64_t)(int64_t)(int32_t)arg->u; /* the kernel takes an int */
        break;
    case F_SETFD:
        arg->show = PT_SHOW_FDCLOEXEC;
        break;
    case F_SETFL:
        arg->show = PT_SHOW_OFLAGS;
        break;
    default:
        break;
    }
#else
    (void)e;
#endif
}

void pt_calls_refine(struct pt_event *e)
{
    if (e->kind != PT_K_CALL)
        return;
    for (size_t i = 0; i < G_N_ELEMENTS(shows); i++) {
        struct pt_field *f = shows[i].id == e->id ? field(e, shows[i].field) : NULL;
        if (f != NULL && f->type < POSIXTRACE_F_VARIABLE)
            f->show = shows[i].show;
    }
    refine_fn(e);
    refine_results(e);
    refine_open(e);
    refine_fork(e);
    refine_fcntl(e);
}

void pt_append_event_name(GString *s, const struct pt_event *e)
{
    const char *colon = strchr(e->name, ':');
    if (e->fn == NULL || colon == NULL) {
        g_string_append(s, e->name);
        return;
    }
    g_string_append_len(s, e->name, colon + 1 - e->name);
    g_string_append(s, e->fn);
}
