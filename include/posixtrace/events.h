/*
 * <posixtrace/events.h> -- posixtrace extension: the system trace events the
 * interposition shim (libposixtrace-preload.so) records, and their payloads.
 *
 * Every stream names these ids in its event-name table (so
 * posix_trace_eventid_get_name() and logs know them); names start with
 * "posixtrace:" so that they cannot be taken for the predefined
 * "posix_trace_*" events, and they live in the system id range 8..255, apart
 * from user event ids (257..), whatever names a program opens.
 *
 * PAYLOAD FORMAT, version 1 (doc/events.md is the reference). All integers
 * little-endian, no padding between parts:
 *   1. struct posixtrace_call_hdr (32 bytes), for every event;
 *   2. the event's fixed fields: 8 bytes each (int64 or uint64 as the field's
 *      type says), in the order of the event's descriptor;
 *   3. the event's variable fields, in descriptor order: a uint32 byte count,
 *      then that many bytes (strings without their NUL; argv: the strings
 *      each NUL-terminated, one after the other).
 * A payload cut short by the stream's maximum system event size is marked
 * POSIX_TRACE_TRUNCATED_RECORD; decoders show what is there and stop. The
 * shim itself keeps every payload within 1024 bytes, the system event data
 * limit that the library, its log writer and its log reader share
 * (libtrace/ring/pt_sizes.h, PT_SYS_DATA_BYTES): it cuts variable fields to fit
 * and then sets POSIXTRACE_CALL_DATA_CUT.
 *
 * Any change to an existing event's fields bumps POSIXTRACE_PAYLOAD_VERSION
 * (new events take new ids); hdr_size lets the header grow at its end.
 *
 * A decoder needs no per-event code: posixtrace_event_descs[] lists, for
 * each id, the name and the fields (name and type). A program that reads
 * particular events may use <posixtrace/payloads.h> instead: each event's
 * fixed fields as a struct, and its variable fields' positions.
 */
#ifndef POSIXTRACE_EVENTS_H
#define POSIXTRACE_EVENTS_H

#include <stdint.h>

#define POSIXTRACE_PAYLOAD_VERSION 1u

struct posixtrace_call_hdr {
    uint16_t version;     /* POSIXTRACE_PAYLOAD_VERSION */
    uint16_t hdr_size;    /* sizeof(struct posixtrace_call_hdr): skip unknown tails */
    int32_t err;          /* errno after the call if it failed, else 0 */
    int64_t ret;          /* return value (pointers as integers) */
    uint64_t duration_ns; /* entry to return (0 for calls that do not return) */
    uint32_t tid;         /* kernel thread id of the caller */
    uint32_t flags;       /* POSIXTRACE_CALL_* */
};
#define POSIXTRACE_CALL_NORETURN 1u /* recorded before a call that may not return (exec,
                                       exit, a signal to the caller): ret, err and
                                       duration are 0; if the call returns, a second
                                       event of the same type has its result */
#define POSIXTRACE_CALL_DATA_CUT 2u /* a buffer field holds only the first bytes */
#define POSIXTRACE_CALL_ENTRY    4u /* recorded at entry only: ret, err and duration
                                       are 0, the outcome is not known (vfork in
                                       logs of earlier versions) */
#define POSIXTRACE_CALL_NODATA   8u /* a pointer argument was not read (NULL, or the
                                       call failed with EFAULT): its field is empty */
/* Bits 16..23 of flags: which function of the event's family the program
 * called (POSIXTRACE_FN_*, numbered per event from 1); 0: not recorded (an
 * event of a single function, or a payload of an earlier shim). Decoders
 * ignore flag bits they do not know, so the payload version is unchanged. */
#define POSIXTRACE_CALL_FN_SHIFT 16
#define POSIXTRACE_CALL_FN_MASK  0x00ff0000u
#define POSIXTRACE_CALL_FN(flags) (((flags) & POSIXTRACE_CALL_FN_MASK) >> POSIXTRACE_CALL_FN_SHIFT)
#define POSIXTRACE_CALL_WITH_FN(fn) (((uint32_t)(fn) << POSIXTRACE_CALL_FN_SHIFT) & \
                                     POSIXTRACE_CALL_FN_MASK)
/* The functions of each family (the fortified __open_2... as open...). */
enum posixtrace_fn_open {
    POSIXTRACE_FN_OPEN = 1, POSIXTRACE_FN_OPEN64, POSIXTRACE_FN_OPENAT, POSIXTRACE_FN_OPENAT64,
    POSIXTRACE_FN_CREAT, POSIXTRACE_FN_CREAT64,
};
enum posixtrace_fn_dup { POSIXTRACE_FN_DUP = 1, POSIXTRACE_FN_DUP2, POSIXTRACE_FN_DUP3 };
enum posixtrace_fn_pipe { POSIXTRACE_FN_PIPE = 1, POSIXTRACE_FN_PIPE2 };
enum posixtrace_fn_exec {
    POSIXTRACE_FN_EXECVE = 1, POSIXTRACE_FN_EXECV, POSIXTRACE_FN_EXECVP, POSIXTRACE_FN_EXECVPE,
    POSIXTRACE_FN_EXECL, POSIXTRACE_FN_EXECLP, POSIXTRACE_FN_EXECLE, POSIXTRACE_FN_FEXECVE,
    POSIXTRACE_FN_EXECVEAT,
};
enum posixtrace_fn_wait {
    POSIXTRACE_FN_WAIT = 1, POSIXTRACE_FN_WAITPID, POSIXTRACE_FN_WAIT3, POSIXTRACE_FN_WAIT4,
};
enum posixtrace_fn_kill { POSIXTRACE_FN_KILL = 1, POSIXTRACE_FN_KILLPG };
enum posixtrace_fn_accept { POSIXTRACE_FN_ACCEPT = 1, POSIXTRACE_FN_ACCEPT4 };

/* Field types. Fixed (8 bytes in part 2) below POSIXTRACE_F_VARIABLE. */
enum posixtrace_ftype {
    POSIXTRACE_F_INT = 1,   /* int64, shown in decimal */
    POSIXTRACE_F_UINT,      /* uint64, decimal */
    POSIXTRACE_F_HEX,       /* uint64, hex (pointers, masks) */
    POSIXTRACE_F_FD,        /* int64 descriptor (AT_FDCWD shown by name) */
    POSIXTRACE_F_OFLAGS,    /* open(2) flags, shown as O_RDONLY|O_CREAT... */
    POSIXTRACE_F_MODE,      /* mode_t, octal */
    POSIXTRACE_F_PID,       /* int64 process id */
    POSIXTRACE_F_SIGNAL,    /* int64 signal number, shown as SIGTERM... */
    POSIXTRACE_F_WHENCE,    /* lseek whence: SEEK_SET... */
    POSIXTRACE_F_SOCKFAM,   /* AF_INET... */
    POSIXTRACE_F_SOCKTYPE,  /* SOCK_STREAM|SOCK_CLOEXEC... */
    POSIXTRACE_F_MSGFLAGS,  /* MSG_* */
    POSIXTRACE_F_WSTATUS,   /* wait status, shown as WIFEXITED... */
    POSIXTRACE_F_ATFLAGS,   /* AT_* flags (AT_REMOVEDIR, AT_SYMLINK_NOFOLLOW...), RENAME_* */
    POSIXTRACE_F_PROT,      /* mmap/mprotect prot: PROT_READ|PROT_WRITE..., PROT_NONE */
    POSIXTRACE_F_MAPFLAGS,  /* mmap flags: MAP_PRIVATE|MAP_ANONYMOUS... */
    POSIXTRACE_F_FCNTLCMD,  /* int64 fcntl command: F_GETFL... */
    POSIXTRACE_F_IOCTLREQ,  /* ioctl request: TCGETS, FIONREAD... (others in hex) */
    POSIXTRACE_F_SIGHOW,    /* int64 sigprocmask how: SIG_BLOCK... */
    POSIXTRACE_F_DOUBLE,    /* the bits of an IEEE 754 double (probes' double and float) */
    POSIXTRACE_F_EPOLLOP,   /* int64 epoll_ctl op: EPOLL_CTL_ADD... */
    POSIXTRACE_F_VARIABLE = 64,
    POSIXTRACE_F_STR = 64,  /* a string (path, name) */
    POSIXTRACE_F_BUF,       /* the first bytes of a data buffer */
    POSIXTRACE_F_ARGV,      /* NUL-terminated strings back to back */
    POSIXTRACE_F_SOCKADDR,  /* a struct sockaddr as the program passed it */
    POSIXTRACE_F_ADDRS,     /* uint64 addresses back to back (stacks) */
    POSIXTRACE_F_BYTES,     /* opaque bytes, shown in hex (build ids) */
    POSIXTRACE_F_POLLFDS,   /* struct pollfd[] back to back (poll, ppoll) */
    POSIXTRACE_F_EPOLLEVS,  /* struct epoll_event[] back to back (epoll_ctl, epoll_wait) */
    POSIXTRACE_F_TIMESPEC,  /* a struct timespec (empty: NULL) */
    POSIXTRACE_F_TIMEVAL,   /* a struct timeval (empty: NULL) */
};
/* Decoders show an unknown fixed type (< 64) as F_INT and an unknown
 * variable type (>= 64) as F_BYTES: new types never break old decoders. */

/* A fixed field's C type: int64_t for the types that hold a signed value
 * (counts that may be negative, descriptors, ids, signal numbers, enums,
 * wait statuses, and unknown types, read as F_INT), uint64_t for the others
 * (sizes, addresses, flag words, modes). <posixtrace/payloads.h> declares
 * each event's fixed fields with it. */
static inline int posixtrace_ftype_signed(int type)
{
    switch (type) {
    case POSIXTRACE_F_UINT: case POSIXTRACE_F_HEX: case POSIXTRACE_F_OFLAGS:
    case POSIXTRACE_F_MODE: case POSIXTRACE_F_SOCKTYPE: case POSIXTRACE_F_MSGFLAGS:
    case POSIXTRACE_F_ATFLAGS: case POSIXTRACE_F_PROT: case POSIXTRACE_F_MAPFLAGS:
    case POSIXTRACE_F_IOCTLREQ:
        return 0;
    default:
        return type < POSIXTRACE_F_VARIABLE;
    }
}

/* Event ids (stable; defined with their fields in <posixtrace/events.def>,
 * documented in doc/events.md). */
enum posixtrace_event_id {
#define POSIXTRACE_EVENT(ID, id, name, category, by, fields) POSIXTRACE_EV_##ID = id,
#include "events.def"
#undef POSIXTRACE_EVENT
};

#define POSIXTRACE_MAX_FIELDS 8

struct posixtrace_field {
    const char *name;
    int type; /* enum posixtrace_ftype */
};

struct posixtrace_event_desc {
    unsigned id;                /* 8..255 */
    const char *name;           /* "posixtrace:open" */
    const char *category;       /* "process", "thread", "file", "net", "trace" */
    unsigned nfields;
    struct posixtrace_field fields[POSIXTRACE_MAX_FIELDS];
};

/* Every event the shim records, by id; the shim, the library (names) and the
 * tools all use this one table. Defined in libposixtrace. */
extern const struct posixtrace_event_desc posixtrace_event_descs[];
extern const unsigned posixtrace_event_ndescs;

/* The descriptor of id, or NULL. */
const struct posixtrace_event_desc *posixtrace_event_desc(unsigned id);

/* Defined by libposixtrace-preload.so (find it with dlsym(RTLD_DEFAULT, ...)
 * in a program that may run without the shim): record a "stack" event of up
 * to `depth` frames (at most 64; 0: none) after each recorded call, as
 * POSIXTRACE_STACK=depth does. 0, EINVAL (depth > 64) or ENOTSUP (the
 * unwinder, libgcc_s.so.1, cannot be loaded). The first call that turns
 * stacks on loads the unwinder (dlopen): not from a signal handler. */
int posixtrace_shim_set_stack(unsigned depth);

/* Defined by libposixtrace-preload.so (dlsym(RTLD_DEFAULT, ...) likewise):
 * the system-call mode, as POSIXTRACE_SYSCALLS=1 turns it on at start
 * (doc/events.md, "System calls"): on != 0 records every system call of the
 * calling thread, of the process's other threads (each asked by a signal to
 * arm itself; preload/README.md, "Threads older than the mode") and of the
 * threads and fork children created from now on as a "syscall:<name>"
 * event; 0 stops it in the calling thread and for
 * threads created from now on. 0, or ENOSYS where the kernel has no
 * Syscall User Dispatch (Linux >= 5.11, x86-64) or refuses it. */
int posixtrace_shim_set_syscalls(int on);

#endif
