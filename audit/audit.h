/*
 * libposixtrace-audit.so internals (issue 16): run-time probes. The dynamic
 * linker's auditing interface (rtld-audit(7)) redirects each binding of a
 * probed symbol to a libffi closure (call.c) that records the call as event
 * POSIXTRACE_PROBE_FIRST + k through the libposixtrace of the program's own
 * namespace (an audit library lives in a namespace of its own, with its own
 * C library: the program's errno and libposixtrace are reached through
 * dlsym on their link maps).
 */
#ifndef POSIXTRACE_AUDIT_H
#define POSIXTRACE_AUDIT_H

#include <ffi.h>
#include <link.h>
#include <stdint.h>

#include "spec.h"

#define PT_PROBES_MAX 255u /* ids 1281..1535 */

struct probe {
    struct pt_probe_spec sp;
    const char *text;        /* the spec as given (in the environment) */
    unsigned id;             /* POSIXTRACE_PROBE_FIRST + k */
    ffi_cif cif;
    ffi_type *atypes[PT_PROBE_ARGS_MAX];
    ffi_closure *closure;
    void *code;              /* the closure's address: what bindings get */
    void *orig;              /* the function (its first binding's definition) */
    unsigned bound;          /* bindings redirected */
    int fwd;                 /* forward.c: how the function is called */
};

extern struct probe pt_probes[PT_PROBES_MAX];
extern unsigned pt_nprobes;
extern struct link_map *pt_map_libtrace, *pt_map_libc;

/* call.c: builds p's closure for the function at orig; 0 or -1. */
int pt_probe_arm(struct probe *p, void *orig);
/* forward.c: chooses how p's function is called (once p->sp and p->cif
 * are set), and calls it with the closure's arguments, the result in ret. */
void pt_forward_plan(struct probe *p);
void pt_forward(const struct probe *p, void *ret, void **args);
/* forward.c: an argument of the type at v as 64 bits: integers widened as
 * their type says, a float as the double of its value, the rest as is. */
uint64_t pt_arg_bits(int type, const void *v);
/* call.c: the program's libposixtrace and errno found (at la_preinit; not
 * before: no call is recorded then); 0 if they cannot be. */
int pt_base_ready(void);
extern int pt_preinit_done; /* la_preinit ran: every object is relocated */

#endif
