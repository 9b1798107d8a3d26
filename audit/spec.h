/*
 * Probe specs (issue 16): "OBJECT:FUNCTION(TYPE [NAME], ...)->TYPE", e.g.
 * "libm.so.6:cos(double x)->double" or "*:getenv(str name)->str".
 * One parser, shared by libposixtrace-audit.so (which builds the probes)
 * and the tools (which check the specs and decode the events). No
 * allocation, no glib: the audit library parses with it at start-up.
 */
#ifndef POSIXTRACE_AUDIT_SPEC_H
#define POSIXTRACE_AUDIT_SPEC_H

#include <stddef.h>
#include <stdint.h>

#define PT_PROBE_ARGS_MAX 7   /* + a returned str/buf: at most 8 fields */
#define PT_PROBE_OBJ_MAX 127
#define PT_PROBE_FN_MAX 127
#define PT_PROBE_ARGNAME_MAX 23

enum pt_ptype {
    PT_T_VOID, PT_T_I8, PT_T_I16, PT_T_I32, PT_T_I64, PT_T_U8, PT_T_U16, PT_T_U32, PT_T_U64,
    PT_T_PTR, PT_T_STR, PT_T_BUF, PT_T_DOUBLE, PT_T_FLOAT,
};
#define PT_BUF_CONST (-1)    /* buf(N) */
#define PT_BUF_RET 8         /* buf(ret) */

struct pt_parg {
    uint8_t type;          /* enum pt_ptype */
    int8_t lenarg;         /* BUF: PT_BUF_CONST, 0..6 (argument index), PT_BUF_RET */
    uint32_t len;          /* BUF with PT_BUF_CONST: the byte count */
    char name[PT_PROBE_ARGNAME_MAX + 1];
};

struct pt_probe_spec {
    char object[PT_PROBE_OBJ_MAX + 1]; /* "*": any object */
    char fn[PT_PROBE_FN_MAX + 1];
    unsigned nargs;
    struct pt_parg arg[PT_PROBE_ARGS_MAX];
    struct pt_parg ret;
};

/* 0 and *p, or -1 with *errpos (byte offset in s) and *errmsg set. */
int pt_probe_parse(const char *s, struct pt_probe_spec *p, size_t *errpos, const char **errmsg);
/* Integer types, ptr: a fixed 8-byte field; str and buf: a variable one. */
static inline int pt_ptype_variable(int t)
{
    return t == PT_T_STR || t == PT_T_BUF;
}
int pt_ptype_signed(int t);
/* The byte width of an integer type (1, 2, 4, 8), 8 for the others. */
unsigned pt_ptype_width(int t);

#endif
