# posixtrace-run and posixtrace-dump, and their test programs.
# Included from the top-level Makefile.am.

# Shared by both tools (ptools.h): reading, decoding, filtering, formatting.
noinst_LTLIBRARIES += tools/libptools.la
tools_libptools_la_SOURCES = \
	tools/ptools.h \
	tools/readloop.h \
	tools/names.c \
	tools/decode.c \
	tools/xlat.h \
	tools/xlat.c \
	tools/calls.c \
	tools/probes.c \
	audit/spec.h \
	audit/spec.c \
	tools/fmt_value.c \
	tools/fmt_poll.c \
	tools/fmt_num.c \
	tools/fmt_escape.c \
	tools/fmt_text.c \
	tools/fmt_json.c \
	tools/fmt_chrome.c \
	tools/filter_spec.c \
	tools/fn_events.c \
	tools/proc_end.c tools/inflight.c \
	tools/summary.c \
	tools/symbolize.c \
	tools/fdtable.c \
	tools/sym_elf.h \
	tools/sym_elf.c \
	tools/sink.c \
	tools/readloop.c \
	tools/util.c
nodist_tools_libptools_la_SOURCES = tools/xlat_tables.c
tools_libptools_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools
tools_libptools_la_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS) $(LIBDW_CFLAGS)

# The decoding tables (tools/xlat.h): tools/xlat/<set>.in lists names, the
# generator writes a table per list whose values the compiler takes from the
# system headers.  Generated in the build directory.
XLAT_IN = \
	tools/xlat/open_access.in \
	tools/xlat/open_flags.in \
	tools/xlat/fd_flags.in \
	tools/xlat/fd_cloexec.in \
	tools/xlat/sock_types.in \
	tools/xlat/sock_flags.in \
	tools/xlat/address_families.in \
	tools/xlat/msg_flags.in \
	tools/xlat/at_flags.in \
	tools/xlat/whence.in \
	tools/xlat/wait_options.in \
	tools/xlat/signals.in \
	tools/xlat/errnos.in \
	tools/xlat/mmap_prot.in \
	tools/xlat/mmap_flags.in \
	tools/xlat/fcntl_cmds.in \
	tools/xlat/ioctl_reqs.in \
	tools/xlat/sig_how.in \
	tools/xlat/poll_events.in \
	tools/xlat/epoll_events.in \
	tools/xlat/epoll_ops.in
tools/xlat_tables.c: $(XLAT_IN) tools/xlat/gen-xlat.sh
	$(AM_V_GEN)$(MKDIR_P) tools && \
	$(SHELL) $(srcdir)/tools/xlat/gen-xlat.sh $(srcdir) $(XLAT_IN) >$@.tmp && mv $@.tmp $@
CLEANFILES += tools/xlat_tables.c tools/xlat_tables.c.tmp

EXTRA_DIST += $(XLAT_IN) tools/xlat/gen-xlat.sh

TOOLS_LDADD = tools/libptools.la libtrace/libposixtrace.la $(GLIB_LIBS) $(LIBDW_LIBS)

bin_PROGRAMS += tools/posixtrace-dump
tools_posixtrace_dump_SOURCES = \
	tools/dump.h \
	tools/dump_main.c \
	tools/dump_info.c \
	tools/dump_damage.c
tools_posixtrace_dump_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS)
tools_posixtrace_dump_LDADD = $(TOOLS_LDADD)

EXTRA_DIST += tools/README.md

bin_PROGRAMS += tools/posixtrace-run
tools_posixtrace_run_SOURCES = \
	tools/run.h \
	tools/run_main.c \
	tools/run_opts.c \
	tools/run_attr.c \
	tools/run_launch.c \
	tools/run_signals.c \
	tools/run_session.c \
	tools/live_queue.h \
	tools/live_queue.c \
	tools/live_out.c \
	tools/run_report.c \
	tools/run_untraced.c \
	tools/run_probes.c \
	tools/run_ltrace.c
tools_posixtrace_run_CPPFLAGS = $(AM_CPPFLAGS) \
	-DPOSIXTRACE_PRELOAD_PATH='"$(libdir)/libposixtrace-preload.so"' \
	-DPOSIXTRACE_BUILD_PRELOAD_PATH='"$(abs_top_builddir)/preload/.libs/libposixtrace-preload.so"' \
	-DPOSIXTRACE_AUDIT_PATH='"$(libdir)/libposixtrace-audit.so"' \
	-DPOSIXTRACE_BUILD_AUDIT_PATH='"$(abs_top_builddir)/audit/.libs/libposixtrace-audit.so"'
tools_posixtrace_run_CFLAGS = $(AM_CFLAGS) $(GLIB_CFLAGS)
tools_posixtrace_run_LDADD = $(TOOLS_LDADD)

# ---- Man pages and documentation ---------------------------------------------
dist_man1_MANS = tools/posixtrace-run.1 tools/posixtrace-dump.1
EXTRA_DIST += doc/tools.md doc/json-schema.md

# The event tables of doc/events.md, from include/posixtrace/events.def
# (tests/tools/test_events_doc.py checks them; make events-doc rewrites them).
noinst_PROGRAMS += tools/gen-events-doc
tools_gen_events_doc_SOURCES = tools/gen-events-doc.c
tools_gen_events_doc_LDADD =

# The payload declarations, from the same definition, generated before
# anything is compiled: <posixtrace/payloads.h> (installed: each event's
# fixed fields as a struct, its variable fields' positions) and the shim's
# emitters preload/shim_emit.h (shim_fix_<event>()).
noinst_PROGRAMS += tools/gen-payloads
tools_gen_payloads_SOURCES = tools/gen-payloads.c
tools_gen_payloads_LDADD =
BUILT_SOURCES += include/posixtrace/payloads.h preload/shim_emit.h
include/posixtrace/payloads.h: tools/gen-payloads$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) include/posixtrace && \
	tools/gen-payloads$(EXEEXT) public >$@.tmp && mv $@.tmp $@
preload/shim_emit.h: tools/gen-payloads$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) preload && \
	tools/gen-payloads$(EXEEXT) shim >$@.tmp && mv $@.tmp $@
CLEANFILES += include/posixtrace/payloads.h preload/shim_emit.h \
	include/posixtrace/payloads.h.tmp preload/shim_emit.h.tmp
