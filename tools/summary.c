/*
 * -c/--summary: a table per event type (count, errors, total and average
 * duration of calls), sorted by total time then count, like strace -c. A
 * fork is counted once (its parent's event), not once per process.
 */
#include "ptools.h"

#include <string.h>

struct row {
    char *name;
    uint64_t count, errors, total_ns;
};

struct pt_summary {
    GHashTable *rows; /* name -> struct row */
};

static void row_free(gpointer p)
{
    struct row *r = p;
    g_free(r->name);
    g_free(r);
}

struct pt_summary *pt_summary_new(void)
{
    struct pt_summary *s = g_new0(struct pt_summary, 1);
    s->rows = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, row_free);
    return s;
}

/* fork returns twice: the child's event (ret 0) is the same call as the
 * parent's, counted once (as strace -c counts it). */
static gboolean child_side(const struct pt_event *e)
{
    return e->kind == PT_K_CALL && e->id == POSIXTRACE_EV_FORK && pt_call_returns(e) &&
           e->hdr.ret == 0 && e->hdr.err == 0;
}

void pt_summary_add(struct pt_summary *s, const struct pt_event *e)
{
    if (child_side(e) || e->unfinished) /* a call that did not end: not one made */
        return;
    struct row *r = g_hash_table_lookup(s->rows, e->name);
    if (r == NULL) {
        r = g_new0(struct row, 1);
        r->name = g_strdup(e->name);
        g_hash_table_insert(s->rows, r->name, r);
    }
    r->count++;
    if (e->kind == PT_K_CALL) {
        r->errors += e->hdr.err != 0;
        if (pt_call_returns(e))
            r->total_ns += e->hdr.duration_ns;
    }
}

static gint by_time(gconstpointer a, gconstpointer b)
{
    const struct row *x = *(struct row *const *)a, *y = *(struct row *const *)b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void line(FILE *fp)
{
    fputs("------ ----------- ----------- --------- --------- ----------------\n", fp);
}

void pt_summary_print(struct pt_summary *s, FILE *fp)
{
    GPtrArray *v = g_ptr_array_new();
    GHashTableIter it;
    gpointer k, val;
    uint64_t tot = 0, cnt = 0, errs = 0;
    g_hash_table_iter_init(&it, s->rows);
    while (g_hash_table_iter_next(&it, &k, &val)) {
        struct row *r = val;
        g_ptr_array_add(v, r);
        tot += r->total_ns;
        cnt += r->count;
        errs += r->errors;
    }
    g_ptr_array_sort(v, by_time);
    fprintf(fp, "%% time     seconds  usecs/call     calls    errors event\n");
    line(fp);
    for (guint i = 0; i < v->len; i++) {
        struct row *r = g_ptr_array_index(v, i);
        double pct = tot ? 100.0 * (double)r->total_ns / (double)tot : 0.0;
        char eb[24] = "";
        if (r->errors)
            g_snprintf(eb, sizeof eb, "%" G_GUINT64_FORMAT, (guint64)r->errors);
        fprintf(fp, "%6.2f %11.6f %11" G_GUINT64_FORMAT " %9" G_GUINT64_FORMAT " %9s %s\n", pct,
                (double)r->total_ns / 1e9, (guint64)(r->total_ns / 1000 / r->count),
                (guint64)r->count, eb, r->name);
    }
    line(fp);
    fprintf(fp, "%6.2f %11.6f %11s %9" G_GUINT64_FORMAT " %9" G_GUINT64_FORMAT " total\n",
            tot ? 100.0 : 0.0, (double)tot / 1e9, "", (guint64)cnt, (guint64)errs);
    g_ptr_array_free(v, TRUE);
}

void pt_summary_free(struct pt_summary *s)
{
    if (s == NULL)
        return;
    g_hash_table_destroy(s->rows);
    g_free(s);
}
