/*
 * posixtrace-run --probe OBJECT:FUNCTION with no prototype: the prototype is
 * taken from ltrace's prototype files (ltrace.conf(5) syntax, one
 * "TYPE NAME(TYPE, ...);" a line), the first of these that declares the
 * function: $POSIXTRACE_LTRACE_CONF (files separated by ':'), else
 * ~/.ltrace.conf, /usr/share/ltrace/OBJECT.conf, /etc/ltrace.conf.
 * ltrace's types become the probes' (doc/tools.md "Probes"): integers keep
 * their width, octal and hex(T) are T, addr, file and every pointer (T*,
 * +T* for an output) are ptr, string forms are str, enum(...) is int.
 * A prototype with a type probes cannot record (format: variadic, struct or
 * array passed by value, a typedef) is refused, naming the type.
 */
#include "run.h"

#include <string.h>

static const struct {
    const char *ltrace, *ours;
} ltypes[] = {
    { "void", "void" }, { "int", "int" }, { "uint", "uint" }, { "long", "long" },
    { "ulong", "ulong" }, { "short", "short" }, { "ushort", "ushort" }, { "char", "char" },
    { "bool", "uchar" }, { "octal", "uint" }, { "addr", "ptr" }, { "file", "ptr" },
    { "double", "double" }, { "float", "float" }, { "string", "str" }, { "size_t", "size_t" },
    { "ssize_t", "ssize_t" },
};

/* One ltrace type (spaces trimmed) as ours, or NULL. */
static const char *map_type(gchar *t)
{
    g_strstrip(t);
    if (*t == '+')
        t++;
    size_t n = strlen(t);
    if (n > 0 && t[n - 1] == '*')
        return "ptr";
    if (g_str_has_prefix(t, "enum(") || g_str_has_prefix(t, "enum ("))
        return "int";
    if (g_str_has_prefix(t, "string"))
        return "str"; /* string, stringN, string[argN]: read to the NUL, up to -s */
    if ((g_str_has_prefix(t, "hex(") || g_str_has_prefix(t, "octal(")) && t[n - 1] == ')') {
        gchar *in = g_strndup(strchr(t, '(') + 1, n - (size_t)(strchr(t, '(') + 1 - t) - 1);
        const char *r = map_type(in);
        g_free(in);
        return r;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(ltypes); i++)
        if (strcmp(t, ltypes[i].ltrace) == 0)
            return ltypes[i].ours;
    return NULL;
}

/* The arguments between the parentheses, split at top-level commas. */
static GPtrArray *split_args(const char *s, size_t n)
{
    GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        char c = i < n ? s[i] : ',';
        depth += (c == '(' || c == '[') - (c == ')' || c == ']');
        if (c == ',' && (depth == 0 || i == n)) { /* unbalanced: the rest, refused by map_type */
            g_ptr_array_add(a, g_strndup(s + start, i - start));
            start = i + 1;
        }
    }
    return a;
}

/* Where line declares fn: its name's first byte (after the result type),
 * the '(' after it in *open; NULL if it declares another function. */
static const char *find_name(const char *line, const char *fn, const char **open)
{
    size_t n = strlen(fn);
    for (const char *p = strstr(line, fn); p != NULL; p = strstr(p + 1, fn)) {
        const char *q = p + n;
        while (*q == ' ' || *q == '\t')
            q++;
        if (p > line && *q == '(' && (p[-1] == ' ' || p[-1] == '\t' || p[-1] == '*')) {
            *open = q;
            return p;
        }
    }
    return NULL;
}

/* line declares fn: its spec for object, or NULL (err set when the
 * prototype has a type probes do not take). */
static gchar *convert(const char *line, const char *object, const char *fn, GError **err)
{
    const char *open = NULL, *name = find_name(line, fn, &open), *close = strrchr(line, ')');
    if (name == NULL || close == NULL || close < open)
        return NULL;
    gchar *ret = g_strndup(line, (size_t)(name - line));
    GString *s = g_string_new(NULL);
    g_string_printf(s, "%s:%s(", object, fn);
    GPtrArray *args = split_args(open + 1, (size_t)(close - open - 1));
    gboolean none = args->len == 1 && *g_strstrip((gchar *)args->pdata[0]) == '\0';
    const char *bad = NULL, *t = NULL;
    for (guint i = 0; !none && i < args->len && bad == NULL; i++) {
        if ((t = map_type(args->pdata[i])) == NULL)
            bad = args->pdata[i];
        else
            g_string_append_printf(s, "%s%s arg%u", i ? ", " : "", t, i + 1);
    }
    if (bad == NULL && (t = map_type(ret)) == NULL)
        bad = ret;
    if (bad == NULL)
        g_string_append_printf(s, ")->%s", t);
    else
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "probe '%s:%s': ltrace's prototype \"%s\" has a type probes cannot record: %s",
                    object, fn, line, *bad != '\0' ? bad : "(none)");
    g_ptr_array_unref(args);
    g_free(ret);
    return g_string_free(s, bad != NULL);
}

static gchar *search_file(const char *path, const char *object, const char *fn, GError **err)
{
    gchar *text = NULL, *spec = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        return NULL;
    gchar **lines = g_strsplit(text, "\n", -1);
    for (gsize i = 0; lines[i] != NULL && spec == NULL && (err == NULL || *err == NULL); i++) {
        gchar *line = g_strstrip(lines[i]);
        gchar *semi = strchr(line, ';'); /* the declaration's end; comments start with ';' */
        if (semi == NULL || semi == line || g_str_has_prefix(line, "typedef"))
            continue;
        *semi = '\0';
        spec = convert(line, object, fn, err);
    }
    g_strfreev(lines);
    g_free(text);
    return spec;
}

gchar *run_ltrace_spec(const char *object, const char *fn, GError **err)
{
    const char *env = g_getenv("POSIXTRACE_LTRACE_CONF");
    gchar *list = env != NULL
        ? g_strdup(env)
        : g_strdup_printf("%s/.ltrace.conf:/usr/share/ltrace/%s.conf:/etc/ltrace.conf",
                          g_get_home_dir(), object);
    gchar **files = g_strsplit(list, ":", -1), *spec = NULL;
    for (gsize i = 0; files[i] != NULL && spec == NULL && (err == NULL || *err == NULL); i++)
        if (*files[i] != '\0')
            spec = search_file(files[i], object, fn, err);
    if (spec == NULL && (err == NULL || *err == NULL))
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "probe '%s:%s': no prototype given and none in ltrace's files (%s): "
                    "write one, e.g. '%s:%s(int a, str s)->int'", object, fn, list, object, fn);
    g_strfreev(files);
    g_free(list);
    return spec;
}
