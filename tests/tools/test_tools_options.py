"""posixtrace-run and posixtrace-dump options that no other test exercised, each
output checked exactly (what tools/README.md, doc/tools.md and --help promise):
run --time, --max-data, -n, -s/--strsize, -k/--stack, -a, live --format chrome,
--policy; dump -o, -C, --time, -a, -s, --strsize; the printed decoding of open
flags, lseek whence, signals, wait statuses and socket addresses.  Programs:
tests/tools/t200_tools_target.c (records user events itself: --no-preload) and
python3 -c (under the shim).  Pages: posix_trace_attr_getmaxdatasize.3p.txt
(--max-data: "truncated"), posix_trace_attr_getname.3p.txt (-n),
posix_trace_attr_getstreamfullpolicy.3p.txt (--policy).
"""
import json
import os
import re
import shutil
import time

import pytest

from toolscommon import events, le32, target, tdump, trun
from shimrun import shim_usable

PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else shutil.which("python3")
# os.write's call in python3 symbolized: _Py_write (or _Py_write_impl with debug
# information: "(fileutils.c:N)"), in the executable or libpython
PYWRITE = r"_Py_write(?:_impl)?(?: \(fileutils\.c:\d+\))? in (?:lib)?python3[.\d]*(?:\.so[.\d]*)?"
TICK0 = "tools/tick(%s)" % le32(0)
TEXT = 'tools/text("hello, trace")'


def user1(*opts, rc=0):
    """t200 'user 1' traced live with opts (no shim): its stderr's lines."""
    p = trun("--no-preload", *opts, target(), "user", "1", rc=rc)
    assert p.out == "done 1\n"
    return p.err.splitlines()


@pytest.mark.parametrize("fmt", ["rel", "abs", "epoch", "none"])
def test_run_time_column(fmt):
    """--time=rel|abs|epoch|none: the time column of each event line is seconds
    since the first event (6 decimals), the time of day (HH:MM:SS.uuuuuu), the
    epoch (9 decimals: within the run), or absent."""
    t0 = time.time()
    ls = user1("--time=" + fmt)
    t1 = time.time()
    col = {"rel": r"(\d+\.\d{6}) ", "abs": r"(\d\d:\d\d:\d\d\.\d{6}) ",
           "epoch": r"(\d+\.\d{9}) ", "none": r"()"}[fmt]
    ms = [re.match(r"^%s(\d+) (.*)$" % col, l) for l in ls[:2]]
    assert all(ms), ls
    assert [m.group(3) for m in ms] == [TICK0, TEXT], ls
    assert ms[0].group(2) == ms[1].group(2)
    assert re.match(r"^posixtrace-run: 4 events, 2 shown, 0 lost$", ls[2]) and len(ls) == 3, ls
    if fmt == "epoch":
        assert t0 <= float(ms[0].group(1)) <= float(ms[1].group(1)) <= t1, (t0, ls, t1)
    if fmt == "rel":
        assert float(ms[0].group(1)) <= float(ms[1].group(1))


def test_run_max_data():
    """--max-data 4: user event data beyond 4 bytes is cut and marked [truncated]
    (posix_trace_attr_getmaxdatasize.3p.txt); the 4-byte tick is whole."""
    ls = user1("--max-data", "4", "--time=none")
    assert [l.split(" ", 1)[1] for l in ls[:2]] == [TICK0, 'tools/text("hell") [truncated]'], ls


def test_run_name(tmp_path):
    """-n NAME: the trace name, read back from the log by posixtrace-dump -i."""
    log = tmp_path / "n.ptl"
    trun("--no-preload", "-q", "-n", "myname", "-o", str(log), target(), "user", "1")
    assert tdump("-i", str(log)).out.splitlines()[1] == "name: myname"


@pytest.mark.parametrize("policy", ["loop", "until-full"])
def test_run_policy(policy):
    """--policy loop|until-full (live): the stream takes it; with room enough,
    every event is shown and nothing lost."""
    ls = user1("--policy", policy, "--time=none")
    assert [l.split(" ", 1)[1] for l in ls[:2]] == [TICK0, TEXT], ls
    assert ls[2] == "posixtrace-run: 4 events, 2 shown, 0 lost", ls


def test_run_policy_flush_to_log(tmp_path):
    """--policy flush -o FILE: every event reaches the log (dumped: START, the
    tick, the text, STOP, and the flush marks)."""
    log = tmp_path / "f.ptl"
    trun("--no-preload", "-q", "--policy", "flush", "-o", str(log), target(), "user", "1")
    names = [e[0] for e in events(tdump("--time=rel", str(log)).out)]
    assert names[:4] == ["posix_trace_start", "tools/tick", "tools/text", "posix_trace_stop"], names


def test_run_chrome_live():
    """-f chrome live: one Chrome Trace Event document on stderr: one instant
    event per user event with its data in hex, then the process and thread
    name records."""
    p = trun("--no-preload", "-q", "-f", "chrome", target(), "user", "1")
    doc = json.loads(p.err)
    evs = doc["traceEvents"]
    pid = evs[0]["pid"]
    tid = evs[0]["tid"]
    assert evs[2:] == [{"name": "process_name", "ph": "M", "pid": pid, "tid": pid,
                        "args": {"name": "pid %d" % pid}},
                       {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                        "args": {"name": "thread %d" % tid}}], evs
    assert [(e["name"], e["cat"], e["ph"], e["pid"], e["args"]) for e in evs[:2]] == [
        ("tools/tick", "user", "i", pid, {"data": "00000000"}),
        ("tools/text", "user", "i", pid, {"data": b"hello, trace".hex()})], evs


# ---------------------------------------------------------------- under the shim

SCRIPT = r'''
import os, signal, socket
fd = os.open(os.environ["F"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o640)
os.write(fd, b"0123456789abcdefghijklmnopqrstuvwxyz")
os.lseek(fd, 5, os.SEEK_SET)
os.lseek(fd, -2, os.SEEK_END)
os.close(fd)
pid = os.fork()
if pid == 0:
    os._exit(7)
os.waitpid(pid, 0)
pid = os.fork()
if pid == 0:
    signal.pause()
    os._exit(0)
os.kill(pid, signal.SIGTERM)
os.waitpid(pid, 0)
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
try:
    s.connect(("127.0.0.1", 9))
except OSError:
    pass
'''


def shim_lines(tmp_path, *opts):
    f = tmp_path / "f"
    p = trun("--time=none", "-e", "open,write,lseek,wait,kill,connect", *opts, PY, "-c", SCRIPT,
             env={"F": str(f)})
    # without "pid/tid "; only the lines of the script's own calls
    ls = [l.split(" ", 1)[1] for l in p.err.splitlines() if re.match(r"^\d+/\d+ ", l)]
    start = [i for i, l in enumerate(ls) if str(f) in l]
    assert start, p.err
    return ls[start[0]:], f


@pytest.mark.skipif(shim_usable() is not None, reason=str(shim_usable()))
def test_decoding_flags_whence_signals_wait_sockaddr(tmp_path):
    """The text output decodes open flags and mode, lseek's whence, a signal,
    wait statuses (exit code, killing signal) and an AF_INET address, with the
    call's result and errno name; open and waitpid are shown as the functions
    called (open has no dirfd; O_LARGEFILE, 0 on 64-bit, never shows: issue
    14, tests/tools/test_decode_xlat.py).  -s 8: buffers cut to 8 bytes."""
    ls, f = shim_lines(tmp_path, "-s", "8")
    got = [re.sub(r" <\d+\.\d{6}>$", "", re.sub(r"pid=\d+", "pid=P", re.sub(r"= \d{3,}", "= P", l)))
           for l in ls]
    assert got == [
        'posixtrace:open(flags=O_WRONLY|O_CREAT|O_TRUNC|O_APPEND|O_CLOEXEC, mode=0640, '
        'path="%s") = 3' % f,
        'posixtrace:write(fd=3, count=36, buf="01234567"...) = 36',
        'posixtrace:lseek(fd=3, offset=5, whence=SEEK_SET) = 5',
        'posixtrace:lseek(fd=3, offset=-2, whence=SEEK_END) = 34',
        'posixtrace:waitpid(pid=P, options=0, status=exit(7)) = P',
        'posixtrace:kill(pid=P, sig=SIGTERM) = 0',
        'posixtrace:waitpid(pid=P, options=0, status=SIGTERM) = P',
        'posixtrace:connect(fd=3, addr=AF_INET 127.0.0.1:9) = -1 ECONNREFUSED '
        '(Connection refused)'], "\n".join(got)


WRITE_HI = 'import os; os.write(1, b"hi\\n")'


@pytest.mark.skipif(shim_usable() is not None, reason=str(shim_usable()))
def test_run_stack_and_addr(tmp_path):
    """-k 3: each call is followed by a posixtrace:stack event of 3 frames whose
    frame 0 is the call's own program address; -a: the address shown symbolized
    (os.write in python3 is _Py_write).  The same log through posixtrace-dump: -a
    shows the raw address of every event, -s symbolizes it and the frames."""
    p = trun("-q", "-f", "json", "-e", "write,stack", "-k", "3", PY, "-c", WRITE_HI)
    assert p.out == "hi\n"
    evs = [json.loads(l) for l in p.err.splitlines()]
    assert [e["event"] for e in evs] == ["posixtrace:write", "posixtrace:stack"], p.err
    frames = evs[1]["args"]["frames"]
    assert len(frames) == 3 and frames[0] == evs[0]["addr"], evs
    p = trun("-q", "--time=none", "-a", "-e", "write", PY, "-c", WRITE_HI)
    assert re.match(r'^\d+/\d+ posixtrace:write\(fd=1, count=3, buf="hi\\n"\) = 3 <\d+\.\d{6}> '
                    r'@' + PYWRITE + '$', p.err), p.err
    log = tmp_path / "k.ptl"
    trun("-q", "-e", "write,stack", "-k", "3", "-o", str(log), PY, "-c", WRITE_HI)
    js = [json.loads(l) for l in tdump("-f", "json", str(log)).out.splitlines()]
    w = [e for e in js if e["event"] == "posixtrace:write" and e["args"]["fd"] == 1]
    assert len(w) == 1, js
    a = [l for l in tdump("--time=none", "-a", str(log)).out.splitlines() if "write(fd=1" in l]
    assert len(a) == 1 and a[0].endswith(" @" + w[0]["addr"]), a
    s = tdump("--time=none", "-s", str(log)).out.splitlines()
    i = [k for k, l in enumerate(s) if "write(fd=1" in l]
    assert len(i) == 1 and re.search(" @" + PYWRITE + "$", s[i[0]]), s
    assert re.match(r"^\d+/\d+ posixtrace:stack\(frames=\[" + PYWRITE +
                    r", [^,]+, [^,]+\]\) = 0", s[i[0] + 1]), s[i[0] + 1]


@pytest.fixture
def user_log(tmp_path):
    """A log of t200 'user 3': START, ticks 0..2, the text, STOP, flush marks."""
    log = tmp_path / "u.ptl"
    trun("--no-preload", "-q", "-o", str(log), target(), "user", "3")
    return log


def test_dump_output_file(tmp_path, user_log):
    """-o FILE: the same bytes as on stdout, nothing on stdout."""
    out = tmp_path / "out.txt"
    p = tdump("-o", str(out), str(user_log))
    assert p.out == "" and p.err == ""
    assert out.read_text() == tdump(str(user_log)).out


def test_dump_summary_with_events(user_log):
    """-C: the events, then the table (rows by count, then name; user events
    without time)."""
    ls = tdump("-C", "--time=none", str(user_log)).out.splitlines()
    pid = ls[0].split()[0]
    names = ["posix_trace_start()", TICK0, "tools/tick(%s)" % le32(1),
             "tools/tick(%s)" % le32(2), TEXT, "posix_trace_stop(auto=0)",
             "posix_trace_flush_start()", "posix_trace_flush_stop()"]
    assert ls[:8] == ["%s %s" % (pid, n) for n in names], ls
    assert ls[8:] == [
        "% time     seconds  usecs/call     calls    errors event",
        "------ ----------- ----------- --------- --------- ----------------",
        "  0.00    0.000000           0         3           tools/tick",
        "  0.00    0.000000           0         1           posix_trace_flush_start",
        "  0.00    0.000000           0         1           posix_trace_flush_stop",
        "  0.00    0.000000           0         1           posix_trace_start",
        "  0.00    0.000000           0         1           posix_trace_stop",
        "  0.00    0.000000           0         1           tools/text",
        "------ ----------- ----------- --------- --------- ----------------",
        "  0.00    0.000000                     8         0 total"], ls


def test_dump_time_and_strsize(user_log):
    """--time=none|epoch|abs|rel as posixtrace-run's; --strsize 5: the text's
    buffer cut to 5 bytes."""
    none = tdump("--time=none", str(user_log)).out.splitlines()
    rel = tdump(str(user_log)).out.splitlines()
    epoch = tdump("--time=epoch", str(user_log)).out.splitlines()
    ab = tdump("--time=abs", str(user_log)).out.splitlines()
    assert [l.split(" ", 1)[1] for l in rel] == none
    assert [l.split(" ", 1)[1] for l in epoch] == none
    assert [l.split(" ", 1)[1] for l in ab] == none
    assert rel[0].startswith("0.000000 ")
    assert all(re.match(r"^\d+\.\d{9} ", l) for l in epoch), epoch
    assert all(re.match(r"^\d\d:\d\d:\d\d\.\d{6} ", l) for l in ab), ab
    t = tdump("--time=none", "--strsize", "5", str(user_log)).out.splitlines()
    assert [l.split(" ", 1)[1] for l in t if "tools/text" in l] == ['tools/text("hello"...)'], t


@pytest.mark.parametrize("args", [[], ["--time=epoch"], ["--time=abs"], ["-f", "json"],
                                  ["-f", "chrome"], ["-c"]])
def test_dump_extreme_timestamps(tmp_path, args):
    """A damaged or hostile trace can hold any timestamp (the harness of
    test_hostile_run.py found one that made the relative time overflow):
    events stamped at both ends of the int64 range, -1, 0 and 2023 are
    printed in every time and output format with no arithmetic overflow (the
    sanitizer build reports any), the relative times saturated, the JSON
    ts_ns exact."""
    import logfmt as L
    stamps = [-(1 << 63), -1, 0, 1700000000 * 10**9, (1 << 63) - 1]
    log = L.Log()
    log.names({257: "x/ev"})
    log.events(0, 100, 1, [L.ev(257, ts) for ts in stamps])
    log.status()
    p = tmp_path / "ext.ptl"
    p.write_bytes(log.to_bytes())
    d = tdump(*(args + [str(p)]))
    assert not re.search(r"runtime error:|Sanitizer", d.err), d.err
    if args == ["-f", "json"]:
        assert [json.loads(l)["ts_ns"] for l in d.out.splitlines()] == stamps, d.out
    elif args == ["--time=epoch"]:
        assert d.out.splitlines()[1:3] == ["-1.999999999 100 x/ev()", "0.000000000 100 x/ev()"]
    elif args == []:
        assert d.out.splitlines()[-1] == "9223372036.854775 100 x/ev()", d.out
