"""vfork and posix_spawn children under posixtrace-run with the shim (issue
12): the parent's vfork event has the child's pid as its result, and what a
vfork child does before it execs (dup2, close, the exec itself) is recorded
with the child's own pid and thread id, not its parent's.

posix_pid is "the process identifier of the traced process that generates
the trace event" (posix_trace_getnext_event.3p.txt, posix_trace_event.3p.txt);
a vfork child is such a process, with its own pid, although it runs in its
parent's memory. Streams: posixtrace-run's stream is INHERITED
(posix_trace_attr_getinherited.3p.txt), so children are followed. Events and
fields: doc/events.md; JSON keys: doc/json-schema.md. In a sanitizer build
the shim needs ASan's runtime: it is preloaded first (as in
shimcommon.shim_env) into posixtrace-run and so into every program.
"""
import os
import re

import pytest

from harness import program
from shimcommon import shim_path
from shimrun import traced

pytestmark = pytest.mark.skipif(not os.path.exists(shim_path()), reason="the shim is not built")
PY = "/usr/bin/python3"  # Debian's (the one on PATH may be a wrapper script)


def calls_of(js, pid):
    return [e for e in js if e["kind"] == "call" and e["pid"] == pid]


def started(js, exe_suffix):
    """The pid of the image whose process_start has an exe ending so."""
    ps = [e for e in js if e["event"] == "posixtrace:process_start"
          and e["args"]["exe"].endswith(exe_suffix)]
    assert len(ps) == 1, ps
    return ps[0]["pid"]


def brief(e):
    return (e["event"].split(":")[1], e["args"], e["ret"], e["returned"])


def the_vfork(js, parent):
    v = [e for e in calls_of(js, parent) if e["event"] == "posixtrace:vfork"]
    assert len(v) == 1, v
    return v[0]


def check_child_window(js, parent, child, vf):
    """Every event with the child's thread id carries the child's pid (and
    the converse); the child's events before its exec lie within the vfork
    call (from its start to its return in the parent)."""
    assert all(e["pid"] == child for e in js if e["tid"] == child)
    assert all(e["tid"] == child for e in js if e["pid"] == child and e["kind"] == "call")
    assert not [e for e in js if e["pid"] == parent and e["tid"] not in (parent, None)]
    before = []
    for e in calls_of(js, child):
        before.append(e)
        if e["event"] == "posixtrace:exec":
            break
    start = vf["ts_ns"] - vf["duration_ns"]
    assert all(start <= e["ts_ns"] <= vf["ts_ns"] for e in before), (vf, before)
    return before


def test_vfork_c(tmp_path):
    """A C program vforks; the child dup2(1, 7), close(7), execl /bin/true.
    The parent's vfork() = child pid (errno 0, a duration, returned), after
    the child's events; the child's dup/close/exec and its new image's
    events carry the child's pid and tid."""
    js, out = traced(tmp_path, program("t105_vfork"), "vfork")
    child = int(re.fullmatch(r"child=(\d+)\n", out).group(1))
    parent = started(js, "/t105_vfork")
    vf = the_vfork(js, parent)
    assert (vf["tid"], vf["ret"], vf["errno"], vf["args"], vf["returned"]) == (
        parent, child, 0, {}, True)
    assert vf["duration_ns"] > 0
    mine = calls_of(js, parent)
    assert mine[0]["event"] == "posixtrace:process_start"
    assert mine[0]["args"]["argv"] == [program("t105_vfork"), "vfork"]
    assert [brief(e) for e in mine[1:]] == [
        ("vfork", {}, child, True),
        ("wait", {"pid": child, "options": "0", "status": "exit(0)"}, child, True),
        ("exit", {"pid": parent, "status": 0, "how": 2}, None, False)]
    assert [brief(e) for e in calls_of(js, child)] == [
        ("dup", {"oldfd": 1, "newfd": 7, "flags": None}, 7, True),
        ("close", {"fd": 7}, 0, True),
        ("exec", {"pid": child, "fd": None, "search": 0, "path": "/bin/true",
                  "argv": ["true"]}, None, False),
        ("process_start", {"pid": child, "ppid": parent, "exe": "/usr/bin/true",
                           "argv": ["true"]}, 0, True),
        ("exit", {"pid": child, "status": 0, "how": 2}, None, False)]
    assert all(e["tid"] == child for e in calls_of(js, child))
    before = check_child_window(js, parent, child, vf)
    assert len(before) == 3


def test_vfork_fails(tmp_path):
    """A vfork that fails (a seccomp filter answers EAGAIN): vfork() = -1
    EAGAIN in the parent, with a duration; no other process."""
    js, out = traced(tmp_path, program("t105_vfork"), "vfail")
    assert out == "ret=-1 errno=11\n"
    parent = started(js, "/t105_vfork")
    vf = the_vfork(js, parent)
    assert (vf["tid"], vf["ret"], vf["errno"], vf["errno_name"], vf["returned"]) == (
        parent, -1, 11, "EAGAIN", True)
    assert vf["duration_ns"] is not None
    assert {e["pid"] for e in js} == {parent}


def test_posix_spawn_child(tmp_path):
    """glibc's posix_spawn starts its child with clone(CLONE_VM|CLONE_VFORK),
    not through vfork; the child's file actions (dup2 1 -> 7, close 7) and
    its exec go through libc-internal functions, which the shim does not see:
    nothing is recorded between the clone and the new image, and in
    particular nothing under the parent's pid. The parent's posix_spawn has
    the child's pid, which the new image's events carry."""
    js, out = traced(tmp_path, program("t105_vfork"), "spawn")
    child = int(re.fullmatch(r"child=(\d+)\n", out).group(1))
    parent = started(js, "/t105_vfork")
    assert [e["event"].split(":")[1] for e in calls_of(js, parent)] == [
        "process_start", "posix_spawn", "wait", "exit"]
    sp = calls_of(js, parent)[1]
    assert (sp["args"]["child"], sp["ret"], sp["tid"]) == (child, 0, parent)
    assert [brief(e) for e in calls_of(js, child)] == [
        ("process_start", {"pid": child, "ppid": parent, "exe": "/usr/bin/true",
                           "argv": ["true"]}, 0, True),
        ("exit", {"pid": child, "status": 0, "how": 2}, None, False)]
    assert all(e["tid"] == child for e in calls_of(js, child))


@pytest.mark.parametrize("close_fds", [True, False])
def test_python_subprocess(tmp_path, close_fds):
    """python3's subprocess.run(["/bin/echo", "x"], capture_output=True)
    vforks (_posixsubprocess; with close_fds=False a cwd is given, which
    keeps it from using posix_spawn). Every event recorded between the vfork
    and the exec (closes, the dup2s of the pipes onto 1 and 2, the exec of
    /bin/echo) has the child's pid and tid; the exec event's pid is the pid
    the parent's vfork returned. With close_fds=False the echo image is
    traced too (its process_start: that pid, ppid python); with close_fds=True
    the child closes every descriptor above 2, the trace inbox's too, so the
    echo image is not followed (a limit of following through inherited
    descriptors: doc/design.md, "exec")."""
    code = ("import subprocess\n"
            "r = subprocess.run(['/bin/echo', 'x'], capture_output=True, close_fds=%s%s)\n"
            "assert r.stdout == b'x\\n' and r.returncode == 0\n"
            % (close_fds, "" if close_fds else ", cwd='/'"))
    js, out = traced(tmp_path, PY, "-c", code)
    parent = [e["pid"] for e in js if e["event"] == "posixtrace:process_start"
              and e["args"]["argv"][:2] == [PY, "-c"]]
    assert len(parent) == 1
    parent = parent[0]
    vf = the_vfork(js, parent)
    child = vf["ret"]
    assert child > 0 and vf["tid"] == parent and vf["errno"] == 0
    before = check_child_window(js, parent, child, vf)
    ex = before[-1]
    assert brief(ex) == ("exec", {"pid": child, "fd": None, "search": 0, "path": "/bin/echo",
                                  "argv": ["/bin/echo", "x"]}, None, False)
    dups = [e for e in before if e["event"] == "posixtrace:dup"]
    assert sorted(e["args"]["newfd"] for e in dups) == [1, 2]
    assert all(e["ret"] == e["args"]["newfd"] for e in dups)
    assert {e["event"] for e in before} <= {"posixtrace:close", "posixtrace:dup",
                                           "posixtrace:exec", "posixtrace:open",
                                           "posixtrace:fcntl"}, before
    starts = [e for e in calls_of(js, child) if e["event"] == "posixtrace:process_start"]
    if not close_fds:
        assert [(e["args"]["pid"], e["args"]["ppid"], e["args"]["exe"]) for e in starts] == [
            (child, parent, "/usr/bin/echo")]


def test_dash(tmp_path):
    """dash (0.5.12) runs a simple command through vfork: for
    'ls / >/dev/null; echo x' its vfork() = the pid of the child whose exec
    of ls and whose ls image (process_start: ppid dash) carry that pid; the
    redirection is done (and undone) by dash itself around the vfork."""
    js, out = traced(tmp_path, "dash", "-c", "ls / >/dev/null; echo x")
    assert out == "x\n"
    sh = started(js, "/dash")
    vf = the_vfork(js, sh)
    child = vf["ret"]
    before = check_child_window(js, sh, child, vf)
    assert [brief(e) for e in before] == [
        ("exec", {"pid": child, "fd": None, "search": 0, "path": "/usr/bin/ls",
                  "argv": ["ls", "/"]}, None, False)]
    ps = [e for e in calls_of(js, child) if e["event"] == "posixtrace:process_start"]
    assert [(e["args"]["pid"], e["args"]["ppid"], e["args"]["exe"]) for e in ps] == [
        (child, sh, "/usr/bin/ls")]
    w = [e for e in calls_of(js, sh) if e["event"] == "posixtrace:wait" and e["ret"] == child]
    assert len(w) == 1 and w[0]["args"]["status"] == "exit(0)"
