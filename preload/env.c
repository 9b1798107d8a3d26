/*
 * LD_PRELOAD for children. A program that passes its children an explicit
 * environment without LD_PRELOAD (execve, execvpe, execle, fexecve,
 * posix_spawn[p]) would run them untraced; the shim appends the LD_PRELOAD it
 * was loaded with to such an environment, in an array on the caller's stack.
 * An environment that has an LD_PRELOAD entry (even an empty one) is left as
 * it is: the program chose. POSIXTRACE_KEEP_PRELOAD=0 turns this off.
 */
#include "shim.h"

#include <stdlib.h>
#include <string.h>

#define PRELOAD_MAX 4096
static char preload_entry[PRELOAD_MAX]; /* "LD_PRELOAD=..." or "" */

void shim_preload_init(void)
{
    const char *v = getenv("LD_PRELOAD");
    static const char key[] = "LD_PRELOAD=";
    if (v == NULL || strlen(v) + sizeof key > PRELOAD_MAX)
        return;
    memcpy(preload_entry, key, sizeof key - 1);
    memcpy(preload_entry + sizeof key - 1, v, strlen(v) + 1);
}

/* envp is read over probed pages only (payload.c): an environment that is
 * not readable is left as it is, and the call fails with EFAULT as it would
 * without the shim. */
size_t shim_env_need(char *const *envp)
{
    if (!shim_cfg.keep_preload || preload_entry[0] == '\0' || envp == NULL)
        return 0;
    struct shim_pages pg = SHIM_PAGES_INIT;
    size_t n = 0;
    for (;; n++) {
        if (!shim_readable(&pg, &envp[n], sizeof envp[n]))
            return 0;
        const char *s = envp[n];
        if (s == NULL)
            break;
        size_t len = shim_strnlen_safe(&pg, s, 11);
        if (len == SIZE_MAX || (len == 11 && memcmp(s, "LD_PRELOAD=", 11) == 0))
            return 0;
    }
    return n + 2;
}

char *const *shim_env_fix(char *const *envp, char **v, size_t need)
{
    if (need == 0)
        return envp;
    size_t n = need - 2;
    memcpy(v, envp, n * sizeof *v);
    v[n] = preload_entry;
    v[n + 1] = NULL;
    return v;
}
