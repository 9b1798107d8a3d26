/*
 * The rtld-audit(7) entry points: the probes from POSIXTRACE_PROBES (one
 * spec a line, as posixtrace-run --probe passes them), and each binding of
 * a probed symbol redirected to its probe's closure. Objects of another
 * namespace (this library's own) and the trace system's own objects
 * (libposixtrace*) are not audited: their calls are never probed.
 */
#include "audit.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <posixtrace/record.h>

#define AUDIT_API __attribute__((visibility("default")))

struct probe pt_probes[PT_PROBES_MAX];
unsigned pt_nprobes;
struct link_map *pt_map_libtrace, *pt_map_libc;

static void say(const char *a, const char *b, const char *c)
{
    (void)!write(2, a, strlen(a));
    (void)!write(2, b, strlen(b));
    (void)!write(2, c, strlen(c));
}

static void load_probes(void)
{
    const char *env = getenv("POSIXTRACE_PROBES");
    char *copy = env != NULL ? strdup(env) : NULL;
    for (char *save = NULL, *line = copy != NULL ? strtok_r(copy, "\n", &save) : NULL;
         line != NULL && pt_nprobes < PT_PROBES_MAX; line = strtok_r(NULL, "\n", &save)) {
        struct probe *p = &pt_probes[pt_nprobes];
        size_t at;
        const char *msg;
        if (pt_probe_parse(line, &p->sp, &at, &msg) != 0) {
            say("posixtrace-audit: bad probe (ignored): ", line, "\n");
            continue;
        }
        p->text = line;
        p->id = POSIXTRACE_PROBE_FIRST + pt_nprobes++;
    }
}

AUDIT_API unsigned la_version(unsigned v)
{
    (void)v;
    load_probes();
    return LAV_CURRENT;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s != NULL ? s + 1 : path;
}

AUDIT_API unsigned la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
    *cookie = (uintptr_t)map;
    if (lmid != LM_ID_BASE)
        return 0;
    const char *b = base_name(map->l_name);
    if (strncmp(b, "libposixtrace", 13) == 0) {
        if (strncmp(b, "libposixtrace.so", 16) == 0)
            pt_map_libtrace = map;
        return LA_FLG_BINDTO;
    }
    if (strncmp(b, "libc.so.", 8) == 0)
        pt_map_libc = map;
    return LA_FLG_BINDTO | LA_FLG_BINDFROM;
}

static int object_matches(const struct probe *p, const struct link_map *def)
{
    return strcmp(p->sp.object, "*") == 0 || strcmp(p->sp.object, base_name(def->l_name)) == 0;
}

AUDIT_API uintptr_t la_symbind64(Elf64_Sym *sym, unsigned ndx, uintptr_t *refcook,
                                 uintptr_t *defcook, unsigned *flags, const char *symname)
{
    (void)ndx;
    (void)refcook;
    *flags |= LA_SYMB_NOPLTENTER | LA_SYMB_NOPLTEXIT;
    for (unsigned k = 0; k < pt_nprobes; k++) {
        struct probe *p = &pt_probes[k];
        if (strcmp(p->sp.fn, symname) != 0 || !object_matches(p, (struct link_map *)*defcook))
            continue;
        void *orig = (void *)sym->st_value;
        if (p->closure == NULL && pt_probe_arm(p, orig) != 0)
            return sym->st_value;
        if (p->orig != orig) /* another definition: not probed */
            return sym->st_value;
        __atomic_add_fetch(&p->bound, 1, __ATOMIC_RELAXED);
        return (uintptr_t)p->code;
    }
    return sym->st_value;
}

/* Everything is loaded and relocated: the recording functions are looked
 * up now. Probed calls before this are the dynamic linker's own (its
 * malloc and calloc are the C library's once it is relocated): not
 * recorded, since dlmopen cannot run yet. */
int pt_preinit_done;

AUDIT_API void la_preinit(uintptr_t *cookie)
{
    (void)cookie;
    pt_preinit_done = 1;
    if (pt_nprobes != 0)
        (void)pt_base_ready();
}
