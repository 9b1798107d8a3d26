# posixtrace benchmark (included from the top-level Makefile.am).
# `make bench` builds $(bench_programs) and runs each of them.
bench_programs += bench/bench_event
bench_bench_event_SOURCES = bench/bench_event.c bench/bench_util.h
bench_bench_event_LDADD = $(TEST_LDADD)
bench_bench_event_LDFLAGS = $(TEST_LDFLAGS)
bench_bench_event_CFLAGS = $(AM_CFLAGS) -O2
EXTRA_DIST += bench/README.md
bench_programs += bench/bench_log
bench_bench_log_SOURCES = bench/bench_log.c bench/bench_util.h
bench_bench_log_LDADD = $(TEST_LDADD)
bench_bench_log_LDFLAGS = $(TEST_LDFLAGS)
bench_bench_log_CFLAGS = $(AM_CFLAGS) -O2
bench_programs += bench/bench_shim
bench_bench_shim_SOURCES = bench/bench_shim.c bench/bench_util.h
bench_bench_shim_LDADD = $(TEST_LDADD)
bench_bench_shim_LDFLAGS = $(TEST_LDFLAGS)
bench_bench_shim_CFLAGS = $(AM_CFLAGS) -O2
bench_programs += bench/bench_syscalls
bench_bench_syscalls_SOURCES = bench/bench_syscalls.c bench/bench_util.h
bench_bench_syscalls_LDADD = $(TEST_LDADD)
bench_bench_syscalls_LDFLAGS = $(TEST_LDFLAGS)
bench_bench_syscalls_CFLAGS = $(AM_CFLAGS) -O2
bench_programs += bench/bench_probe
bench_bench_probe_SOURCES = bench/bench_probe.c bench/bench_util.h
bench_bench_probe_CPPFLAGS = $(AM_CPPFLAGS) \
	-DPOSIXTRACE_RUN_PATH='"$(abs_top_builddir)/tools/posixtrace-run"' \
	-DPOSIXTRACE_AUDIT_LIB='"$(abs_top_builddir)/audit/.libs/libposixtrace-audit.so"'
bench_bench_probe_LDADD = -lm
bench_bench_probe_CFLAGS = $(AM_CFLAGS) -O2 -fno-builtin
# bench_run: posixtrace-run -o against an untraced run and the minimal
# LD_PRELOAD shim bench/minishim.c (a module built for make bench only).
EXTRA_LTLIBRARIES += bench/libminishim.la
bench_libminishim_la_SOURCES = bench/minishim.c
bench_libminishim_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -rpath /nowhere
bench_libminishim_la_LIBADD = -ldl
bench_libminishim_la_CFLAGS = $(AM_CFLAGS) -O2
CLEANFILES += bench/libminishim.la
bench_programs += bench/bench_run
bench_bench_run_SOURCES = bench/bench_run.c bench/bench_util.h
bench_bench_run_CPPFLAGS = $(AM_CPPFLAGS) \
	-DPOSIXTRACE_RUN_PATH='"$(abs_top_builddir)/tools/posixtrace-run"' \
	-DPOSIXTRACE_RUN_BIN='"$(abs_top_builddir)/tools/.libs/posixtrace-run"' \
	-DBENCH_LIBDIR='"$(abs_top_builddir)/libtrace/.libs"' \
	-DBENCH_MINISHIM='"$(abs_top_builddir)/bench/.libs/libminishim.so"'
bench_bench_run_LDADD =
bench_bench_run_CFLAGS = $(AM_CFLAGS) -O2
EXTRA_bench_bench_run_DEPENDENCIES = bench/libminishim.la
# bench_procs: a program that starts many processes, traced and not.
bench_programs += bench/bench_procs
bench_bench_procs_SOURCES = bench/bench_procs.c bench/bench_util.h
bench_bench_procs_CPPFLAGS = $(AM_CPPFLAGS) \
	-DPOSIXTRACE_RUN_PATH='"$(abs_top_builddir)/tools/posixtrace-run"' \
	-DPOSIXTRACE_RUN_BIN='"$(abs_top_builddir)/tools/.libs/posixtrace-run"' \
	-DBENCH_LIBDIR='"$(abs_top_builddir)/libtrace/.libs"'
bench_bench_procs_LDADD =
bench_bench_procs_CFLAGS = $(AM_CFLAGS) -O2
# bench_lttng: an LTTng-UST tracepoint beside posix_trace_event, when
# configure found liblttng-ust-dev (else the program only says it skipped).
bench_programs += bench/bench_lttng
bench_bench_lttng_SOURCES = bench/bench_lttng.c bench/bench_lttng_tp.h bench/bench_util.h
bench_bench_lttng_LDADD = $(TEST_LDADD)
bench_bench_lttng_LDFLAGS = $(TEST_LDFLAGS)
bench_bench_lttng_CFLAGS = $(AM_CFLAGS) -O2
if HAVE_LTTNG_UST
bench_bench_lttng_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/bench -DHAVE_LTTNG_UST $(LTTNG_UST_CFLAGS)
bench_bench_lttng_LDADD += $(LTTNG_UST_LIBS)
endif
# bench_clock: timestamps against CLOCK_REALTIME for a minute, both clocks.
bench_programs += bench/bench_clock
bench_bench_clock_SOURCES = bench/bench_clock.c bench/bench_util.h
bench_bench_clock_LDADD = $(TEST_LDADD)
bench_bench_clock_LDFLAGS = $(TEST_LDFLAGS)
bench_bench_clock_CFLAGS = $(AM_CFLAGS) -O2
bench_programs += bench/bench_live
bench_bench_live_SOURCES = bench/bench_live.c bench/bench_util.h
bench_bench_live_CPPFLAGS = $(AM_CPPFLAGS) \
	-DPOSIXTRACE_RUN_PATH='"$(abs_top_builddir)/tools/posixtrace-run"'
bench_bench_live_LDADD =
bench_bench_live_CFLAGS = $(AM_CFLAGS) -O2
