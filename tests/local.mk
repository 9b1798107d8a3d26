# Test programs (included from the top-level Makefile.am). Owned by tests/.
# Each tests/tNNN_*.c is one program; the pytest files test_*.py run them.

check_PROGRAMS += tests/t001_attr
tests_t001_attr_SOURCES = tests/t001_attr.c tests/tcommon.h
tests_t001_attr_LDADD = $(TEST_LDADD)
tests_t001_attr_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t002_attr_stream
tests_t002_attr_stream_SOURCES = tests/t002_attr_stream.c tests/tcommon.h
tests_t002_attr_stream_LDADD = $(TEST_LDADD)
tests_t002_attr_stream_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t003_eventset
tests_t003_eventset_SOURCES = tests/t003_eventset.c tests/tcommon.h
tests_t003_eventset_LDADD = $(TEST_LDADD)
tests_t003_eventset_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t004_names
tests_t004_names_SOURCES = tests/t004_names.c tests/tcommon.h
tests_t004_names_LDADD = $(TEST_LDADD)
tests_t004_names_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t005_names_limit
tests_t005_names_limit_SOURCES = tests/t005_names_limit.c tests/tcommon.h
tests_t005_names_limit_LDADD = $(TEST_LDADD)
tests_t005_names_limit_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t006_lifecycle
tests_t006_lifecycle_SOURCES = tests/t006_lifecycle.c tests/tcommon.h
tests_t006_lifecycle_LDADD = $(TEST_LDADD)
tests_t006_lifecycle_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t007_sysmax
tests_t007_sysmax_SOURCES = tests/t007_sysmax.c tests/tcommon.h
tests_t007_sysmax_LDADD = $(TEST_LDADD)
tests_t007_sysmax_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t008_shutdown
tests_t008_shutdown_SOURCES = tests/t008_shutdown.c tests/tcommon.h
tests_t008_shutdown_LDADD = $(TEST_LDADD)
tests_t008_shutdown_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t009_clear
tests_t009_clear_SOURCES = tests/t009_clear.c tests/tcommon.h
tests_t009_clear_LDADD = $(TEST_LDADD)
tests_t009_clear_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t010_fork
tests_t010_fork_SOURCES = tests/t010_fork.c tests/tcommon.h
tests_t010_fork_LDADD = $(TEST_LDADD)
tests_t010_fork_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t011_events
tests_t011_events_SOURCES = tests/t011_events.c tests/tcommon.h
tests_t011_events_LDADD = $(TEST_LDADD)
tests_t011_events_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t012_truncation
tests_t012_truncation_SOURCES = tests/t012_truncation.c tests/tcommon.h
tests_t012_truncation_LDADD = $(TEST_LDADD)
tests_t012_truncation_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t014_filter
tests_t014_filter_SOURCES = tests/t014_filter.c tests/tcommon.h
tests_t014_filter_LDADD = $(TEST_LDADD)
tests_t014_filter_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t015_readers
tests_t015_readers_SOURCES = tests/t015_readers.c tests/tcommon.h
tests_t015_readers_LDADD = $(TEST_LDADD)
tests_t015_readers_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t016_until_full
tests_t016_until_full_SOURCES = tests/t016_until_full.c tests/tcommon.h
tests_t016_until_full_LDADD = $(TEST_LDADD)
tests_t016_until_full_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t017_loop
tests_t017_loop_SOURCES = tests/t017_loop.c tests/tcommon.h
tests_t017_loop_LDADD = $(TEST_LDADD)
tests_t017_loop_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t018_sizerule
tests_t018_sizerule_SOURCES = tests/t018_sizerule.c tests/tcommon.h
tests_t018_sizerule_LDADD = $(TEST_LDADD)
tests_t018_sizerule_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t019_concurrent
tests_t019_concurrent_SOURCES = tests/t019_concurrent.c tests/tcommon.h
tests_t019_concurrent_LDADD = $(TEST_LDADD)
tests_t019_concurrent_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t020_loop_concurrent
tests_t020_loop_concurrent_SOURCES = tests/t020_loop_concurrent.c tests/tcommon.h
tests_t020_loop_concurrent_LDADD = $(TEST_LDADD)
tests_t020_loop_concurrent_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t021_signal
tests_t021_signal_SOURCES = tests/t021_signal.c tests/tcommon.h
tests_t021_signal_LDADD = $(TEST_LDADD)
tests_t021_signal_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t026_clock
tests_t026_clock_SOURCES = tests/t026_clock.c tests/tcommon.h
tests_t026_clock_LDADD = $(TEST_LDADD)
tests_t026_clock_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t022_timestamps
tests_t022_timestamps_SOURCES = tests/t022_timestamps.c tests/tcommon.h
tests_t022_timestamps_LDADD = $(TEST_LDADD)
tests_t022_timestamps_LDFLAGS = $(TEST_LDFLAGS)

# The trace-log reader (pre-recorded streams): tests/test_logread.py writes
# logs with tests/logfmt.py and reads them with this program.
check_PROGRAMS += tests/t030_logread
tests_t030_logread_SOURCES = tests/t030_logread.c tests/tcommon.h
tests_t030_logread_LDADD = $(TEST_LDADD)
tests_t030_logread_LDFLAGS = $(TEST_LDFLAGS)

EXTRA_DIST += \
	tests/logfmt.py \
	tests/test_logread.py

EXTRA_DIST += \
	tests/README.md \
	tests/tcommon.h \
	tests/xproc.h \
	tests/conftest.py \
	tests/test_clock.py \
	tests/test_exec.py \
	tests/test_xproc.py \
	tests/test_xproc_common.py \
	tests/test_xproc_death.py \
	tests/test_xproc_hostile.py \
	tests/test_xproc_pidreuse.py \
	tests/test_xproc_tree.py \
	tests/test_tools_options.py \
	tests/test_attr.py \
	tests/test_concurrency.py \
	tests/test_events.py \
	tests/test_eventset.py \
	tests/test_filter.py \
	tests/test_full_policies.py \
	tests/test_lifecycle.py \
	tests/test_names.py \
	tests/test_readers.py \
	tests/test_stream_size.py \
	tests/test_shrink.py \
	tests/test_timestamps.py

# Trace Log option, end to end (tests/test_log_*.py): t042_log_write writes
# logs by script, t041_log_roundtrip from three threads, t048_log_dump reads
# them back with posix_trace_open; t040_log_errors: the error cases.
check_PROGRAMS += tests/t040_log_errors
tests_t040_log_errors_SOURCES = tests/t040_log_errors.c tests/tcommon.h
tests_t040_log_errors_LDADD = $(TEST_LDADD)
tests_t040_log_errors_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t041_log_roundtrip
tests_t041_log_roundtrip_SOURCES = tests/t041_log_roundtrip.c tests/tcommon.h
tests_t041_log_roundtrip_LDADD = $(TEST_LDADD)
tests_t041_log_roundtrip_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t042_log_write
tests_t042_log_write_SOURCES = tests/t042_log_write.c tests/tcommon.h
tests_t042_log_write_LDADD = $(TEST_LDADD)
tests_t042_log_write_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t048_log_dump
tests_t048_log_dump_SOURCES = tests/t048_log_dump.c tests/tcommon.h
tests_t048_log_dump_LDADD = $(TEST_LDADD)
tests_t048_log_dump_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t043_log_race
tests_t043_log_race_SOURCES = tests/t043_log_race.c tests/tcommon.h
tests_t043_log_race_LDADD = $(TEST_LDADD)
tests_t043_log_race_LDFLAGS = $(TEST_LDFLAGS)

EXTRA_DIST += \
	tests/test_log_common.py \
	tests/test_log_errors.py \
	tests/test_log_full.py \
	tests/test_log_gaps.py \
	tests/test_log_roundtrip.py \
	tests/test_log_policies.py \
	tests/test_log_lifecycle.py \
	tests/test_log_concurrency.py

check_PROGRAMS += tests/t023_exec
tests_t023_exec_SOURCES = tests/t023_exec.c tests/tcommon.h
tests_t023_exec_LDADD = $(TEST_LDADD)
tests_t023_exec_LDFLAGS = $(TEST_LDFLAGS)

# Events of the largest sizes through every path (tests/test_event_sizes.py).
check_PROGRAMS += tests/t060_event_sizes
tests_t060_event_sizes_SOURCES = tests/t060_event_sizes.c tests/tcommon.h
tests_t060_event_sizes_LDADD = $(TEST_LDADD)
tests_t060_event_sizes_LDFLAGS = $(TEST_LDFLAGS)
EXTRA_DIST += tests/test_event_sizes.py tests/test_events_doc.py

# ---- Every test file is distributed -----------------------------------------
# 'make check' first fails if a file of tests/ that the suite uses (test_*.py,
# t*.c, *.h, the *.py helpers, *.mk, README.md) is not in the distribution
# (DISTFILES: EXTRA_DIST, the programs' _SOURCES, the included fragments), so
# that 'make distcheck' runs every test.  Generated from the tree, not a list.
check-test-dist:
	@dist=; for f in $(DISTFILES); do \
	  case $$f in \
	    '$(srcdir)'/*) f=$${f#'$(srcdir)'/};; \
	    '$(top_srcdir)'/*) f=$${f#'$(top_srcdir)'/};; \
	  esac; dist="$$dist $$f "; \
	done; \
	missing=; \
	for f in '$(srcdir)'/tests/*.py '$(srcdir)'/tests/t*.c '$(srcdir)'/tests/*.h \
	         '$(srcdir)'/tests/*.mk '$(srcdir)'/tests/README.md; do \
	  test -f "$$f" || continue; \
	  f=tests/$${f##*/}; \
	  case "$$dist" in *" $$f "*) ;; *) missing="$$missing $$f";; esac; \
	done; \
	if test -n "$$missing"; then \
	  echo "check-test-dist: not in the distribution (add to EXTRA_DIST in tests/local.mk):$$missing" >&2; \
	  exit 1; \
	fi; \
	echo "check-test-dist: every test file of tests/ is distributed"

check-local: check-test-dist
.PHONY: check-test-dist

# vfork and posix_spawn children under posixtrace-run (tests/test_vfork.py)
check_PROGRAMS += tests/t105_vfork
tests_t105_vfork_SOURCES = tests/t105_vfork.c
EXTRA_DIST += tests/test_vfork.py

# children given an environment without the shim (tests/test_envdrop.py)
check_PROGRAMS += tests/t107_envdrop
tests_t107_envdrop_SOURCES = tests/t107_envdrop.c
EXTRA_DIST += tests/test_envdrop.py

# processes that are not traced, a set-user-ID program (tests/test_untraced.py);
# t109_static is built by the test itself with -static, when libc.a exists
check_PROGRAMS += tests/t108_setuid
tests_t108_setuid_SOURCES = tests/t108_setuid.c
tests_t108_setuid_LDADD = $(TEST_LDADD)
tests_t108_setuid_LDFLAGS = $(TEST_LDFLAGS)
EXTRA_DIST += tests/test_untraced.py tests/t109_static.c

# a traced program attacking its controller's shared memory (tests/test_hostile_run.py)
check_PROGRAMS += tests/t057_hostile_run
tests_t057_hostile_run_SOURCES = tests/t057_hostile_run.c tests/tcommon.h
tests_t057_hostile_run_LDADD = $(TEST_LDADD)
tests_t057_hostile_run_LDFLAGS = $(TEST_LDFLAGS)
EXTRA_DIST += tests/test_hostile_run.py

# a process of a traced tree attacking another's writing (tests/test_slot_attack.py)
check_PROGRAMS += tests/t058_slot_attack
tests_t058_slot_attack_SOURCES = tests/t058_slot_attack.c tests/tcommon.h
tests_t058_slot_attack_LDADD = $(TEST_LDADD)
tests_t058_slot_attack_LDFLAGS = $(TEST_LDFLAGS)
EXTRA_DIST += tests/test_slot_attack.py

check_PROGRAMS += tests/t024_streamsize
tests_t024_streamsize_SOURCES = tests/t024_streamsize.c tests/tcommon.h
tests_t024_streamsize_LDADD = $(TEST_LDADD)
tests_t024_streamsize_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t025_shrink
tests_t025_shrink_SOURCES = tests/t025_shrink.c tests/tcommon.h tests/xproc.h
tests_t025_shrink_LDADD = $(TEST_LDADD)
tests_t025_shrink_LDFLAGS = $(TEST_LDFLAGS)

# children and threads made by a raw clone system call (tests/test_rawclone.py)
check_PROGRAMS += tests/t110_rawclone
tests_t110_rawclone_SOURCES = tests/t110_rawclone.c tests/tcommon.h
tests_t110_rawclone_LDADD = $(TEST_LDADD)
tests_t110_rawclone_LDFLAGS = $(TEST_LDFLAGS)
EXTRA_DIST += tests/test_rawclone.py

# The shim's system-call mode, posixtrace-run --syscalls (tests/test_syscalls.py):
# a plain program (raw clone/vfork, signals, SIGSYS, seccomp, masks).
check_PROGRAMS += tests/t130_syscalls
tests_t130_syscalls_SOURCES = tests/t130_syscalls.c
tests_t130_syscalls_LDADD = -lpthread -ldl
EXTRA_DIST += tests/test_syscalls.py
