"""posixtrace-run and posixtrace-dump for strace users (issue 18): option
values checked up front with their ranges; -e names strace users type (openat,
wait4, clone) mapped to the events recording them, names nothing records an
error; -f follow, -j format, -Z/-z, -k without N, -t/-tt/-ttt/-r (when each
call started), -c counting a fork once; Chrome thread and process names, JSON
rel_ns; -o with a print option refused; a log cut before its name table; each
process's end ("+++ exited with 0 +++", "+++ killed by SIGKILL +++") in the
live output, the logs and every dump format.

Programs: cat, sh (dash), python3, under the shim (skipped without it).
Pages: posix_trace_attr_getstreamsize.3p.txt, posix_trace_attr_getmaxdatasize.3p.txt,
posix_trace_attr_getlogsize.3p.txt (the attributes' bounds: doc/tools.md).
"""
import json
import os
import re
import shutil
import time

import pytest

from harness import builddir, srcdir
from shimrun import shim_usable
from toolscommon import check_chrome, events, json_lines, sh, tdump, trun

pytestmark = pytest.mark.skipif(shim_usable() is not None, reason=str(shim_usable()))

PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else shutil.which("python3")
CAT = shutil.which("cat")
SRCDIR = srcdir()


# ------------------------------------------------------------ option values

@pytest.mark.parametrize("opts,msg", [
    (["--stream-size", "2G"], "--stream-size 2G: out of range: 1 byte to 1G (1073741824 bytes)"),
    (["--stream-size", "0"], "--stream-size 0: out of range: 1 byte to 1G (1073741824 bytes)"),
    (["--max-data", "100000"], "--max-data 100000: out of range: 0 bytes to 64K (65536 bytes)"),
    (["-s", "-1"], "--strsize -1: expected a whole number from 0 to 1024"),
    (["-s", "1025"], "--strsize 1025: expected a whole number from 0 to 1024"),
    (["--stack=65"], "--stack 65: expected a whole number from 0 to 64"),
    (["-p", "0"], "--pid 0: expected a whole number from 1 to 2147483647"),
    (["--log-policy", "loop", "--log-size", "32k"],
     "--log-size 32k: too small for log policy loop: at least 36K (36864 bytes) with --max-data "
     "256 (the default)"),
    (["--log-policy", "until-full", "--max-data", "64K", "--log-size", "2M"],
     "--log-size 2M: too small for log policy until-full: at least 2052K (2101248 bytes) with "
     "--max-data 64K"),
])
def test_run_option_ranges(tmp_path, opts, msg):
    """Every size and number is checked before anything is created: the
    message names the option, the value and the range; status 125 (the
    tools' usage error); no log file is left behind."""
    log = tmp_path / "t.ptl"
    p = trun("-o", str(log), *opts, CAT, "/dev/null", rc=125)
    assert msg in p.err, p.err
    assert "Invalid argument" not in p.err
    assert not log.exists()


def test_run_duration_checked_first(tmp_path):
    """--duration is checked before the program is looked up: a bad value
    is a usage error (125), not "no such program" (127)."""
    p = trun("--duration", "soon", str(tmp_path / "nonexistent"), rc=125)
    assert "--duration: a positive number of seconds" in p.err
    p = trun("-tttt", CAT, "/dev/null", rc=125)
    assert "-t: at most -ttt" in p.err


def test_run_log_size_minimum_is_exact(tmp_path):
    """The least --log-size a loop log takes is what the message says: 36K
    works, one byte less does not (posixtrace_attr_getminlogsize)."""
    log = tmp_path / "t.ptl"
    trun("-q", "-o", str(log), "--log-policy", "loop", "--log-size", "36864", CAT, "/dev/null")
    assert log.stat().st_size > 0
    assert "posixtrace:open" in tdump(str(log)).out
    p = trun("-o", str(tmp_path / "u.ptl"), "--log-policy", "loop", "--log-size", "36863", CAT,
             "/dev/null", rc=125)
    assert "at least 36K (36864 bytes)" in p.err


def test_dump_option_ranges(tmp_path):
    """posixtrace-dump: --strsize, --pid checked (status 2, the range named)."""
    p = tdump("--strsize", "-1", "x.ptl", rc=2)
    assert "--strsize -1: expected a whole number from 0 to 2147483647" in p.err
    p = tdump("--pid", "0", "x.ptl", rc=2)
    assert "--pid 0: expected a whole number from 1 to 2147483647" in p.err


# ---------------------------------------------------------------------- -e

def shim_events(p):
    return [e for e in events(p.err) if e[0].startswith("posixtrace:")]


@pytest.mark.parametrize("name,note,want", [
    ("openat", "-e openat: traced as event 'open' (open, open64, openat, openat64, creat, creat64 ...)",
     "posixtrace:open"),
    ("wait4", "-e wait4: traced as event 'wait' (wait, waitpid, wait3, wait4)", "posixtrace:wait3"),
    ("execve", "-e execve: traced as event 'exec' (execve, execv, execvp, execvpe, execl, execlp ...)",
     "posixtrace:execve"),
    ("clone", "-e clone: traced as events 'fork', 'vfork', 'posix_spawn', 'pthread_create'",
     "posixtrace:vfork"),
])
def test_run_e_strace_names(name, note, want):
    """A C function or system call name maps to the events recording it, and
    says so on stderr; the events recorded are those events only."""
    p = trun("-q", "-e", name, "sh", "-c", "cat /dev/null; true")
    assert p.err.splitlines()[0] == "posixtrace-run: " + note
    names = {e[0] for e in shim_events(p)}
    assert want in names, p.err
    assert names <= {"posixtrace:" + n for n in
                     ("open", "wait", "wait3", "waitpid", "wait4", "execve", "fork", "vfork",
                      "posix_spawn", "pthread_create")}, names


def test_dump_e_strace_names(tmp_path):
    """posixtrace-dump -e openat over two logs: the open events of both, the
    note said once."""
    logs = [tmp_path / "a.ptl", tmp_path / "b.ptl"]
    for log in logs:
        trun("-q", "-o", str(log), CAT, "/dev/null")
    d = tdump("-e", "openat", *map(str, logs))
    assert d.err.count("-e openat: traced as event 'open'") == 1, d.err
    assert [e[0] for e in events(d.out)] == ["posixtrace:open"] * 2


@pytest.mark.parametrize("name,why", [
    ("nonsense", "-e nonsense: no such class, event, function or system call"),
    ("posixtrace:nope", "-e posixtrace:nope: no such class, event, function or system call"),
])
def test_e_unknown_names_are_errors(tmp_path, name, why):
    """A name no event records is an error listing the classes and the
    events, in posixtrace-run (status 125, the program not run) and
    posixtrace-dump (status 2)."""
    out = tmp_path / "ran"
    p = trun("-e", "open," + name, "sh", "-c", "echo > %s" % out, rc=125)
    assert why in p.err, p.err
    assert "classes: process, thread, file, net, trace, user, syscall, probe, all" in p.err
    assert re.search(r"events: process_start, module, stack, probe_def, fds, open, close, read,", p.err), p.err
    assert not out.exists()
    log = tmp_path / "t.ptl"
    trun("-q", "-o", str(log), CAT, "/dev/null")
    d = tdump("-e", name, str(log), rc=2)
    assert why in d.err


@pytest.mark.parametrize("name", ["stat", "newfstatat", "mmap"])
def test_e_system_call_names(name):
    """A system call no C library event records (-e newfstatat) selects its
    syscall: event; without --syscalls posixtrace-run says that only the
    system-call mode records it, and runs the program."""
    p = trun("-e", name, CAT, "/dev/null")
    assert ("-e %s: selects system calls, which are recorded with --syscalls only" % name) in p.err
    p = trun("-q", "--syscalls", "-e", name, "ls", "-l", "/")
    names = {e[0] for e in events(p.err)}
    assert names <= {"syscall:" + name}, names


def test_e_globs_negation_user_names():
    """Globs, '!' and user event names keep working: 'op*' is open and
    openat-free; 'file,!close' has no close; 'user:NAME' names a user event."""
    p = trun("-q", "-e", "op*", CAT, "/dev/null")
    assert {e[0] for e in shim_events(p)} == {"posixtrace:open"}
    p = trun("-q", "-e", "file,!close", CAT, "/dev/null")
    names = [e[0] for e in shim_events(p)]
    assert "posixtrace:open" in names and "posixtrace:close" not in names
    p = trun("-q", "-e", "user:my_event", CAT, "/dev/null")
    assert shim_events(p) == []


def test_e_strace_forms():
    """strace's "-e trace=SET" and its %file, %process, %network classes."""
    p = trun("-q", "-e", "trace=openat", "-e", "trace=!close", CAT, "/dev/null")
    assert {e[0] for e in shim_events(p)} == {"posixtrace:open"}, p.err
    p = trun("-q", "-e", "trace=%file,!close", CAT, "/dev/null")
    names = {e[0] for e in shim_events(p)}
    assert "posixtrace:open" in names and "posixtrace:close" not in names
    assert "posixtrace:process_start" not in names
    p = trun("-q", "-e", "%process", CAT, "/dev/null")
    assert "posixtrace:process_start" in {e[0] for e in shim_events(p)}
    p = trun("-e", "%memory", CAT, "/dev/null", rc=125)
    assert "-e memory: no such class" in p.err


def test_docs_quote_bang():
    """-e examples with '!' are quoted in README.md, the man pages and
    doc/tools.md (bash's history expansion breaks -e file,!close)."""
    for f in ("README.md", "tools/posixtrace-run.1", "tools/posixtrace-dump.1", "doc/tools.md"):
        text = open(os.path.join(SRCDIR, f)).read()
        bad = re.findall(r"-e\s+(?:\\fB)?[^'\"\s\\]*!\S*", text)
        assert bad == [], (f, bad)
        assert "!close" in text or f == "tools/posixtrace-dump.1", f


# -------------------------------------------------------------- strace habits

def test_f_is_follow_j_is_format():
    """-f is strace's follow (the default: children traced); -f FMT still
    names a format; -j FMT is the format option's letter."""
    p = trun("-q", "-f", "-e", "open", "sh", "-c", "cat /dev/null")
    assert [e[1] for e in shim_events(p)] == ['flags=O_RDONLY, path="/dev/null"']
    for opt in ("-f", "-j"):
        p = trun("-q", opt, "json", "-e", "open", CAT, "/dev/null")
        js = json_lines(p.err)
        assert [e["event"] for e in js if e["kind"] == "call"] == ["posixtrace:open"]
    p = trun("-f", "--no-follow", CAT, "/dev/null", rc=125)
    assert "-f and --no-follow: choose one" in p.err


def test_k_without_number():
    """-k with no number is 16 frames, and the program after it is the
    program (not N); -k 3 and --stack=3 still take N."""
    p = trun("-q", "-e", "open,stack", "-k", CAT, "/dev/null")
    ls = p.err.splitlines()
    i = next(i for i, l in enumerate(ls) if "posixtrace:open(" in l)
    assert "posixtrace:stack(frames=[0x" in ls[i + 1], ls
    for opts in (["-k", "3"], ["--stack=3"], ["-k3"]):
        p = trun("-q", "-e", "open,stack", *opts, CAT, "/dev/null")
        st = [l for l in p.err.splitlines() if "posixtrace:stack(" in l]
        assert st and all(len(re.findall(r"0x[0-9a-f]+", l.split("frames=")[1])) <= 3 for l in st)


def test_failed_and_successful_only(tmp_path):
    """-Z shows only the calls that failed, -z only those that did not, live
    and in posixtrace-dump; a process's end is shown either way."""
    out = tmp_path / "out"
    args = ["--print-to", str(out), "-e", "open,exit", CAT, "/dev/null", "/nonexistent"]

    class Printed:  # cat's message goes to stderr too: the events to a file
        def __init__(self, *opts):
            trun(*opts, rc=1)
            self.err = out.read_text()
    z = Printed("-q", "-Z", *args)
    opens = [e for e in shim_events(z) if e[0] == "posixtrace:open"]
    assert [e[1][:35] for e in opens] == ['flags=O_RDONLY, path="/nonexistent"']
    assert "= -1 ENOENT" in opens[0][1]
    assert "posixtrace:exit" in [e[0] for e in shim_events(z)]  # no outcome: shown
    assert re.search(r"^\d+\.\d{6} \d+ \+\+\+ exited with 1 \+\+\+$", z.err, re.M), z.err
    s = Printed("-q", "-z", *args)
    assert [e[1] for e in shim_events(s) if e[0] == "posixtrace:open"] == [
        'flags=O_RDONLY, path="/dev/null"']
    log = tmp_path / "t.ptl"
    trun("-q", "-o", str(log), *args[2:], rc=1)
    d = tdump("-Z", "-e", "open", str(log)).out
    assert [e[1][:35] for e in events(d)] == ['flags=O_RDONLY, path="/nonexistent"']
    d = tdump("-z", "-e", "open", str(log)).out
    assert [e[1] for e in events(d)] == ['flags=O_RDONLY, path="/dev/null"']
    trun("-Z", "-z", CAT, "/dev/null", rc=125)


FORK_ONCE = "import os\npid = os.fork()\nif pid == 0:\n    os._exit(0)\nos.waitpid(pid, 0)\n"


def test_summary_counts_fork_once():
    """-c: a fork is one call, though both processes record it."""
    p = trun("-q", "-c", "-e", "fork", PY, "-c", FORK_ONCE)
    rows = [l.split() for l in p.err.splitlines() if l.endswith("posixtrace:fork")]
    assert len(rows) == 1 and rows[0][3] == "1", p.err
    j = trun("-q", "-j", "json", "-e", "fork", PY, "-c", FORK_ONCE)
    forks = [e for e in json_lines(j.err) if e["event"] == "posixtrace:fork"]
    assert sorted(e["ret"] != 0 for e in forks) == [False, True]


def time_lines(p):
    return [l for l in p.err.splitlines() if "posixtrace:" in l]


def test_time_styles():
    """-t HH:MM:SS, -tt HH:MM:SS.uuuuuu, -ttt epoch seconds, -r the time since
    the previous line's call started (the first 0)."""
    t0 = time.time()
    col = {"-t": r"\d\d:\d\d:\d\d ", "-tt": r"\d\d:\d\d:\d\d\.\d{6} ", "-ttt": r"(\d+\.\d{9}) ",
           "-r": r"(\d+\.\d{6}) "}
    for opt, rx in col.items():
        ls = time_lines(trun("-q", opt, "-e", "open,close", CAT, "/dev/null"))
        assert len(ls) == 2 and all(re.match(rx + r"\d+/\d+ posixtrace:", l) for l in ls), (opt, ls)
        if opt == "-ttt":
            assert t0 <= float(re.match(rx, ls[0]).group(1)) <= time.time() + 1
        if opt == "-r":
            assert re.match(rx, ls[0]).group(1) == "0.000000"
    trun("-t", "-r", CAT, "/dev/null", rc=125)


def test_time_column_is_call_start(tmp_path):
    """The time column is when the call started: the event's time (its
    return) minus its duration, to the nanosecond (--time=epoch)."""
    log = tmp_path / "t.ptl"
    trun("-q", "-o", str(log), "-e", "open,read,close", CAT, "/dev/null")
    js = [e for e in json_lines(tdump("-j", "json", str(log)).out) if e["kind"] == "call"]
    text = [l for l in tdump("--time=epoch", "-e", "file", str(log)).out.splitlines()
            if "posixtrace:" in l]
    js = [e for e in js if e["event"] != "posixtrace:module"]
    assert len(js) == len(text) >= 3
    for e, l in zip(js, text):
        start = e["ts_ns"] - (e["duration_ns"] or 0)
        assert l.split()[0] == "%d.%09d" % (start // 10**9, start % 10**9), (e, l)
    delta = [l for l in tdump("-r", "-e", "file", str(log)).out.splitlines() if "posixtrace:" in l]
    starts = [e["ts_ns"] - (e["duration_ns"] or 0) for e in js]
    for i, l in enumerate(delta):
        d = 0 if i == 0 else starts[i] - starts[i - 1]
        assert l.split()[0] == "%s%d.%06d" % ("-" if d < 0 else "", abs(d) // 10**9,
                                                abs(d) % 10**9 // 1000), (i, l)


# ------------------------------------------------------------- output formats

THREADS = ("import threading\nt = threading.Thread(target=lambda: open('/dev/null').close())\n"
           "t.start(); t.join()\nopen('/dev/null').close()\n")


def test_chrome_names_threads_and_processes(tmp_path):
    """-j chrome: one process_name per pid (its program), one thread_name
    per thread; posixtrace-dump -C keeps stdout pure JSON (the table on
    stderr)."""
    out = tmp_path / "c.json"
    trun("-q", "-j", "chrome", "--print-to", str(out), "-e", "open,close,process_start", PY, "-c",
         THREADS)
    doc = json.loads(out.read_text())
    check_chrome(doc)
    meta = [e for e in doc["traceEvents"] if e["ph"] == "M"]
    procs = [e for e in meta if e["name"] == "process_name"]
    assert len(procs) == len({e["pid"] for e in procs}) == 1, procs
    assert re.match(r"python3[.\d]* \(%d\)$" % procs[0]["pid"], procs[0]["args"]["name"]), procs
    tids = {(e["pid"], e["tid"]) for e in doc["traceEvents"] if e["ph"] == "X"}
    named = {(e["pid"], e["tid"]) for e in meta if e["name"] == "thread_name"}
    assert len(tids) == 2 and tids <= named, (tids, named)
    log = tmp_path / "t.ptl"
    trun("-q", "-o", str(log), "-e", "open,close", PY, "-c", THREADS)
    d = tdump("-C", "-j", "chrome", str(log))
    check_chrome(json.loads(d.out))
    assert "% time" in d.err and "posixtrace:open" in d.err
    d = tdump("-C", "-j", "json", str(log))
    assert all(l.startswith("{") for l in d.out.splitlines()) and "% time" in d.err


def test_json_rel_ns_exact(tmp_path):
    """JSON Lines: rel_ns (integer ns since the first event, below 2^53) and
    ts (ts_ns as a string) let double-only consumers order events exactly."""
    log = tmp_path / "t.ptl"
    trun("-q", "-o", str(log), CAT, "/dev/null")
    js = json_lines(tdump("-j", "json", str(log)).out)
    t0 = js[0]["ts_ns"]
    for e in js:
        assert e["rel_ns"] == e["ts_ns"] - t0 and 0 <= e["rel_ns"] < 2 ** 53, e
        assert e["ts"] == str(e["ts_ns"]), e
        assert float(e["rel_ns"]) == e["rel_ns"]


def test_output_with_print_options_refused(tmp_path):
    """-o writes a log and prints nothing: -f/-j, --time, -t, -r, -Z, -z with
    it are refused (status 125, no file) rather than silently ignored."""
    log = tmp_path / "t.ptl"
    for opts in (["-j", "json"], ["-f", "chrome"], ["--time=abs"], ["-tt"], ["-r"], ["-Z"]):
        p = trun("-o", str(log), *opts, CAT, "/dev/null", rc=125)
        assert "with -o nothing is printed" in p.err and "posixtrace-dump" in p.err
        assert not log.exists()


def test_log_cut_before_names(tmp_path):
    """A log cut before its name table: the shim's events are named anyway
    (their ids are fixed)."""
    log, cut = tmp_path / "t.ptl", tmp_path / "cut.ptl"
    trun("-q", "-o", str(log), CAT, "/dev/null")
    data = log.read_bytes()
    cut.write_bytes(data[:12288])
    d = tdump(str(cut), rc=None)
    evs = events(d.out)
    assert evs and not any(e[0].startswith("?") for e in evs), d.out
    assert "posixtrace:process_start" in [e[0] for e in evs]


# ---------------------------------------------------------- a process's end

KILLED = 'sh -c "kill -KILL \\$\\$"; cat /dev/null; exit 3'


def ends(text):
    return re.findall(r"^\S+ (\d+) \+\+\+ (.*) \+\+\+$", text, re.M)


def test_process_end_live():
    """Live: each process's end as strace shows it; a child killed by a
    signal, from its traced parent's wait; the exit status from exit."""
    p = trun("-q", "sh", "-c", KILLED, rc=3)
    got = ends(p.err)
    waits = [e for e in events(p.err) if e[0] == "posixtrace:wait3" and "SIGKILL" in e[1]]
    assert len(waits) == 1, p.err
    killed = re.search(r"= (\d+) ", waits[0][2]).group(1)
    top = str(events(p.err)[0][3])
    assert len(got) == 3, p.err
    assert got[0] == (killed, "killed by SIGKILL") and got[1][1] == "exited with 0", p.err
    assert got[2] == (top, "exited with 3"), p.err


def test_process_end_reaped_by_run():
    """The program killed by a signal (no traced parent to wait for it):
    posixtrace-run records its end (posixtrace:process_end, from its own
    wait) whatever -e says, and the line tells it; an exit is told by its
    exit event, once."""
    p = trun("-q", "-e", "open", "sh", "-c", "kill -SEGV $$", rc=-11)
    got = ends(p.err)
    assert len(got) == 1 and got[0][1] == "killed by SIGSEGV", p.err
    p = trun("-q", "-e", "open,exit", CAT, "/dev/null")
    assert [g[1] for g in ends(p.err)] == ["exited with 0"], p.err
    p = trun("-q", "-e", "open", CAT, "/dev/null")
    assert ends(p.err) == [], p.err  # the exit event not recorded: told by nothing
    p = trun("-q", CAT, "/dev/null")
    assert [g[1] for g in ends(p.err)] == ["exited with 0"], p.err


def test_process_end_of_program_in_log(tmp_path):
    """-o: the program killed by a signal has its end in the log
    (posixtrace:process_end, recorded by posixtrace-run with
    posixtrace_stream_process_end()), even with -e open; every dump format
    shows it."""
    log = tmp_path / "t.ptl"
    trun("-q", "-o", str(log), "-e", "open", "sh", "-c", "kill -SEGV $$", rc=-11)
    d = tdump(str(log)).out
    evs = [e for e in events(d) if e[0] == "posixtrace:process_end"]
    assert len(evs) == 1, d
    pid = evs[0][3]
    assert evs[0][1] == "pid=%d, status=SIGSEGV" % pid and evs[0][2] == " = ?", evs
    assert ends(d) == [(str(pid), "killed by SIGSEGV")], d
    js = [e for e in json_lines(tdump("-j", "json", str(log)).out) if "process_end" in e]
    assert [(e["event"], e["tid"], e["process_end"]) for e in js] == [
        ("posixtrace:process_end", None, {"pid": pid, "exit_status": None, "signal": "SIGSEGV",
                                          "core_dumped": False, "text": "killed by SIGSEGV"})]
    doc = json.loads(tdump("-j", "chrome", str(log)).out)
    assert [e["name"] for e in doc["traceEvents"] if e["name"].startswith("+++")] == [
        "+++ killed by SIGSEGV +++"]


def test_process_end_in_logs(tmp_path):
    """posixtrace-dump: the same ends in text, JSON Lines (kind "end") and
    Chrome (an instant on the process)."""
    log = tmp_path / "t.ptl"
    trun("-q", "-o", str(log), "sh", "-c", KILLED, rc=3)
    text = [g[1] for g in ends(tdump(str(log)).out)]
    assert text == ["killed by SIGKILL", "exited with 0", "exited with 3"], text
    js = [e["process_end"] for e in json_lines(tdump("-j", "json", str(log)).out)
          if "process_end" in e]
    assert [(e["exit_status"], e["signal"], e["text"]) for e in js] == [
        (None, "SIGKILL", "killed by SIGKILL"), (0, None, "exited with 0"), (3, None, "exited with 3")]
    doc = json.loads(tdump("-j", "chrome", str(log)).out)
    check_chrome(doc)
    names = [e["name"] for e in doc["traceEvents"] if e["name"].startswith("+++")]
    assert names == ["+++ killed by SIGKILL +++", "+++ exited with 0 +++", "+++ exited with 3 +++"]
