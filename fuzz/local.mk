# Fuzzing the trace-log reader and the live stream reader (included from the
# top-level Makefile.am). 'make fuzz' builds fuzz/fuzz_logread with clang's
# libFuzzer (+ ASan, UBSan) and runs it for FUZZ_SECONDS on a fresh copy of
# the seed corpus written by fuzz/make_corpus.py; 'make fuzz-reader' builds
# fuzz/fuzz_reader (the whole library compiled in) and runs it likewise. Not
# part of 'make all' or 'make check' (tests/log/test_logread.py and
# tests/xproc/test_xproc_hostile.py run short fuzzes of their own). See fuzz/README.md.
#   make fuzz FUZZ_SECONDS=600 CLANG=clang-14 FUZZ_ARGS='-jobs=2'
CLANG = clang
PYTHON3 = python3
FUZZ_SECONDS = 60
FUZZ_MAX_LEN = 262144
FUZZ_ARGS =
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror
FUZZ_SRCS = \
	$(srcdir)/fuzz/fuzz_logread.c \
	$(srcdir)/libtrace/log/logread.c \
	$(srcdir)/libtrace/log/logread_scan.c \
	$(srcdir)/libtrace/log/logread_payload.c \
	$(srcdir)/libtrace/log/logread_events.c \
	$(srcdir)/libtrace/log/logread_gaps.c \
	$(srcdir)/libtrace/log/xxh.c \
	$(srcdir)/libtrace/api/attr.c
FUZZ_HDRS = \
	$(srcdir)/libtrace/log/logread.h \
	$(srcdir)/libtrace/log/logread_int.h \
	$(srcdir)/libtrace/log/xxh.h \
	$(srcdir)/libtrace/ring/pt_sizes.h \
	$(srcdir)/include/trace.h

fuzz/fuzz_logread: $(FUZZ_SRCS) $(FUZZ_HDRS)
	@$(MKDIR_P) fuzz
	$(CLANG) $(FUZZ_CFLAGS) -I$(srcdir)/include -I$(srcdir)/libtrace -o $@ \
	  $(FUZZ_SRCS)

# the live reader's target: every C source of the library
fuzz/fuzz_reader: $(srcdir)/fuzz/fuzz_reader.c $(libtrace_libposixtrace_la_SOURCES) \
		libtrace/syscall_names.h
	@$(MKDIR_P) fuzz
	$(CLANG) $(FUZZ_CFLAGS) -I$(srcdir)/include -I$(srcdir)/libtrace -Ilibtrace -o $@ \
	  $(srcdir)/fuzz/fuzz_reader.c $(srcdir)/libtrace/*/*.c -lpthread

fuzz-reader: fuzz/fuzz_reader
	rm -rf fuzz/reader-corpus-run fuzz/reader-artifacts
	$(MKDIR_P) fuzz/reader-corpus-run fuzz/reader-artifacts
	printf '\001\020' > fuzz/reader-corpus-run/seed-loop
	printf '\000\040' > fuzz/reader-corpus-run/seed-until-full
	./fuzz/fuzz_reader -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
	  -artifact_prefix=fuzz/reader-artifacts/ -print_final_stats=1 $(FUZZ_ARGS) \
	  fuzz/reader-corpus-run

fuzz: fuzz/fuzz_logread
	rm -rf fuzz/corpus-run fuzz/artifacts
	$(MKDIR_P) fuzz/corpus-run fuzz/artifacts
	$(PYTHON3) $(srcdir)/fuzz/make_corpus.py fuzz/corpus-run
	./fuzz/fuzz_logread -max_total_time=$(FUZZ_SECONDS) -max_len=$(FUZZ_MAX_LEN) \
	  -artifact_prefix=fuzz/artifacts/ -print_final_stats=1 $(FUZZ_ARGS) fuzz/corpus-run

fuzz-clean:
	rm -rf fuzz/fuzz_logread fuzz/corpus-run fuzz/artifacts
	rm -rf fuzz/fuzz_reader fuzz/reader-corpus-run fuzz/reader-artifacts

.PHONY: fuzz fuzz-reader fuzz-clean
EXTRA_DIST += \
	fuzz/README.md \
	fuzz/local.mk \
	fuzz/fuzz_logread.c \
	fuzz/fuzz_reader.c \
	fuzz/make_corpus.py
