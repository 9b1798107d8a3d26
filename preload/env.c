/*
 * What tracing needs in a child's environment. A program may give its
 * children an environment without the shim: an explicit one (execve,
 * execvpe, execle, fexecve, execveat, posix_spawn[p]) or its own after
 * clearenv(), `env -i`, unsetenv("LD_PRELOAD") (execv, execvp, execl,
 * execlp use `environ`). The traced tree stays traced whatever the program
 * does to it: the shim puts back what it was started with and the new
 * environment lacks (preload/README.md, "Children's environment"):
 * - the shim in LD_PRELOAD: the items of the LD_PRELOAD the process started
 *   with up to the shim (so a sanitizer runtime before it stays first) added
 *   as an entry of its own when there is no LD_PRELOAD; the shim appended to the program's own value (after its libraries,
 *   which keep their place) when that does not name the shim;
 * - POSIXTRACE_STRSIZE, POSIXTRACE_STACK, POSIXTRACE_CLOCK as they were at
 *   start-up, when the new environment has no entry of that name (one the
 *   program set is its choice and is kept).
 * Every other entry keeps its place; added entries go at the end. The new
 * array, and the LD_PRELOAD entry built, live on the caller's stack (an exec
 * may run in a vfork child: nothing is allocated). POSIXTRACE_KEEP_PRELOAD=0
 * turns this off.
 */
#include "shim.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

static char shim_name[SHIM_ENV_ENTRY_MAX];           /* the shim's LD_PRELOAD item, or "" */
static char preload_entry[SHIM_ENV_ENTRY_MAX];       /* "LD_PRELOAD=<start-up list to the shim>" or "" */
static const char *const keep_names[SHIM_ENV_KEEP] = { "POSIXTRACE_STRSIZE=", "POSIXTRACE_STACK=",
                                                       "POSIXTRACE_CLOCK=", "POSIXTRACE_SYSCALLS=" };
static char keep_entry[SHIM_ENV_KEEP][64];           /* "NAME=value" at start-up, or "" */

static const char *base_name(const char *p, size_t len, size_t *blen)
{
    size_t b = len;
    while (b > 0 && p[b - 1] != '/')
        b--;
    *blen = len - b;
    return p + b;
}

/* Whether the item p[0..len) of an LD_PRELOAD list names the shim: the same
 * file name (two copies of the shim would record every call twice). */
static bool names_shim(const char *p, size_t len)
{
    size_t bl, ml;
    const char *b = base_name(p, len, &bl);
    const char *m = base_name(shim_name, strlen(shim_name), &ml);
    return bl == ml && bl > 0 && memcmp(b, m, bl) == 0;
}

/* The item of LD_PRELOAD (separated by ':' or ' ') that loaded this shim. */
static void find_shim_name(const char *list)
{
    Dl_info di;
    if (dladdr((void *)&find_shim_name, &di) == 0 || di.dli_fname == NULL)
        return;
    size_t fl = strlen(di.dli_fname), ml;
    const char *mine = base_name(di.dli_fname, fl, &ml);
    for (const char *p = list; *p != '\0';) {
        size_t len = strcspn(p, ": ");
        size_t bl;
        const char *b = base_name(p, len, &bl);
        if (bl == ml && bl > 0 && memcmp(b, mine, bl) == 0 && len < sizeof shim_name) {
            memcpy(shim_name, p, len);
            shim_name[len] = '\0';
            return;
        }
        p += len + (p[len] != '\0');
    }
}

/* The length of list's items up to and including the shim's, 0 if none. */
static size_t prefix_through_shim(const char *list)
{
    for (const char *p = list; *p != '\0';) {
        size_t len = strcspn(p, ": ");
        if (names_shim(p, len))
            return (size_t)(p - list) + len;
        p += len + (p[len] != '\0');
    }
    return 0;
}

void shim_preload_init(void)
{
    static const char key[] = "LD_PRELOAD=";
    const char *v = getenv("LD_PRELOAD");
    if (v != NULL)
        find_shim_name(v);
    /* the list the shim came with, up to the shim: what precedes it was put
     * there to come first (a sanitizer runtime must); what follows is not
     * tracing's */
    size_t n = shim_name[0] != '\0' && v != NULL ? prefix_through_shim(v) : 0;
    if (n > 0 && n + sizeof key <= sizeof preload_entry) {
        memcpy(preload_entry, key, sizeof key - 1);
        memcpy(preload_entry + sizeof key - 1, v, n);
        preload_entry[sizeof key - 1 + n] = '\0';
    }
    for (int k = 0; k < SHIM_ENV_KEEP; k++) {
        size_t nl = strlen(keep_names[k]);
        char name[32];
        memcpy(name, keep_names[k], nl - 1);
        name[nl - 1] = '\0';
        const char *val = getenv(name);
        if (val != NULL && nl + strlen(val) < sizeof keep_entry[k]) {
            memcpy(keep_entry[k], keep_names[k], nl);
            memcpy(keep_entry[k] + nl, val, strlen(val) + 1);
        }
    }
}

/* Whether the value of an LD_PRELOAD entry names the shim. */
static bool value_has_shim(const char *v)
{
    return prefix_through_shim(v) > 0;
}

/* The program's LD_PRELOAD entry s (readable, length len) with the shim
 * appended, into fx->preload; false if it does not fit (left as it is). */
static bool build_preload(struct shim_envfix *fx, const char *s, size_t len)
{
    size_t sl = strlen(shim_name);
    bool empty = len == 11;
    if (len + 1 + sl + 1 > sizeof fx->preload)
        return false;
    memcpy(fx->preload, s, len);
    if (!empty)
        fx->preload[len++] = ':';
    memcpy(fx->preload + len, shim_name, sl + 1);
    return true;
}

/* One entry of the new environment (readable: probed by the caller). */
static bool scan_entry(struct shim_envfix *fx, struct shim_pages *pg, const char *s, size_t i)
{
    size_t len = shim_strnlen_safe(pg, s, 20);
    if (len == SIZE_MAX)
        return false;
    for (int k = 0; k < SHIM_ENV_KEEP; k++) {
        size_t nl = strlen(keep_names[k]);
        if (len >= nl && memcmp(s, keep_names[k], nl) == 0)
            fx->add_keep[k] = 0;
    }
    if (len >= 11 && memcmp(s, "LD_PRELOAD=", 11) == 0) {
        /* the dynamic loader takes the last LD_PRELOAD entry */
        fx->add_preload = 0;
        fx->replace = SIZE_MAX;
        len = shim_strnlen_safe(pg, s, sizeof fx->preload);
        if (len == SIZE_MAX)
            return false;
        if (preload_entry[0] != '\0' && len < sizeof fx->preload && !value_has_shim(s + 11) &&
            build_preload(fx, s, len))
            fx->replace = i;
    }
    return true;
}

/* envp is read over probed pages only (payload.c): an environment that is
 * not readable is left as it is, and the call fails with EFAULT as it would
 * without the shim. A NULL envp is an empty environment (Linux). */
size_t shim_env_need(char *const *envp, struct shim_envfix *fx)
{
    fx->n = 0;
    fx->replace = SIZE_MAX;
    fx->add_preload = preload_entry[0] != '\0';
    for (int k = 0; k < SHIM_ENV_KEEP; k++)
        fx->add_keep[k] = keep_entry[k][0] != '\0';
    if (!shim_cfg.keep_preload)
        return 0;
    struct shim_pages pg = SHIM_PAGES_INIT;
    for (size_t n = 0; envp != NULL; n++) {
        if (!shim_readable(&pg, &envp[n], sizeof envp[n]))
            return 0;
        const char *s = envp[n];
        if (s == NULL) {
            fx->n = n;
            break;
        }
        if (!scan_entry(fx, &pg, s, n))
            return 0;
    }
    size_t add = fx->add_preload;
    for (int k = 0; k < SHIM_ENV_KEEP; k++)
        add += fx->add_keep[k];
    if (add == 0 && fx->replace == SIZE_MAX)
        return 0;
    return fx->n + add + 1;
}

char *const *shim_env_fix(char *const *envp, char **v, size_t need, struct shim_envfix *fx)
{
    if (need == 0)
        return envp;
    size_t n = fx->n;
    if (n != 0)
        memcpy(v, envp, n * sizeof *v);
    if (fx->replace != SIZE_MAX)
        v[fx->replace] = fx->preload;
    if (fx->add_preload)
        v[n++] = preload_entry;
    for (int k = 0; k < SHIM_ENV_KEEP; k++)
        if (fx->add_keep[k])
            v[n++] = keep_entry[k];
    v[n] = NULL;
    return v;
}
