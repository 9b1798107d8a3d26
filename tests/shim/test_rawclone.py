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

from harness import program, run
from shimcommon import sanitized
from shimrun import traced

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


@pytest.mark.skipif(sanitized(), reason="a raw thread runs on its parent's TLS, the "
                    "sanitizer's per-thread state included (its own false reports)")
@pytest.mark.parametrize("rep", range(3))
@pytest.mark.parametrize("mode", ["thread", "thread-inner"])
def test_raw_thread(mode, rep):
    """A raw thread (CLONE_VM|CLONE_THREAD without CLONE_SETTLS, on the main
    thread's TLS) records 20000 events while the main thread records 20000
    (doc/design.md, "Raw clone children"). thread: on a stack of its own, it
    is told apart by its stack before it touches the main thread's registry
    entry. thread-inner: its stack a buffer on the main thread's own stack,
    inside the range the main thread records from, so the stack cannot tell
    it apart; made through glibc's clone(), which the library interposes,
    the main thread's entry asks the kernel at every event. Either way it
    records with an entry of its own, so every event of both is there, in
    order, under the one pid, nothing lost, no error (posix_trace_event(3p):
    the event "shall be recorded"). Three runs each: the two threads race
    differently each time."""
    n = 20000
    out = run("t110_rawclone", mode, str(n))
    ev, st = tally(out)
    assert ev == {("T", 1, "parent"): (1, 1), ("T", 2, "parent"): (n, 1),
                  ("T", 3, "parent"): (n, 1)}, out
    assert st == {"T": (0, 0, 2)}, out


def test_own_thread_on_other_stacks():
    """The main thread records from its stack, from a signal handler on an
    alternate stack in static memory (sigaltstack) and from a coroutine on a
    stack of its own (swapcontext): the same thread each time, which the
    stack check must not take for a raw thread (its range widens, or stops
    being checked): 20000 events each, all there in order, nothing lost."""
    n = 20000
    out = run("t110_rawclone", "stacks", str(n))
    ev, st = tally(out)
    assert ev == {("T", 1, "parent"): (n, 1), ("T", 2, "parent"): (n, 1),
                  ("T", 3, "parent"): (n, 1)}, out
    assert st == {"T": (0, 0, 2)}, out


@pytest.mark.parametrize("m", [5, 5000])
def test_raw_vfork_child(m):
    """CLONE_VM|CLONE_VFORK on a stack of its own: the child runs in its
    parent's memory and TLS while the parent waits. Told apart by its stack,
    it records with an entry of its own and its own pid, into the INHERITED
    stream only, as a forked child (posix_trace_attr_getinherited(3p)); the
    parent's events are all there; nothing lost, no error."""
    out = run("t110_rawclone", "vfork", str(N), str(m), str(K))
    assert "child exited=1 status=0" in out
    ev, st = tally(out)
    assert ev == {("INH", 1, "parent"): (N, 1), ("INH", 2, "child"): (m, 1),
                  ("INH", 3, "parent"): (K, 1),
                  ("CFC", 1, "parent"): (N, 1), ("CFC", 3, "parent"): (K, 1)}, out
    assert st == {"INH": (0, 0, 2), "CFC": (0, 0, 2)}, out


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
