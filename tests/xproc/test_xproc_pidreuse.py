"""pid reuse: a stream created for a process that has exited is not recorded into
by a later process that got the same pid (issue 4: targets are identified by pid
and start time).  Program: tests/xproc/t054_xproc_pidreuse.c (helpers tests/common/xproc.h).

Pages: posix_trace_create.3p.txt ("the process specified by pid": the process,
not whatever holds the number later), posix_trace_event.3p.txt ("If there is no
trace stream created for the process ... no effect").
"""
import pytest

from harness import run, lines
from xproccommon import Col, check_run, start_stop


def test_recycled_pid_does_not_join_old_stream():
    """A is traced by S (its 10 events and "done" arrive, START with A's pid), then
    exits.  B is given A's pid (pid-1 written to /proc/sys/kernel/ns_last_pid before
    fork; root only) and records 100 events and "done" while S is still running: S
    gets nothing from B, then or later (only the STOP of S itself).  A new stream R
    for B gets B's next 100 events and "done", with B's pid (B records when it is
    traced)."""
    out = run("t054_xproc_pidreuse")
    ls = lines(out)
    skip = [l for l in ls if l.startswith("skip: ")]
    if skip:
        pytest.skip(skip[0][len("skip: "):])
    s = Col(out, "S")
    assert s.sys == {("posix_trace_start", "A"): 1} and s.lost == 0, out
    ks = s.keys()
    assert set(ks) == {("A", 0, "xp/ev"), ("A", 0, "xp/done")}, out
    check_run(ks[("A", 0, "xp/ev")], 10)
    assert "A exit=0" in ls and "B has A's pid=1" in ls, out
    s2 = Col(out, "S2")
    assert s2.users == [] and s2.sys == {} and s2.lost == 0, out
    r = Col(out, "R")
    assert r.sys == start_stop("B") and r.lost == 0, out
    kr = r.keys()
    assert set(kr) == {("B", 0, "xp/ev"), ("B", 0, "xp/done")}, out
    check_run(kr[("B", 0, "xp/ev")], 100, first=100)
    check_run(kr[("B", 0, "xp/done")], 1, first=1)
    s3 = Col(out, "S3")
    assert s3.users == [] and s3.sys == {("posix_trace_stop", "B"): 1} and s3.lost == 0, out
    assert "B exit=0" in ls
