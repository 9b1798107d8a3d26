"""Trace Inherit option with the controller in another process: a tree of
processes (fork of fork, an exec in between), CLOSE_FOR_CHILD, and the launcher
pattern (issue 4).  Programs: tests/xproc/t051_xproc_tree.c (controller and tree),
tests/xproc/t052_xproc_exec.c (the image exec'd; linked with libposixtrace, it records
"exec/ctor" from a constructor, before main).

Pages: posix_trace_attr_getinherited.3p.txt (POSIX_TRACE_INHERITED: "the trace
stream shall be inherited" by children created by fork; CLOSE_FOR_CHILD: it
"shall not be traced"), posix_trace_event.3p.txt (Trace Inherit: an identifier
"unique for all the processes being traced in this same trace stream"; "If the
user trace event name has already been mapped for the traced processes, then the
previously assigned trace event type identifier shall be returned"),
posix_trace_eventid_get_name.3p.txt.  doc/semantics.md ("Events": posix_pid is
the recording process).
"""
import os

import pytest

from harness import run, kv, lines
from xproccommon import Col, check_run, start_stop

SYS = "T"


def tree(mode):
    out = run("t051_xproc_tree", mode)
    assert "T exit=0" in lines(out), out
    return out


def test_inherited_tree_fork_exec():
    """T forks C1, C1 forks C2, C2 execs t052 (E: same pid, new image), E forks C3.
    With an INHERITED stream created for T by another process, every event of all
    five images arrives once, intact, with the recording process's pid: T's pid
    for T, distinct pids for C1, C2, C3, and E has C2's pid.  E is traced from its
    first instruction (its constructor's event is there).  Names (checked on every
    event with posix_trace_eventid_get_name): one name, one id in the whole tree
    ("tree/common" opened in T before the forks and again by the new image E;
    "tree/c1" opened in C1 and, after the exec, in E); different names, different
    ids, also for names first opened in different processes after the forks
    ("tree/t2" in T, "tree/c1" in C1, "tree/c2" in C2, "tree/c3" in C3)."""
    out = tree("inherited")
    s = Col(out, "S")
    assert s.sys == start_stop(SYS) and s.lost == 0 and s.foreign == 0, out
    ks = s.keys()
    want = {
        "T": ["tree/common", "tree/t2", "xp/done"],
        "C1": ["tree/c1", "tree/common", "xp/done"],
        "C2": ["tree/c2", "tree/common"],
        "E": ["exec/ctor", "tree/exec", "tree/common", "tree/c1", "xp/done"],
        "C3": ["tree/c3", "tree/common", "xp/done"],
    }
    assert set(ks) == {(r, 0, n) for r in want for n in want[r]}, out
    for k, u in ks.items():
        check_run(u, 1)
    pid = {}
    for r in want:
        ps = {ks[(r, 0, n)]["rawpid"] for n in want[r]}
        assert len(ps) == 1, (r, out)
        pid[r] = ps.pop()
    assert ks[("T", 0, "xp/done")]["pid"] == "T"
    assert "pid T=%s" % pid["T"] in lines(out)
    assert len({pid["T"], pid["C1"], pid["C2"], pid["C3"]}) == 4, pid
    assert pid["E"] == pid["C2"], pid
    ids = {}
    for (r, thr, n), u in ks.items():
        ids.setdefault(n, set()).add(u["id"])
    for n, i in ids.items():
        assert len(i) == 1, ("one name, several ids", n, i, out)
    allids = [next(iter(i)) for i in ids.values()]
    assert len(set(allids)) == len(allids), ("two names, one id", ids)


def test_close_for_child_records_only_the_process():
    """POSIX_TRACE_CLOSE_FOR_CHILD: T records "cfc/t", forks C1 (which records
    "cfc/c1" and "cfc/t" and exits), records "cfc/t" again and execs t052: only T
    and its own new image record (E's constructor event, "cfc/exec", "done", all
    with T's pid); none of C1's events, though C1 finished before T's last
    events."""
    out = tree("cfc")
    s = Col(out, "S")
    assert s.sys == start_stop(SYS) and s.lost == 0 and s.foreign == 0, out
    ks = s.keys()
    assert set(ks) == {("T", 0, "cfc/t"), ("E", 0, "exec/ctor"), ("E", 0, "cfc/exec"),
                       ("E", 0, "xp/done")}, out
    check_run(ks[("T", 0, "cfc/t")], 2)
    for k, u in ks.items():
        assert u["pid"] == "T", u
        if k[0] == "E":
            check_run(u, 1)


def test_launcher_exec_right_after_start():
    """The launcher pattern (posixtrace-run): the child blocks on a pipe, the
    parent creates an INHERITED stream for it and starts it, then releases it; the
    child execs at once, without having recorded anything: the new image is traced
    from its first instruction (its constructor's "exec/ctor"), then
    "launch/main" and "done", all with the child's pid."""
    out = tree("launch")
    s = Col(out, "S")
    assert s.sys == start_stop(SYS) and s.lost == 0 and s.foreign == 0, out
    ks = s.keys()
    assert set(ks) == {("L", 0, "exec/ctor"), ("L", 0, "launch/main"),
                       ("L", 0, "xp/done")}, out
    for u in ks.values():
        check_run(u, 1)
        assert u["pid"] == "T", u


def test_posix_spawn_and_vfork_children():
    """INHERITED: children started by posix_spawn and by vfork + exec of a program
    linked with the library record into the stream with their own pids
    (doc/semantics.md "Tracing other processes", Trace Inherit option), from
    their first instruction (constructor event); names shared with T's ("xp/done"
    one id for all)."""
    out = tree("spawn")
    s = Col(out, "S")
    assert s.sys == start_stop(SYS) and s.lost == 0 and s.foreign == 0, out
    ks = s.keys()
    want = {("T", 0, "xp/ev"), ("T", 0, "xp/done")}
    for r in ("P", "V"):
        want |= {(r, 0, "exec/ctor"), (r, 0, "launch/main"), (r, 0, "xp/done")}
    assert set(ks) == want, out
    for u in ks.values():
        check_run(u, 1)
    pids = {r: {u["rawpid"] for k, u in ks.items() if k[0] == r} for r in ("T", "P", "V")}
    assert all(len(p) == 1 for p in pids.values()), pids
    assert len({next(iter(p)) for p in pids.values()}) == 3, pids
    assert len({u["id"] for k, u in ks.items() if k[2] == "xp/done"}) == 1, out


def test_child_forked_before_parent_recorded():
    """INHERITED: the stream is created and started for T; T forks a child before
    it has recorded anything itself.  posix_trace_attr_getinherited.3p.txt: with
    POSIX_TRACE_INHERITED "the trace stream shall be inherited" by children
    created by fork; so the child's 10 events and "done" arrive, with its own
    pid, whether or not its parent happened to record first."""
    out = tree("fork_first")
    s = Col(out, "S")
    assert s.sys == start_stop(SYS) and s.lost == 0 and s.foreign == 0, out
    ks = s.keys()
    assert set(ks) == {("K", 0, "xp/ev"), ("K", 0, "xp/done"), ("T", 0, "xp/done")}, out
    check_run(ks[("K", 0, "xp/ev")], 10)
    assert ks[("K", 0, "xp/ev")]["rawpid"] != ks[("T", 0, "xp/done")]["rawpid"]


def test_many_short_lived_children():
    """INHERITED: 300 children (more than a stream's 256 writer slots,
    doc/semantics.md) forked one after the other, each recording one event and
    exiting (exit() or _exit() alternately), while the controller reads: every
    child's event arrives with its own pid (checked per event), nothing lost, no
    POSIX_TRACE_ERROR -- the slots of processes gone are freed
    (doc/semantics.md "Target death": the reader "frees its writer slots")."""
    out = tree("many")
    s = Col(out, "S")
    assert s.sys == start_stop(SYS) and s.lost == 0 and s.foreign == 0, out
    ks = s.keys()
    assert set(ks) == {("K", 0, "xp/kid"), ("T", 0, "xp/ev"), ("T", 0, "xp/done")}, out
    check_run(ks[("K", 0, "xp/kid")], 300)


def test_launcher_unmodified_program_with_shim():
    """The launcher pattern of posixtrace-run with an unmodified program: the
    child of a program linked with libposixtrace blocks on a pipe; the parent
    creates an INHERITED stream for it and starts it; the child then execs
    /bin/cat /dev/null with LD_PRELOAD naming libposixtrace-preload.so (alone;
    in a sanitizer build after ASan's runtime).  The new image is traced from its
    start: the first event after START is the shim's posixtrace:process_start,
    then its events (open, read, close of /dev/null, exit), all with the child's
    pid (doc/semantics.md "Tracing other processes": attach at exec and at
    library start-up in the new image; doc/events.md)."""
    import shimcommon as shim
    if not os.path.exists(shim.shim_path()):
        pytest.skip("the shim is not built")
    asan = shim._asan_runtime() if shim.sanitized() else "-"
    out = run("t051_xproc_tree", "launch_preload", shim.shim_path(), asan)
    ls = lines(out)
    assert "T exit=0" in ls, out
    assert [l for l in ls if l.startswith("first=")][0].startswith(
        "first=posix_trace_start,posixtrace:process_start,"), out
    s = Col(out, "S")
    assert s.lost == 0 and s.users == [], out
    for name in ("posix_trace_start", "posixtrace:process_start", "posixtrace:open",
                 "posixtrace:read", "posixtrace:exit", "posix_trace_stop"):
        assert s.sys.get((name, SYS), 0) >= 1, (name, out)
    assert s.sys[("posixtrace:process_start", SYS)] == 1
    assert all(pid == SYS for (name, pid) in s.sys), out
