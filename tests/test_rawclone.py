"""Children and threads made by a raw clone system call (issue 13 item 6),
which runs no pthread_atfork handler: t110_rawclone.

posix_pid is "the process identifier of the traced process that generates
the trace event" (posix_trace_getnext_event.3p.txt); a child made by
syscall(SYS_clone, SIGCHLD) is such a process, and with Trace Inherit it
records into the streams created POSIX_TRACE_INHERITED and not into the
POSIX_TRACE_CLOSE_FOR_CHILD ones (posix_trace_attr_getinherited.3p.txt), as
a fork()ed child does. Lost events are reported as POSIX_TRACE_OVERFLOW with
their count and damaged records as POSIX_TRACE_ERROR (doc/semantics.md).
How the child is told apart: doc/design.md, "Raw clone children".
"""
import re

import pytest

from conftest import program, run
from test_vfork import traced

N, K = 1000, 1000


def tally(out):
    """{(stream, who, pid class): (n, inorder)} and {stream: (lost, errors)}."""
    ev, st = {}, {}
    for m in re.finditer(r"^stream (\w+) who=(\d) pid=(\w+) n=(\d+) inorder=(\d)$", out, re.M):
        ev[(m.group(1), int(m.group(2)), m.group(3))] = (int(m.group(4)), int(m.group(5)))
    for m in re.finditer(r"^stream (\w+) lost=(\d+) errors=(\d+) other=(\d+)$", out, re.M):
        st[m.group(1)] = (int(m.group(2)), int(m.group(3)), int(m.group(4)))
    return ev, st


@pytest.mark.parametrize("m", [5, 5000])
def test_raw_fork_child(m):
    """A raw-cloned child (SIGCHLD only) records M events: all of them under
    its own pid in the INHERITED stream, none in the CLOSE_FOR_CHILD one;
    the parent's N before and K after are all there under its pid, in order;
    nothing lost, no error, START and STOP only. M = 5 stays in the child's
    first chunk, M = 5000 spans dozens of chunk switches."""
    out = run("t110_rawclone", "child", str(N), str(m), str(K))
    assert "child exited=1 status=0" in out
    ev, st = tally(out)
    assert ev == {("INH", 1, "parent"): (N, 1), ("INH", 2, "child"): (m, 1),
                  ("INH", 3, "parent"): (K, 1),
                  ("CFC", 1, "parent"): (N, 1), ("CFC", 3, "parent"): (K, 1)}, out
    assert st == {"INH": (0, 0, 2), "CFC": (0, 0, 2)}, out


@pytest.mark.skip(reason="known limit, issue 13 item 6 left open (doc/design.md, Raw clone "
                  "children): a raw thread on its parent's TLS is not always told apart; in "
                  "12 runs of 40,000 events with the TSC clock, 10 left up to 650 missing "
                  "events uncounted and 1 read the stream as empty with 0 lost (under "
                  "sanitizers the shared TLS also gives false reports)")
def test_raw_thread():
    """A raw thread (CLONE_VM|CLONE_THREAD without CLONE_SETTLS, on the main
    thread's TLS) records 20000 events while the main thread records 20000:
    no crash, no hang (the main thread's posix_trace_shutdown waits 2 s at
    most for a registry entry the two left busy: doc/design.md), one
    process, and if anything was dropped the stream says so: lost > 0 and an
    error (EBADMSG) for the damaged chunk, never "0 lost" with events
    missing. Both threads share one TLS, so after a detection the main
    thread's new registry entry is the raw thread's too, and more of the main
    thread's events may be counted lost; the event that notices the sharing
    may itself go uncounted."""
    n = 20000
    out = run("t110_rawclone", "thread", str(n))
    ev, st = tally(out)
    lost, errors, other = st["T"]
    assert other >= 2, out
    assert not [k for k in ev if k[2] != "parent"], out  # one process
    main = ev.get(("T", 3, "parent"), (0, 0))
    raw = ev.get(("T", 2, "parent"), (0, 0))
    if lost == 0:
        assert main == (n, 1) and raw == (n, 1) and errors == 0, out
    else:
        assert errors >= 1, out
        assert main[0] + raw[0] + lost >= 2 * n - 1, out


@pytest.mark.parametrize("m", [5, 5000])
def test_raw_vfork_child(m):
    """CLONE_VM|CLONE_VFORK on a stack of its own: the child runs in its
    parent's memory and TLS like a thread, while the parent waits. Its
    events are not told apart from the parent's (a limit, doc/design.md):
    they are recorded under the parent's pid or, once a chunk switch sees
    the other tid, counted lost; either way nothing is missing uncounted,
    and the parent's events are there."""
    out = run("t110_rawclone", "vfork", str(N), str(m), str(K))
    assert "child exited=1 status=0" in out
    ev, st = tally(out)
    for s in ("INH", "CFC"):
        lost, errors, other = st[s]
        got = sum(v[0] for k, v in ev.items() if k[0] == s)
        assert got + lost >= N + m + K, out
        assert ev[(s, 1, "parent")] == (N, 1), out
        assert ev[(s, 3, "parent")][0] >= K - 1, out
        if lost == 0:
            assert got == N + m + K and errors == 0, out


def test_raw_fork_child_under_run(tmp_path):
    """The shim under posixtrace-run -o: a program that raw-clones. The
    child's user events and its close(-1) calls are in the log under its own
    pid, the parent's under its pid; the log is whole and nothing is lost
    (trace_log checks posixtrace-run's "0 lost")."""
    m = 300
    js, out = traced(tmp_path, program("t110_rawclone"), "plain", "50", str(m), "40")
    pm = re.search(r"^parent pid=(\d+) child pid=(\d+)$", out, re.M)
    parent, child = int(pm.group(1)), int(pm.group(2))
    user = [e for e in js if e["event"] == "rawclone"]

    def who(e):
        return int(e["data"][:2], 16)
    assert sorted(who(e) for e in user if e["pid"] == child) == [2] * m
    assert sorted(who(e) for e in user if e["pid"] == parent) == [1] * 50 + [3] * 40
    assert len(user) == 50 + m + 40
    closes = [e for e in js if e["event"] == "posixtrace:close"]
    assert len([e for e in closes if e["pid"] == child]) == m
    assert len([e for e in closes if e["pid"] == parent]) == 90
    assert not [e for e in js if e["event"] == "posix_trace_error"]
