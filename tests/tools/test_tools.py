"""posixtrace-run (the trace controller) and posixtrace-dump (the trace
analyzer), issue 6, over tests/tools/t200_tools_target.c, a program that records
user events itself (so these tests need no shim: --no-preload), and over logs
of tests/log/t041_log_roundtrip.c.  The shim's part: tests/tools/test_tools_shim.py.

Pages: posix_trace_create.3p.txt (a stream for another process),
posix_trace_set_filter.3p.txt (-e), posix_trace_open.3p.txt and
posix_trace_getnext_event.3p.txt (the dump reads only through them),
posix_trace_get_attr.3p.txt / posix_trace_get_status.3p.txt /
posix_trace_eventtypelist_getnext_id.3p.txt (--info).  Formats: doc/tools.md,
doc/json-schema.md.
"""
import contextlib
import json
import re
import signal
import subprocess

import pytest

from harness import run
from toolscommon import (TIMEOUT, Lines, check_chrome, check_json_event, check_summary_counts,
                         events, json_lines, le32, sh, target, tdump, tool, trun)

# ---------------------------------------------------------------- basics

def test_version_and_help():
    """Both tools answer --version and --help with status 0."""
    for t in ("posixtrace-run", "posixtrace-dump"):
        p = sh([tool(t), "--version"])
        assert p.out.startswith(t + " (posixtrace) "), p.out
        p = sh([tool(t), "--help"])
        assert "Usage:" in p.out and "--format" in p.out


def test_run_bad_usage():
    """A bad option or no program: a message and status 125 (the launcher's
    own failure, like env(1)); bad values of -e, sizes and policies too."""
    p = trun("--bogus", "true", rc=125)
    assert "Unknown option --bogus" in p.err
    p = trun(rc=125)
    assert "no PROGRAM given" in p.err
    p = trun("--stream-size", "lots", "true", rc=125)
    assert "--stream-size: not a size" in p.err
    p = trun("--policy", "flush", "true", rc=125)
    assert "needs a log" in p.err
    p = trun("--format", "xml", "true", rc=125)
    assert "--format" in p.err


def test_run_missing_program(tmp_path):
    """A program that does not exist: 127; one that cannot be executed
    (no x bit, a directory): 126; each with a message naming it, like a shell."""
    p = trun("no-such-program-xyz", rc=127)
    assert "no-such-program-xyz: command not found" in p.err
    p = trun(str(tmp_path / "missing"), rc=127)
    assert "missing: No such file or directory" in p.err
    f = tmp_path / "plain"
    f.write_text("#!/bin/sh\n")
    f.chmod(0o644)
    p = trun(str(f), rc=126)
    assert "plain: Permission denied" in p.err
    p = trun(str(tmp_path), rc=126)
    assert "Is a directory" in p.err


# ---------------------------------------------------------------- live

def test_run_live_text():
    """Default on-line output: one line per event on stderr as it happens,
    the program's stdout untouched; user event data shown as hex, or as a
    string when it is text; the end line counts events and losses."""
    p = trun("--no-preload", target(), "user", "50")
    assert p.out == "done 50\n"
    evs = events(p.err)
    ticks = [e for e in evs if e[0] == "tools/tick"]
    assert [t[1] for t in ticks] == [le32(i) for i in range(50)]
    assert [e[1] for e in evs if e[0] == "tools/text"] == ['"hello, trace"']
    assert re.search(r"^posixtrace-run: \d+ events, 51 shown, 0 lost$", p.err, re.M), p.err
    # the trace's own START/STOP are not printed by default
    assert not [e for e in evs if e[0].startswith("posix_trace_")]


def test_run_live_json(tmp_path):
    """--format json --print-to FILE: JSON Lines (doc/json-schema.md), the
    required keys, data in hex, one pid, timestamps non-decreasing."""
    out = tmp_path / "ev.jsonl"
    p = trun("--no-preload", "--format", "json", "--print-to", str(out), target(), "user", "20")
    assert p.out == "done 20\n"
    evs = json_lines(out.read_text())
    for e in evs:
        check_json_event(e)
    ticks = [e for e in evs if e["event"] == "tools/tick"]
    assert [bytes.fromhex(e["data"]) for e in ticks] == [i.to_bytes(4, "little") for i in range(20)]
    assert all(e["kind"] == "user" and e["truncation"] == 0 and e["data_len"] == 4 for e in ticks)
    assert len({e["pid"] for e in evs}) == 1
    ts = [e["ts_ns"] for e in evs]
    assert ts == sorted(ts)


def test_run_exit_status():
    """The exit status is the program's."""
    for code in (0, 7, 255):
        trun("-q", "--no-preload", target(), "exit", str(code), rc=code)


def test_run_killed_by_signal():
    """A program killed by a signal: posixtrace-run dies of the same signal
    (raised again), after shutting the trace down and printing its events."""
    for sig in (signal.SIGTERM, signal.SIGSEGV, signal.SIGKILL):
        p = trun("--no-preload", target(), "raise", str(int(sig)), rc=-int(sig))
        assert [e[0] for e in events(p.err)] == ["tools/tick"], p.err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_run_forwards_signals(sig):
    """SIGTERM or SIGINT sent to posixtrace-run reaches the program (which
    records it and exits 3), and the trace is still read to its end."""
    p = subprocess.Popen([tool("posixtrace-run"), "--no-preload", target(), "sigwait"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert p.stdout.readline() == b"ready\n"
        p.send_signal(sig)
        out, err = p.communicate(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 3, err
    evs = events(err.decode())
    assert ("tools/signal", le32(int(sig))) in [(e[0], e[1]) for e in evs], err


def test_run_follows_children():
    """Children are followed by default (POSIX_TRACE_INHERITED): each child's
    events carry its own pid; --no-follow records only the first process."""
    p = trun("--no-preload", target(), "forks", "3", "4")
    evs = events(p.err)
    child = [e for e in evs if e[0] == "tools/child"]
    parent = [e for e in evs if e[0] == "tools/parent"]
    assert len(child) == 12 and len(parent) == 1, p.err
    pids = {e[3] for e in child}
    assert len(pids) == 3 and parent[0][3] not in pids
    for pid in pids:
        assert len({e[1] for e in child if e[3] == pid}) == 1  # one child index per pid
    p = trun("--no-preload", "--no-follow", target(), "forks", "3", "4")
    assert [e[0] for e in events(p.err)] == ["tools/parent"]


def test_run_output_identical(tmp_path):
    """The program's stdout under the launcher is byte for byte what it is
    without it, to a pipe and to a file."""
    n = "200000"
    direct = sh([target(), "bytes", n]).stdout
    traced = trun("-q", "--no-preload", target(), "bytes", n).stdout
    assert len(direct) == 200000 and traced == direct
    f1, f2 = tmp_path / "a", tmp_path / "b"
    with open(f1, "wb") as fp:
        sh([target(), "bytes", n], stdout=fp)
    with open(f2, "wb") as fp:
        trun("-q", "--no-preload", target(), "bytes", n, stdout=fp)
    assert f1.read_bytes() == f2.read_bytes() == direct


def test_run_filter():
    """-e selects what is recorded, by event name, class, and '!' exclusion
    (posix_trace_set_filter.3p.txt)."""
    def names(*opts):
        p = trun("--no-preload", *opts, target(), "user", "5")
        return [e[0] for e in events(p.err)]
    assert names("-e", "tools/text") == ["tools/text"]
    assert names("-e", "!tools/tick") == ["tools/text"]
    assert names("-e", "user") == ["tools/tick"] * 5 + ["tools/text"]
    assert names("-e", "tools/tick,tools/text", "-e", "!tools/text") == ["tools/tick"] * 5
    assert "posix_trace_start" in names("-e", "trace,user")
    # globs match the names the stream knows when tracing starts: not yet
    # the program's user events (doc/tools.md)
    p = trun("--no-preload", "-e", "tools/*", target(), "user", "5")
    assert "no event type matches 'tools/*'" in p.err


SUMMARY_30 = """\
% time     seconds  usecs/call     calls    errors event
------ ----------- ----------- --------- --------- ----------------
  0.00    0.000000           0        30           tools/tick
  0.00    0.000000           0         1           tools/text
------ ----------- ----------- --------- --------- ----------------
  0.00    0.000000                    31         0 total
posixtrace-run: 33 events, 31 shown, 0 lost
"""


def test_run_summary():
    """-c: a table per event type instead of the events (user events have no
    duration: 0 s); -C: the events, then the same table.  Counts match the
    events; the end line counts START and STOP too (read, not shown)."""
    p = trun("--no-preload", "-c", target(), "user", "30")
    assert p.out == "done 30\n"
    assert p.err == SUMMARY_30, p.err
    p = trun("--no-preload", "-C", target(), "user", "30")
    ls = p.err.splitlines(True)
    evs = events("".join(ls[:31]))
    assert [(e[0], e[1]) for e in evs] == [("tools/tick", le32(i)) for i in range(30)] + [
        ("tools/text", '"hello, trace"')], p.err
    assert "".join(ls[31:]) == SUMMARY_30, p.err


def test_run_losses_accounted(tmp_path):
    """Lost events are never silent: with a tiny stream (4K, policy loop) the
    events read plus those reported lost by posix_trace_overflow events are
    exactly those the program recorded: 100,000 ticks, one text, START and STOP
    (the end line's "N events" counts every event read, the OVERFLOW/RESUME pairs
    the loop policy adds too; "M shown": all but START and STOP, which the text
    and JSON outputs leave out).  The ticks kept are in the order recorded.  The
    end line's count is the overflows' sum, and the hint about --stream-size is
    given because there was a loss (the reader, formatting JSON, cannot keep up
    with 100,000 events recorded back to back in a stream of about 100)."""
    out = tmp_path / "ev.jsonl"
    p = trun("--no-preload", "--stream-size", "4K", "--format", "json", "--print-to", str(out),
             target(), "user", "100000")
    evs = json_lines(out.read_text())
    kinds = {}
    for e in evs:
        kinds[e["event"]] = kinds.get(e["event"], 0) + 1
    lost = sum(e["args"]["lost"] for e in evs if e["event"] == "posix_trace_overflow")
    m = re.search(r"^posixtrace-run: (\d+) events, (\d+) shown, (\d+) lost$", p.err, re.M)
    assert m, p.err
    n, shown = int(m.group(1)), int(m.group(2))
    assert int(m.group(3)) == lost and shown == len(evs), (m.group(0), kinds, lost)
    assert set(kinds) <= {"tools/tick", "tools/text", "posix_trace_overflow",
                          "posix_trace_resume"}, kinds
    assert kinds.get("posix_trace_overflow") == kinds.get("posix_trace_resume"), kinds
    nover = 2 * kinds.get("posix_trace_overflow", 0)
    assert n - nover + lost == 100000 + 1 + 2, (m.group(0), kinds, lost)
    assert n - shown in (0, 1, 2)  # START, STOP: read unless lost
    idx = [int.from_bytes(bytes.fromhex(e["data"]), "little") for e in evs
           if e["event"] == "tools/tick"]
    assert idx == sorted(set(idx)), "ticks out of order or repeated"
    assert lost > 0, p.err
    assert "use a larger --stream-size" in p.err


# ---------------------------------------------------------------- attach

def attach(pid):
    """posixtrace-run -p PID, stopped by SIGINT once it has printed a tick:
    (its exit status, the tick indices it printed, its other output)."""
    r = subprocess.Popen([tool("posixtrace-run"), "-p", str(pid)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        err = Lines(r.stderr)
        got = err.until(lambda l: " tools/tick(" in l)
        r.send_signal(signal.SIGINT)
        while True:
            l = err.line()
            if l is None:
                break
            got.append(l)
        rc = r.wait(timeout=TIMEOUT)
        out = r.stdout.read().decode()
    finally:
        if r.poll() is None:
            r.kill()
            r.wait()
    ticks = [e for e in events("\n".join(got)) if e[0] == "tools/tick"]
    assert ticks and all(e[3] == pid for e in ticks), got
    return rc, tick_indices(ticks), out + "\n".join(got)


def tick_indices(ticks):
    """The indices (int data) of tools/tick events."""
    return [int.from_bytes(bytes.fromhex(e[1][2:-1]), "little") for e in ticks]


@contextlib.contextmanager
def loop_target():
    """t200_tools_target loop, ready: yields (the Popen, its pid, its stdout as Lines).  At the
    end it must still be running, and exits 0 on SIGTERM; killed if anything failed."""
    t = subprocess.Popen([target(), "loop"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        tout = Lines(t.stdout)
        pid = int(tout.line().split()[1])
        assert tout.line() == "ready"
        yield t, pid, tout
        assert t.poll() is None, "the traced process died"
        t.send_signal(signal.SIGTERM)
        assert t.wait(timeout=TIMEOUT) == 0
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()


def test_run_attach_and_detach():
    """-p PID: traces a running process that has libposixtrace loaded until Ctrl-C
    (SIGINT), then detaches leaving it running (exit status 0): every tick recorded
    meanwhile is printed, consecutive.  Its later events go nowhere: a tick the
    process recorded after the detach (it prints "tick i" after each) is not in
    the next attach's output, which begins after it; the process exits
    normally."""
    with loop_target() as (t, pid, tout):
        rc, idx, out = attach(pid)
        assert rc == 0, out
        assert idx == list(range(idx[0], idx[0] + len(idx))), out  # consecutive: nothing lost
        # a tick recorded after the detach...
        after = int(tout.until(lambda l: int(l.split()[1]) > idx[-1])[-1].split()[1])
        assert t.poll() is None, "the traced process died"
        rc, idx2, out = attach(pid)
        assert rc == 0, out
        # ...is in no stream: the second session begins after it
        assert idx2[0] > after and idx2 == list(range(idx2[0], idx2[0] + len(idx2))), (after, out)


def test_run_attach_duration():
    """-p PID --duration SEC: the session ends by itself (exit status 0), whatever
    it caught (no claim on how many ticks fit in the time: only that those
    printed are the target's, consecutive), and the process keeps running.
    At the detach, the sleep the loop is in between two ticks (if it is in
    one then) is shown unfinished (doc/tools.md "Calls unfinished at the
    end": from /proc, the target has no shim)."""
    with loop_target() as (_, pid, _):
        p = trun("-p", str(pid), "--duration", "0.3")
        ticks = [e for e in events(p.err) if e[0] == "tools/tick"]
        assert all(e[3] == pid for e in ticks), p.err
        idx = tick_indices(ticks)
        assert not idx or idx == list(range(idx[0], idx[0] + len(idx))), p.err
        unf = [l for l in p.err.splitlines() if l.endswith("<unfinished ...>)")]
        assert all(re.match(r"^[\d.]+ %d/%d syscall:clock_nanosleep\(" % (pid, pid), l)
                   for l in unf) and len(unf) <= 1, p.err
        assert re.search(r"^posixtrace-run: \d+ events, %d shown, 0 lost$" % (len(ticks) + len(unf)),
                         p.err, re.M), p.err


def test_run_attach_errors():
    """-p of a process that does not exist: a message and 125 (ESRCH from
    posix_trace_create)."""
    p = trun("-p", "999999999", "--duration", "0.1", rc=125)
    assert "no process 999999999" in p.err


# ---------------------------------------------------------------- logs

def test_run_log_then_dump(tmp_path):
    """-o FILE writes a log instead of printing (the end line names it and
    counts events and losses); posixtrace-dump prints the same events in
    each format: text, JSON Lines, Chrome trace."""
    log = tmp_path / "t.ptl"
    p = trun("--no-preload", "-o", str(log), target(), "user", "25")
    assert p.out == "done 25\n"
    assert not events(p.err)
    m = re.search(r"^posixtrace-run: (\d+) events in %s, 0 lost$" % re.escape(str(log)), p.err, re.M)
    assert m, p.err
    total = int(m.group(1))
    text = tdump(str(log)).out
    evs = events(text)
    assert len(evs) == total
    assert [e[1] for e in evs if e[0] == "tools/tick"] == [le32(i) for i in range(25)]
    js = json_lines(tdump("--format", "json", str(log)).out)
    assert len(js) == total
    for e in js:
        check_json_event(e)
    assert [e["event"] for e in js] == [e[0] for e in evs]
    doc = json.loads(tdump("--format", "chrome", str(log)).out)
    check_chrome(doc)
    inst = [e for e in doc["traceEvents"] if e["ph"] == "i" and e["name"] == "tools/tick"]
    assert len(inst) == 25 and all(e["s"] == "t" for e in inst)


def test_run_log_filter_is_the_stream_filter(tmp_path):
    """With -o, -e is applied by the stream's filter: filtered events are not
    in the log at all."""
    log = tmp_path / "t.ptl"
    trun("-q", "--no-preload", "-o", str(log), "-e", "tools/text", target(), "user", "25")
    names = [e["event"] for e in json_lines(tdump("-f", "json", str(log)).out)]
    assert "tools/text" in names and "tools/tick" not in names


def test_run_log_full_reported(tmp_path):
    """A log that fills (--log-policy until-full, small --log-size) says so
    at the end and names the options that avoid it."""
    log = tmp_path / "t.ptl"
    p = trun("--no-preload", "-o", str(log), "--log-policy", "until-full", "--log-size", "64K",
             target(), "user", "200000")
    assert "--log-policy=append" in p.err, p.err
    m = re.search(r"^posixtrace-run: (\d+) events in .*, (\d+) lost$", p.err, re.M)
    assert m and int(m.group(1)) < 200000, p.err


def roundtrip_log(tmp_path):
    log = tmp_path / "rt.ptl"
    out = run("t041_log_roundtrip", str(log))
    recs = [l for l in out.splitlines() if l.startswith("rec ")]
    return log, recs


def test_dump_roundtrip_json(tmp_path):
    """posixtrace-dump --format json of a log written by three threads: one
    object per event, with the recorded data (cut at max-data-size and marked
    truncated when longer) and the recording pid."""
    log, recs = roundtrip_log(tmp_path)
    js = json_lines(tdump("-f", "json", str(log)).out)
    for e in js:
        check_json_event(e)
    user = [e for e in js if e["kind"] == "user"]
    assert len(user) == len(recs) == 270
    want = sorted(re.search(r"data=(\S*)", r).group(1) for r in recs)
    assert sorted(e["data"] for e in user) == want
    assert all(e["truncation"] == (1 if e["event"] == "len300" else 0) for e in user)
    assert len({e["pid"] for e in user}) == 1


def test_dump_info(tmp_path):
    """--info: the stream name, attributes, status, creation time and the
    event types with their ids (posix_trace_get_attr, _get_status,
    _eventtypelist_getnext_id on the pre-recorded stream)."""
    log, _ = roundtrip_log(tmp_path)
    out = tdump("--info", str(log)).out
    assert "name: roundtrip log\n" in out
    assert "stream-full-policy: flush\n" in out and "log-full-policy: append\n" in out
    assert "inheritance: inherited\n" in out and "max-data-size: 256\n" in out
    assert re.search(r"^creation time: \d{4}-\d\d-\d\dT", out, re.M)
    assert re.search(r"^status: suspended,", out, re.M)
    types = dict((m.group(2), int(m.group(1))) for m in re.finditer(r"^\s+(\d+) (\S+)$", out, re.M))
    assert types["posix_trace_start"] == 0 and types["posix_trace_unnamed_userevent"] == 256
    assert "len0" in types and types["len0"] > 256


def test_dump_summary_matches_events(tmp_path):
    """--summary counts per event type equal the events of the JSON output."""
    log, _ = roundtrip_log(tmp_path)
    js = json_lines(tdump("-f", "json", str(log)).out)
    out = tdump("--summary", str(log)).out
    check_summary_counts(out, js)
    assert re.search(r"^\s*\S+\s+\S+\s+%d\s+0 total$" % len(js), out, re.M), out


def test_dump_filters(tmp_path):
    """-e by name, glob and exclusion; --pid; --tid; a time window."""
    log, recs = roundtrip_log(tmp_path)
    allj = json_lines(tdump("-f", "json", str(log)).out)
    def names(*opts):
        return [e["event"] for e in json_lines(tdump("-f", "json", *opts, str(log)).out)]
    assert set(names("-e", "len2*")) == {"len255", "len256"}
    assert "len0" not in names("-e", "!len0") and "len1" in names("-e", "!len0")
    assert names("--pid", "1") == []
    pid = allj[0]["pid"]
    assert len(names("--pid", str(pid))) == len(allj)
    thread = [e for e in allj if e["kind"] == "user"][0]["thread"]
    assert set(e["thread"] for e in json_lines(tdump("-f", "json", "--tid", str(thread), str(log)).out)) == {thread}
    t0 = allj[0]["ts_ns"]
    mid = allj[len(allj) // 2]["ts_ns"]
    win = json_lines(tdump("-f", "json", "--from", "%.9f" % ((mid - t0) / 1e9), str(log)).out)
    assert win and all(e["ts_ns"] >= mid - 1 for e in win)
    win = json_lines(tdump("-f", "json", "--to", "@%.9f" % (mid / 1e9), str(log)).out)
    assert win and all(e["ts_ns"] <= mid + 1000 for e in win)


def test_dump_damaged_log(tmp_path):
    """A log cut in the middle of a block (its writer was killed) is read up
    to the damage: the events before it, a message saying where reading
    stopped, and status 1."""
    log, _ = roundtrip_log(tmp_path)
    full = tdump(str(log)).out.splitlines()
    cut = tmp_path / "cut.ptl"
    data = log.read_bytes()
    size = 4096 + (len(data) - 4096) // 2 + 100
    cut.write_bytes(data[:size])
    p = tdump(str(cut), rc=1)
    assert "damaged log" in p.err and "invalid block" in p.err, p.err
    got = p.out.splitlines()
    assert 0 < len(got) < len(full)
    assert set(got) <= set(full)


def test_dump_not_a_log(tmp_path):
    """A file that is not a log, or is missing: a message, status 1; the
    other logs given are still read."""
    bad = tmp_path / "bad"
    bad.write_bytes(b"x" * 8192)
    log, _ = roundtrip_log(tmp_path)
    p = tdump(str(bad), str(tmp_path / "missing"), str(log), rc=1)
    assert "bad: not a posixtrace log" in p.err
    assert "missing: No such file or directory" in p.err
    assert len(events(p.out)) > 270
    p = tdump("--format", "yaml", str(log), rc=2)
    p = tdump(rc=2)
    assert "no LOG given" in p.err
