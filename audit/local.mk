# libposixtrace-audit.so: run-time probes (LD_AUDIT + libffi closures, issue 16).
# Included from the top-level Makefile.am. posixtrace-run --probe adds it
# with LD_AUDIT beside the shim.

lib_LTLIBRARIES += audit/libposixtrace-audit.la
audit_libposixtrace_audit_la_SOURCES = \
	audit/audit.h \
	audit/spec.h \
	audit/spec.c \
	audit/audit.c \
	audit/call.c \
	audit/forward.c
audit_libposixtrace_audit_la_CFLAGS = $(AM_CFLAGS) $(LIBFFI_CFLAGS) -fvisibility=hidden
audit_libposixtrace_audit_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -no-undefined -shared
audit_libposixtrace_audit_la_LIBADD = $(LIBFFI_LIBS) -ldl
EXTRA_DIST += audit/README.md

# The probes shipped for a few common libraries (doc/tools.md "Probes").
probesdir = $(pkgdatadir)/probes
dist_probes_DATA = audit/probes/common.ini
EXTRA_DIST += examples/probes.ini
