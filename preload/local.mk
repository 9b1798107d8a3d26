# libposixtrace-preload.so, the LD_PRELOAD shim, and its test programs.
# Included from the top-level Makefile.am.

lib_LTLIBRARIES += preload/libposixtrace-preload.la
preload_libposixtrace_preload_la_SOURCES = \
	preload/shim.h \
	preload/resolve.c \
	preload/payload.c \
	preload/core.c \
	preload/env.c \
	preload/modules.c \
	preload/stack.c \
	preload/unwind.c \
	preload/lifecycle.c \
	preload/fork.c \
	preload/exec.c \
	preload/wait.c \
	preload/threads.c \
	preload/open.c \
	preload/rw.c \
	preload/fsops.c \
	preload/fdkeep.c \
	preload/fds.c \
	preload/stdio.c \
	preload/net.c \
	preload/sud/sud.h \
	preload/sud/region.S \
	preload/sud/gate.S \
	preload/sud/arm.c \
	preload/sud/handler.c \
	preload/sud/capture.c \
	preload/sud/caller.c \
	preload/sud/early.c \
	preload/sud/clone3.c \
	preload/sud/vfork.c \
	preload/sud/sigwrap.c
# Wrappers must be the real symbols, not fortified inlines.
preload_libposixtrace_preload_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/preload -U_FORTIFY_SOURCE
# Only the interposed functions (SHIM_API) are exported.
preload_libposixtrace_preload_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
preload_libposixtrace_preload_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -no-undefined \
	-shared
preload_libposixtrace_preload_la_LIBADD = libtrace/libposixtrace.la -ldl -lpthread

EXTRA_DIST += doc/events.md
