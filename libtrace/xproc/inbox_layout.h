/*
 * The layout of an inbox: the memfd through which controllers in other
 * processes reach a traced process, and through which a new image finds the
 * streams it inherits (doc/design.md, "Other processes" and "Finding the
 * inherited streams"). One definition, included by the owner (inbox.c,
 * discover.c), the controllers (remote.c) and the tests that attack it.
 * The owner maps it over a page-aligned static object of the library, so
 * that its first part, the want table, is at a link-time address.
 */
#ifndef PT_INBOX_LAYOUT_H
#define PT_INBOX_LAYOUT_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <posixtrace/inflight.h>
#include "../ring/shm_layout.h"

#ifndef PT_MAX_THREADS
#define PT_MAX_THREADS 1024u
#endif
#ifndef PT_MAX_ATTACH
#define PT_MAX_ATTACH TRACE_SYS_MAX
#endif

#define PT_WANT_BYTES   2048u                      /* PT_ID_MAX + 1 rounded up to 64 */
#define PT_WANT_ON      1u                         /* some running stream takes it */
#define PT_WANT_BELL    2u                         /* the inbox changed: look */
#define PT_WANT_ONS     UINT64_C(0x0101010101010101)
#define PT_WANT_BELLS   UINT64_C(0x0202020202020202)
#define PT_INBOX_CELLS_OFF 81920u                  /* the calls in flight, a cell per thread */
#define PT_INBOX_SIZE   (PT_INBOX_CELLS_OFF + PT_MAX_THREADS * 64u)
#define PT_INBOX_MAGIC  UINT64_C(0x3158424e49525450) /* "PTRINBX1" */
#define PT_INBOX_VERSION 4u  /* 4: calls in flight; 3: ids up to 2047; 2: no lock, sealed memfd */
#define PT_INBOX_SEALS  (F_SEAL_SHRINK | F_SEAL_GROW) /* a mapper never gets SIGBUS */
#define PT_INBOX_FD_MIN 1000                       /* its descriptor: the first free from here */
#define PT_INBOX_NAME   "posixtrace-inbox"
enum { PT_IE_FREE = 0, PT_IE_BUSY = 1, PT_IE_POSTED = 2 };
/* A claimed entry's state names its claimer: BUSY in the low byte, the
 * claiming process's pid above (pids are below 2^22), so that an entry whose
 * claimer died before posting it can be taken back (pt_inbox_claim). */
#define PT_IE_BUSY_BY(pid) (((uint32_t)(pid) << 8) | PT_IE_BUSY)
struct pt_inbox_ent {
    _Atomic uint32_t state;
    int32_t ctrl_fd;          /* the stream's memfd number in the controller */
    uint32_t ctrl_pid;
    int32_t inherit;          /* the stream's inheritance policy */
    uint64_t ctrl_start;
    uint64_t key;
    uint64_t size;
    uint8_t pad_[24];
};
struct pt_inbox {
    union {
        uint8_t b[PT_WANT_BYTES];
        uint64_t w[PT_WANT_BYTES / 8];
    } want;
    _Atomic uint32_t seq;     /* bumped by each ring, before the doorbell bits */
    uint32_t pad_seq_;
    uint64_t magic;
    uint32_t version;
    uint32_t pid;             /* the owner */
    uint64_t start;
    int32_t fd;               /* its number in the owner */
    uint32_t uid;
    /* entries are claimed by CAS on their state (FREE -> BUSY), no lock:
     * a controller relies on nothing a target writes here but indices it
     * checks (doc/design.md, "Other processes") */
    alignas(64) struct pt_inbox_ent ent[PT_MAX_ATTACH];
    /* this process's user event names, by id - 257: a controller creating a
     * stream for it copies them ("stored for future trace streams") */
    struct pt_name names[TRACE_USER_EVENT_MAX];
};
/* After the header, entries and names (struct pt_inbox, which copies of
 * the inbox hold), at PT_INBOX_CELLS_OFF: one struct posixtrace_inflight_cell
 * (<posixtrace/record.h>) per thread registry entry, written by that thread
 * only (doc/design.md "Calls in flight"). */
union pt_inbox_mem {
    struct pt_inbox ib;
    unsigned char bytes[PT_INBOX_SIZE];
};
static inline struct posixtrace_inflight_cell *pt_inbox_cells(void *ib)
{
    return (struct posixtrace_inflight_cell *)((unsigned char *)ib + PT_INBOX_CELLS_OFF);
}
_Static_assert(sizeof(struct pt_inbox) <= PT_INBOX_CELLS_OFF, "inbox size");
_Static_assert(sizeof(struct posixtrace_inflight_cell) == 64, "a cell per cache line");
_Static_assert(PT_INBOX_CELLS_OFF % 4096 == 0, "the cells on pages of their own");
_Static_assert(offsetof(struct pt_inbox, want) == 0, "the want table first: one load");
_Static_assert(PT_WANT_BYTES >= PT_ID_MAX + 1 && PT_WANT_BYTES % 64 == 0, "a want byte per id");
_Static_assert(sizeof(struct pt_inbox_ent) == 64, "an entry per cache line");
_Static_assert(offsetof(struct pt_inbox, ent) % 64 == 0, "entries on cache lines");
_Static_assert(PT_INBOX_SIZE % 4096 == 0, "whole pages");

#endif
