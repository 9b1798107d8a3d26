# libposixtrace sources (included from the top-level Makefile.am), one
# folder a subsystem (doc/design.md "Source map"): ring/ (a stream's shared
# memory: layout, pool, recording, the consumer, the live reader, the clock),
# log/ (Trace Log: flusher, writer, reader), xproc/ (other processes: inbox,
# discovery, remote, exec), proc/ (this process as a traced one), api/ (the
# standard's functions, handles, names). internal.h includes each folder's
# header, which states its invariants.
lib_LTLIBRARIES += libtrace/libposixtrace.la
libtrace_libposixtrace_la_SOURCES = \
	libtrace/internal.h \
	libtrace/ring/ring.h \
	libtrace/proc/proc.h \
	libtrace/xproc/xproc.h \
	libtrace/api/api.h \
	libtrace/log/log.h \
	libtrace/ring/shm_layout.h \
	libtrace/xproc/inbox_layout.h \
	libtrace/log/log_format.h \
	libtrace/log/xxh.h \
	libtrace/log/xxh.c \
	libtrace/ring/pt_sizes.h \
	libtrace/ring/pt_bounds.h \
	libtrace/ring/clock.h \
	libtrace/ring/clock.c \
	libtrace/api/clock_info.c \
	libtrace/api/attr.c \
	libtrace/api/eventset.c \
	libtrace/ring/tagged.h \
	libtrace/ring/pool.c \
	libtrace/ring/shm.c \
	libtrace/ring/fault.c \
	libtrace/api/names.c \
	libtrace/proc/process.c \
	libtrace/proc/clone.c \
	libtrace/ring/record.c \
	libtrace/ring/block.c \
	libtrace/ring/consume.h \
	libtrace/ring/consume.c \
	libtrace/ring/gaps.c \
	libtrace/ring/reader.c \
	libtrace/api/handle.c \
	libtrace/ring/slock.c \
	libtrace/api/stream.c \
	libtrace/log/logread.h \
	libtrace/log/logread_int.h \
	libtrace/log/logread.c \
	libtrace/log/logread_scan.c \
	libtrace/log/logread_payload.c \
	libtrace/log/logread_events.c \
	libtrace/log/logread_gaps.c \
	libtrace/log/logpack.h \
	libtrace/log/logwrite.h \
	libtrace/log/logwrite.c \
	libtrace/log/flusher.c \
	libtrace/xproc/exec.c \
	libtrace/xproc/exec_args.h \
	libtrace/ring/copy_small.h \
	libtrace/api/events_table.c \
	libtrace/api/syscalls_table.c \
	libtrace/xproc/procfs.c \
	libtrace/xproc/inbox.c \
	libtrace/xproc/discover.c \
	libtrace/xproc/remote.c \
	libtrace/xproc/reap.c \
	libtrace/xproc/inflight.c
# the library defines posix_trace_event itself: not <trace.h>'s inline test in front of it
libtrace_libposixtrace_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/libtrace -I$(top_builddir)/libtrace \
	-DPOSIXTRACE_NO_INLINE_EVENT
libtrace_libposixtrace_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
libtrace_libposixtrace_la_LDFLAGS = -version-info 0:0:0 -no-undefined
libtrace_libposixtrace_la_LIBADD = -lpthread

# The system calls of the architecture (names and numbers), from the kernel
# headers at build time (libtrace/api/syscalls_table.c includes it).
nodist_libtrace_libposixtrace_la_SOURCES = libtrace/syscall_names.h
BUILT_SOURCES += libtrace/syscall_names.h
libtrace/syscall_names.h: $(srcdir)/libtrace/api/gen-syscall-names.sh
	$(AM_V_GEN)$(MKDIR_P) libtrace && \
	$(SHELL) $(srcdir)/libtrace/api/gen-syscall-names.sh $(CC) $(CPPFLAGS) >$@.tmp && mv $@.tmp $@
CLEANFILES += libtrace/syscall_names.h libtrace/syscall_names.h.tmp
EXTRA_DIST += libtrace/api/gen-syscall-names.sh
