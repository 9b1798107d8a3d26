# tests/probe: run-time probes (posixtrace-run --probe, audit/, issue 16)
# over real programs: a C program calling libm through its PLT (lazy and
# -z now), a library opened with dlopen, python3, sqlite3.
check_PROGRAMS += tests/probe/t310_probe_math
tests_probe_t310_probe_math_CFLAGS = $(AM_CFLAGS) -fno-builtin
tests_probe_t310_probe_math_LDADD = -lm

check_PROGRAMS += tests/probe/t311_probe_now
tests_probe_t311_probe_now_SOURCES = tests/probe/t310_probe_math.c
tests_probe_t311_probe_now_CFLAGS = $(AM_CFLAGS) -fno-builtin
tests_probe_t311_probe_now_LDFLAGS = -Wl,-z,now
tests_probe_t311_probe_now_LDADD = -lm

check_PROGRAMS += tests/probe/t313_probe_dlopen
tests_probe_t313_probe_dlopen_LDADD = -ldl

# records user events too: libposixtrace's want table copied into it
check_PROGRAMS += tests/probe/t315_probe_user
tests_probe_t315_probe_user_CFLAGS = $(AM_CFLAGS) -fno-builtin
tests_probe_t315_probe_user_LDADD = $(LDADD) -lm

# the library t313 opens: built by the test (gcc -shared), like t203_stacks
EXTRA_DIST += tests/probe/test_probes.py tests/probe/t312_probe_plugin.c
# the prototypes test: a library and a program linked to it, built by the test
EXTRA_DIST += tests/probe/t314_abi_lib.c tests/probe/t314_probe_abi.c
