/*
 * The probe spec parser (spec.h). Grammar:
 *   spec   := object ':' name '(' [ 'void' | arg { ',' arg } ] ')' [ '->' type ]
 *   arg    := type [ ident ]              (default names: a1, a2...)
 *   type   := int8..int64 | uint8..uint64 | char | uchar | short | ushort | int
 *           | uint | long | ulong | size_t | ssize_t | ptr | str | double | float
 *           | void (return only) | buf '(' ( N | argK | ret ) ')'
 * Spaces are allowed between tokens. A missing '->type' means int.
 */
#include "spec.h"

#include <stdio.h>
#include <string.h>

struct cur {
    const char *s, *p;
    size_t *errpos;
    const char **errmsg;
};

static int fail(struct cur *c, const char *at, const char *msg)
{
    *c->errpos = (size_t)(at - c->s);
    *c->errmsg = msg;
    return -1;
}

static void skip(struct cur *c)
{
    while (*c->p == ' ' || *c->p == '\t')
        c->p++;
}

static int is_ident(char ch, int first)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
           (!first && ch >= '0' && ch <= '9');
}

static size_t ident_len(const char *p)
{
    size_t n = 0;
    while (is_ident(p[n], n == 0))
        n++;
    return n;
}

static const struct {
    const char *name;
    uint8_t type;
} types[] = {
    { "int8", PT_T_I8 }, { "int16", PT_T_I16 }, { "int32", PT_T_I32 }, { "int64", PT_T_I64 },
    { "uint8", PT_T_U8 }, { "uint16", PT_T_U16 }, { "uint32", PT_T_U32 }, { "uint64", PT_T_U64 },
    { "char", PT_T_I8 }, { "uchar", PT_T_U8 }, { "short", PT_T_I16 }, { "ushort", PT_T_U16 },
    { "int", PT_T_I32 }, { "uint", PT_T_U32 }, { "long", PT_T_I64 }, { "ulong", PT_T_U64 },
    { "size_t", PT_T_U64 }, { "ssize_t", PT_T_I64 }, { "ptr", PT_T_PTR }, { "str", PT_T_STR },
    { "double", PT_T_DOUBLE }, { "float", PT_T_FLOAT }, { "void", PT_T_VOID },
    { "buf", PT_T_BUF },
};

static int buf_len(struct cur *c, struct pt_parg *a, int is_ret)
{
    skip(c);
    if (*c->p != '(')
        return fail(c, c->p, "'(' expected after buf: buf(N), buf(argK) or buf(ret)");
    c->p++;
    skip(c);
    const char *at = c->p;
    if (*c->p >= '0' && *c->p <= '9') {
        unsigned long n = 0;
        while (*c->p >= '0' && *c->p <= '9' && n <= 1u << 20)
            n = n * 10 + (unsigned long)(*c->p++ - '0');
        if (n > 1u << 20)
            return fail(c, at, "buf(N): N too large");
        a->lenarg = PT_BUF_CONST;
        a->len = (uint32_t)n;
    } else if (strncmp(c->p, "ret", 3) == 0 && !is_ident(c->p[3], 0)) {
        if (is_ret)
            return fail(c, at, "a returned buf needs its length in an argument: buf(argK)");
        a->lenarg = PT_BUF_RET;
        c->p += 3;
    } else if (strncmp(c->p, "arg", 3) == 0 && c->p[3] >= '1' && c->p[3] <= '7' &&
               !is_ident(c->p[4], 0)) {
        a->lenarg = (int8_t)(c->p[3] - '1');
        c->p += 4;
    } else {
        return fail(c, at, "buf length: a number, arg1..arg7 or ret");
    }
    skip(c);
    if (*c->p != ')')
        return fail(c, c->p, "')' expected to close buf(");
    c->p++;
    return 0;
}

static int parse_type(struct cur *c, struct pt_parg *a, int is_ret)
{
    skip(c);
    size_t n = ident_len(c->p);
    const char *at = c->p;
    for (size_t i = 0; n != 0 && i < sizeof types / sizeof types[0]; i++) {
        if (strlen(types[i].name) != n || strncmp(types[i].name, c->p, n) != 0)
            continue;
        a->type = types[i].type;
        c->p += n;
        if (a->type == PT_T_VOID && !is_ret)
            return fail(c, at, "void is only a return type (or the whole list: f(void))");
        return a->type == PT_T_BUF ? buf_len(c, a, is_ret) : 0;
    }
    return fail(c, at, "unknown type (int8..int64, uint8..uint64, char, short, int, long and "
                       "their u- forms, size_t, ssize_t, ptr, str, buf(..), double, float, void)");
}

static int parse_args(struct cur *c, struct pt_probe_spec *sp)
{
    skip(c);
    if (strncmp(c->p, "void", 4) == 0 && !is_ident(c->p[4], 0)) {
        const char *save = c->p;
        c->p += 4;
        skip(c);
        if (*c->p == ')')
            return 0;
        c->p = save;
    }
    if (*c->p == ')')
        return 0;
    for (;;) {
        if (sp->nargs == PT_PROBE_ARGS_MAX)
            return fail(c, c->p, "too many arguments (at most 7)");
        struct pt_parg *a = &sp->arg[sp->nargs];
        if (parse_type(c, a, 0) != 0)
            return -1;
        skip(c);
        size_t n = ident_len(c->p);
        if (n > PT_PROBE_ARGNAME_MAX)
            return fail(c, c->p, "argument name too long (at most 23 bytes)");
        if (n != 0) {
            memcpy(a->name, c->p, n);
            a->name[n] = '\0';
            c->p += n;
        } else {
            snprintf(a->name, sizeof a->name, "a%u", sp->nargs + 1);
        }
        sp->nargs++;
        skip(c);
        if (*c->p == ')')
            return 0;
        if (*c->p != ',')
            return fail(c, c->p, "',' or ')' expected");
        c->p++;
    }
}

static int check_bufs(struct cur *c, const struct pt_probe_spec *sp)
{
    for (unsigned i = 0; i < sp->nargs; i++) {
        const struct pt_parg *a = &sp->arg[i];
        if (a->type != PT_T_BUF || a->lenarg == PT_BUF_CONST)
            continue;
        if (a->lenarg == PT_BUF_RET ? (sp->ret.type == PT_T_VOID || sp->ret.type == PT_T_STR ||
                                       sp->ret.type == PT_T_DOUBLE || sp->ret.type == PT_T_FLOAT)
                                    : ((unsigned)a->lenarg >= sp->nargs ||
                                       sp->arg[a->lenarg].type < PT_T_I8 ||
                                       sp->arg[a->lenarg].type > PT_T_U64))
            return fail(c, c->s + strlen(c->s), "buf(argK)/buf(ret): the length must be an "
                                                 "integer argument or an integer return value");
    }
    return 0;
}

int pt_probe_parse(const char *s, struct pt_probe_spec *sp, size_t *errpos, const char **errmsg)
{
    struct cur c = { s, s, errpos, errmsg };
    memset(sp, 0, sizeof *sp);
    const char *colon = strchr(s, ':');
    if (colon == NULL)
        return fail(&c, s + strlen(s), "':' expected: OBJECT:FUNCTION(TYPES)->TYPE");
    size_t n = (size_t)(colon - s);
    if (n == 0 || n > PT_PROBE_OBJ_MAX || memchr(s, '(', n) != NULL)
        return fail(&c, s, n == 0 ? "object name expected (a soname such as libm.so.6, or *)"
                                  : "bad object name");
    memcpy(sp->object, s, n);
    c.p = colon + 1;
    skip(&c);
    n = ident_len(c.p);
    if (n == 0 || n > PT_PROBE_FN_MAX)
        return fail(&c, c.p, "function name expected");
    memcpy(sp->fn, c.p, n);
    c.p += n;
    skip(&c);
    if (*c.p != '(')
        return fail(&c, c.p, "'(' expected after the function name");
    c.p++;
    if (parse_args(&c, sp) != 0)
        return -1;
    c.p++; /* ')' */
    skip(&c);
    sp->ret.type = PT_T_I32;
    if (c.p[0] == '-' && c.p[1] == '>') {
        c.p += 2;
        if (parse_type(&c, &sp->ret, 1) != 0)
            return -1;
        skip(&c);
    }
    if (*c.p != '\0')
        return fail(&c, c.p, "unexpected text after the prototype ('->TYPE' or the end)");
    strcpy(sp->ret.name, "ret");
    if (pt_ptype_variable(sp->ret.type) && sp->nargs == PT_PROBE_ARGS_MAX)
        return fail(&c, s, "too many fields: at most 6 arguments with a str or buf return");
    return check_bufs(&c, sp);
}

int pt_ptype_signed(int t)
{
    return t == PT_T_I8 || t == PT_T_I16 || t == PT_T_I32 || t == PT_T_I64;
}

unsigned pt_ptype_width(int t)
{
    switch (t) {
    case PT_T_I8: case PT_T_U8: return 1;
    case PT_T_I16: case PT_T_U16: return 2;
    case PT_T_I32: case PT_T_U32: return 4;
    default: return 8;
    }
}
