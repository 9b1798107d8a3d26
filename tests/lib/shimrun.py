"""Helpers of the tests that run programs under posixtrace-run with the
interposition shim (tests/tools/, tests/shim/, tests/xproc/, ...); no tests here.

shim_usable(): None, or why the shim cannot be preloaded into programs built
without sanitizers; ENV: posixtrace-run's environment that names the shim;
trun()/trace_log(): posixtrace-run with it; run_env()/traced(): the same in a
sanitizer build too (ASan's runtime preloaded first); check_tree(): the
process tree of a log, each process created by an event of its parent.
"""
import os
import re
import subprocess

from shimcommon import _asan_runtime, sanitized, shim_path
from toolscommon import check_json_event, json_lines, sh, tdump, tool


def shim_usable():
    p = shim_path()
    if not os.path.exists(p):
        return "the shim is not built (%s)" % p
    try:
        dyn = subprocess.run(["readelf", "-d", p], stdout=subprocess.PIPE, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    if b"libasan" in dyn or b"libubsan" in dyn:
        return "the shim is built with sanitizers"
    return None


ENV = {"POSIXTRACE_PRELOAD": shim_path()}
# Debian's python3 (the one on PATH may be a wrapper script, e.g. pyenv's)
PY = "/usr/bin/python3"


def trun(*args, rc=0, **kw):
    return sh([tool("posixtrace-run")] + list(args), rc=rc, env=ENV, **kw)


def trace_log(log, *argv, run=None):
    """posixtrace-run -o LOG argv (through `run`, default trun); LOG read back
    as JSON, whole (as many events as posixtrace-run wrote, none lost, each
    well formed). Returns (events, the posixtrace-run result)."""
    p = (run or trun)("-o", str(log), *argv)
    m = re.search(r"^posixtrace-run: (\d+) events in .*, 0 lost$", p.err, re.M)
    assert m, p.err
    js = json_lines(tdump("-f", "json", str(log)).out)
    assert len(js) == int(m.group(1))
    for e in js:
        check_json_event(e)
    return js, p


def run_env():
    """posixtrace-run's environment naming the shim; in a sanitizer build, ASan's
    runtime preloaded first (for programs built without it), leak checks off."""
    env = {"POSIXTRACE_PRELOAD": shim_path()}
    if sanitized():
        env["LD_PRELOAD"] = _asan_runtime()
        env["ASAN_OPTIONS"] = (os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"
                               ":detect_leaks=0:strict_string_checks=0").lstrip(":")
    return env


def trun_any(*args):
    """posixtrace-run args, with the shim, for any program (run_env())."""
    return sh([tool("posixtrace-run")] + list(args), env=run_env())


def traced(tmp_path, *argv):
    """Runs argv under posixtrace-run -o LOG; the log read back as JSON, whole
    (status 0, as many events as posixtrace-run wrote, none lost), without
    the address map's module events; and the program's output."""
    js, p = trace_log(tmp_path / "t.ptl", *argv, run=trun_any)
    return [e for e in js if e["event"] != "posixtrace:module"], p.out


CREATORS = ("posixtrace:fork", "posixtrace:vfork")


def check_tree(evs):
    """The structure of a traced tree (tests/tools/test_real_trees.py): every
    process but the first created by an event of its parent that names it
    (fork or vfork returning its pid, posix_spawn's child), whose pid its
    process_start gives as ppid; every event's thread one of its own process;
    every exec followed by the new image's process_start under the same pid.
    Returns {pid: [exe...]} of the processes that started an image."""
    pids = {e["pid"] for e in evs}
    starts = {}
    for e in evs:
        if e["event"] == "posixtrace:process_start":
            starts.setdefault(e["pid"], []).append(e)
    created = {}
    for e in evs:
        if e["event"] in CREATORS and e.get("ret") not in (None, 0, -1):
            created[e["ret"]] = e
        elif e["event"] == "posixtrace:posix_spawn" and e.get("ret") == 0:
            created[e["args"]["child"]] = e
    root = evs[0]["pid"]
    assert root in starts, evs[0]
    for pid in sorted(pids - {root}):
        assert pid in created, "process %d (%s): no fork/vfork/posix_spawn names it" % (
            pid, [s["args"]["exe"] for s in starts.get(pid, [])])
        if pid in starts:
            assert starts[pid][0]["args"]["ppid"] == created[pid]["pid"], (pid, created[pid])
    for e in evs:
        # the thread of a process, never another traced process (a vfork child)
        assert e["tid"] is None or e["tid"] == e["pid"] or e["tid"] not in pids, e
        if e["event"] == "posixtrace:exec":
            later = [s for s in starts.get(e["pid"], []) if s["ts_ns"] >= e["ts_ns"]]
            assert later, "exec without the new image's process_start: %s" % e
    return {pid: [s["args"]["exe"] for s in ss] for pid, ss in starts.items()}
