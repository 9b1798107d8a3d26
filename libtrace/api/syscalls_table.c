/*
 * The descriptors of the system-call events (ids POSIXTRACE_SYSCALL_FIRST +
 * number): every system call of the architecture, its name from the kernel
 * headers (syscall_names.h, generated at build time by gen-syscall-names.sh),
 * its arguments from <posixtrace/syscalls.def> where that decodes them, else
 * six arguments in hex. posixtrace_event_desc() returns them; the shim
 * captures a call's arguments from them and the tools decode its payload
 * with the same generic code as the shim's events.
 *
 * The table is built once, without allocating, at the first call of
 * pt_syscall_desc() (pthread_once): a process that never asks (a traced
 * program outside the system-call mode) does not pay for it (72 KiB of
 * descriptors, 18 pages). The shim's system-call mode asks before it arms
 * the first thread (preload/sud/arm.c), so no SIGSYS handler builds it.
 * The decoded descriptors are found by name through a hash index (about
 * 78 000 instructions in all, callgrind) instead of a search of the whole
 * list for each system call (1.4 million).
 */
#include "../internal.h"
#include "../ring/shm_layout.h"
#include <posixtrace/events.h>
#include <pthread.h>
#include <string.h>
#include "../log/xxh.h"

static const struct {
    unsigned short nr;
    const char *name;
} sys_nrs[] = {
#define PT_SYSCALL_NAME(nr, name) { nr, "syscall:" #name },
#include "syscall_names.h"
#undef PT_SYSCALL_NAME
};

#define POSIXTRACE_A(n, t) { #n, POSIXTRACE_F_##t },
#define NARGS(...) \
    (unsigned)(sizeof((const struct posixtrace_field[]){ __VA_ARGS__ { NULL, 0 } }) / \
                   sizeof(struct posixtrace_field) - 1)
#define POSIXTRACE_SYSCALL(name, cat, fields) \
    { 0, "syscall:" #name, cat, NARGS(fields), { fields } },
static const struct posixtrace_event_desc decoded[] = {
#include <posixtrace/syscalls.def>
};
#undef POSIXTRACE_SYSCALL
#undef POSIXTRACE_A
_Static_assert(POSIXTRACE_MAX_FIELDS >= 6, "a system call's six arguments fit a descriptor");

static struct posixtrace_event_desc descs[PT_SYSCALL_NR_MAX + 1];
static pthread_once_t built = PTHREAD_ONCE_INIT;

static const struct posixtrace_event_desc raw = {
    0, NULL, "syscall", 6,
    { { "a0", POSIXTRACE_F_HEX }, { "a1", POSIXTRACE_F_HEX }, { "a2", POSIXTRACE_F_HEX },
      { "a3", POSIXTRACE_F_HEX }, { "a4", POSIXTRACE_F_HEX }, { "a5", POSIXTRACE_F_HEX } },
};

#define NDECODED (sizeof decoded / sizeof decoded[0])
/* decoded[] by name: open addressing, slot = index + 1, 0 empty; at most
 * half full */
#define DEC_SLOTS 512u
_Static_assert(NDECODED <= DEC_SLOTS / 2, "the decoded system calls' index has room");
static unsigned short dec_index[DEC_SLOTS];

static unsigned dec_home(const char *name)
{
    return (unsigned)pt_xxh3(name, strlen(name)) & (DEC_SLOTS - 1);
}

static void index_decoded(void)
{
    for (size_t i = 0; i < NDECODED; i++) {
        unsigned h = dec_home(decoded[i].name);
        while (dec_index[h] != 0 && dec_index[h] != i + 1)
            h = (h + 1) & (DEC_SLOTS - 1);
        dec_index[h] = (unsigned short)(i + 1);
    }
}

static const struct posixtrace_event_desc *decoded_of(const char *name)
{
    for (unsigned h = dec_home(name); dec_index[h] != 0; h = (h + 1) & (DEC_SLOTS - 1))
        if (strcmp(decoded[dec_index[h] - 1].name, name) == 0)
            return &decoded[dec_index[h] - 1];
    return NULL;
}

static void build(void)
{
    index_decoded();
    for (size_t i = 0; i < sizeof sys_nrs / sizeof sys_nrs[0]; i++) {
        unsigned nr = sys_nrs[i].nr;
        if (nr > PT_SYSCALL_NR_MAX || descs[nr].name != NULL)
            continue;
        const struct posixtrace_event_desc *d = decoded_of(sys_nrs[i].name);
        struct posixtrace_event_desc e = d != NULL ? *d : raw;
        e.id = PT_SYSCALL_ID_BASE + nr;
        e.name = sys_nrs[i].name;
        descs[nr] = e;
    }
}

const struct posixtrace_event_desc *pt_syscall_desc(unsigned nr)
{
    if (nr > PT_SYSCALL_NR_MAX)
        return NULL;
    pthread_once(&built, build);
    return descs[nr].name != NULL ? &descs[nr] : NULL;
}
