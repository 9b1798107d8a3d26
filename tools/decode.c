/*
 * Decoding an event's data. Shim system events (8..255) are decoded
 * generically from their descriptor (<posixtrace/events.h>): the 32-byte call
 * header, 8-byte fixed fields, then uint32-length-prefixed variable fields,
 * in descriptor order. No per-event code.
 */
#include "ptools.h"

#include <string.h>

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const unsigned char *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static int is_fixed(int type)
{
    return type < POSIXTRACE_F_VARIABLE;
}

/* Reads the call header; 0 if the payload has none. */
static int read_hdr(struct pt_event *e, size_t *pos)
{
    if (e->len < sizeof(struct posixtrace_call_hdr))
        return 0;
    const unsigned char *p = e->data;
    e->hdr.version = (uint16_t)(p[0] | p[1] << 8);
    e->hdr.hdr_size = (uint16_t)(p[2] | p[3] << 8);
    e->hdr.err = (int32_t)rd32(p + 4);
    e->hdr.ret = (int64_t)rd64(p + 8);
    e->hdr.duration_ns = rd64(p + 16);
    e->hdr.tid = rd32(p + 24);
    e->hdr.flags = rd32(p + 28);
    if (e->hdr.version != POSIXTRACE_PAYLOAD_VERSION ||
        e->hdr.hdr_size < sizeof(struct posixtrace_call_hdr) || e->hdr.hdr_size > e->len)
        return 0;
    *pos = e->hdr.hdr_size;
    return 1;
}

/* Fixed fields first (all of them, in order), then variable ones. */
static void read_fields(struct pt_event *e, size_t pos)
{
    const struct posixtrace_event_desc *d = e->desc;
    unsigned nf = d->nfields < POSIXTRACE_MAX_FIELDS ? d->nfields : POSIXTRACE_MAX_FIELDS;
    for (unsigned pass = 0; pass < 2; pass++) {
        for (unsigned i = 0; i < nf; i++) {
            const struct posixtrace_field *df = &d->fields[i];
            if (is_fixed(df->type) != (pass == 0))
                continue;
            struct pt_field *f = &e->f[i];
            f->name = df->name;
            f->type = df->type;
            if (pass == 0) {
                if (pos + 8 > e->len)
                    goto cut;
                f->u = rd64(e->data + pos);
                pos += 8;
            } else {
                if (pos + 4 > e->len)
                    goto cut;
                uint32_t n = rd32(e->data + pos);
                pos += 4;
                f->p = e->data + pos;
                f->n = n <= e->len - pos ? n : (uint32_t)(e->len - pos);
                f->short_read = f->n < n;
                pos += f->n;
            }
            f->present = 1;
            e->nfields++;
        }
    }
    return;
cut:
    e->cut = 1;
}

const struct pt_field *pt_event_field(const struct pt_event *e, const char *name)
{
    if (e->kind != PT_K_CALL || e->desc == NULL)
        return NULL;
    for (unsigned i = 0; i < e->desc->nfields && i < POSIXTRACE_MAX_FIELDS; i++)
        if (e->f[i].present && strcmp(e->f[i].name, name) == 0)
            return &e->f[i];
    return NULL;
}

/* posixtrace:probe_def: the probe's events decode from now on. */
static void learn_probe(const struct pt_event *e)
{
    const struct pt_field *id = pt_event_field(e, "probe"), *spec = pt_event_field(e, "spec");
    if (id == NULL || spec == NULL || spec->short_read)
        return;
    char *s = g_strndup((const char *)spec->p, spec->n);
    pt_probe_learn((unsigned)id->u, s);
    g_free(s);
}

void pt_decode(struct pt_event *e, struct pt_names *n, const struct posix_trace_event_info *info,
               const unsigned char *data, size_t len)
{
    memset(e, 0, sizeof *e);
    e->info = *info;
    e->id = info->posix_event_id;
    e->ts_ns = pt_ts_ns(&info->posix_timestamp);
    e->name = pt_names_get(n, e->id);
    e->data = data;
    e->len = len;
    e->tid = -1;
    if (e->id < PT_SYS_FIRST) {
        e->kind = PT_K_PREDEF;
    } else if ((e->probe = pt_probe_get(e->id)) != NULL) {
        size_t pos = 0;
        e->kind = PT_K_SYS;
        e->name = e->probe->name;
        e->desc = &e->probe->desc;
        if (read_hdr(e, &pos)) {
            e->kind = PT_K_CALL;
            read_fields(e, pos);
            pt_probe_refine(e);
        }
    } else if (e->id >= POSIX_TRACE_UNNAMED_USEREVENT && e->id <= PT_USER_ID_MAX) {
        e->kind = PT_K_USER;
    } else {
        size_t pos = 0;
        e->kind = PT_K_SYS;
        e->desc = posixtrace_event_desc(e->id);
        if (e->desc != NULL && read_hdr(e, &pos)) {
            e->kind = PT_K_CALL;
            read_fields(e, pos);
            pt_calls_refine(e);
            if (e->id == POSIXTRACE_EV_PROBE_DEF)
                learn_probe(e);
            if (e->id == POSIXTRACE_EV_CALL_UNFINISHED)
                pt_unfinished_unwrap(e, n);
            e->tid = e->hdr.tid != 0 ? (int64_t)e->hdr.tid : -1; /* 0: none (process_end) */
            if (e->hdr.tid != 0)
                pt_tidmap_learn(info->posix_pid, info->posix_thread_id, e->hdr.tid);
        }
    }
    if (e->tid < 0 && info->posix_thread_id != 0)
        e->tid = pt_tidmap_get(info->posix_pid, info->posix_thread_id);
}

int pt_call_returns(const struct pt_event *e)
{
    return e->kind == PT_K_CALL &&
           !(e->hdr.flags & (POSIXTRACE_CALL_NORETURN | POSIXTRACE_CALL_ENTRY));
}

int64_t pt_event_start_ns(const struct pt_event *e)
{
    if (e->unfinished && e->hdr.duration_ns <= (uint64_t)INT64_MAX)
        return pt_ns_sub(e->ts_ns, (int64_t)e->hdr.duration_ns);
    if (!pt_call_returns(e))
        return e->ts_ns;
    if (e->hdr.duration_ns > (uint64_t)INT64_MAX)
        return e->ts_ns;
    return pt_ns_sub(e->ts_ns, (int64_t)e->hdr.duration_ns);
}

/* ---- (pid, pthread_t) -> kernel tid, learned from call headers ---- */
struct tkey {
    int64_t pid;
    uint64_t th;
};

static guint tkey_hash(gconstpointer p)
{
    const struct tkey *k = p;
    return g_int64_hash(&k->th) ^ (guint)(k->pid * 2654435761u);
}

static gboolean tkey_equal(gconstpointer a, gconstpointer b)
{
    const struct tkey *x = a, *y = b;
    return x->pid == y->pid && x->th == y->th;
}

static GHashTable *tidmap;

void pt_tidmap_learn(pid_t pid, pthread_t th, int64_t tid)
{
    if (tidmap == NULL)
        tidmap = g_hash_table_new_full(tkey_hash, tkey_equal, g_free, NULL);
    struct tkey look = { pid, (uint64_t)th };
    gpointer v;
    if (g_hash_table_lookup_extended(tidmap, &look, NULL, &v) && GPOINTER_TO_INT(v) == (int)tid)
        return; /* known: most events (no allocation per event) */
    struct tkey *k = g_new(struct tkey, 1);
    k->pid = pid;
    k->th = (uint64_t)th;
    g_hash_table_replace(tidmap, k, GINT_TO_POINTER((int)tid));
}

int64_t pt_tidmap_get(pid_t pid, pthread_t th)
{
    struct tkey k = { pid, (uint64_t)th };
    gpointer v;
    if (tidmap == NULL || !g_hash_table_lookup_extended(tidmap, &k, NULL, &v))
        return -1;
    return GPOINTER_TO_INT(v);
}

void pt_tidmap_free(void)
{
    g_clear_pointer(&tidmap, g_hash_table_destroy);
}
