"""Helpers of the tests of posixtrace-run and posixtrace-dump (tests/tools/,
and the tests of other areas that run the tools); no tests here.

tool(name): tools/<name> of the build; target(): t200_tools_target, a program
that records user events itself; sh() runs a command with a bounded time and
checks its exit status; events()/json_lines() parse the text and JSON output;
check_json_event()/check_chrome() check the formats of doc/json-schema.md.
"""
import json
import os
import re
import select
import subprocess
import time

import pytest

from harness import builddir, program


TIMEOUT = 60


def tool(name):
    return os.path.join(builddir(), "tools", name)


def target():
    return program("t200_tools_target")


def sh(args, rc=0, timeout=TIMEOUT, env=None, **kw):
    """Runs args; asserts the exit status (None: any); returns the
    CompletedProcess with str stdout/stderr."""
    full = dict(os.environ)
    if env:
        full.update(env)
    try:
        p = subprocess.run([str(a) for a in args], stdout=kw.pop("stdout", subprocess.PIPE),
                           stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                           timeout=timeout, env=full, **kw)
    except subprocess.TimeoutExpired:
        pytest.fail("%s: timed out after %ss" % (args, timeout))
    p.out = p.stdout.decode(errors="replace") if isinstance(p.stdout, bytes) else ""
    p.err = p.stderr.decode(errors="replace")
    if rc is not None:
        assert p.returncode == rc, "%s: exit %d, expected %d\nstdout:\n%s\nstderr:\n%s" % (
            " ".join(map(str, args)), p.returncode, rc, p.out, p.err)
    return p


def trun(*args, rc=0, **kw):
    return sh([tool("posixtrace-run")] + list(args), rc=rc, **kw)


def tdump(*args, rc=0, **kw):
    return sh([tool("posixtrace-dump")] + list(args), rc=rc, **kw)


LINE = re.compile(r"^(-?\d+\.\d+) (\d+)(?:/(\d+))? ([^(\s]+)\((.*)\)(.*)$")


def events(text):
    """Event lines of the text output -> list of (name, args, rest, pid)."""
    out = []
    for l in text.splitlines():
        m = LINE.match(l)
        if m:
            out.append((m.group(4), m.group(5), m.group(6), int(m.group(2))))
    return out


class Lines:
    """Reads the lines of a pipe (a Popen's stdout or stderr, binary) as they
    come, each wait bounded by a timeout."""

    def __init__(self, f):
        self.fd, self.buf, self.eof = f.fileno(), b"", False

    def line(self, timeout=TIMEOUT):
        """The next line (without its newline), or None at EOF."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            if self.eof:
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                pytest.fail("no line within %ss (so far: %r)" % (timeout, self.buf))
            if select.select([self.fd], [], [], left)[0]:
                d = os.read(self.fd, 65536)
                self.eof = not d
                self.buf += d
        l, _, self.buf = self.buf.partition(b"\n")
        return l.decode(errors="replace")

    def until(self, pred, timeout=TIMEOUT):
        """Lines up to and including the first for which pred is true."""
        deadline, got = time.monotonic() + timeout, []
        while True:
            l = self.line(max(0.0, deadline - time.monotonic()))
            assert l is not None, "EOF before the line expected; got:\n%s" % "\n".join(got)
            got.append(l)
            if pred(l):
                return got


def le32(i):
    return "x'%s'" % (i & 0xffffffff).to_bytes(4, "little").hex()


def json_lines(text):
    return [json.loads(l) for l in text.splitlines() if l.startswith("{")]


REQUIRED = ("ts_ns", "pid", "tid", "event", "id", "addr", "truncation", "data_len")


def check_json_event(e):
    for k in REQUIRED:
        assert k in e, (k, e)
    assert isinstance(e["ts_ns"], int) and isinstance(e["pid"], int)
    if e["kind"] == "user":
        assert len(bytes.fromhex(e["data"])) == e["data_len"], e
    if e["kind"] == "call":
        for k in ("args", "ret", "errno", "duration_ns"):
            assert k in e, (k, e)


def check_chrome(doc):
    """The Chrome Trace Event format's required fields (the JSON Object
    Format: traceEvents; every event name/ph/ts/pid/tid, dur for "X", s for "i";
    "B" only for a call unfinished at the end, marked so in its args)."""
    assert isinstance(doc["traceEvents"], list)
    for e in doc["traceEvents"]:
        assert e["ph"] in ("X", "i", "M", "B"), e
        assert isinstance(e["name"], str) and isinstance(e["pid"], int) and isinstance(e["tid"], int)
        if e["ph"] == "M":
            assert e["name"] in ("process_name", "thread_name") and isinstance(e["args"]["name"], str)
            continue
        assert isinstance(e["ts"], (int, float)), e
        if e["ph"] == "X":
            assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
        elif e["ph"] == "B":
            assert e["args"]["unfinished"] is True, e
        else:
            assert e["s"] in ("t", "p", "g"), e



def check_summary_counts(out, js):
    """The calls column of a --summary table, by event name, equals the count
    of each event in the JSON events js."""
    rows = {l.split()[-1]: int(l.split()[3]) for l in out.splitlines()
            if re.match(r"^\s*\d+\.\d\d ", l) and not l.endswith(" total")}
    want = {}
    for e in js:
        # a fork is counted once (the parent's)
        if (e["event"] == "posixtrace:fork" and e["ret"] == 0):
            continue
        want[e["event"]] = want.get(e["event"], 0) + 1
    assert rows == want
