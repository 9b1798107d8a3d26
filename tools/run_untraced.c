/*
 * Processes of the traced tree that were not traced (doc/tools.md, "Processes
 * not traced"). The trace itself says which images should have started
 * tracing: the program posixtrace-run started, every exec recorded by the
 * shim before it was made (and not followed by its failure), every
 * posix_spawn child. Each such image announces itself with a process_start
 * (the shim's initialisation), or records something itself (a program that
 * links the library but did not load the shim). One that did neither was
 * not traced: it did not
 * load the shim, or could not join its stream. The reason is what the
 * process noted in the stream when it could not map it
 * (posixtrace_stream_refusals: a memory limit, a stream overwritten by
 * another process of the tree), else found from the program file when it
 * can be: a set-user-ID/set-group-ID program or one with file capabilities
 * (it does not join a less privileged trace), a statically linked program
 * (no dynamic loader, no LD_PRELOAD).
 */
#include "run.h"

#include <elf.h>
#include <posixtrace/control.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

struct untraced {
    GHashTable *pending;       /* pid -> program path (g_strdup): awaiting process_start */
    GHashTable *search;        /* pids whose path is to be looked up in PATH */
    GHashTable *refused;       /* pid -> errno it noted in the stream */
    GHashTable *started;       /* pid -> ppid of its last process_start */
};

struct untraced *untraced_new(void)
{
    struct untraced *u = g_new0(struct untraced, 1);
    u->pending = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    u->search = g_hash_table_new(g_direct_hash, g_direct_equal);
    u->refused = g_hash_table_new(g_direct_hash, g_direct_equal);
    u->started = g_hash_table_new(g_direct_hash, g_direct_equal);
    return u;
}

void untraced_expect(struct untraced *u, pid_t pid, const char *path, int search)
{
    g_hash_table_replace(u->pending, GINT_TO_POINTER(pid), g_strdup(path != NULL ? path : ""));
    if (search && path != NULL && strchr(path, '/') == NULL)
        g_hash_table_add(u->search, GINT_TO_POINTER(pid));
    else
        g_hash_table_remove(u->search, GINT_TO_POINTER(pid));
}

static char *field_str(const struct pt_field *f)
{
    if (f == NULL || f->n == 0)
        return g_strdup("");
    return g_strndup((const char *)f->p, f->n);
}

static pid_t field_pid(const struct pt_event *e, const char *name)
{
    const struct pt_field *f = pt_event_field(e, name);
    return f != NULL ? (pid_t)(int64_t)f->u : (pid_t)e->info.posix_pid;
}

/* pid is to start the program of exec or posix_spawn event e. */
static void expect_image(struct untraced *u, const struct pt_event *e, pid_t pid)
{
    char *path = field_str(pt_event_field(e, "path"));
    const struct pt_field *s = pt_event_field(e, "search");
    untraced_expect(u, pid, path, s != NULL && s->u != 0);
    g_free(path);
}

void untraced_seen(struct untraced *u, pid_t pid)
{
    if (g_hash_table_size(u->pending) != 0)
        g_hash_table_remove(u->pending, GINT_TO_POINTER((int)pid));
}

gboolean untraced_needs(trace_event_id_t id)
{
    return id == POSIXTRACE_EV_PROCESS_START || id == POSIXTRACE_EV_EXEC ||
           id == POSIXTRACE_EV_SPAWN;
}

void untraced_event(void *ctx, const struct pt_event *e)
{
    struct untraced *u = ctx;
    /* anything the new image recorded itself (a program that links the
     * library without the shim: a set-id one under a root controller) */
    if (e->kind != PT_K_PREDEF && e->id != POSIXTRACE_EV_EXEC)
        untraced_seen(u, (pid_t)e->info.posix_pid);
    if (e->kind != PT_K_CALL)
        return;
    if (e->id == POSIXTRACE_EV_PROCESS_START) {
        g_hash_table_remove(u->pending, GINT_TO_POINTER(field_pid(e, "pid")));
        g_hash_table_replace(u->started, GINT_TO_POINTER(field_pid(e, "pid")),
                             GINT_TO_POINTER(field_pid(e, "ppid")));
    } else if (e->id == POSIXTRACE_EV_EXEC) {
        pid_t pid = field_pid(e, "pid");
        if (!(e->hdr.flags & POSIXTRACE_CALL_NORETURN)) { /* the exec failed */
            g_hash_table_remove(u->pending, GINT_TO_POINTER(pid));
            return;
        }
        expect_image(u, e, pid);
    } else if (e->id == POSIXTRACE_EV_SPAWN && e->hdr.ret == 0) {
        pid_t child = field_pid(e, "child");
        /* The child's image may have started (and ended) before the parent
         * recorded its posix_spawn, which returns after the child's exec. */
        gpointer ppid;
        if (child > 0 && !(g_hash_table_lookup_extended(u->started, GINT_TO_POINTER(child), NULL,
                                                        &ppid) &&
                           GPOINTER_TO_INT(ppid) == (int)e->info.posix_pid))
            expect_image(u, e, child);
    }
}

/* ELF without a program interpreter: 1; a dynamic ELF: 0; not ELF: -1. */
static int elf_static(int fd)
{
    Elf64_Ehdr h;
    if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h || memcmp(h.e_ident, ELFMAG, SELFMAG) != 0)
        return -1;
    if (h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_phentsize != sizeof(Elf64_Phdr))
        return 0; /* not looked into */
    for (unsigned i = 0; i < h.e_phnum && i < 256; i++) {
        Elf64_Phdr ph;
        if (pread(fd, &ph, sizeof ph, (off_t)(h.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph)
            return 0;
        if (ph.p_type == PT_INTERP)
            return 0;
    }
    return 1;
}

/* A script's interpreter ("#!/bin/sh -e" -> "/bin/sh"), or NULL. */
static char *interpreter(int fd)
{
    char buf[256];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n < 3 || buf[0] != '#' || buf[1] != '!')
        return NULL;
    buf[n] = '\0';
    char *p = buf + 2;
    p += strspn(p, " \t");
    size_t len = strcspn(p, " \t\n");
    return len > 0 ? g_strndup(p, len) : NULL;
}

static const char *why_file(const char *path, int depth)
{
    static const char *generic = "its new image did not join the trace (it could not map its "
                                 "stream, e.g. under a memory limit, or it does not load the shim)";
    struct stat sb;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &sb) != 0) {
        if (fd >= 0)
            close(fd);
        return generic;
    }
    const char *why = generic;
    char *interp = interpreter(fd);
    if (interp != NULL && depth == 0) {
        why = why_file(interp, 1);
    } else if (geteuid() != 0 && (((sb.st_mode & S_ISUID) && sb.st_uid != geteuid()) ||
                                  ((sb.st_mode & S_ISGID) && sb.st_gid != getegid()))) {
        why = "set-user-ID or set-group-ID program: it does not join the trace of a less "
              "privileged controller";
    } else if (geteuid() != 0 && fgetxattr(fd, "security.capability", NULL, 0) > 0) {
        why = "program with file capabilities: it does not join the trace of a less privileged "
              "controller";
    } else if (elf_static(fd) == 1) {
        why = "statically linked: the shim cannot be preloaded";
    }
    g_free(interp);
    close(fd);
    return why;
}

void untraced_collect(struct untraced *u, trace_id_t trid)
{
    struct posixtrace_refusal r[16];
    size_t n = 0;
    if (posixtrace_stream_refusals(trid, r, G_N_ELEMENTS(r), &n) != 0)
        return;
    for (size_t i = 0; i < n; i++)
        g_hash_table_replace(u->refused, GINT_TO_POINTER(r[i].pid), GINT_TO_POINTER(r[i].err));
}

/* What a process that noted errno err in the stream could not do. */
static char *why_refused(int err)
{
    if (err == EBADMSG)
        return g_strdup("its new image refused the stream: its layout in shared memory was "
                        "inconsistent (overwritten by another process of the tree?)");
    char name[32];
    return g_strdup_printf("its new image could not map its stream: %s (%s)%s", g_strerror(err),
                           pt_errno_name(err, name, sizeof name),
                           err == ENOMEM ? "; a memory limit (ulimit -v)? a smaller "
                                           "--stream-size needs less" : "");
}

static gint by_pid(gconstpointer a, gconstpointer b)
{
    return GPOINTER_TO_INT(a) - GPOINTER_TO_INT(b);
}

guint untraced_report(struct untraced *u)
{
    GList *pids = g_list_sort(g_hash_table_get_keys(u->pending), by_pid);
    guint n = 0;
    for (GList *l = pids; l != NULL; l = l->next, n++) {
        gpointer k = l->data;
        const char *path = g_hash_table_lookup(u->pending, k);
        char *found = g_hash_table_contains(u->search, k) ? g_find_program_in_path(path) : NULL;
        const char *file = found != NULL ? found : path;
        gpointer err;
        char *refused = g_hash_table_lookup_extended(u->refused, k, NULL, &err)
                            ? why_refused(GPOINTER_TO_INT(err))
                            : NULL;
        pt_warn("pid %d (%s): not traced: %s", GPOINTER_TO_INT(k), *file ? file : "?",
                refused != NULL ? refused
                : *file         ? why_file(file, 0)
                                : "its new image did not join the trace");
        g_free(refused);
        g_free(found);
    }
    g_list_free(pids);
    return n;
}

void untraced_free(struct untraced *u)
{
    if (u == NULL)
        return;
    g_hash_table_destroy(u->pending);
    g_hash_table_destroy(u->search);
    g_hash_table_destroy(u->refused);
    g_hash_table_destroy(u->started);
    g_free(u);
}
