/*
 * A probe's closure: records the arguments, calls the function through
 * ffi_call, records the result, errno (when the call changed it) and the
 * duration as one event (doc/events.md "Run-time probes"). The first
 * recorded call of a process records every probe's definition first
 * (posixtrace:probe_def), so that a reader of the trace can decode them.
 * Memory that str and buf arguments point to is read with
 * process_vm_readv on this process: an invalid pointer gives an empty field
 * marked NODATA, never a fault.
 */
#include "audit.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <posixtrace/events.h>
#include <posixtrace/record.h>

#define PAYLOAD_MAX 1024u /* PT_SYS_DATA_BYTES */

static struct {
    volatile unsigned char *want;
    uint64_t (*begin)(trace_event_id_t);
    void (*call)(trace_event_id_t, void *, size_t, const void *, uint64_t);
    void (*event)(trace_event_id_t, const void *, size_t, const void *);
    int *(*errno_loc)(void);
    int state; /* 0: not looked up, 1: ready, 2: not available, 3: being looked up */
    int defs_done;
    uint32_t strsize;
} base;

/* Set while this library records: a probed function that the recording
 * calls (libposixtrace's own calls) is not recorded. Initial-exec: a
 * dynamic TLS access may allocate with malloc, which may be probed. */
static __thread int in_probe __attribute__((tls_model("initial-exec")));

int pt_base_ready(void)
{
    int s = __atomic_load_n(&base.state, __ATOMIC_ACQUIRE);
    if (s != 0 || !pt_preinit_done)
        return s == 1; /* before la_preinit: the dynamic linker's own calls (calloc) */
    /* 3: being looked up (dlmopen may call malloc, which may be probed: those
     * calls, and other threads' meanwhile, are not recorded) */
    if (!__atomic_compare_exchange_n(&base.state, &s, 3, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return 0;
    /* handles of the program's namespace (a link map is not a handle) */
    void *lt = pt_map_libtrace != NULL
        ? dlmopen(LM_ID_BASE, pt_map_libtrace->l_name, RTLD_NOLOAD | RTLD_LAZY) : NULL;
    void *lc = pt_map_libc != NULL
        ? dlmopen(LM_ID_BASE, pt_map_libc->l_name, RTLD_NOLOAD | RTLD_LAZY) : NULL;
    if (lt != NULL && lc != NULL) {
        /* the table the library reads, not dlsym's __posixtrace_want: a
         * program that holds it (a copy relocation: <trace.h>'s inline
         * posix_trace_event) has it elsewhere than the library's object */
        volatile unsigned char *(*table)(void) =
            (volatile unsigned char *(*)(void))dlsym(lt, "posixtrace_want_table");
        base.want = table != NULL ? table() : NULL;
        base.begin = (uint64_t (*)(trace_event_id_t))dlsym(lt, "posixtrace_call_begin");
        base.call = (void (*)(trace_event_id_t, void *, size_t, const void *, uint64_t))
            dlsym(lt, "posixtrace_sys_call");
        base.event = (void (*)(trace_event_id_t, const void *, size_t, const void *))
            dlsym(lt, "posixtrace_sys_event");
        base.errno_loc = (int *(*)(void))dlsym(lc, "__errno_location");
    }
    const char *ss = getenv("POSIXTRACE_STRSIZE");
    base.strsize = ss != NULL && *ss != '\0' ? (uint32_t)strtoul(ss, NULL, 10) : 32;
    if (base.strsize > PAYLOAD_MAX)
        base.strsize = PAYLOAD_MAX;
    s = base.want && base.begin && base.call && base.event && base.errno_loc ? 1 : 2;
    __atomic_store_n(&base.state, s, __ATOMIC_RELEASE);
    return s == 1;
}

/* ---- the payload ---- */
struct pl {
    uint32_t n;
    uint32_t flags;
    union {
        struct posixtrace_call_hdr hdr;
        unsigned char b[PAYLOAD_MAX];
    } u;
};

static void put64(struct pl *pl, uint64_t v)
{
    if (pl->n + 8 <= PAYLOAD_MAX) {
        memcpy(pl->u.b + pl->n, &v, 8);
        pl->n += 8;
    }
}

/* Up to max bytes at p, or fewer where memory ends; -1: none readable. */
static ssize_t read_safe(void *out, const void *p, size_t max)
{
    uintptr_t a = (uintptr_t)p, page = (a | 4095u) + 1;
    size_t first = page - a < max ? page - a : max;
    struct iovec local = { out, max };
    struct iovec remote[2] = { { (void *)a, first }, { (void *)page, max - first } };
    if (p == NULL || max == 0)
        return p == NULL ? -1 : 0;
    return process_vm_readv(getpid(), &local, 1, remote, max > first ? 2 : 1, 0);
}

/* A variable field: `len` bytes at p (a string up to its NUL if len < 0). */
static void put_var(struct pl *pl, const void *p, ssize_t len, unsigned left)
{
    uint32_t room = PAYLOAD_MAX - pl->n > 4u * (left + 1) ? PAYLOAD_MAX - pl->n - 4u * (left + 1) : 0;
    uint32_t want = base.strsize < room ? base.strsize : room;
    int is_str = len < 0;
    if (!is_str && (size_t)len < want)
        want = (uint32_t)len;
    ssize_t got = read_safe(pl->u.b + pl->n + 4, p, want);
    uint32_t n = 0;
    if (got < 0) {
        pl->flags |= POSIXTRACE_CALL_NODATA;
    } else {
        n = (uint32_t)got;
        if (is_str) {
            unsigned char *z = memchr(pl->u.b + pl->n + 4, '\0', n);
            if (z != NULL)
                n = (uint32_t)(z - (pl->u.b + pl->n + 4));
            else
                pl->flags |= POSIXTRACE_CALL_DATA_CUT;
        } else if (n < (size_t)len) {
            pl->flags |= POSIXTRACE_CALL_DATA_CUT;
        }
    }
    memcpy(pl->u.b + pl->n, &n, 4);
    pl->n += 4 + n;
}

/* The return value as the event's ret: ffi widens small integers to ffi_arg. */
static uint64_t ret_value(int type, const void *r)
{
    ffi_arg a;
    switch (type) {
    case PT_T_VOID: return 0;
    case PT_T_DOUBLE: case PT_T_FLOAT: case PT_T_I64: case PT_T_U64: case PT_T_PTR:
    case PT_T_STR: case PT_T_BUF:
        return pt_arg_bits(type, r);
    default:
        memcpy(&a, r, sizeof a);
        switch (type) {
        case PT_T_I8: return (uint64_t)(int64_t)(int8_t)a;
        case PT_T_I16: return (uint64_t)(int64_t)(int16_t)a;
        case PT_T_I32: return (uint64_t)(int64_t)(int32_t)a;
        case PT_T_U8: return (uint8_t)a;
        case PT_T_U16: return (uint16_t)a;
        default: return (uint32_t)a;
        }
    }
}

static unsigned nvar(const struct pt_probe_spec *sp)
{
    unsigned n = pt_ptype_variable(sp->ret.type);
    for (unsigned i = 0; i < sp->nargs; i++)
        n += pt_ptype_variable(sp->arg[i].type);
    return n;
}

static void build(struct pl *pl, const struct probe *p, void **args, uint64_t ret)
{
    const struct pt_probe_spec *sp = &p->sp;
    for (unsigned i = 0; i < sp->nargs; i++)
        if (!pt_ptype_variable(sp->arg[i].type))
            put64(pl, pt_arg_bits(sp->arg[i].type, args[i]));
    unsigned left = nvar(sp);
    for (unsigned i = 0; i < sp->nargs; i++) {
        const struct pt_parg *a = &sp->arg[i];
        if (!pt_ptype_variable(a->type))
            continue;
        const void *ptr = *(void *const *)args[i];
        ssize_t len = -1;
        if (a->type == PT_T_BUF)
            len = a->lenarg == PT_BUF_CONST ? (ssize_t)a->len
                : a->lenarg == PT_BUF_RET ? (ssize_t)ret
                : (ssize_t)pt_arg_bits(sp->arg[a->lenarg].type, args[a->lenarg]);
        if (len < -1 || (a->type == PT_T_BUF && len < 0))
            len = 0;
        put_var(pl, ptr, len, --left);
    }
    if (sp->ret.type == PT_T_STR)
        put_var(pl, (const void *)(uintptr_t)ret, -1, --left);
}

static void hdr_init(struct pl *pl)
{
    memset(&pl->u.hdr, 0, sizeof pl->u.hdr);
    pl->u.hdr.version = POSIXTRACE_PAYLOAD_VERSION;
    pl->u.hdr.hdr_size = sizeof pl->u.hdr;
    pl->n = sizeof pl->u.hdr;
    pl->flags = 0;
}

/* posixtrace:probe_def for every probe, once per process. */
static void record_defs(void)
{
    if (__atomic_exchange_n(&base.defs_done, 1, __ATOMIC_RELAXED))
        return;
    for (unsigned k = 0; k < pt_nprobes; k++) {
        struct pl pl;
        hdr_init(&pl);
        put64(&pl, pt_probes[k].id);
        put64(&pl, pt_probes[k].bound);
        size_t n = strlen(pt_probes[k].text);
        uint32_t n32 = n < PAYLOAD_MAX - pl.n - 4 ? (uint32_t)n : PAYLOAD_MAX - pl.n - 4;
        memcpy(pl.u.b + pl.n, &n32, 4);
        memcpy(pl.u.b + pl.n + 4, pt_probes[k].text, n32);
        pl.n += 4 + n32;
        base.event(POSIXTRACE_EV_PROBE_DEF, pl.u.b, pl.n, NULL);
    }
}

static void on_call(ffi_cif *cif, void *ret, void **args, void *data)
{
    (void)cif; /* p->cif, or none (forward.c) */
    struct probe *p = data;
    if (in_probe || !pt_base_ready() || !base.want[p->id]) {
        pt_forward(p, ret, args);
        return;
    }
    in_probe = 1;
    int *ep = base.errno_loc();
    int e0 = *ep;
    if (!__atomic_load_n(&base.defs_done, __ATOMIC_RELAXED) &&
        base.want[POSIXTRACE_EV_PROBE_DEF])
        record_defs();
    uint64_t t0 = base.begin(p->id);
    *ep = e0;
    in_probe = 0; /* the function may call other probed functions: recorded too */
    pt_forward(p, ret, args);
    in_probe = 1;
    int e1 = *ep;
    struct pl pl;
    hdr_init(&pl);
    uint64_t r = ret_value(p->sp.ret.type, ret);
    build(&pl, p, args, r);
    pl.u.hdr.ret = (int64_t)r;
    pl.u.hdr.err = e1 != e0 ? e1 : 0;
    pl.u.hdr.flags = pl.flags;
    base.call(p->id, pl.u.b, pl.n, p->orig, t0);
    *ep = e1;
    in_probe = 0;
}

static ffi_type *ffi_of(int type)
{
    switch (type) {
    case PT_T_VOID: return &ffi_type_void;
    case PT_T_I8: return &ffi_type_sint8;
    case PT_T_I16: return &ffi_type_sint16;
    case PT_T_I32: return &ffi_type_sint32;
    case PT_T_I64: return &ffi_type_sint64;
    case PT_T_U8: return &ffi_type_uint8;
    case PT_T_U16: return &ffi_type_uint16;
    case PT_T_U32: return &ffi_type_uint32;
    case PT_T_U64: return &ffi_type_uint64;
    case PT_T_DOUBLE: return &ffi_type_double;
    case PT_T_FLOAT: return &ffi_type_float;
    default: return &ffi_type_pointer;
    }
}

int pt_probe_arm(struct probe *p, void *orig)
{
    for (unsigned i = 0; i < p->sp.nargs; i++)
        p->atypes[i] = ffi_of(p->sp.arg[i].type);
    if (ffi_prep_cif(&p->cif, FFI_DEFAULT_ABI, p->sp.nargs, ffi_of(p->sp.ret.type), p->atypes) != FFI_OK)
        return -1;
    void *code;
    ffi_closure *cl = ffi_closure_alloc(sizeof(ffi_closure), &code);
    if (cl == NULL)
        return -1;
    if (ffi_prep_closure_loc(cl, &p->cif, on_call, p, code) != FFI_OK) {
        ffi_closure_free(cl);
        return -1;
    }
    p->orig = orig;
    pt_forward_plan(p);
    p->code = code;
    p->closure = cl;
    return 0;
}
