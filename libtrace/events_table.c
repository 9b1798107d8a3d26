/*
 * The system events of the interposition shim: ids, names, payload fields.
 * <posixtrace/events.h> describes the format; doc/events.md documents each
 * event. Ids are stable once released: add new events at new ids.
 */
#include "internal.h"
#include <posixtrace/events.h>

#define F(n, t) { n, POSIXTRACE_F_##t }
#define EV(id, name, cat, n, ...) \
    { POSIXTRACE_EV_##id, "posixtrace:" name, cat, n, { __VA_ARGS__ } }

PT_API const struct posixtrace_event_desc posixtrace_event_descs[] = {
    /* the process and its address map */
    EV(PROCESS_START, "process_start", "process", 4,
       F("pid", PID), F("ppid", PID), F("exe", STR), F("argv", ARGV)),
    EV(MODULE, "module", "process", 4,
       F("base", HEX), F("size", HEX), F("build_id", BYTES), F("path", STR)),
    EV(STACK, "stack", "process", 1, F("frames", ADDRS)),
    /* files and descriptors */
    EV(OPEN, "open", "file", 4, F("dirfd", FD), F("flags", OFLAGS), F("mode", MODE), F("path", STR)),
    EV(CLOSE, "close", "file", 1, F("fd", FD)),
    EV(READ, "read", "file", 3, F("fd", FD), F("count", UINT), F("buf", BUF)),
    EV(WRITE, "write", "file", 3, F("fd", FD), F("count", UINT), F("buf", BUF)),
    EV(PREAD, "pread", "file", 4, F("fd", FD), F("count", UINT), F("offset", INT), F("buf", BUF)),
    EV(PWRITE, "pwrite", "file", 4, F("fd", FD), F("count", UINT), F("offset", INT), F("buf", BUF)),
    EV(READV, "readv", "file", 3, F("fd", FD), F("iovcnt", INT), F("buf", BUF)),
    EV(WRITEV, "writev", "file", 3, F("fd", FD), F("iovcnt", INT), F("buf", BUF)),
    EV(LSEEK, "lseek", "file", 3, F("fd", FD), F("offset", INT), F("whence", WHENCE)),
    EV(DUP, "dup", "file", 3, F("oldfd", FD), F("newfd", FD), F("flags", OFLAGS)),
    EV(PIPE, "pipe", "file", 3, F("flags", OFLAGS), F("rfd", FD), F("wfd", FD)),
    EV(UNLINK, "unlink", "file", 3, F("dirfd", FD), F("flags", ATFLAGS), F("path", STR)),
    EV(RENAME, "rename", "file", 5, F("olddirfd", FD), F("newdirfd", FD), F("flags", ATFLAGS),
       F("oldpath", STR), F("newpath", STR)),
    EV(MKDIR, "mkdir", "file", 3, F("dirfd", FD), F("mode", MODE), F("path", STR)),
    EV(RMDIR, "rmdir", "file", 1, F("path", STR)),
    EV(FTRUNCATE, "ftruncate", "file", 2, F("fd", FD), F("length", INT)),
    EV(FSYNC, "fsync", "file", 1, F("fd", FD)),
    EV(COPY_FILE_RANGE, "copy_file_range", "file", 6, F("fd_in", FD), F("off_in", INT),
       F("fd_out", FD), F("off_out", INT), F("len", UINT), F("flags", HEX)),
    EV(SENDFILE, "sendfile", "file", 4, F("out_fd", FD), F("in_fd", FD), F("offset", INT),
       F("count", UINT)),
    EV(FOPEN, "fopen", "file", 3, F("fd", FD), F("mode", STR), F("path", STR)),
    EV(FDOPEN, "fdopen", "file", 2, F("fd", FD), F("mode", STR)),
    EV(FREOPEN, "freopen", "file", 4, F("stream", HEX), F("fd", FD), F("mode", STR), F("path", STR)),
    EV(FCLOSE, "fclose", "file", 2, F("stream", HEX), F("fd", FD)),
    /* processes */
    EV(FORK, "fork", "process", 0, { NULL, 0 }),
    EV(VFORK, "vfork", "process", 0, { NULL, 0 }),
    EV(SPAWN, "posix_spawn", "process", 4, F("child", PID), F("search", INT), F("path", STR),
       F("argv", ARGV)),
    EV(EXEC, "exec", "process", 5, F("pid", PID), F("fd", FD), F("search", INT), F("path", STR),
       F("argv", ARGV)),
    EV(EXIT, "exit", "process", 3, F("pid", PID), F("status", INT), F("how", INT)),
    EV(WAIT, "wait", "process", 3, F("pid", PID), F("options", HEX), F("status", WSTATUS)),
    EV(WAITID, "waitid", "process", 6, F("idtype", INT), F("id", PID), F("options", HEX),
       F("si_pid", PID), F("si_code", INT), F("si_status", INT)),
    EV(KILL, "kill", "process", 2, F("pid", PID), F("sig", SIGNAL)),
    EV(RAISE, "raise", "process", 1, F("sig", SIGNAL)),
    /* threads */
    EV(PTHREAD_CREATE, "pthread_create", "thread", 3, F("thread", HEX), F("start", HEX),
       F("arg", HEX)),
    EV(THREAD_START, "thread_start", "thread", 3, F("start", HEX), F("arg", HEX),
       F("creator_tid", UINT)),
    EV(PTHREAD_EXIT, "pthread_exit", "thread", 1, F("retval", HEX)),
    EV(PTHREAD_JOIN, "pthread_join", "thread", 2, F("thread", HEX), F("retval", HEX)),
    /* network */
    EV(SOCKET, "socket", "net", 3, F("domain", SOCKFAM), F("type", SOCKTYPE), F("protocol", INT)),
    EV(BIND, "bind", "net", 2, F("fd", FD), F("addr", SOCKADDR)),
    EV(LISTEN, "listen", "net", 2, F("fd", FD), F("backlog", INT)),
    EV(ACCEPT, "accept", "net", 3, F("fd", FD), F("flags", SOCKTYPE), F("addr", SOCKADDR)),
    EV(CONNECT, "connect", "net", 2, F("fd", FD), F("addr", SOCKADDR)),
    EV(SEND, "send", "net", 5, F("fd", FD), F("count", UINT), F("flags", MSGFLAGS),
       F("addr", SOCKADDR), F("buf", BUF)),
    EV(RECV, "recv", "net", 5, F("fd", FD), F("count", UINT), F("flags", MSGFLAGS),
       F("addr", SOCKADDR), F("buf", BUF)),
    EV(SENDMSG, "sendmsg", "net", 5, F("fd", FD), F("flags", MSGFLAGS), F("iovlen", INT),
       F("addr", SOCKADDR), F("buf", BUF)),
    EV(RECVMSG, "recvmsg", "net", 5, F("fd", FD), F("flags", MSGFLAGS), F("iovlen", INT),
       F("addr", SOCKADDR), F("buf", BUF)),
    EV(SHUTDOWN, "shutdown", "net", 2, F("fd", FD), F("how", INT)),
};

PT_API const unsigned posixtrace_event_ndescs =
    sizeof posixtrace_event_descs / sizeof posixtrace_event_descs[0];

PT_API const struct posixtrace_event_desc *posixtrace_event_desc(unsigned id)
{
    for (unsigned i = 0; i < posixtrace_event_ndescs; i++)
        if (posixtrace_event_descs[i].id == id)
            return &posixtrace_event_descs[i];
    return NULL;
}
