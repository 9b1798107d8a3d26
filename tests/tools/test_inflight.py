"""Calls still in progress when the trace ends (issue 18): posixtrace-run shows
them as strace does, `posixtrace:read(fd=0, count=131072, <unfinished ...>)`,
at the end of --duration, at an interrupt, at a -p detach, and with -o in the
log (event posixtrace:call_unfinished), which posixtrace-dump shows the same
way in every format; threads blocked in accept and waitpid beside one in
read; calls that return are never shown unfinished.

Programs: cat, sh (dash), t204_inflight (threads), under the shim (skipped
without it). doc/tools.md "Calls unfinished at the end", doc/json-schema.md.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from harness import program
from shimcommon import shim_path
from shimrun import ENV, shim_usable, trun
from toolscommon import TIMEOUT, Lines, check_chrome, json_lines, tdump, tool

pytestmark = pytest.mark.skipif(shim_usable() is not None, reason=str(shim_usable()))

CAT = shutil.which("cat")
REALCAT = os.path.realpath(CAT)
UNF = re.compile(r"^\d+\.\d+ (\d+)/(\d+) posixtrace:(\w+)\((.*)<unfinished \.\.\.>\)$", re.M)


def unfinished(text):
    """(pid, tid, call, args before the mark) of each unfinished line."""
    return [(int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)) for m in UNF.finditer(text)]


def run_env():
    env = dict(os.environ)
    env.update(ENV)
    return env


def piped_cat(*opts):
    """`sleep 3 | posixtrace-run OPTS --duration 1 cat`: cat blocked in read
    when the trace ends (the pipe's writer is still there)."""
    cmd = "sleep 3 | %s %s --duration 1 %s" % (tool("posixtrace-run"), " ".join(opts), CAT)
    p = subprocess.run(["sh", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       stdin=subprocess.DEVNULL, env=run_env(), timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    return p.stderr.decode()


def cat_pid(text):
    m = re.search(r' posixtrace:process_start\(pid=(\d+), ppid=\d+, exe="%s"' % re.escape(
        os.path.realpath(CAT)), text)
    assert m, text
    return int(m.group(1))


def test_read_unfinished_at_duration():
    """The issue's example: cat blocked in read(0) when --duration ends is shown
    as the call, unfinished: exact event name, descriptor, count, cat's pid and
    thread, at the time the read started (before the end line)."""
    err = piped_cat()
    pid = cat_pid(err)
    u = unfinished(err)
    assert len(u) == 1, err
    assert u[0][:3] == (pid, pid, "read"), err
    assert re.match(r"fd=0, count=\d+, $", u[0][3]), err
    line = [l for l in err.splitlines() if "<unfinished" in l][0]
    start = float(line.split()[0])
    assert start < 0.9, line  # when the read began, not when the trace ended


def test_read_unfinished_json_chrome():
    """JSON Lines: the call's event with "unfinished": true, "returned": false,
    ret null, its fixed arguments; Chrome: an open-ended slice ("ph":"B")."""
    js = json_lines(piped_cat("-j", "json"))
    u = [e for e in js if e.get("unfinished")]
    assert len(u) == 1, js
    e = u[0]
    assert e["event"] == "posixtrace:read" and e["id"] == 18 and e["kind"] == "call", e
    assert e["args"]["fd"] == 0 and e["args"]["count"] > 0, e
    assert e["returned"] is False and e["ret"] is None and e["duration_ns"] is None, e
    assert e["tid"] == e["pid"] and e["start_ns"] <= e["ts_ns"], e
    assert not any(x.get("unfinished") for x in js if x is not e)
    text = piped_cat("-j", "chrome")
    doc = json.loads(text[:text.rindex("]}") + 2])
    check_chrome(doc)
    b = [x for x in doc["traceEvents"] if x.get("ph") == "B"]
    assert len(b) == 1 and b[0]["name"] == "posixtrace:read", b
    assert b[0]["args"] == {"fd": 0, "count": b[0]["args"]["count"], "unfinished": True}, b


def test_read_unfinished_in_log(tmp_path):
    """-o: recorded into the log as posixtrace:call_unfinished; posixtrace-dump
    shows the same line, JSON and Chrome as the live output."""
    log = tmp_path / "t.ptl"
    piped_cat("-o", str(log))
    text = tdump(str(log)).out
    pid = cat_pid(text)
    u = unfinished(text)
    assert len(u) == 1 and u[0][:3] == (pid, pid, "read"), text
    assert "posixtrace:read" not in tdump("-c", str(log)).out  # not a call made
    js = [e for e in json_lines(tdump("-j", "json", str(log)).out) if e.get("unfinished")]
    assert len(js) == 1 and js[0]["event"] == "posixtrace:read" and js[0]["args"]["fd"] == 0, js
    doc = json.loads(tdump("-j", "chrome", str(log)).out)
    check_chrome(doc)
    assert [x["name"] for x in doc["traceEvents"] if x.get("ph") == "B"] == ["posixtrace:read"]


def test_filter_applies_to_the_call():
    """-e selects by the call's own event type: `-e read` shows the unfinished
    read (posixtrace:call_unfinished itself is not named), `-e 'file,!read'`
    does not."""
    u = unfinished(piped_cat("-e", "read"))
    assert [x[2] for x in u] == ["read"], u
    err = piped_cat("-e", "'file,!read'")
    assert unfinished(err) == [] and "unfinished" not in err, err


def test_returned_calls_never_unfinished(tmp_path):
    """A program whose calls all return: no unfinished line, live or in a log."""
    p = subprocess.run(["sh", "-c", "echo hi | %s %s" % (tool("posixtrace-run"), CAT)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=run_env(),
                       timeout=TIMEOUT)
    assert p.returncode == 0 and "posixtrace:read(fd=0" in p.stderr.decode(), p.stderr
    assert "unfinished" not in p.stderr.decode()
    log = tmp_path / "t.ptl"
    trun("-o", str(log), CAT, "/dev/null")
    assert "unfinished" not in tdump(str(log)).out
    assert "call_unfinished" not in tdump("-c", str(log)).out


def test_threads_blocked_in_accept_wait_read():
    """Three threads blocked at --duration's end: accept on the listening
    socket, waitpid on the sleeping child, read(0); each on its own thread,
    with its arguments. The calls that returned before (the read of "go", a
    fourth thread's close, which then waits in pause(), which the shim does
    not record) are ordinary calls, not unfinished."""
    r = subprocess.Popen([tool("posixtrace-run"), "--duration", "1.5", program("t204_inflight"),
                          "4"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=run_env())
    try:
        r.stdin.write(b"go\n")
        r.stdin.flush()
        out = Lines(r.stdout)
        lfd = int(out.line().split()[1])
        child = int(out.line().split()[1])
        assert out.line() == "ready"
        r.wait(timeout=TIMEOUT)  # the program ends at its alarm; its stdin stays open
        err = r.stderr.read()
    finally:
        r.stdin.close()
        if r.poll() is None:
            r.kill()
            r.wait()
    err = err.decode()
    u = {x[2]: x for x in unfinished(err)}
    assert sorted(u) == ["accept", "read", "wait"], err
    assert re.match(r"fd=%d, flags=0, $" % lfd, u["accept"][3]), err
    assert re.match(r"pid=%d, options=0, $" % child, u["wait"][3]), err
    assert re.match(r"fd=0, count=64, $", u["read"][3]), err
    pid = u["read"][0]
    assert u["accept"][0] == u["wait"][0] == pid and u["read"][1] == pid, err
    assert len({x[1] for x in u.values()}) == 3, err  # three threads
    assert re.search(r' posixtrace:read\(fd=0, count=64, buf="go\\n"\) = 3 <', err), err
    assert re.search(r' posixtrace:close\(fd=-1\) = -1 EBADF ', err), err


def interrupted(argv, signals):
    """posixtrace-run ARGV (a cat reading a pipe kept open), SIGINT sent to
    its process group `signals` times once cat runs: (its exit status, its
    output up to EOF)."""
    r = subprocess.Popen([tool("posixtrace-run")] + argv, stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=run_env(),
                         start_new_session=True)
    try:
        err = Lines(r.stderr)
        got = err.until(lambda l: 'process_start(' in l and 'exe="%s"' % REALCAT in l)
        for _ in range(signals):
            time.sleep(0.3)  # cat is in read by now
            os.killpg(r.pid, signal.SIGINT)
        while True:
            l = err.line()
            if l is None:
                break
            got.append(l)
        return r.wait(timeout=TIMEOUT), "\n".join(got)
    finally:
        r.stdin.close()
        if r.poll() is None:
            r.kill()
            r.wait()


def test_interrupt_shows_blocked_read():
    """Ctrl-C (SIGINT to posixtrace-run's process group, twice: the first is
    the program's) while the program, which ignores SIGINT, blocks in read.
    (cat's error output is not posixtrace-run's: EOF once that is gone.)"""
    _, text = interrupted(["sh", "-c", "trap '' INT; exec %s 2>/dev/null" % CAT], 2)
    pid = cat_pid(text)
    u = unfinished(text)
    assert [x[:3] for x in u] == [(pid, pid, "read")], text


def test_killed_in_call_shows_it():
    """Ctrl-C of a program that does not ignore it (SIGINT to the group: cat
    dies inside its read): as strace, the read it died in is shown
    unfinished, then its end (posixtrace-run keeps the inboxes of the
    processes it traces mapped, posixtrace_stream_watch, so the cells
    outlive the process); once, not again at the end."""
    rc, text = interrupted([CAT], 1)
    assert rc == -signal.SIGINT, text
    pid = cat_pid(text)
    end = re.search(r"^\d+\.\d+ %d \+\+\+ killed by SIGINT \+\+\+$" % pid, text, re.M)
    assert end, text
    u = unfinished(text)
    assert [x[:3] for x in u] == [(pid, pid, "read")], text
    assert re.match(r"fd=0, count=\d+, $", u[0][3]), text
    assert text.index("<unfinished") < end.start(), text


def test_attach_detach_shows_blocked_read():
    """-p PID of a program started with the shim preloaded (cat), detached at
    --duration while cat blocks in read: the read is shown, on cat's pid."""
    env = dict(os.environ, LD_PRELOAD=shim_path())
    t = subprocess.Popen([CAT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=env)
    r = None
    try:
        r = subprocess.Popen([tool("posixtrace-run"), "-p", str(t.pid), "--duration", "2"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        err, tout = Lines(r.stderr), Lines(t.stdout)
        # cat's read that began before the attach is not the shim's to show
        # (nothing was wanted then); a line makes it return, write (recorded:
        # the stream attaches at that event) and read again, published
        for i in range(2):
            time.sleep(0.5)
            t.stdin.write(b"line %d\n" % i)
            t.stdin.flush()
            assert tout.line() == "line %d" % i
        got = []
        while True:
            l = err.line()
            if l is None:
                break
            got.append(l)
        assert r.wait(timeout=TIMEOUT) == 0
        assert t.poll() is None, "cat died"
    finally:
        t.stdin.close()
        t.wait(timeout=TIMEOUT)
        if r is not None and r.poll() is None:
            r.kill()
            r.wait()
    text = "\n".join(got)
    u = unfinished(text)
    assert [x[:3] for x in u] == [(t.pid, t.pid, "read")], text
    assert u[0][3].startswith("fd=0, count="), text


def test_attached_program_exits_child_blocked():
    """-p PID of a shell that starts cat in the background and exits: the
    session ends with the shell, cat (forked after the attach, so traced) is
    still blocked in read, and its read is shown on cat's pid."""
    env = dict(os.environ, LD_PRELOAD=shim_path())
    inner = "sleep 1; %s <&3 2>/dev/null & sleep 1.5" % CAT
    t = subprocess.Popen(["sh", "-c", "exec sh -c '%s' 3<&0" % inner], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        p = subprocess.run([tool("posixtrace-run"), "-p", str(t.pid), "--duration", "20"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=TIMEOUT)
        assert t.wait(timeout=TIMEOUT) == 0
    finally:
        t.stdin.close()
        if t.poll() is None:
            t.kill()
            t.wait()
    err = p.stderr.decode()
    assert p.returncode == 0 and re.search(r"^[\d.]+ %d \+\+\+ exited with 0 \+\+\+$" % t.pid,
                                           err, re.M), err
    u = unfinished(err)
    assert len(u) == 1 and u[0][0] == u[0][1] != t.pid and u[0][2] == "read", err
    assert u[0][3].startswith("fd=0, count="), err


SYS_UNF = re.compile(r"^[\d.]+ (\d+)/(\d+) syscall:(\w+)\((.*)<unfinished \.\.\.>\)$", re.M)


def sys_unfinished(text):
    """(pid, tid, system call, args before the mark) of each unfinished
    system call line (a thread blocked with no call of the shim's)."""
    return [(int(m.group(1)), int(m.group(2)), m.group(3), m.group(4))
            for m in SYS_UNF.finditer(text)]


def test_attach_shows_read_begun_before():
    """-p PID of cat blocked in read since before the attach, detached at
    --duration with no call in between (nothing published, cat never
    recorded into the stream): the system call it is blocked in is shown
    from /proc/PID/task/TID/syscall (posixtrace_stream_blocked), with its
    fixed arguments (descriptor, count), on cat's pid."""
    env = dict(os.environ, LD_PRELOAD=shim_path())
    t = subprocess.Popen([CAT], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=env)
    try:
        time.sleep(0.5)
        p = subprocess.run([tool("posixtrace-run"), "-p", str(t.pid), "--duration", "1"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=TIMEOUT)
        assert t.poll() is None, "cat died"
    finally:
        t.stdin.close()
        t.wait(timeout=TIMEOUT)
    err = p.stderr.decode()
    assert p.returncode == 0, err
    got = sys_unfinished(err)
    assert [g[:3] for g in got] == [(t.pid, t.pid, "read")], err
    assert re.match(r"0, \d+, $", got[0][3]), err


def test_thread_in_libc_call_shown():
    """A thread blocked in a system call libc makes itself (python's
    time.sleep: clock_nanosleep, no wrapper of the shim's) beside the main
    thread's read: both are shown at --duration, the read as the shim's
    call, the sleep as the system call (clock, flags, request)."""
    code = ("import threading, sys, time\n"
            "t = threading.Thread(target=lambda: time.sleep(30), daemon=True)\n"
            "t.start(); sys.stdin.read()\n")
    py = shutil.which("python3")
    cmd = "sleep 3 | %s --duration 1.5 %s -c '%s'" % (tool("posixtrace-run"), py, code)
    p = subprocess.run(["sh", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       stdin=subprocess.DEVNULL, env=run_env(), timeout=TIMEOUT)
    err = p.stderr.decode()
    assert p.returncode == 0, err
    u = unfinished(err)
    s = sys_unfinished(err)
    assert [x[2] for x in u] == ["read"] and u[0][0] == u[0][1], err
    assert [x[2] for x in s] == ["clock_nanosleep"], err
    assert s[0][0] == u[0][0] and s[0][1] != s[0][0], err  # the other thread of the same process
    assert re.match(r"1, 1, 0x[0-9a-f]+, $", s[0][3]), err  # CLOCK_MONOTONIC, TIMER_ABSTIME
