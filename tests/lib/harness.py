"""Helpers shared by every area of the posixtrace test suite (no tests here).

The C test programs (tests/<area>/tNNN_*.c) are built by 'make check' into
$POSIXTRACE_BUILDDIR/tests/<area>/; program() finds one by its name in
whichever area builds it.  Without POSIXTRACE_BUILDDIR the build is the
source tree (an in-tree build); without POSIXTRACE_SRCDIR the sources are
those around this file.

The expected behaviour comes from the POSIX pages (/work/shared/spec/*.3p.txt,
cited by file name in each test's docstring) and from doc/semantics.md (the
implementation-defined choices).
"""
import os
import re
import subprocess

import pytest

# The folders of tests/ that hold test programs (tests/README.md says what each is)
AREAS = ("api", "log", "xproc", "shim", "tools", "unit", "probe")

_TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def builddir():
    return os.environ.get("POSIXTRACE_BUILDDIR") or _TOP


def srcdir():
    """The top of the source tree."""
    return os.environ.get("POSIXTRACE_SRCDIR") or _TOP


def program(prog):
    """The path of the test program prog ("t001_attr"; or "api/t001_attr"):
    $POSIXTRACE_BUILDDIR/tests/<area>/prog for the area that builds it (the
    first area's path when none does)."""
    tests = os.path.join(builddir(), "tests")
    if "/" in prog:
        return os.path.join(tests, prog)
    paths = [os.path.join(tests, area, prog) for area in AREAS]
    return next((p for p in paths if os.path.exists(p)), paths[0])


def run(prog, *args, timeout=60, env=None, rc=0):
    """Runs the test program prog (program()) with args; asserts its exit code is rc (default 0);
    returns its stdout (str)."""
    path = program(prog)
    if not os.path.exists(path):
        pytest.fail("test program not built: %s (looked in tests/{%s} of %s)"
                    % (prog, ",".join(AREAS), builddir()))
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    try:
        p = subprocess.run([path] + [str(a) for a in args], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout, env=full_env)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if e.stdout else ""
        pytest.fail("%s %s: timed out after %ss\nstdout:\n%s" % (prog, args, timeout, out))
    out = p.stdout.decode(errors="replace")
    err = p.stderr.decode(errors="replace")
    assert p.returncode == rc, (
        "%s %s exited with %d (expected %d)\n--- stdout:\n%s\n--- stderr:\n%s"
        % (prog, " ".join(map(str, args)), p.returncode, rc, out, err))
    return out


def lines(text):
    """The non-empty lines of text, stripped, as a list."""
    return [l.strip() for l in text.strip().splitlines() if l.strip()]


def expect_lines(out, expected):
    """Asserts out is exactly the expected text, line by line (leading and
    trailing blanks of each line and blank lines ignored)."""
    got = lines(out)
    want = lines(expected)
    assert got == want, diff_msg(got, want)


def diff_msg(got, want):
    import difflib
    return "output differs (-expected +got):\n" + "\n".join(
        difflib.unified_diff(want, got, "expected", "got", lineterm="", n=2))


def kv(line):
    """'a=1 b=x c="q r"' -> {'a': '1', 'b': 'x', 'c': 'q r'} (first word ignored
    unless it has '=')."""
    d = {}
    for m in re.finditer(r'(\w[\w()]*)=("([^"]*)"|\S*)', line):
        d[m.group(1)] = m.group(3) if m.group(3) is not None else m.group(2)
    return d
