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
	preload/lifecycle.c \
	preload/fork.c \
	preload/exec.c \
	preload/wait.c \
	preload/threads.c \
	preload/open.c \
	preload/rw.c \
	preload/fsops.c \
	preload/fdkeep.c \
	preload/stdio.c \
	preload/net.c \
	preload/sud/sud.h \
	preload/sud/region.S \
	preload/sud/arm.c \
	preload/sud/handler.c \
	preload/sud/capture.c \
	preload/sud/sigwrap.c
# Wrappers must be the real symbols, not fortified inlines.
preload_libposixtrace_preload_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_builddir)/preload -U_FORTIFY_SOURCE
# Only the interposed functions (SHIM_API) are exported.
preload_libposixtrace_preload_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden $(LIBUNWIND_CFLAGS)
preload_libposixtrace_preload_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -no-undefined \
	-shared
preload_libposixtrace_preload_la_LIBADD = libtrace/libposixtrace.la $(LIBUNWIND_LIBS) -ldl -lpthread

EXTRA_DIST += doc/events.md

# ---- Test programs of the shim (tests/test_shim*.py runs them under LD_PRELOAD).
# -rdynamic: the tests name the calling function of each event with dladdr.
SHIM_TEST_LINKFLAGS = $(TEST_LDFLAGS) -rdynamic
SHIM_TEST_LIBS = $(TEST_LDADD) -ldl

check_PROGRAMS += tests/t120_payloads
tests_t120_payloads_SOURCES = tests/t120_payloads.c tests/t100_decode.c tests/tcommon.h
tests_t120_payloads_LDADD = $(SHIM_TEST_LIBS)
tests_t120_payloads_LDFLAGS = $(SHIM_TEST_LINKFLAGS)
EXTRA_DIST += tests/test_payloads.py

check_PROGRAMS += tests/t100_shim_files
tests_t100_shim_files_SOURCES = tests/t100_shim_files.c tests/t100_decode.c tests/tcommon.h
tests_t100_shim_files_LDADD = $(SHIM_TEST_LIBS)
tests_t100_shim_files_LDFLAGS = $(SHIM_TEST_LINKFLAGS)

check_PROGRAMS += tests/t101_shim_fortify
tests_t101_shim_fortify_SOURCES = tests/t101_shim_fortify.c tests/t100_decode.c tests/tcommon.h
tests_t101_shim_fortify_CFLAGS = $(AM_CFLAGS) -O2 -D_FORTIFY_SOURCE=2
tests_t101_shim_fortify_LDADD = $(SHIM_TEST_LIBS)
tests_t101_shim_fortify_LDFLAGS = $(SHIM_TEST_LINKFLAGS)

check_PROGRAMS += tests/t102_shim_proc
tests_t102_shim_proc_SOURCES = tests/t102_shim_proc.c tests/t100_decode.c tests/tcommon.h
tests_t102_shim_proc_LDADD = $(SHIM_TEST_LIBS)
tests_t102_shim_proc_LDFLAGS = $(SHIM_TEST_LINKFLAGS)

check_PROGRAMS += tests/t103_shim_run
tests_t103_shim_run_SOURCES = tests/t103_shim_run.c tests/t100_decode.c tests/tcommon.h
tests_t103_shim_run_LDADD = $(SHIM_TEST_LIBS)
tests_t103_shim_run_LDFLAGS = $(SHIM_TEST_LINKFLAGS)

check_PROGRAMS += tests/t104_shim_stress
tests_t104_shim_stress_SOURCES = tests/t104_shim_stress.c tests/tcommon.h
tests_t104_shim_stress_LDADD = $(SHIM_TEST_LIBS)
tests_t104_shim_stress_LDFLAGS = $(SHIM_TEST_LINKFLAGS)

# A child that closes its descriptors before exec (tests/test_discovery.py):
# a plain program, traced through posixtrace-run and the shim.
check_PROGRAMS += tests/t106_closefds
tests_t106_closefds_SOURCES = tests/t106_closefds.c

EXTRA_DIST += \
	tests/test_discovery.py \
	tests/test_real_trees.py \
	tests/test_shim_common.py \
	tests/test_shim_files.py \
	tests/test_shim_proc.py \
	tests/test_shim_programs.py \
	tests/test_shim_stress.py
