/*
 * Program addresses -> "function+0xoff (file:line)" or "module+0xoff".
 *
 * The address map of each process comes from the trace (events of the shim
 * that describe a loaded module: a STR field "path" and a HEX field "base",
 * optionally "size") or, for live processes, from /proc/PID/maps. Functions
 * and lines come from addr2line(1) (binutils) run on the module with its
 * symbols or debug info; a missing binary or tool degrades to module+offset.
 */
#include "ptools.h"

#include <string.h>

struct mod {
    uint64_t start, end;  /* address range (end 0: up to the next module) */
    uint64_t base;        /* load base: module offset = addr - base */
    char *path;
};

struct pt_symbolizer {
    GHashTable *procs;    /* pid -> GArray of struct mod */
    GHashTable *cache;    /* "path\0vaddr" -> "func (file:line)" or "" */
    GHashTable *elftype;  /* path -> 1 (ET_EXEC) / 2 (other) / 3 (unreadable) */
    int no_addr2line, checked_tool;
    int live;             /* read /proc/PID/maps for processes not yet known */
};

static void mods_free(gpointer p)
{
    GArray *a = p;
    for (guint i = 0; i < a->len; i++)
        g_free(g_array_index(a, struct mod, i).path);
    g_array_free(a, TRUE);
}

struct pt_symbolizer *pt_sym_new(void)
{
    struct pt_symbolizer *y = g_new0(struct pt_symbolizer, 1);
    y->procs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, mods_free);
    y->cache = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    y->elftype = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    return y;
}

void pt_sym_free(struct pt_symbolizer *y)
{
    g_hash_table_destroy(y->procs);
    g_hash_table_destroy(y->cache);
    g_hash_table_destroy(y->elftype);
    g_free(y);
}

static GArray *mods_of(struct pt_symbolizer *y, pid_t pid, gboolean create)
{
    GArray *a = g_hash_table_lookup(y->procs, GINT_TO_POINTER(pid));
    if (a == NULL && create) {
        a = g_array_new(FALSE, TRUE, sizeof(struct mod));
        g_hash_table_insert(y->procs, GINT_TO_POINTER(pid), a);
    }
    return a;
}

static void add_mod(struct pt_symbolizer *y, pid_t pid, uint64_t start, uint64_t end,
                    uint64_t base, const char *path)
{
    GArray *a = mods_of(y, pid, TRUE);
    struct mod m = { start, end, base, g_strdup(path) };
    g_array_append_val(a, m);
}

static const struct pt_field *field(const struct pt_event *e, const char *name, int fixed)
{
    const struct pt_field *f = pt_event_field(e, name);
    return f != NULL && (f->type < POSIXTRACE_F_VARIABLE) == fixed ? f : NULL;
}

void pt_sym_set_live(struct pt_symbolizer *y)
{
    y->live = 1;
}

void pt_sym_learn(struct pt_symbolizer *y, const struct pt_event *e)
{
    if (e->kind != PT_K_CALL)
        return;
    if (e->desc->id == PT_SYS_FIRST) /* process_start: a new image, a new map */
        g_hash_table_remove(y->procs, GINT_TO_POINTER(e->info.posix_pid));
    const struct pt_field *path = field(e, "path", 0), *base = field(e, "base", 1);
    const struct pt_field *size = field(e, "size", 1);
    if (path == NULL || base == NULL || path->type != POSIXTRACE_F_STR)
        return;
    char *p = g_strndup((const char *)path->p, path->n);
    add_mod(y, e->info.posix_pid, base->u, size != NULL ? base->u + size->u : 0, base->u, p);
    g_free(p);
}

void pt_sym_learn_proc(struct pt_symbolizer *y, pid_t pid)
{
    char *fn = g_strdup_printf("/proc/%ld/maps", (long)pid), *txt = NULL;
    if (!g_file_get_contents(fn, &txt, NULL, NULL)) {
        g_free(fn);
        return;
    }
    GHashTable *bases = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    gchar **ls = g_strsplit(txt, "\n", -1);
    for (int i = 0; ls[i] != NULL; i++) {
        unsigned long long s, e, off;
        char perm[8];
        int pos = 0;
        if (sscanf(ls[i], "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perm, &off, &pos) < 4 || pos == 0)
            continue;
        const char *path = ls[i] + pos;
        if (path[0] != '/')
            continue;
        guint64 *b = g_hash_table_lookup(bases, path);
        if (b == NULL) {
            b = g_new(guint64, 1);
            *b = s - off; /* the first mapping of a file: its load base */
            g_hash_table_insert(bases, g_strdup(path), b);
        }
        if (strchr(perm, 'x') != NULL)
            add_mod(y, pid, s, e, *b, path);
    }
    g_strfreev(ls);
    g_hash_table_destroy(bases);
    g_free(txt);
    g_free(fn);
}

static const struct mod *find(struct pt_symbolizer *y, pid_t pid, uint64_t addr)
{
    GArray *a = mods_of(y, pid, FALSE);
    const struct mod *best = NULL;
    for (guint i = 0; a != NULL && i < a->len; i++) {
        const struct mod *m = &g_array_index(a, struct mod, i);
        if (addr < m->start || (m->end != 0 && addr >= m->end))
            continue;
        if (best == NULL || m->start > best->start) /* the closest start below addr */
            best = m;
    }
    return best;
}

/* ET_EXEC binaries are linked at their run-time addresses. */
static int is_exec_type(struct pt_symbolizer *y, const char *path)
{
    gpointer v = g_hash_table_lookup(y->elftype, path);
    if (v == NULL) {
        unsigned char h[18] = { 0 };
        FILE *f = fopen(path, "rb");
        int t = 3;
        if (f != NULL && fread(h, 1, sizeof h, f) == sizeof h && memcmp(h, "\177ELF", 4) == 0)
            t = h[16] == 2 && h[17] == 0 ? 1 : 2;
        if (f != NULL)
            fclose(f);
        v = GINT_TO_POINTER(t);
        g_hash_table_insert(y->elftype, g_strdup(path), v);
    }
    return GPOINTER_TO_INT(v);
}

/* "func+0x1b (file.c:12)" from addr2line, or NULL. */
static char *addr2line(const char *path, uint64_t vaddr)
{
    char addr[32];
    g_snprintf(addr, sizeof addr, "%#" G_GINT64_MODIFIER "x", (guint64)vaddr);
    const char *argv[] = { "addr2line", "-f", "-p", "-C", "-e", path, addr, NULL };
    char *out = NULL;
    gint st = 0;
    if (!g_spawn_sync(NULL, (gchar **)argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL,
                      NULL, NULL, &out, NULL, &st, NULL) || !g_spawn_check_wait_status(st, NULL)) {
        g_free(out);
        return NULL;
    }
    g_strstrip(out);
    if (out[0] == '\0' || g_str_has_prefix(out, "??")) {
        g_free(out);
        return NULL;
    }
    /* "func at file:line" -> "func (file:line)"; "at ??:0" dropped */
    char *at = strstr(out, " at ");
    char *r;
    if (at != NULL && strstr(at, "??") == NULL) {
        *at = '\0';
        char *base = g_path_get_basename(at + 4);
        r = g_strdup_printf("%s (%s)", out, base);
        g_free(base);
    } else {
        if (at != NULL)
            *at = '\0';
        r = g_strdup(out);
    }
    g_free(out);
    return r;
}

static const char *lookup(struct pt_symbolizer *y, const char *path, uint64_t vaddr)
{
    char *key = g_strdup_printf("%s|%" G_GINT64_MODIFIER "x", path, (guint64)vaddr);
    const char *v = g_hash_table_lookup(y->cache, key);
    if (v != NULL) {
        g_free(key);
        return v;
    }
    if (!y->checked_tool) {
        char *tool = g_find_program_in_path("addr2line");
        y->no_addr2line = tool == NULL;
        y->checked_tool = 1;
        g_free(tool);
    }
    char *r = y->no_addr2line || is_exec_type(y, path) == 3 ? NULL : addr2line(path, vaddr);
    g_hash_table_insert(y->cache, key, r != NULL ? r : g_strdup(""));
    return g_hash_table_lookup(y->cache, key);
}

void pt_sym_addr(struct pt_symbolizer *y, GString *s, pid_t pid, uint64_t addr)
{
    const struct mod *m = find(y, pid, addr);
    if (m == NULL && y->live && mods_of(y, pid, FALSE) == NULL) {
        mods_of(y, pid, TRUE); /* once per process, even if it is gone */
        pt_sym_learn_proc(y, pid);
        m = find(y, pid, addr);
    }
    if (m == NULL) {
        g_string_append_printf(s, "%#" G_GINT64_MODIFIER "x", (guint64)addr);
        return;
    }
    uint64_t off = addr - m->base;
    /* A return address points after the call: look up the call itself. */
    uint64_t vaddr = (is_exec_type(y, m->path) == 1 ? addr : off) - 1;
    const char *fn = lookup(y, m->path, vaddr);
    char *base = g_path_get_basename(m->path);
    if (fn[0] != '\0')
        g_string_append_printf(s, "%s in %s", fn, base);
    else
        g_string_append_printf(s, "%s+%#" G_GINT64_MODIFIER "x", base, (guint64)off);
    g_free(base);
}
