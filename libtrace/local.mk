# libposixtrace sources (included from the top-level Makefile.am).
lib_LTLIBRARIES += libtrace/libposixtrace.la
libtrace_libposixtrace_la_SOURCES = \
	libtrace/internal.h \
	libtrace/shm_layout.h \
	libtrace/inbox_layout.h \
	libtrace/log_format.h \
	libtrace/pt_sizes.h \
	libtrace/pt_bounds.h \
	libtrace/clock.h \
	libtrace/clock.c \
	libtrace/clock_info.c \
	libtrace/attr.c \
	libtrace/eventset.c \
	libtrace/pool.c \
	libtrace/shm.c \
	libtrace/fault.c \
	libtrace/names.c \
	libtrace/process.c \
	libtrace/clone.c \
	libtrace/record.c \
	libtrace/chain.c \
	libtrace/gaps.c \
	libtrace/reader.c \
	libtrace/handle.c \
	libtrace/slock.c \
	libtrace/stream.c \
	libtrace/logread.h \
	libtrace/logread_int.h \
	libtrace/logread.c \
	libtrace/logread_scan.c \
	libtrace/logread_payload.c \
	libtrace/logread_events.c \
	libtrace/logread_gaps.c \
	libtrace/logpack.h \
	libtrace/logwrite.h \
	libtrace/logwrite.c \
	libtrace/flusher.c \
	libtrace/exec.c \
	libtrace/exec_args.h \
	libtrace/copy_small.h \
	libtrace/events_table.c \
	libtrace/syscalls_table.c \
	libtrace/procfs.c \
	libtrace/inbox.c \
	libtrace/discover.c \
	libtrace/remote.c \
	libtrace/reap.c
libtrace_libposixtrace_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/libtrace -I$(top_builddir)/libtrace
libtrace_libposixtrace_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
libtrace_libposixtrace_la_LDFLAGS = -version-info 0:0:0 -no-undefined
libtrace_libposixtrace_la_LIBADD = $(XXHASH_LIBS) -lpthread

# The system calls of the architecture (names and numbers), from the kernel
# headers at build time (libtrace/syscalls_table.c includes it).
nodist_libtrace_libposixtrace_la_SOURCES = libtrace/syscall_names.h
BUILT_SOURCES += libtrace/syscall_names.h
libtrace/syscall_names.h: $(srcdir)/libtrace/gen-syscall-names.sh
	$(AM_V_GEN)$(MKDIR_P) libtrace && \
	$(SHELL) $(srcdir)/libtrace/gen-syscall-names.sh $(CC) $(CPPFLAGS) >$@.tmp && mv $@.tmp $@
CLEANFILES += libtrace/syscall_names.h libtrace/syscall_names.h.tmp
EXTRA_DIST += libtrace/gen-syscall-names.sh
