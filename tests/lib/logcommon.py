"""Helpers of the Trace Log tests (tests/log/test_log_*.py); no tests here.

t042_log_write writes a log by script, t048_log_dump reads it back with
posix_trace_open() and prints it (see the comments at the top of each program).
Pages: /work/shared/spec/posix_trace_create.3p.txt, posix_trace_close.3p.txt
(open/rewind/close), posix_trace_getnext_event.3p.txt; choices: doc/semantics.md
("Trace Log option"), doc/log-format.md.
"""
import os
import re
import signal
import subprocess
import tempfile
import threading

from harness import program, run, kv, lines


def scratch_dir(tmp_path):
    """A directory for big logs: /dev/shm (tmpfs) when there is one, else tmp_path."""
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        d = tempfile.mkdtemp(prefix="ptlog-", dir="/dev/shm")
        return d
    return str(tmp_path)


class Writer:
    """The output of t042_log_write: pid, main_tid, create rc, and the step lines."""

    def __init__(self, out):
        self.out = out
        self.lines = lines(out)
        head = kv(self.lines[0])
        self.pid = head["pid"]
        self.main_tid = head["main_tid"]
        self.create = kv(self.lines[1]).get("rc")
        self.steps = self.lines[2:]

    def of(self, word):
        """The step lines starting with word, as kv dicts."""
        return [kv(l) for l in self.steps if l.split()[0] == word]

    def statuses(self):
        return self.of("status")

    def size(self):
        s = self.of("size")
        return int(s[-1]["bytes"])


def write_log(path, *args, timeout=60, rc=0):
    w = Writer(run("t042_log_write", path, *args, timeout=timeout, rc=rc))
    return w


class Dump:
    """The output of t048_log_dump."""

    def __init__(self, out):
        self.out = out
        ls = lines(out)
        o = kv(ls.pop(0))
        self.open = o["rc"]
        self.open_ms = int(o.get("ms", 0))
        self.events = []
        self.rest = []
        if self.open != "0":
            self.rest = ls
            return
        self.attr = kv(ls.pop(0))
        self.attr2 = kv(ls.pop(0))
        self.status = kv(ls.pop(0))
        self.status_again = kv(ls.pop(0))
        t = ls.pop(0)
        assert t.startswith("types"), t
        self.types = {}
        for item in t.split()[1:]:
            i, n = item.split(":", 1)
            self.types[int(i)] = n
        self.flush_marks = None
        while ls:
            l = ls.pop(0)
            if l.startswith("end "):
                self.end = {k: int(v) for k, v in kv(l).items()}
                break
            m = re.match(r"user seq=(\d+)\.\.(\d+) n=(\d+) pid=(\d+) tid=(\d+) "
                         r"first_ts=(-?\d+) last_ts=(-?\d+)$", l)
            if m:
                self.events.append({"kind": "user", "first": int(m.group(1)),
                                    "last": int(m.group(2)), "n": int(m.group(3)),
                                    "pid": m.group(4), "tid": m.group(5),
                                    "first_ts": int(m.group(6)), "last_ts": int(m.group(7))})
                continue
            if l.startswith("flush marks"):
                self.flush_marks = {k: int(v) for k, v in kv(l).items()}
                continue
            assert l.startswith("event "), l
            d = kv(l)
            d["kind"] = "event"
            d["line"] = l
            d["ts"] = int(d["ts"])
            self.events.append(d)
        self.rest = ls

    def line(self, prefix):
        for l in self.rest:
            if l.startswith(prefix):
                return l
        raise AssertionError("no line %r in:\n%s" % (prefix, "\n".join(self.rest)))

    def user_runs(self):
        return [e for e in self.events if e["kind"] == "user"]

    def system(self):
        """The events other than user runs, as (id, name-or-data) tuples."""
        return [e for e in self.events if e["kind"] == "event"]

    def shape(self, skip_flush=False):
        """A compact description of the events: 'run' for a user run, else
        'NAME' (+ ':auto=..' for STOP, ':lost=..' for OVERFLOW)."""
        out = []
        for e in self.events:
            if e["kind"] == "user":
                out.append("run")
                continue
            i = int(e["id"])
            if skip_flush and i in (5, 6):
                continue
            s = {0: "START", 1: "STOP", 2: "FILTER", 3: "OVERFLOW", 4: "RESUME",
                 5: "FLUSH_START", 6: "FLUSH_STOP", 7: "ERROR"}.get(i, "id%d" % i)
            if i == 1:
                s += ":auto=" + e.get("auto", "?")
            out.append(s)
        return out


def dump(path, *opts, timeout=60):
    return Dump(run("t048_log_dump", path, *opts, timeout=timeout))


def check_seq_data_exact(d):
    """The dumper prints a 'seq' event individually only when it is not intact
    (wrong length, truncated, or data not (s, s*K)): there must be none."""
    bad = [e["line"] for e in d.system() if int(e["id"]) >= 256]
    assert not bad, bad[:5]


def killed_writer(path, flushes, *args):
    """Runs t042_log_write (looping: events, posix_trace_flush, pause) and SIGKILLs it
    once it says its flush number `flushes` has returned ("flushed n=F")."""
    p = subprocess.Popen([program("t042_log_write"), path] + list(args),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    want = "flushed n=%d\n" % flushes
    got = []
    timer = threading.Timer(60, p.kill)  # bounds the readline()s below
    timer.start()
    try:
        first = p.stdout.readline().decode()
        assert first.startswith("pid="), first
        while True:
            l = p.stdout.readline().decode()
            got.append(l)
            if l == want or not l or l.startswith("flush rc="):
                break
        assert l == want, "".join(got)
        assert p.poll() is None, "the writer ended by itself"
        p.send_signal(signal.SIGKILL)
        p.communicate(timeout=30)
    finally:
        timer.cancel()
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == -signal.SIGKILL
    return kv(first)
