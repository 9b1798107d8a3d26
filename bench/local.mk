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
bench_programs += bench/bench_probe
bench_bench_probe_SOURCES = bench/bench_probe.c bench/bench_util.h
bench_bench_probe_CPPFLAGS = $(AM_CPPFLAGS) \
	-DPOSIXTRACE_RUN_PATH='"$(abs_top_builddir)/tools/posixtrace-run"' \
	-DPOSIXTRACE_AUDIT_LIB='"$(abs_top_builddir)/audit/.libs/libposixtrace-audit.so"'
bench_bench_probe_LDADD = -lm
bench_bench_probe_CFLAGS = $(AM_CFLAGS) -O2 -fno-builtin
