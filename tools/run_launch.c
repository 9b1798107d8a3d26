/*
 * Starting the program (contract point 4 of the cross-process tracing): fork;
 * the child waits on a pipe until the stream for its pid exists and runs, then
 * execs the program with the shim in LD_PRELOAD. A second, close-on-exec pipe
 * brings back the errno of a failed exec.
 */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef POSIXTRACE_PRELOAD_PATH
#define POSIXTRACE_PRELOAD_PATH "libposixtrace-preload.so"
#endif

int run_check_program(const char *prog)
{
    struct stat sb;
    if (strchr(prog, '/') == NULL) {
        char *p = g_find_program_in_path(prog);
        if (p == NULL) {
            pt_warn("%s: command not found", prog);
            return RUN_EXIT_NOTFOUND;
        }
        g_free(p);
        return 0;
    }
    if (stat(prog, &sb) != 0) {
        pt_warn("%s: %s", prog, g_strerror(errno));
        return errno == ENOENT || errno == ENOTDIR ? RUN_EXIT_NOTFOUND : RUN_EXIT_NOEXEC;
    }
    if (S_ISDIR(sb.st_mode)) {
        pt_warn("%s: %s", prog, g_strerror(EISDIR));
        return RUN_EXIT_NOEXEC;
    }
    if (access(prog, X_OK) != 0) {
        pt_warn("%s: %s", prog, g_strerror(errno));
        return RUN_EXIT_NOEXEC;
    }
    return 0;
}

/* A library the program gets: $ENV, else the installed one, else (not
 * installed: run from its build tree) the one built beside it. */
const char *run_lib_path(const char *env, const char *installed, const char *built)
{
    const char *p = g_getenv(env);
    if (p != NULL && *p != '\0')
        return p;
    if (built != NULL && access(installed, R_OK) != 0 && access(built, R_OK) == 0)
        return built;
    return installed;
}

/* The shim to preload ($POSIXTRACE_PRELOAD...). */
static const char *shim_path(void)
{
#ifdef POSIXTRACE_BUILD_PRELOAD_PATH
    return run_lib_path("POSIXTRACE_PRELOAD", POSIXTRACE_PRELOAD_PATH, POSIXTRACE_BUILD_PRELOAD_PATH);
#else
    return run_lib_path("POSIXTRACE_PRELOAD", POSIXTRACE_PRELOAD_PATH, NULL);
#endif
}

static gchar **child_env(const struct run_opts *o)
{
    gchar **env = g_get_environ();
    char num[16];
    if (!o->no_preload) {
        const char *shim = shim_path(), *old = g_environ_getenv(env, "LD_PRELOAD");
        if (access(shim, R_OK) != 0) {
            pt_warn("the shim %s is missing (%s): only what the program records itself is traced "
                    "(set POSIXTRACE_PRELOAD=PATH)", shim, g_strerror(errno));
        } else {
            char *v = old != NULL && *old != '\0' ? g_strdup_printf("%s:%s", shim, old) : g_strdup(shim);
            env = g_environ_setenv(env, "LD_PRELOAD", v, TRUE);
            g_free(v);
        }
    }
    env = run_probes_env(env);
    if (o->strsize >= 0) {
        g_snprintf(num, sizeof num, "%d", o->strsize);
        env = g_environ_setenv(env, "POSIXTRACE_STRSIZE", num, TRUE);
    }
    if (o->syscalls)
        env = g_environ_setenv(env, "POSIXTRACE_SYSCALLS", "1", TRUE);
    if (o->stack > 0) {
        g_snprintf(num, sizeof num, "%d", o->stack);
        env = g_environ_setenv(env, "POSIXTRACE_STACK", num, TRUE);
    }
    return env;
}

static G_GNUC_NORETURN void child(int go, int err, char **argv, char **env, const sigset_t *mask)
{
    char c;
    ssize_t r;
    sigprocmask(SIG_SETMASK, mask, NULL);
    do
        r = read(go, &c, 1);
    while (r < 0 && errno == EINTR);
    if (r != 1)
        _exit(RUN_EXIT_FAIL); /* the controller gave up */
    close(go);
    execvpe(argv[0], argv, env);
    int e = errno;
    if (write(err, &e, sizeof e) < 0)
        _exit(RUN_EXIT_FAIL);
    _exit(e == ENOENT ? RUN_EXIT_NOTFOUND : RUN_EXIT_NOEXEC);
}

int run_fork(struct launch *l, const struct run_opts *o, const sigset_t *oldmask)
{
    int go[2], err[2];
    gchar **env = child_env(o);
    if (pipe2(go, O_CLOEXEC) != 0) {
        g_strfreev(env);
        return errno;
    }
    if (pipe2(err, O_CLOEXEC) != 0) {
        int e = errno;
        close(go[0]);
        close(go[1]);
        g_strfreev(env);
        return e;
    }
    fflush(NULL);
    l->pid = fork();
    if (l->pid == 0) {
        close(go[1]);
        close(err[0]);
        child(go[0], err[1], o->argv, env, oldmask);
    }
    int e = errno;
    g_strfreev(env);
    close(go[0]);
    close(err[1]);
    l->go_fd = go[1];
    l->err_fd = err[0];
    if (l->pid < 0) {
        close(go[1]);
        close(err[0]);
        return e;
    }
    return 0;
}

int run_go(struct launch *l)
{
    int e = 0;
    ssize_t r;
    if (write(l->go_fd, "g", 1) != 1)
        e = errno;
    close(l->go_fd);
    do
        r = read(l->err_fd, &e, sizeof e);
    while (r < 0 && errno == EINTR);
    close(l->err_fd);
    return r == (ssize_t)sizeof e ? e : 0;
}

void run_abort(struct launch *l)
{
    close(l->go_fd); /* the child reads EOF and exits */
    close(l->err_fd);
}
