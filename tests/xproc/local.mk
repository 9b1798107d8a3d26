# tests/xproc: tracing other processes (issues 4, 12, 13): cross-process
# streams, inheritance, exec, death, pid reuse, hostile targets, discovery of
# children, environments without the shim, processes that are not traced.
check_PROGRAMS += \
	tests/xproc/t023_exec tests/xproc/t050_xproc_basic tests/xproc/t051_xproc_tree \
	tests/xproc/t052_xproc_exec tests/xproc/t053_xproc_death tests/xproc/t054_xproc_pidreuse \
	tests/xproc/t055_xproc_hostile tests/xproc/t056_xproc_locks tests/xproc/t057_hostile_run \
	tests/xproc/t058_slot_attack tests/xproc/t108_setuid

# Plain programs, traced only through posixtrace-run and the shim: linked
# with nothing of ours. t106_closefds closes its descriptors before exec
# (test_discovery.py); t107_envdrop gives its children an environment
# without the shim (test_envdrop.py).
check_PROGRAMS += tests/xproc/t106_closefds tests/xproc/t107_envdrop
tests_xproc_t106_closefds_LDADD =
tests_xproc_t107_envdrop_LDADD =

# t109_static is built by test_untraced.py itself, with -static, when libc.a exists.
EXTRA_DIST += tests/xproc/t109_static.c

EXTRA_DIST += \
	tests/xproc/test_discovery.py tests/xproc/test_envdrop.py tests/xproc/test_exec.py \
	tests/xproc/test_hostile_run.py tests/xproc/test_slot_attack.py \
	tests/xproc/test_untraced.py tests/xproc/test_xproc.py tests/xproc/test_xproc_death.py \
	tests/xproc/test_xproc_hostile.py tests/xproc/test_xproc_locks.py \
	tests/xproc/test_xproc_pidreuse.py tests/xproc/test_xproc_tree.py
