/*
 * Program addresses -> "function (file:line) in module" or "module+0xoff".
 *
 * The address map of each process comes from the trace (the shim's "module"
 * events: path, base, size and the GNU build id of each loaded object) or,
 * for live processes, from /proc/PID/maps. Functions, lines and inlined
 * functions come from the object files, read in process (sym_elf.c: elfutils'
 * libdwfl), checked against the build id the trace recorded; a missing or
 * changed binary degrades to module+offset.
 */
#include "ptools.h"
#include "sym_elf.h"

#include <string.h>

struct mod {
    uint64_t start, end;  /* address range (end 0: up to the next module) */
    uint64_t base;        /* load base: module offset = addr - base */
    char *path;
    unsigned char *id;    /* GNU build id recorded (NULL: none) */
    size_t idlen;
};

struct pt_symbolizer {
    GHashTable *procs;    /* pid -> GArray of struct mod */
    struct sym_elves *elves;
    int live;             /* read /proc/PID/maps for processes not yet known */
};

static void mods_free(gpointer p)
{
    GArray *a = p;
    for (guint i = 0; i < a->len; i++) {
        g_free(g_array_index(a, struct mod, i).path);
        g_free(g_array_index(a, struct mod, i).id);
    }
    g_array_free(a, TRUE);
}

struct pt_symbolizer *pt_sym_new(void)
{
    struct pt_symbolizer *y = g_new0(struct pt_symbolizer, 1);
    y->procs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, mods_free);
    y->elves = sym_elves_new();
    return y;
}

void pt_sym_free(struct pt_symbolizer *y)
{
    g_hash_table_destroy(y->procs);
    sym_elves_free(y->elves);
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
                    uint64_t base, const char *path, const struct pt_field *id)
{
    GArray *a = mods_of(y, pid, TRUE);
    struct mod m = { start, end, base, g_strdup(path), NULL, 0 };
    if (id != NULL && id->present && !id->absent && !id->short_read && id->n > 0) {
        m.id = g_memdup2(id->p, id->n);
        m.idlen = id->n;
    }
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
    add_mod(y, e->info.posix_pid, base->u, size != NULL ? base->u + size->u : 0, base->u, p,
            field(e, "build_id", 0));
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
            add_mod(y, pid, s, e, *b, path, NULL);
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
    struct sym_elf *f = sym_elf_get(y->elves, m->path, m->id, m->idlen);
    /* A return address points after the call: look up the call itself. */
    const char *fn = f != NULL ? sym_elf_name(f, (sym_elf_is_exec(f) ? addr : off) - 1) : "";
    char *base = g_path_get_basename(m->path);
    if (fn[0] != '\0')
        g_string_append_printf(s, "%s in %s", fn, base);
    else
        g_string_append_printf(s, "%s+%#" G_GINT64_MODIFIER "x", base, (guint64)off);
    g_free(base);
}
