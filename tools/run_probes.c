/*
 * posixtrace-run --probe SPEC and --probes FILE (issue 16): the specs are
 * checked and named for the decoder here (an error shows the position of
 * the mistake), passed to
 * libposixtrace-audit.so in POSIXTRACE_PROBES (one a line) with LD_AUDIT
 * (probe k: event type 1281 + k). At the end (live: from the events
 * printed; -o: from the log read back), a probe with no call recorded is said: its function was never bound
 * through the dynamic linker (calls inside its own library, static
 * functions, a wrong object name) or never called.
 */
#include "run.h"

#include <string.h>
#include <unistd.h>

#ifndef POSIXTRACE_AUDIT_PATH
#define POSIXTRACE_AUDIT_PATH "libposixtrace-audit.so"
#endif
#define PROBES_MAX (POSIXTRACE_PROBE_LAST - POSIXTRACE_PROBE_FIRST + 1)

static GPtrArray *specs;

/* OBJECT:FUNCTION with no '(' (and no spaces): its prototype from ltrace's files. */
static gchar *complete(const char *spec, GError **err)
{
    const char *colon = strrchr(spec, ':');
    if (strchr(spec, '(') != NULL || colon == NULL || colon == spec || colon[1] == '\0' ||
        strpbrk(spec, " \t") != NULL)
        return g_strdup(spec);
    gchar *object = g_strndup(spec, (size_t)(colon - spec));
    gchar *full = run_ltrace_spec(object, colon + 1, err);
    g_free(object);
    return full;
}

gboolean run_probe_add(const char *given, GError **err)
{
    struct pt_probe_spec sp;
    g_autofree gchar *spec = complete(given, err);
    if (spec == NULL || !pt_probe_parse_spec(spec, &sp, err))
        return FALSE;
    if (specs == NULL)
        specs = g_ptr_array_new_with_free_func(g_free);
    if (specs->len == PROBES_MAX) {
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "probe '%s': too many probes (at most %u)", spec, PROBES_MAX);
        return FALSE;
    }
    pt_probe_learn(POSIXTRACE_PROBE_FIRST + specs->len, spec);
    g_ptr_array_add(specs, g_strdup(spec));
    return TRUE;
}

/* A GKeyFile: [OBJECT] groups, FUNCTION=(TYPE NAME, ...)->TYPE keys. */
gboolean run_probes_file(const char *path, GError **err)
{
    GKeyFile *kf = g_key_file_new();
    gboolean ok = g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, err);
    gchar **groups = ok ? g_key_file_get_groups(kf, NULL) : NULL;
    for (gsize g = 0; ok && groups[g] != NULL; g++) {
        gchar **keys = g_key_file_get_keys(kf, groups[g], NULL, NULL);
        for (gsize k = 0; ok && keys != NULL && keys[k] != NULL; k++) {
            gchar *v = g_key_file_get_string(kf, groups[g], keys[k], NULL);
            gchar *spec = g_strdup_printf("%s:%s%s", groups[g], keys[k], v != NULL ? v : "");
            ok = run_probe_add(spec, err);
            if (!ok)
                g_prefix_error(err, "%s: [%s] %s: ", path, groups[g], keys[k]);
            g_free(spec);
            g_free(v);
        }
        g_strfreev(keys);
    }
    if (!ok && err != NULL && *err != NULL && !g_str_has_prefix((*err)->message, path))
        g_prefix_error(err, "--probes %s: ", path);
    g_strfreev(groups);
    g_key_file_free(kf);
    return ok;
}

guint run_probes_count(void)
{
    return specs != NULL ? specs->len : 0;
}

gchar **run_probes_env(gchar **env)
{
    if (run_probes_count() == 0)
        return env;
    GString *all = g_string_new(NULL);
    for (guint i = 0; i < specs->len; i++) {
        g_string_append(all, specs->pdata[i]);
        g_string_append_c(all, '\n');
    }
#ifdef POSIXTRACE_BUILD_AUDIT_PATH
    const char *built = POSIXTRACE_BUILD_AUDIT_PATH;
#else
    const char *built = NULL;
#endif
    const char *lib = run_lib_path("POSIXTRACE_AUDIT", POSIXTRACE_AUDIT_PATH, built);
    const char *old = g_environ_getenv(env, "LD_AUDIT");
    if (access(lib, R_OK) != 0)
        pt_warn("the probe library %s is missing: no probe records anything (set POSIXTRACE_AUDIT=PATH)",
                lib);
    gchar *v = old != NULL && *old != '\0' ? g_strdup_printf("%s:%s", lib, old) : g_strdup(lib);
    env = g_environ_setenv(env, "LD_AUDIT", v, TRUE);
    env = g_environ_setenv(env, "POSIXTRACE_PROBES", all->str, TRUE);
    g_free(v);
    g_string_free(all, TRUE);
    return env;
}

void run_probes_report(void)
{
    for (guint i = 0; specs != NULL && i < specs->len; i++)
        if (pt_probe_calls(POSIXTRACE_PROBE_FIRST + i) == 0)
            pt_warn("probe %s: no call recorded: the function was never bound through the dynamic "
                    "linker (a call inside its own library or to a static function cannot be "
                    "probed; is the object's name its soname?) or never called",
                    (const char *)specs->pdata[i]);
}

void run_probes_free(void)
{
    g_clear_pointer(&specs, g_ptr_array_unref);
    pt_probes_free();
}
