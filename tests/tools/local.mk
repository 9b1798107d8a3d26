# tests/tools: posixtrace-run and posixtrace-dump (tools/) end to end, their
# options, the decoding of calls and the generated tables, doc/events.md
# against its definition, whole trees of real programs.
# t200_tools_target records user events itself (the tools run it with --no-preload).
check_PROGRAMS += tests/tools/t200_tools_target

# the calls test_decode_xlat.py decodes: a plain program, run under the shim
check_PROGRAMS += tests/tools/t201_decode_calls
tests_tools_t201_decode_calls_LDADD =

# the generated tables (tools/xlat_tables.c) against the system headers
check_PROGRAMS += tests/tools/t202_xlat
tests_tools_t202_xlat_SOURCES = tests/tools/t202_xlat.c tools/xlat.h tools/xlat.c
nodist_tests_tools_t202_xlat_SOURCES = tools/xlat_tables.c
tests_tools_t202_xlat_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools
tests_tools_t202_xlat_LDADD =

EXTRA_DIST += \
	tests/tools/test_decode_xlat.py tests/tools/test_events_doc.py \
	tests/tools/test_real_trees.py tests/tools/test_tools.py tests/tools/test_tools_options.py \
	tests/tools/test_tools_shim.py tests/tools/test_tools_strace_habits.py \
	tests/tools/test_live_view.py \
	tests/tools/test_tools_block.py

# Call stacks and their symbols (test_tools_stacks.py): the test compiles
# t203_stacks.c itself (gcc -g), twice (the build-id check).
EXTRA_DIST += tests/tools/test_tools_stacks.py tests/tools/t203_stacks.c

# Calls unfinished when the trace ends (issue 18, test_inflight.py): threads
# blocked in accept, waitpid and read; a plain program, run under the shim.
check_PROGRAMS += tests/tools/t204_inflight
tests_tools_t204_inflight_LDADD = -lpthread
EXTRA_DIST += tests/tools/test_inflight.py

# -y/-yy and process_start first (issue 18; test_tools_fds.py, which runs
# tests/shim/t140_ctor).
EXTRA_DIST += tests/tools/test_tools_fds.py
