# tests/shim: the LD_PRELOAD shim (preload/): every interposed family, real
# programs with and without it, stress, vfork and raw clone children.
check_PROGRAMS += tests/shim/t110_rawclone

# Programs that trace themselves under the shim and print its events with
# tests/shim/decode.c. -rdynamic: the tests name the calling function of
# each event with dladdr.
SHIM_TEST_LINKFLAGS = $(TEST_LDFLAGS) -rdynamic
SHIM_TEST_LIBS = $(TEST_LDADD) -ldl

check_PROGRAMS += tests/shim/t100_shim_files
tests_shim_t100_shim_files_SOURCES = tests/shim/t100_shim_files.c tests/shim/decode.c
tests_shim_t100_shim_files_LDADD = $(SHIM_TEST_LIBS)
tests_shim_t100_shim_files_LDFLAGS = $(SHIM_TEST_LINKFLAGS)

# the _FORTIFY_SOURCE variants (__read_chk, __recvfrom_chk ...)
check_PROGRAMS += tests/shim/t101_shim_fortify
tests_shim_t101_shim_fortify_SOURCES = tests/shim/t101_shim_fortify.c tests/shim/decode.c
tests_shim_t101_shim_fortify_CFLAGS = $(AM_CFLAGS) -O2 -D_FORTIFY_SOURCE=2
tests_shim_t101_shim_fortify_LDADD = $(SHIM_TEST_LIBS)
tests_shim_t101_shim_fortify_LDFLAGS = $(SHIM_TEST_LINKFLAGS)

check_PROGRAMS += tests/shim/t102_shim_proc
tests_shim_t102_shim_proc_SOURCES = tests/shim/t102_shim_proc.c tests/shim/decode.c
tests_shim_t102_shim_proc_LDADD = $(SHIM_TEST_LIBS)
tests_shim_t102_shim_proc_LDFLAGS = $(SHIM_TEST_LINKFLAGS)

check_PROGRAMS += tests/shim/t103_shim_run
tests_shim_t103_shim_run_SOURCES = tests/shim/t103_shim_run.c tests/shim/decode.c
tests_shim_t103_shim_run_LDADD = $(SHIM_TEST_LIBS)
tests_shim_t103_shim_run_LDFLAGS = $(SHIM_TEST_LINKFLAGS)

# the payload declarations generated from events.def (<posixtrace/payloads.h>)
check_PROGRAMS += tests/shim/t120_payloads
tests_shim_t120_payloads_SOURCES = tests/shim/t120_payloads.c tests/shim/decode.c
tests_shim_t120_payloads_LDADD = $(SHIM_TEST_LIBS)
tests_shim_t120_payloads_LDFLAGS = $(SHIM_TEST_LINKFLAGS)

check_PROGRAMS += tests/shim/t104_shim_stress
tests_shim_t104_shim_stress_LDADD = $(SHIM_TEST_LIBS)
tests_shim_t104_shim_stress_LDFLAGS = $(SHIM_TEST_LINKFLAGS)

# vfork and posix_spawn children under posixtrace-run: a plain program
check_PROGRAMS += tests/shim/t105_vfork
tests_shim_t105_vfork_LDADD =

EXTRA_DIST += \
	tests/shim/test_rawclone.py tests/shim/test_shim_files.py tests/shim/test_shim_proc.py \
	tests/shim/test_shim_programs.py tests/shim/test_shim_stress.py tests/shim/test_vfork.py \
	tests/shim/test_payloads.py

# The shim's system-call mode, posixtrace-run --syscalls (test_syscalls.py):
# a plain program (raw clone/vfork, signals, SIGSYS, seccomp, masks).
check_PROGRAMS += tests/shim/t130_syscalls
tests_shim_t130_syscalls_LDADD = -lpthread -ldl
EXTRA_DIST += tests/shim/test_syscalls.py

# vfork, CLONE_VM | CLONE_VFORK and posix_spawn children under --syscalls
# (test_sud_vfork.py): a plain program.
check_PROGRAMS += tests/shim/t132_vforks
tests_shim_t132_vforks_LDADD =
EXTRA_DIST += tests/shim/test_sud_vfork.py

# A program that uses the trace API itself, under --syscalls: the library's
# system calls for it are not recorded (test_syscalls.py).
check_PROGRAMS += tests/shim/t131_sudapi
tests_shim_t131_sudapi_LDADD = $(TEST_LDADD)
tests_shim_t131_sudapi_LDFLAGS = $(TEST_LDFLAGS)

# A library whose constructor makes calls before the shim's constructor runs
# (issue 18: process_start still comes first), and a program linked with it.
check_LTLIBRARIES += tests/shim/libt140ctor.la
tests_shim_libt140ctor_la_SOURCES = tests/shim/t140_ctorlib.c
tests_shim_libt140ctor_la_LDFLAGS = $(AM_LDFLAGS) -rpath /nowhere -avoid-version
check_PROGRAMS += tests/shim/t140_ctor
tests_shim_t140_ctor_SOURCES = tests/shim/t140_ctor.c
tests_shim_t140_ctor_LDADD = tests/shim/libt140ctor.la
tests_shim_t140_ctor_LDFLAGS = $(AM_LDFLAGS) -no-install
