"""A traced process that shrinks the memory of its stream (ftruncate) must not
kill its controller with SIGBUS (issue 13 item 5).  Program:
tests/api/t025_shrink.c.

A stream the controller shares with a process of its own user is a memfd
sealed against shrinking and growing: every ftruncate of it (through
/proc/<controller>/fd/N, or the target's own mapping through
/proc/self/map_files) fails with EPERM, and so does one of the controller's
alive page.  A stream for another user's process is a /dev/shm object that
process owns and can truncate: the controller then reads an empty stream
and reports POSIX_TRACE_ERROR with EIO (doc/semantics.md), and goes on.
Design: doc/design.md, "Untrusted stream memory".
"""
import os
import re
import subprocess

import pytest

from harness import run, lines, kv, program
from toolscommon import tool, tdump, json_lines
from shimrun import shim_usable, trun

ROOT = os.geteuid() == 0


def test_same_user_controller():
    """posix_trace_create for a forked target T, which records 1000 events,
    tries to truncate the stream and the alive page through
    /proc/<controller>/fd and its own mapping (3 tries, each EPERM), records
    1000 more: the controller reads exactly T's 2000 events, no error event,
    and get_status, stop, shutdown return 0."""
    ls = lines(run("t025_shrink", "ctl", timeout=60))
    assert "T trunc tried=3 eperm=3 ok=0" in ls, ls
    assert sum(1 for l in ls if l.startswith("T trunc ") and "rc=EPERM" in l) == 3, ls
    assert "M read n=2001 T=2000 errors=0 eio=0" in ls, ls  # + posix_trace_start
    for call in ("get_status", "stop", "shutdown"):
        assert "M %s rc=0" % call in ls, ls
    assert "M exit=0" in ls and "T exit=0" in ls, ls


@pytest.mark.skipif(not ROOT, reason="needs root: the target runs as uid 65534")
def test_other_user_controller():
    """The same with T running as uid 65534: its stream is a /dev/shm object
    it owns, and its truncation to 0 succeeds.  The controller (root) does
    not die: it reads one POSIX_TRACE_ERROR event (EIO) and nothing else (the
    1000 events went with the memory), and get_status, stop, shutdown return
    0.  T itself dies when it records next (SIGBUS; under ASan, ASan's report):
    its own doing, not checked."""
    ls = lines(run("t025_shrink", "ctl-as", timeout=60))
    assert "T trunc tried=1 eperm=0 ok=1" in ls, ls
    assert "M read n=1 T=0 errors=1 eio=1" in ls, ls
    for call in ("get_status", "stop", "shutdown"):
        assert "M %s rc=0" % call in ls, ls
    assert "M exit=0" in ls, ls


@pytest.mark.skipif(not ROOT, reason="needs root: the target runs as uid 65534")
def test_controller_with_its_own_sigbus_handler():
    """As test_other_user_controller, but the controller program installs a
    SIGBUS handler of its own (sigaction) right after creating the stream,
    as a program may: the library keeps its protection (it interposes
    sigaction, signal and bsd_signal: doc/design.md, "Shrunk memory"), so
    the truncation is still one POSIX_TRACE_ERROR (EIO) and no fault kills
    or hangs the controller; the program reads its own handler back and a
    SIGBUS it raises runs that handler (chained)."""
    ls = lines(run("t025_shrink", "ctl-as-handler", timeout=60))
    assert "T trunc tried=1 eperm=0 ok=1" in ls, ls
    assert "M read n=1 T=0 errors=1 eio=1" in ls, ls
    for call in ("get_status", "stop", "shutdown"):
        assert "M %s rc=0" % call in ls, ls
    assert "M sees_own=1" in ls and "M own_handler calls=1" in ls, ls
    assert "M exit=0" in ls, ls


@pytest.mark.skipif(shim_usable() is not None, reason=str(shim_usable()))
def test_run_same_user(tmp_path):
    """posixtrace-run -o LOG (with the shim) over a target that tries to
    truncate the stream and the alive page through /proc/<posixtrace-run>/fd
    and its own mapping: each try fails with EPERM, posixtrace-run exits 0
    with its summary, "0 lost", and the log holds the target's 200 events."""
    log = tmp_path / "log"
    p = trun("-o", str(log), program("t025_shrink"), "run-target")
    ls = lines(p.out)
    assert "T trunc tried=3 eperm=3 ok=0" in ls, (p.out, p.err)
    m = re.search(r"^posixtrace-run: (\d+) events in .*, 0 lost$", p.err, re.M)
    assert m, p.err
    js = json_lines(tdump("-f", "json", str(log)).out)
    assert sum(1 for e in js if e.get("event") == "shrink/ev") == 200, p.err


@pytest.mark.skipif(not ROOT, reason="needs root: the target runs as uid 65534")
def test_run_other_user(tmp_path):
    """posixtrace-run -p PID -o LOG (root) over a target of uid 65534 that
    truncates its stream's /dev/shm object to 0: posixtrace-run does not die
    of SIGBUS (exit 135); it exits 0, says that the trace had an error and
    prints its summary; the log holds the POSIX_TRACE_ERROR (EIO) event."""
    log = tmp_path / "log"
    os.chmod(str(tmp_path), 0o755)
    t = subprocess.Popen([program("t025_shrink"), "p-target"], user=65534, group=65534,
                         stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        assert t.stdout.readline().strip() == "T ready"
        r = subprocess.run([tool("posixtrace-run"), "-p", str(t.pid), "-o", str(log)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=60, stdin=subprocess.DEVNULL)
        out = t.stdout.read()
        assert t.wait(timeout=20) == 0, out
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()
    assert "T trunc tried=1 eperm=0 ok=1" in lines(out), out
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert re.search(r"^posixtrace-run: 1 trace error\(s\) \(posix_trace_error\)", r.stderr,
                     re.M), r.stderr
    assert re.search(r"^posixtrace-run: \d+ events in .*, 0 lost$", r.stderr, re.M), r.stderr
    js = json_lines(tdump("-f", "json", str(log)).out)
    errs = [e for e in js if e.get("event") == "posix_trace_error"]
    assert len(errs) == 1, js
