/*
 * Run-time probes as the tools see them (issue 16): each probe's event
 * type (1281 + k) gets a descriptor built from its spec, so that its events
 * decode like the shim's. posixtrace-run learns the specs from its options,
 * a reader of a trace from the posixtrace:probe_def events in it.
 */
#include "ptools.h"

#include <math.h>
#include <string.h>

static struct pt_probe *probes[POSIXTRACE_PROBE_LAST - POSIXTRACE_PROBE_FIRST + 1];

static int ftype_of(int t)
{
    switch (t) {
    case PT_T_PTR: return POSIXTRACE_F_HEX;
    case PT_T_STR: return POSIXTRACE_F_STR;
    case PT_T_BUF: return POSIXTRACE_F_BUF;
    case PT_T_DOUBLE: case PT_T_FLOAT: return POSIXTRACE_F_DOUBLE;
    default: return pt_ptype_signed(t) ? POSIXTRACE_F_INT : POSIXTRACE_F_UINT;
    }
}

gboolean pt_probe_parse_spec(const char *spec, struct pt_probe_spec *sp, GError **err)
{
    size_t at;
    const char *msg;
    if (pt_probe_parse(spec, sp, &at, &msg) == 0)
        return TRUE;
    g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "probe '%s': at byte %zu: %s\n    %s\n    %*s^", spec, at + 1, msg, spec,
                (int)at, "");
    return FALSE;
}

const struct pt_probe *pt_probe_learn(unsigned id, const char *spec)
{
    if (id < POSIXTRACE_PROBE_FIRST || id > POSIXTRACE_PROBE_LAST)
        return NULL;
    struct pt_probe **slot = &probes[id - POSIXTRACE_PROBE_FIRST];
    if (*slot != NULL && strcmp((*slot)->spec, spec) == 0)
        return *slot;
    struct pt_probe *p = g_new0(struct pt_probe, 1);
    if (!pt_probe_parse_spec(spec, &p->sp, NULL)) {
        g_free(p);
        return NULL;
    }
    p->spec = g_strdup(spec);
    /* names longer than TRACE_EVENT_NAME_MAX are cut (the spec keeps the whole) */
    g_snprintf(p->name, sizeof p->name, "probe:%s:%s", p->sp.object, p->sp.fn);
    p->desc.id = id;
    p->desc.name = p->name;
    p->desc.category = "probe";
    for (unsigned i = 0; i < p->sp.nargs; i++)
        p->desc.fields[p->desc.nfields++] =
            (struct posixtrace_field){ p->sp.arg[i].name, ftype_of(p->sp.arg[i].type) };
    if (p->sp.ret.type == PT_T_STR)
        p->desc.fields[p->desc.nfields++] = (struct posixtrace_field){ "ret", POSIXTRACE_F_STR };
    if (*slot != NULL) {
        g_free((*slot)->spec);
        g_free(*slot); /* a new process's probes: events decoded earlier keep no pointer */
    }
    *slot = p;
    return p;
}

const struct pt_probe *pt_probe_get(unsigned id)
{
    if (id < POSIXTRACE_PROBE_FIRST || id > POSIXTRACE_PROBE_LAST)
        return NULL;
    return probes[id - POSIXTRACE_PROBE_FIRST];
}

uint64_t pt_probe_calls(unsigned id)
{
    const struct pt_probe *p = pt_probe_get(id);
    return p != NULL ? p->calls : 0;
}

void pt_probes_free(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(probes); i++) {
        if (probes[i] != NULL)
            g_free(probes[i]->spec);
        g_clear_pointer(&probes[i], g_free);
    }
}

/* After pt_decode read a probe's fields: a returned string is shown as the result. */
void pt_probe_refine(struct pt_event *e)
{
    ((struct pt_probe *)e->probe)->calls++;
    for (unsigned i = 0; i < e->desc->nfields; i++)
        if (e->f[i].present && strcmp(e->f[i].name, "ret") == 0 && i == e->probe->sp.nargs)
            e->f[i].absent = 1;
}

/* The result of a probe's call, as its return type says. */
void pt_probe_fmt_ret(GString *s, const struct pt_event *e, int json)
{
    int t = e->probe->sp.ret.type;
    uint64_t v = (uint64_t)e->hdr.ret;
    double d;
    switch (t) {
    case PT_T_VOID: g_string_append(s, json ? "null" : "void"); break;
    case PT_T_DOUBLE: case PT_T_FLOAT:
        memcpy(&d, &v, sizeof d);
        if (json && !isfinite(d))
            g_string_append(s, "null");
        else
            g_string_append_printf(s, json ? "%.17g" : "%g", d);
        break;
    case PT_T_STR: {
        unsigned i = e->probe->sp.nargs;
        if (v == 0 || !e->f[i].present)
            g_string_append_printf(s, json ? "null" : "NULL");
        else if (json)
            pt_esc_json(s, e->f[i].p, e->f[i].n);
        else
            pt_esc_c(s, e->f[i].p, e->f[i].n, 0, e->f[i].short_read);
        break;
    }
    case PT_T_PTR: case PT_T_BUF:
        g_string_append_printf(s, json ? "%" G_GUINT64_FORMAT : "%#" G_GINT64_MODIFIER "x", (guint64)v);
        break;
    default:
        if (pt_ptype_signed(t))
            g_string_append_printf(s, "%" G_GINT64_FORMAT, (gint64)v);
        else
            g_string_append_printf(s, "%" G_GUINT64_FORMAT, (guint64)v);
    }
}
