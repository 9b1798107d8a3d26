# tests/api: the standard's functions, a stream traced by its own process
# (attributes, event sets, names, life cycle, events, filter, readers, full
# policies, concurrency, timestamps, stream size, shrinking, event sizes).
# Each program is built from its .c with the defaults (tests/local.mk).
check_PROGRAMS += \
	tests/api/t001_attr tests/api/t002_attr_stream tests/api/t003_eventset \
	tests/api/t004_names tests/api/t005_names_limit tests/api/t006_lifecycle \
	tests/api/t007_sysmax tests/api/t008_shutdown tests/api/t009_clear \
	tests/api/t010_fork tests/api/t011_events tests/api/t012_truncation \
	tests/api/t014_filter tests/api/t015_readers tests/api/t016_until_full \
	tests/api/t017_loop tests/api/t018_sizerule tests/api/t019_concurrent \
	tests/api/t020_loop_concurrent tests/api/t021_signal tests/api/t022_timestamps \
	tests/api/t024_streamsize tests/api/t025_shrink tests/api/t026_clock \
	tests/api/t060_event_sizes tests/api/t027_block tests/api/t028_event_inline \
	tests/api/t028_event_inline_nopie tests/api/t029_encoding

# the same program, position-dependent: the want table <trace.h> reads is
# copied into it by a copy relocation (test_event_inline.py)
tests_api_t028_event_inline_nopie_SOURCES = tests/api/t028_event_inline.c
tests_api_t028_event_inline_nopie_CFLAGS = $(AM_CFLAGS) -fno-pie
tests_api_t028_event_inline_nopie_LDFLAGS = $(AM_LDFLAGS) -Wc,-no-pie

EXTRA_DIST += \
	tests/api/test_attr.py tests/api/test_concurrency.py tests/api/test_event_sizes.py \
	tests/api/test_events.py tests/api/test_eventset.py tests/api/test_filter.py \
	tests/api/test_full_policies.py tests/api/test_lifecycle.py tests/api/test_names.py \
	tests/api/test_readers.py tests/api/test_shrink.py tests/api/test_stream_size.py \
	tests/api/test_timestamps.py tests/api/test_clock.py tests/api/test_block.py \
	tests/api/test_event_inline.py tests/api/test_encoding.py
