/*
 * xlat.h -- the tables of symbolic names the tools decode values with
 * (flags, enumerations, signals, errno names), and their use.
 *
 * The tables are generated at build time (tools/xlat/gen-xlat.sh) from lists
 * of names, tools/xlat/<set>.in: the values come from the system headers the
 * tools are compiled with, never typed by hand; a name the system does not
 * define is left out.  No glib here (tests/tools/t202_xlat.c links it alone).
 */
#ifndef POSIXTRACE_XLAT_H
#define POSIXTRACE_XLAT_H

#include <stddef.h>
#include <stdint.h>

struct pt_xlat {
    uint64_t val;
    const char *name;   /* NULL: the end of the table */
};

/* One per tools/xlat/<set>.in (the generated tools/xlat_tables.c). */
extern const struct pt_xlat pt_xlat_open_access[];
extern const struct pt_xlat pt_xlat_open_flags[];
extern const struct pt_xlat pt_xlat_fd_flags[];
extern const struct pt_xlat pt_xlat_fd_cloexec[];
extern const struct pt_xlat pt_xlat_sock_types[];
extern const struct pt_xlat pt_xlat_sock_flags[];
extern const struct pt_xlat pt_xlat_address_families[];
extern const struct pt_xlat pt_xlat_msg_flags[];
extern const struct pt_xlat pt_xlat_at_flags[];
extern const struct pt_xlat pt_xlat_whence[];
extern const struct pt_xlat pt_xlat_wait_options[];
extern const struct pt_xlat pt_xlat_signals[];
extern const struct pt_xlat pt_xlat_errnos[];
extern const struct pt_xlat pt_xlat_mmap_prot[];
extern const struct pt_xlat pt_xlat_mmap_flags[];
extern const struct pt_xlat pt_xlat_fcntl_cmds[];
extern const struct pt_xlat pt_xlat_ioctl_reqs[];
extern const struct pt_xlat pt_xlat_sig_how[];
extern const struct pt_xlat pt_xlat_poll_events[];
extern const struct pt_xlat pt_xlat_epoll_events[];
extern const struct pt_xlat pt_xlat_epoll_ops[];

/* The name of value v in table t (the first entry with that value), or NULL. */
const char *pt_xlat_name(const struct pt_xlat *t, uint64_t v);

/*
 * Writes into buf (size bytes, NUL-terminated, cut if too small) the flags
 * word v as the names of the flags it holds, '|'-separated, then the bits no
 * name covers in hex ("O_CREAT|O_CLOEXEC|0x40000000"); 0 as "0". A flag is
 * shown when all its bits are set, multi-bit flags before single-bit ones;
 * flags whose value is 0 are never shown. Returns buf.
 */
char *pt_xlat_flags(char *buf, size_t size, const struct pt_xlat *t, uint64_t v);

#endif
