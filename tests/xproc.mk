# Test programs for tracing other processes (issue 4: cross-process streams,
# inheritance, exec, clean-up). Included from the top-level Makefile.am.

check_PROGRAMS += tests/t050_xproc_basic
tests_t050_xproc_basic_SOURCES = tests/t050_xproc_basic.c tests/xproc.h tests/tcommon.h
tests_t050_xproc_basic_LDADD = $(TEST_LDADD)
tests_t050_xproc_basic_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t051_xproc_tree
tests_t051_xproc_tree_SOURCES = tests/t051_xproc_tree.c tests/xproc.h tests/tcommon.h
tests_t051_xproc_tree_LDADD = $(TEST_LDADD)
tests_t051_xproc_tree_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t052_xproc_exec
tests_t052_xproc_exec_SOURCES = tests/t052_xproc_exec.c tests/xproc.h tests/tcommon.h
tests_t052_xproc_exec_LDADD = $(TEST_LDADD)
tests_t052_xproc_exec_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t053_xproc_death
tests_t053_xproc_death_SOURCES = tests/t053_xproc_death.c tests/xproc.h tests/tcommon.h
tests_t053_xproc_death_LDADD = $(TEST_LDADD)
tests_t053_xproc_death_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t054_xproc_pidreuse
tests_t054_xproc_pidreuse_SOURCES = tests/t054_xproc_pidreuse.c tests/xproc.h tests/tcommon.h
tests_t054_xproc_pidreuse_LDADD = $(TEST_LDADD)
tests_t054_xproc_pidreuse_LDFLAGS = $(TEST_LDFLAGS)

check_PROGRAMS += tests/t055_xproc_hostile
tests_t055_xproc_hostile_SOURCES = tests/t055_xproc_hostile.c tests/xproc.h tests/tcommon.h
tests_t055_xproc_hostile_LDADD = $(TEST_LDADD)
tests_t055_xproc_hostile_LDFLAGS = $(TEST_LDFLAGS)

# A target attacking the words it shares with its controller: the names lock,
# its inbox entries, the member table; a third user's /dev/shm objects
# (tests/test_xproc_locks.py, issue 13).
check_PROGRAMS += tests/t056_xproc_locks
tests_t056_xproc_locks_SOURCES = tests/t056_xproc_locks.c tests/xproc.h tests/tcommon.h
tests_t056_xproc_locks_LDADD = $(TEST_LDADD)
tests_t056_xproc_locks_LDFLAGS = $(TEST_LDFLAGS)
EXTRA_DIST += tests/test_xproc_locks.py
