# tests/unit: libtrace's internal parts tested directly, without a stream
# created through the API: the free-chunk pool (t300_pool), the chunk chain
# followed by the consumer (t301_chain), the PACKED log record encoding
# (t302_logpack), the choice of a stream's clock (t303_clock), a stream's
# geometry from its attributes (t305_geometry), the encoding of a chunk's
# records (t306_recfmt); and, over a
# stream created through it, a look of the log flusher's thread called
# directly (t304_flush_gap); test_unit.py runs them.
#
# libptcore: libtrace's sources (libposixtrace.la's list, flags and
# libraries) compiled again into a convenience library, linked statically
# into the unit programs, which so reach the functions the shipped library
# keeps hidden; libposixtrace.la itself is built as before.
check_LTLIBRARIES += tests/unit/libptcore.la
tests_unit_libptcore_la_SOURCES = $(libtrace_libposixtrace_la_SOURCES)
tests_unit_libptcore_la_CPPFLAGS = $(libtrace_libposixtrace_la_CPPFLAGS)
tests_unit_libptcore_la_CFLAGS = $(libtrace_libposixtrace_la_CFLAGS)
tests_unit_libptcore_la_LIBADD = $(libtrace_libposixtrace_la_LIBADD)

# libtrace's internal headers by -I (its CPPFLAGS), tests/unit/unit.h beside
UNIT_CPPFLAGS = $(libtrace_libposixtrace_la_CPPFLAGS)
UNIT_LDADD = tests/unit/libptcore.la -lpthread

check_PROGRAMS += tests/unit/t300_pool tests/unit/t301_chain tests/unit/t302_logpack \
	tests/unit/t303_clock tests/unit/t304_flush_gap tests/unit/t305_geometry \
	tests/unit/t306_recfmt
tests_unit_t300_pool_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_t300_pool_LDADD = $(UNIT_LDADD)
tests_unit_t301_chain_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_t301_chain_LDADD = $(UNIT_LDADD)
tests_unit_t302_logpack_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_t302_logpack_LDADD = $(UNIT_LDADD)
tests_unit_t303_clock_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_t303_clock_LDADD = $(UNIT_LDADD)
tests_unit_t304_flush_gap_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_t304_flush_gap_LDADD = $(UNIT_LDADD)
tests_unit_t305_geometry_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_t305_geometry_LDADD = $(UNIT_LDADD)
tests_unit_t306_recfmt_CPPFLAGS = $(UNIT_CPPFLAGS)
tests_unit_t306_recfmt_LDADD = $(UNIT_LDADD)

EXTRA_DIST += tests/unit/unit.h tests/unit/unit_shm.h tests/unit/test_unit.py
