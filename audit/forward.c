/*
 * Calling a probed function with the arguments its closure received.
 * ffi_call works for every prototype but costs about as much as the
 * closure itself (it classifies each argument again at every call). On
 * x86-64 (System V ABI) a prototype whose arguments are all integers,
 * pointers or doubles, with at most 6 of the first kind and 8 of the
 * second, passes every argument in registers: rdi..r9 in order for the
 * integer class, xmm0..xmm7 in order for doubles, whatever their
 * interleaving. Calling the function through a pointer of type
 * "f(6 x uint64_t, 8 x double)" with the arguments sorted into those two
 * lists loads exactly those registers (unused ones hold zeros, which the
 * function never reads), and the result comes back in rax or xmm0. Other
 * prototypes (float arguments or result, more arguments than registers)
 * and other architectures go through ffi_call.
 */
#include "audit.h"

#include <string.h>

enum { FWD_FFI, FWD_INT, FWD_DOUBLE };

uint64_t pt_arg_bits(int type, const void *v)
{
    switch (type) {
    case PT_T_I8: return (uint64_t)(int64_t)*(const int8_t *)v;
    case PT_T_I16: return (uint64_t)(int64_t)*(const int16_t *)v;
    case PT_T_I32: return (uint64_t)(int64_t)*(const int32_t *)v;
    case PT_T_U8: return *(const uint8_t *)v;
    case PT_T_U16: return *(const uint16_t *)v;
    case PT_T_U32: return *(const uint32_t *)v;
    case PT_T_FLOAT: {
        double d = *(const float *)v;
        uint64_t u;
        memcpy(&u, &d, 8);
        return u;
    }
    default: {
        uint64_t u;
        memcpy(&u, v, 8);
        return u;
    }
    }
}

#if defined(__x86_64__) && defined(__linux__)
typedef uint64_t (*fwd_int_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                               double, double, double, double, double, double, double, double);
typedef double (*fwd_dbl_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                             double, double, double, double, double, double, double, double);

static int int_class(int t)
{
    return t != PT_T_VOID && t != PT_T_DOUBLE && t != PT_T_FLOAT;
}

void pt_forward_plan(struct probe *p)
{
    unsigned ni = 0, nd = 0;
    p->fwd = FWD_FFI;
    for (unsigned i = 0; i < p->sp.nargs; i++) {
        int t = p->sp.arg[i].type;
        if (t == PT_T_FLOAT)
            return;
        *(int_class(t) ? &ni : &nd) += 1;
    }
    if (ni > 6 || nd > 8 || p->sp.ret.type == PT_T_FLOAT)
        return;
    p->fwd = p->sp.ret.type == PT_T_DOUBLE ? FWD_DOUBLE : FWD_INT;
}

/* The result where libffi's caller expects it: integers smaller than
 * ffi_arg widened to a whole ffi_arg (libffi's rule for closures). */
static void put_ret(int t, void *ret, uint64_t r)
{
    ffi_arg a;
    switch (t) {
    case PT_T_VOID: return;
    case PT_T_I8: a = (ffi_arg)(int64_t)(int8_t)r; break;
    case PT_T_I16: a = (ffi_arg)(int64_t)(int16_t)r; break;
    case PT_T_I32: a = (ffi_arg)(int64_t)(int32_t)r; break;
    case PT_T_U8: a = (uint8_t)r; break;
    case PT_T_U16: a = (uint16_t)r; break;
    case PT_T_U32: a = (uint32_t)r; break;
    default: a = (ffi_arg)r; break;
    }
    memcpy(ret, &a, sizeof a);
}

void pt_forward(const struct probe *p, void *ret, void **args)
{
    if (p->fwd == FWD_FFI) {
        ffi_call((ffi_cif *)&p->cif, FFI_FN(p->orig), ret, args);
        return;
    }
    uint64_t i[6] = { 0 };
    double d[8] = { 0 };
    unsigned ni = 0, nd = 0;
    for (unsigned k = 0; k < p->sp.nargs; k++) {
        int t = p->sp.arg[k].type;
        if (int_class(t))
            i[ni++] = pt_arg_bits(t, args[k]);
        else
            memcpy(&d[nd++], args[k], sizeof(double));
    }
    if (p->fwd == FWD_DOUBLE) {
        double r = ((fwd_dbl_fn)p->orig)(i[0], i[1], i[2], i[3], i[4], i[5], d[0], d[1], d[2], d[3],
                                         d[4], d[5], d[6], d[7]);
        memcpy(ret, &r, sizeof r);
        return;
    }
    uint64_t r = ((fwd_int_fn)p->orig)(i[0], i[1], i[2], i[3], i[4], i[5], d[0], d[1], d[2], d[3],
                                       d[4], d[5], d[6], d[7]);
    put_ret(p->sp.ret.type, ret, r);
}
#else
void pt_forward_plan(struct probe *p)
{
    p->fwd = FWD_FFI;
}

void pt_forward(const struct probe *p, void *ret, void **args)
{
    ffi_call((ffi_cif *)&p->cif, FFI_FN(p->orig), ret, args);
}
#endif
