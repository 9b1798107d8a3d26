"""posixtrace-run's live view keeps up (issue 18): a reader thread copies
events out of the stream into a private queue while the main thread formats
and writes them in large writes; the default live stream is sized from the
machine's memory (tools/run_attr.c, tools/live_queue.c, doc/tools.md "Live
view"). Real programs under the shim: dd bs=1 (two calls per byte), sh; a
pipe consumer that goes away (head); Ctrl-C in a terminal (tmux). Skipped
when the shim is not usable (shimrun.shim_usable: a sanitizer build).
"""
import collections
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from shimrun import ENV, shim_usable, trun
from toolscommon import json_lines, sh, tool

pytestmark = pytest.mark.skipif(shim_usable() is not None, reason=str(shim_usable()))

DD = ["dd", "bs=1", "count=200000", "if=/dev/zero", "of=/dev/null"]
READ = 'posixtrace:read(fd=0, count=1, buf="\\x00") = 1 <'
WRITE = 'posixtrace:write(fd=1, count=1, buf="\\x00") = 1 <'
SUMMARY = re.compile(r"^posixtrace-run: (\d+) events, (\d+) shown, (\d+) lost$", re.M)


def summary(err):
    m = SUMMARY.search(err)
    assert m, err[-2000:]
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def call_lines(text, pid):
    """The call events of pid's lines, in order ("posixtrace:NAME(...)...").
    A line may follow a piece of the program's own output on the same
    line: dd writes the newline of its last statistics line separately, and
    a block of trace lines can come between (whole lines always: the live
    view writes whole lines), so the event is searched anywhere in a line."""
    pat = re.compile(r"\d+\.\d{6} %d/%d (posixtrace:\w+\(.*)$" % (pid, pid), re.M)
    return [m.group(1) for m in pat.finditer(text)]


def dd_pid(text):
    m = re.search(r"^\S+ (\d+)/\d+ posixtrace:process_start\(pid=\d+, ppid=\d+, exe=\"\S*/dd\"",
                  text, re.M)
    assert m, text[:2000]
    return int(m.group(1))


def test_dd_complete_by_default():
    """The issue's run, as given (live view on stderr, default stream): every
    one of dd's 200000 one-byte reads and 200000 writes printed, in the
    order dd made them (read, write, read, write...), nothing lost, and
    dd's exit status and its own last words kept. Before: about 300000 of
    400000 events lost with the 4M stream."""
    p = trun("--", *DD, timeout=120)
    events, shown, lost = summary(p.err)
    assert lost == 0 and "events lost" not in p.err, p.err[-2000:]
    calls = call_lines(p.err, dd_pid(p.err))
    rw = [c for c in calls if c.startswith(("posixtrace:read(", "posixtrace:write("))]
    assert len(rw) == 400000, len(rw)
    assert all(c.startswith(READ) for c in rw[0::2]), [c for c in rw[0::2] if not c.startswith(READ)][:3]
    assert all(c.startswith(WRITE) for c in rw[1::2]), [c for c in rw[1::2] if not c.startswith(WRITE)][:3]
    assert "200000+0 records in\n200000+0 records out\n" in p.err
    assert events >= 400000 and shown >= 400000


def test_dd_exit_status_kept():
    """dd's failure (a missing input) is still posixtrace-run's exit status."""
    p = trun("--", "dd", "if=/nonexistent/x", "of=/dev/null", rc=1)
    assert "/nonexistent/x" in p.err and summary(p.err)[2] == 0


def test_json_complete_and_ordered(tmp_path):
    """The same run in JSON Lines to a file (--print-to): 200000 reads and
    200000 writes, each thread's timestamps non-decreasing, the reads and
    writes alternating, 0 lost."""
    out = tmp_path / "t.jsonl"
    p = trun("-j", "json", "--print-to", out, "--", *DD, timeout=120)
    assert summary(p.err)[2] == 0, p.err[-2000:]
    evs = json_lines(out.read_text())
    last = collections.defaultdict(int)
    for e in evs:
        assert e["ts_ns"] >= last[e["tid"]], e
        last[e["tid"]] = e["ts_ns"]
    rw = [e["event"] for e in evs if e["event"] in ("posixtrace:read", "posixtrace:write")
          and e["args"].get("count") == 1]
    assert rw == ["posixtrace:read", "posixtrace:write"] * 200000


def default_live_size():
    """doc/tools.md: MemTotal/1024, at most MemAvailable/16, in whole MiB,
    from 4M to 64M (as posixtrace-run reads /proc/meminfo)."""
    mem = dict(l.split(":", 1) for l in open("/proc/meminfo"))
    total = int(mem["MemTotal"].split()[0]) * 1024
    avail = int(mem["MemAvailable"].split()[0]) * 1024
    want = min(total // 1024, avail // 16) & ~((1 << 20) - 1)
    return max(4 << 20, min(64 << 20, want))


def stalled_run(*opts):
    """dd under posixtrace-run, the controller stopped (SIGSTOP) for 2 s
    while dd records: the stream fills, events are lost. Returns stderr."""
    p = subprocess.Popen([tool("posixtrace-run")] + list(opts) +
                         ["--", "dd", "bs=1", "count=3000000", "if=/dev/zero", "of=/dev/null",
                          "status=none"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(os.environ, **ENV))
    try:
        time.sleep(0.5)
        os.kill(p.pid, signal.SIGSTOP)
        time.sleep(2)
        os.kill(p.pid, signal.SIGCONT)
        err = p.communicate(timeout=120)[1].decode(errors="replace")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(timeout=30)
    assert p.returncode == 0, err[-2000:]
    return err


def test_default_stream_size_from_memory():
    """The live default stream size comes from the machine's memory
    (default_live_size); the loss message names it. --stream-size still
    overrides it. (A controller stopped for 2 s loses events whatever the
    size.)"""
    want = default_live_size()
    err = stalled_run()
    assert summary(err)[2] > 0, err[-2000:]
    assert "the stream (%dM, policy loop) filled faster than it was read" % (want >> 20) in err, \
        (want, err[-2000:])
    err = stalled_run("--stream-size", "5M")
    assert "the stream (5M, policy loop)" in err, err[-2000:]


def test_pipe_consumer_goes_away():
    """posixtrace-run ... 2>&1 | head -n 5: the five lines, then neither a
    hang nor a death by SIGPIPE: tracing ends (as --duration), dd runs to
    its end untraced and posixtrace-run exits with dd's status (0). Before:
    posixtrace-run was killed by SIGPIPE, its program left behind."""
    cmd = ("%s -- dd bs=1 count=2000000 if=/dev/zero of=/dev/null status=none 2>&1 | head -n 5;"
           " echo \"status ${PIPESTATUS[0]}\"" % tool("posixtrace-run"))
    p = sh(["bash", "-c", cmd], timeout=120, env=ENV)
    lines = p.out.splitlines()
    assert len(lines) == 6 and "posixtrace:" in lines[0], p.out
    assert lines[5] == "status 0", p.out
    # the form: dd's own last words then meet the closed pipe and dd
    # dies of SIGPIPE; posixtrace-run ends as its program did (141)
    p = sh(["bash", "-c", cmd.replace(" status=none", "")], timeout=120, env=ENV)
    lines = p.out.splitlines()
    assert len(lines) == 6 and lines[5] == "status 141", p.out


def tmux(sock, *args, timeout=30):
    return subprocess.run(["tmux", "-S", sock] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout, check=True).stdout.decode()


def screen(sock):
    return tmux(sock, "capture-pane", "-p", "-J", "-S", "-", "-t", "t")


def wait_screen(sock, pred, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = screen(sock)
        if pred(s):
            return s
        time.sleep(0.1)
    pytest.fail("screen never showed what was expected:\n" + screen(sock)[-3000:])


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_ctrl_c_in_a_terminal(tmp_path):
    """In a terminal (tmux): a shell loop printing "tick N" is traced; each
    of its writes shows on the screen while it runs (the live view flushes
    whenever it caught up, not only when its buffer is full); Ctrl-C ends
    it: the write of the last tick the program printed is on the screen,
    then "+++ killed by SIGINT +++", the summary line with 0 lost, and
    posixtrace-run's exit status 130 (as the program's)."""
    sock = str(tmp_path / "tmux.sock")  # a server of its own, its socket in tmp_path
    prog = "i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.2; done"
    cmd = "POSIXTRACE_PRELOAD=%s %s -- sh -c '%s'" % (ENV["POSIXTRACE_PRELOAD"],
                                                        tool("posixtrace-run"), prog)
    # an interactive shell, as a user's: Ctrl-C ends the command, not the shell
    # wide: a command line exactly as wide as the window would be joined (-J)
    # to the output after it (the line counts as wrapped), whatever the paths
    tmux(sock, "new-session", "-d", "-s", "t", "-x", "1000", "-y", "50",
         "env", "PS1=$ ", "bash", "--norc", "--noprofile", "-i")
    try:
        tmux(sock, "send-keys", "-t", "t", "-l", cmd)
        tmux(sock, "send-keys", "-t", "t", "Enter")
        wait_screen(sock, lambda s: 'buf="tick 3\\n"' in s)
        tmux(sock, "send-keys", "-t", "t", "C-c")
        wait_screen(sock, lambda s: SUMMARY.search(s))
        # bash drops the rest of a command line whose command died of SIGINT
        tmux(sock, "send-keys", "-t", "t", "-l", "echo EXIT=$?")
        tmux(sock, "send-keys", "-t", "t", "Enter")
        s = wait_screen(sock, lambda s: re.search(r"^EXIT=", s, re.M))
        ticks = [int(x) for x in re.findall(r"^tick (\d+)$", s, re.M)]
        assert ticks and ticks == list(range(1, len(ticks) + 1)), s[-3000:]
        assert 'buf="tick %d\\n"' % ticks[-1] in s, s[-3000:]
        assert re.search(r"^\S+ \d+ \+\+\+ killed by SIGINT \+\+\+$", s, re.M), s[-3000:]
        events, shown, lost = summary(s)
        assert lost == 0
        assert "EXIT=130" in s, s[-3000:]
    finally:
        subprocess.run(["tmux", "-S", sock, "kill-server"], timeout=30,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
