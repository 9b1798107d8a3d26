# tests/log: the Trace Log option (posix_trace_create_withlog, flush, policies,
# the log reader posix_trace_open). t030_logread reads logs written by
# tests/lib/logfmt.py; t042_log_write writes logs by script, t041_log_roundtrip
# from three threads, t048_log_dump reads them back; t040_log_errors: the
# error cases; t043_log_race: writers racing the flusher.
check_PROGRAMS += \
	tests/log/t030_logread tests/log/t040_log_errors tests/log/t041_log_roundtrip \
	tests/log/t042_log_write tests/log/t043_log_race tests/log/t048_log_dump

EXTRA_DIST += \
	tests/log/test_log_concurrency.py tests/log/test_log_errors.py tests/log/test_log_full.py \
	tests/log/test_log_gaps.py tests/log/test_log_lifecycle.py tests/log/test_log_policies.py \
	tests/log/test_log_roundtrip.py tests/log/test_logread.py
