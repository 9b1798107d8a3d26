# The test suite (included from the top-level Makefile.am), grouped by area:
# tests/<area>/ holds the area's C programs (tNNN_name.c), its pytest files
# (test_*.py) and its build rule, tests/<area>/local.mk, included below
# (tests/README.md: which area tests what).  Shared: tests/common/ (C
# headers: tcommon.h, xproc.h), tests/lib/ (Python helper modules, put on
# sys.path by tests/conftest.py).
#
# A test program is listed once in its area's local.mk:
#   check_PROGRAMS += tests/<area>/tNNN_name
# and built from tests/<area>/tNNN_name.c (automake's default source), linked
# by the default LDADD (Makefile.am: libposixtrace, -no-install), with
# tests/common/ on the include path (below); a program with other needs
# (more sources, other libraries, flags) sets its own variables.
# 'make check' builds them into $(builddir)/tests/<area>/; the tests find
# them by name (tests/lib/harness.py, program()).
AM_CPPFLAGS += -I$(top_srcdir)/tests/common

EXTRA_DIST += \
	tests/README.md \
	tests/conftest.py \
	tests/common/tcommon.h \
	tests/common/xproc.h \
	tests/lib/harness.py \
	tests/lib/logcommon.py \
	tests/lib/logfmt.py \
	tests/lib/shimcommon.py \
	tests/lib/shimrun.py \
	tests/lib/toolscommon.py \
	tests/lib/xproccommon.py

include $(srcdir)/tests/api/local.mk
include $(srcdir)/tests/log/local.mk
include $(srcdir)/tests/xproc/local.mk
include $(srcdir)/tests/shim/local.mk
include $(srcdir)/tests/tools/local.mk
include $(srcdir)/tests/probe/local.mk
include $(srcdir)/tests/unit/local.mk

# ---- Every test file is distributed -----------------------------------------
# 'make check' first fails if a file of tests/ that the suite uses (test_*.py
# and the helper modules, *.c, *.h, *.mk, README.md, in tests/ and in its
# folders) is not in the distribution (DISTFILES: EXTRA_DIST, the programs'
# _SOURCES, the included fragments), so that 'make distcheck' runs every
# test.  Generated from the tree, not a list.
check-test-dist:
	@dist=; for f in $(DISTFILES); do \
	  case $$f in \
	    '$(srcdir)'/*) f=$${f#'$(srcdir)'/};; \
	    '$(top_srcdir)'/*) f=$${f#'$(top_srcdir)'/};; \
	  esac; dist="$$dist $$f "; \
	done; \
	missing=; \
	for f in '$(srcdir)'/tests/*.py '$(srcdir)'/tests/*/*.py '$(srcdir)'/tests/*/*.c \
	         '$(srcdir)'/tests/*.h '$(srcdir)'/tests/*/*.h '$(srcdir)'/tests/*.mk \
	         '$(srcdir)'/tests/*/*.mk '$(srcdir)'/tests/README.md; do \
	  test -f "$$f" || continue; \
	  f=$${f#'$(srcdir)'/}; \
	  case "$$dist" in *" $$f "*) ;; *) missing="$$missing $$f";; esac; \
	done; \
	if test -n "$$missing"; then \
	  echo "check-test-dist: not in the distribution (add to EXTRA_DIST in tests/<area>/local.mk):$$missing" >&2; \
	  exit 1; \
	fi; \
	echo "check-test-dist: every test file of tests/ is distributed"

check-local: check-test-dist
.PHONY: check-test-dist
