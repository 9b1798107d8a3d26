/*
 * The functions and lines of one object file, in process, with elfutils'
 * libdwfl: the symbol table, DWARF (the file's own, or a separate debug file
 * found by .gnu_debuglink or build id under /usr/lib/debug, as Debian's
 * -dbgsym packages install them), and the functions inlined at an address.
 *
 * A trace records each module's GNU build id. The file found at the
 * recorded path is used only when its build id is that one: a rebuilt or
 * replaced binary would give other functions' names. Otherwise the separate
 * debug file of that build id is used if installed (it has the symbols and
 * the same addresses), else the module's addresses stay offsets and one
 * message says why.
 */
#include "ptools.h"
#include "sym_elf.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sym_elf {
    Dwfl *dwfl;
    Dwfl_Module *mod;
    int exec;
    GHashTable *names; /* vaddr -> "func (file:line)" or "" */
};

struct sym_elves {
    GHashTable *files; /* "path|build id" -> struct sym_elf, or NULL: unusable */
};

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

static void elf_free(gpointer p)
{
    struct sym_elf *f = p;
    if (f == NULL)
        return;
    dwfl_end(f->dwfl);
    g_hash_table_destroy(f->names);
    g_free(f);
}

struct sym_elves *sym_elves_new(void)
{
    struct sym_elves *v = g_new0(struct sym_elves, 1);
    v->files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, elf_free);
    return v;
}

void sym_elves_free(struct sym_elves *v)
{
    if (v == NULL)
        return;
    g_hash_table_destroy(v->files);
    g_free(v);
}

/* The file at path as one module at its link-time addresses, or NULL. */
static struct sym_elf *open_file(const char *path, int *err)
{
    *err = ENOEXEC;
    if (access(path, R_OK) != 0) {
        *err = errno;
        return NULL;
    }
    Dwfl *d = dwfl_begin(&callbacks);
    if (d == NULL)
        return NULL;
    dwfl_report_begin(d);
    Dwfl_Module *m = dwfl_report_elf(d, path, path, -1, 0, false);
    dwfl_report_end(d, NULL, NULL);
    GElf_Addr bias = 0;
    Elf *elf = m != NULL ? dwfl_module_getelf(m, &bias) : NULL;
    GElf_Ehdr eh;
    if (elf == NULL || gelf_getehdr(elf, &eh) == NULL) {
        dwfl_end(d);
        return NULL;
    }
    struct sym_elf *f = g_new0(struct sym_elf, 1);
    f->dwfl = d;
    f->mod = m;
    f->exec = eh.e_type == ET_EXEC;
    f->names = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    return f;
}

static char *hex(const unsigned char *p, size_t n)
{
    GString *s = g_string_sized_new(2 * n + 1);
    pt_hex(s, p, n);
    return g_string_free(s, FALSE);
}

/* The file's build id in hex ("" when it has none). */
static char *file_id(struct sym_elf *f)
{
    const unsigned char *bits = NULL;
    GElf_Addr at = 0;
    int n = dwfl_module_build_id(f->mod, &bits, &at);
    return n > 0 ? hex(bits, (size_t)n) : g_strdup("");
}

/* The separate debug file of build id `id` (hex), if installed and its own. */
static struct sym_elf *open_by_id(const char *id)
{
    if (strlen(id) < 4)
        return NULL;
    char *path = g_strdup_printf("/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
    int err;
    struct sym_elf *f = open_file(path, &err);
    g_free(path);
    char *got = f != NULL ? file_id(f) : NULL;
    if (got != NULL && strcmp(got, id) != 0) {
        elf_free(f);
        f = NULL;
    }
    g_free(got);
    return f;
}

static struct sym_elf *open_checked(const char *path, const char *id)
{
    if (path[0] != '/')
        return NULL; /* linux-vdso.so.1: no file */
    int err = 0;
    struct sym_elf *f = open_file(path, &err);
    char *got = NULL;
    if (f != NULL) {
        if (id == NULL)
            return f; /* nothing recorded to check against */
        got = file_id(f);
        if (strcmp(got, id) == 0) {
            g_free(got);
            return f;
        }
        elf_free(f);
    }
    struct sym_elf *d = id != NULL ? open_by_id(id) : NULL;
    if (d == NULL && got != NULL)
        pt_warn("%s: not the file the trace recorded (build id %s, the trace's %s: rebuilt or "
                "replaced since); its addresses are shown as offsets", path,
                got[0] != '\0' ? got : "none", id);
    else if (d == NULL)
        pt_warn("%s: %s; its addresses are shown as offsets", path, g_strerror(err));
    g_free(got);
    return d;
}

struct sym_elf *sym_elf_get(struct sym_elves *v, const char *path, const unsigned char *id,
                            size_t idlen)
{
    char *idhex = id != NULL && idlen > 0 ? hex(id, idlen) : NULL;
    char *key = g_strdup_printf("%s|%s", path, idhex != NULL ? idhex : "");
    gpointer f = NULL;
    if (g_hash_table_lookup_extended(v->files, key, NULL, &f)) {
        g_free(key);
        g_free(idhex);
        return f;
    }
    f = open_checked(path, idhex);
    g_hash_table_insert(v->files, key, f);
    g_free(idhex);
    return f;
}

int sym_elf_is_exec(const struct sym_elf *f)
{
    return f->exec;
}

static void append_place(GString *s, const char *name, const char *file, int line)
{
    g_string_append(s, name);
    if (file != NULL && line > 0) {
        char *base = g_path_get_basename(file);
        g_string_append_printf(s, " (%s:%d)", base, line);
        g_free(base);
    }
}

/* Where the inlined subroutine `die` was called from, in its caller. */
static void call_site(Dwarf_Die *cu, Dwarf_Die *die, const char **file, int *line)
{
    Dwarf_Attribute a;
    Dwarf_Word idx = 0, ln = 0;
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    *file = NULL;
    *line = 0;
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &ln) == 0)
        *line = (int)ln;
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &idx) == 0 &&
        dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && idx < nfiles)
        *file = dwarf_filesrc(files, idx, NULL, NULL);
}

/* The chain of functions at vaddr from DWARF, innermost first; 0 if none. */
static int dwarf_chain(GString *s, Dwfl_Module *m, uint64_t vaddr, const char *file, int line)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(m, vaddr, &bias);
    Dwarf_Die *scopes = NULL;
    int n = cu != NULL ? dwarf_getscopes(cu, vaddr - bias, &scopes) : 0, shown = 0;
    if (n > 0) { /* the concrete chain (without the abstract definitions' scopes) */
        Dwarf_Die inner = scopes[0];
        free(scopes);
        scopes = NULL;
        n = dwarf_getscopes_die(&inner, &scopes);
    }
    for (int i = 0; i < n; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
            continue;
        const char *name = dwarf_diename(&scopes[i]);
        if (shown++)
            g_string_append(s, " inlined in ");
        append_place(s, name != NULL ? name : "??", file, line);
        if (tag == DW_TAG_subprogram)
            break;
        call_site(cu, &scopes[i], &file, &line);
    }
    free(scopes);
    return shown;
}

static char *describe(struct sym_elf *f, uint64_t vaddr)
{
    const char *file = NULL;
    int line = 0;
    Dwfl_Line *l = dwfl_module_getsrc(f->mod, vaddr);
    if (l != NULL)
        file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
    GString *s = g_string_new(NULL);
    if (dwarf_chain(s, f->mod, vaddr, file, line) == 0) {
        GElf_Off off = 0;
        GElf_Sym sym;
        const char *name = dwfl_module_addrinfo(f->mod, vaddr, &off, &sym, NULL, NULL, NULL);
        if (name != NULL && name[0] != '\0')
            append_place(s, name, file, line);
    }
    return g_string_free(s, FALSE);
}

const char *sym_elf_name(struct sym_elf *f, uint64_t vaddr)
{
    gint64 k = (gint64)vaddr;
    const char *v = g_hash_table_lookup(f->names, &k);
    if (v != NULL)
        return v;
    char *r = describe(f, vaddr);
    g_hash_table_insert(f->names, g_memdup2(&k, sizeof k), r);
    return r;
}
