"""Trace Log option: writing a log and reading it back with posix_trace_open().

Programs: tests/log/t041_log_roundtrip.c (three threads), tests/log/t042_log_write.c
(scripted writer), tests/log/t048_log_dump.c (the reader).  Pages:
/work/shared/spec/posix_trace_create.3p.txt (create_withlog, flush, shutdown: "all
trace events that have not yet been flushed to the trace log shall be flushed";
"When a trace log is closed, all the information that may be retrieved later from the
trace log ... includes the trace attributes, the list of trace event types ..., and
the trace status"), posix_trace_close.3p.txt (open, rewind, close),
posix_trace_getnext_event.3p.txt (pre-recorded streams), posix_trace_get_attr.3p.txt,
posix_trace_attr_getinherited.3p.txt (FLUSH).  Choices: doc/semantics.md ("Trace Log
option", "Events", event ids and names), doc/log-format.md.
"""
import os

import pytest
import shutil
import time

from harness import run, kv, lines
from logcommon import dump, write_log, scratch_dir, check_seq_data_exact

SLACK_NS = 10000   # +-10 us around the posix_trace_event call


def parse_roundtrip_writer(out):
    ls = lines(out)
    head = kv(ls[0])
    ids = {int(k): int(v) for k, v in kv(ls[1]).items()}
    attr = kv(ls[2])
    recs = []
    rest = []
    for l in ls[3:]:
        if l.startswith("rec "):
            d = kv(l)
            recs.append(d)
        else:
            rest.append(l)
    return head, ids, attr, recs, rest


def test_roundtrip_three_threads(tmp_path):
    """A log written by three threads (data of 0, 1, 7, 8, 9, 255, 256 and 300 bytes,
    and the unnamed user event) with a posix_trace_flush in the middle, read back by
    another process:
    - every user event exactly once, with its id, pid, thread id and data bytes; 300
      bytes cut to max-data-size 256 and POSIX_TRACE_TRUNCATED_RECORD, others
      NOT_TRUNCATED (posix_trace_getnext_event.3p.txt; doc/semantics.md "Events");
    - each timestamp within 10 us of its posix_trace_event call; timestamps never
      decrease; each thread's order kept (doc/semantics.md "Events");
    - START first (the creator's main thread, empty filter); FLUSH_START/FLUSH_STOP
      around the explicit flush (between the two phases) and around the shutdown's
      flush, after STOP (auto = 0) recorded by shutdown "as if posix_trace_stop() had
      been invoked" (posix_trace_create.3p.txt; doc/semantics.md: every explicit flush
      and the shutdown flush are framed, system events carry thread 0);
    - the flush is synchronous: a second descriptor opened on the log while the stream
      is active reads START, the phase-0 events and the flush marks
      (doc/semantics.md "returns when the log has it");
    - names through posix_trace_eventid_get_name, the event type list
      (posix_trace_eventtypelist_getnext_id.3p.txt) holding the system and user names;
    - posix_trace_get_attr of the log equals the stream's (name, sizes, policies,
      inheritance, creation time; posix_trace_get_attr.3p.txt "trid may represent a
      pre-recorded trace log");
    - posix_trace_get_status: SUSPENDED, NOT_FULL, NO_OVERRUN, NOT_FLUSHING, 0,
      NO_OVERRUN, NOT_FULL, twice (never reset; posix_trace_get_attr.3p.txt);
    - rewind reads the same events again (posix_trace_close.3p.txt);
    - at the end getnext and timedgetnext return at once with unavailable != 0
      (doc/semantics.md, pre-recorded streams never block);
    - trygetnext, start, stop, clear, flush, set_filter, get_filter,
      trid_eventid_open and shutdown give EINVAL on it; eventid_equal works; a short
      buffer gives TRUNCATED_READ; close, then the trid is EINVAL everywhere."""
    path = str(tmp_path / "rt.log")
    head, ids, wattr, recs, rest = parse_roundtrip_writer(
        run("t041_log_roundtrip", path, timeout=60))
    pid, main_tid = head["pid"], head["main_tid"]
    assert rest == ["flush rc=0", "midread open rc=0 events=0,user*135,5,6,end",
                    "shutdown rc=0"], rest
    assert len(recs) == 3 * 2 * 5 * 9
    d = dump(path, "full", "checks")
    assert d.open == "0"
    # attributes: as the active stream reported them
    assert d.attr == wattr, (d.attr, wattr)
    assert wattr["name"] == "roundtrip log" and wattr["stream"] == "FLUSH"
    assert wattr["log"] == "APPEND" and wattr["inherit"] == "INHERITED"
    assert wattr["maxdata"] == "256" and wattr["lsize"] == "1"
    assert d.attr2 == {"genversion": "posixtrace 0.1", "clockres": "1"}
    want_status = {"stream": "SUSPENDED", "full": "NOT_FULL", "overrun": "NO_OVERRUN",
                   "flush": "NOT_FLUSHING", "flush_error": "0", "log_overrun": "NO_OVERRUN",
                   "log_full": "NOT_FULL"}
    assert d.status == want_status and d.status_again == want_status
    names = {ids[L]: "len%d" % L for L in ids if L != 3}
    names[256] = "posix_trace_unnamed_userevent"
    for i, n in names.items():
        assert d.types.get(i) == n, (i, n, d.types)
    for i, n in enumerate(["posix_trace_start", "posix_trace_stop", "posix_trace_filter",
                           "posix_trace_overflow", "posix_trace_resume",
                           "posix_trace_flush_start", "posix_trace_flush_stop",
                           "posix_trace_error"]):
        assert d.types.get(i) == n, d.types

    evs = d.events
    assert all(e["kind"] == "event" for e in evs)
    assert d.end["n"] == len(evs) == len(recs) + 6 and d.end["backwards"] == 0
    # the frame: START, phase 0, FLUSH pair, phase 1, STOP, FLUSH pair
    sys_pos = [i for i, e in enumerate(evs) if int(e["id"]) < 256]
    n0 = len([r for r in recs if r["phase"] == "0"])
    assert sys_pos == [0, n0 + 1, n0 + 2, len(evs) - 3, len(evs) - 2, len(evs) - 1], sys_pos
    start, fs1, fe1, stop, fs2, fe2 = [evs[i] for i in sys_pos]
    assert start["line"].startswith(
        "event id=0 name=posix_trace_start pid=%s tid=%s len=256 filter=[] trunc=0" % (pid, main_tid))
    assert stop["line"].startswith(
        "event id=1 name=posix_trace_stop pid=%s tid=%s len=4 auto=0 trunc=0" % (pid, main_tid))
    for e, i, n in ((fs1, 5, "posix_trace_flush_start"), (fe1, 6, "posix_trace_flush_stop"),
                    (fs2, 5, "posix_trace_flush_start"), (fe2, 6, "posix_trace_flush_stop")):
        assert e["line"].startswith("event id=%d name=%s pid=%s tid=0 len=0 data= trunc=0"
                                    % (i, n, pid)), e["line"]
    # the user events: per thread, in order, exact
    user = [e for e in evs if int(e["id"]) >= 256]
    by_tid = {}
    for e in user:
        by_tid.setdefault(e["tid"], []).append(e)
    rec_by_tid = {}
    for r in recs:
        rec_by_tid.setdefault(r["tid"], []).append(r)
    assert sorted(by_tid) == sorted(rec_by_tid)
    assert main_tid not in rec_by_tid
    for tid, rs in rec_by_tid.items():
        got = by_tid[tid]
        assert len(got) == len(rs), tid
        for r, e in zip(rs, got):
            L = int(r["len"])
            assert e["id"] == r["id"] and e["pid"] == pid, (r, e["line"])
            assert e["name"] == names[int(r["id"])], e["line"]
            assert int(e["len"]) == min(L, 256), (r, e["line"])
            assert e["data"] == r["data"], (r, e["line"])
            assert e["trunc"] == ("1" if L > 256 else "0"), (r, e["line"])
            assert int(r["t0"]) - SLACK_NS <= e["ts"] <= int(r["t1"]) + SLACK_NS, (r, e["line"])
    # phase 0 before the mid flush, phase 1 after
    for e in evs[1:n0 + 1]:
        assert int(e["id"]) >= 256
    assert sorted(e["tid"] for e in evs[1:n0 + 1]) == sorted(
        r["tid"] for r in recs if r["phase"] == "0")
    ts = [e["ts"] for e in evs]
    assert ts == sorted(ts)
    # after the events
    assert d.line("at end getnext") == "at end getnext rc=0 unavailable=1 ms=0"
    assert d.line("at end timedgetnext") == "at end timedgetnext rc=0 unavailable=1 ms=0"
    assert d.line("rewind") == "rewind rc=0 n=%d same=1" % len(evs)
    i = d.rest.index("prerecorded trygetnext rc=EINVAL")
    assert d.rest[i:] == [
        "prerecorded trygetnext rc=EINVAL",
        "prerecorded start rc=EINVAL",
        "prerecorded stop rc=EINVAL",
        "prerecorded clear rc=EINVAL",
        "prerecorded flush rc=EINVAL",
        "prerecorded set_filter rc=EINVAL",
        "prerecorded get_filter rc=EINVAL",
        "prerecorded trid_eventid_open rc=EINVAL",
        "prerecorded shutdown rc=EINVAL",
        "prerecorded eventid_equal same=1 different=0",
        "short read rc=0 unavailable=0 id=0 len=4 trunc=2",
        "status after checks " + " ".join("%s=%s" % kv_ for kv_ in want_status.items()),
        "close rc=0",
        "closed getnext rc=EINVAL",
        "closed rewind rc=EINVAL",
        "closed close rc=EINVAL",
        "closed get_status rc=EINVAL",
        "closed get_attr rc=EINVAL",
        "closed eventid_get_name rc=EINVAL",
        "done"], d.rest[i:]


def test_million_events_round_trip(tmp_path):
    """One thread records N = 1,000,000 events of 16 bytes (a sequence number s, then
    s * K) into a stream with the default stream-full-policy with a log (FLUSH,
    posix_trace_attr_getinherited.3p.txt) and an APPEND log on tmpfs, calling
    posix_trace_flush after each 10,000 (so the 1 MiB stream never fills, whatever the
    automatic flusher does meanwhile), then shuts down; the log read back holds START,
    the N events in order with their exact data, pid and thread, 100 + 1 FLUSH pairs,
    STOP (auto = 0), nothing lost, timestamps never decreasing, and the status
    SUSPENDED / NO_OVERRUN / NOT_FULL (posix_trace_create.3p.txt, doc/semantics.md).
    The times are printed (pytest -s); all of it stays under 20 s (well under 1 s
    measured, sanitizer build included)."""
    n = 1000000
    d_ = scratch_dir(tmp_path)
    path = os.path.join(d_, "million.log")
    try:
        t0 = time.monotonic()
        w = write_log(path, "log=APPEND", "start", "ef:%d:10000" % n, "shutdown", "size",
                      timeout=60)
        t1 = time.monotonic()
        d = dump(path, "skipflush", "norewind", timeout=60)
        t2 = time.monotonic()
    finally:
        if d_ != str(tmp_path):
            shutil.rmtree(d_, ignore_errors=True)
    rec = w.of("recorded")[0]
    print("\n%d events: write+flush+shutdown %.2f s (recording loop %s ms), log %d bytes, "
          "open+read %.2f s (open %s ms, read %s ms)"
          % (n, t1 - t0, rec["ms"], w.size(), t2 - t1, d.open_ms, d.end["ms"]))
    assert w.of("flushes") == [{"n": str(n // 10000), "bad": "0"}]
    assert w.of("shutdown")[0]["rc"] == "0"
    check_seq_data_exact(d)
    assert d.shape() == ["START", "run", "STOP:auto=0"], d.shape()
    run_ = d.user_runs()[0]
    assert (run_["first"], run_["last"], run_["n"]) == (0, n - 1, n)
    assert (run_["pid"], run_["tid"]) == (w.pid, w.main_tid)
    assert d.flush_marks == {"start": n // 10000 + 1, "stop": n // 10000 + 1, "unpaired": 0}
    assert d.end["user"] == n and d.end["backwards"] == 0
    assert (d.status["stream"], d.status["overrun"], d.status["full"]) == (
        "SUSPENDED", "NO_OVERRUN", "NOT_FULL")
    assert t2 - t0 < 20, "round trip of %d events took %.1f s" % (n, t2 - t0)


def test_flush_policy_losses_reported_per_gap(tmp_path):
    """When the FLUSH policy's flusher cannot keep up, doc/semantics.md: the stream
    "stops by the UNTIL_FULL rules (STOP, auto = 1) and restarts" with the losses
    reported in the log: STOP (auto = 1) after the last event kept, OVERFLOW (data:
    "number of events lost in this gap") + RESUME + START at the restart.  A 64 KiB stream, 2,000,000 events
    back to back, ten times: the events kept form increasing runs; between two runs
    (and after the last one) the OVERFLOW counts add up exactly to the events missing
    there; every gap is preceded by STOP (auto = 1) and followed by RESUME and START."""
    n = 2000000
    d_ = scratch_dir(tmp_path)
    path = os.path.join(d_, "gaps.log")
    try:
        for _ in range(10):
            write_log(path, "log=APPEND", "ssize=65536", "start", "e:%d" % n, "shutdown")
            d = dump(path, "skipflush", "norewind")
            check_seq_data_exact(d)
            ev = [e for e in d.events if not (e["kind"] == "event" and e["id"] == "0"
                                               and e is d.events[0])]
            pending = 0
            prev_last = -1
            problems = []
            for e in ev + [{"kind": "user", "first": n, "last": n}]:
                if e["kind"] == "event":
                    if e["id"] == "3":
                        pending += int(e["lost"])
                    continue
                gap = e["first"] - prev_last - 1
                if gap != pending:
                    problems.append("between %d and %d: %d missing, OVERFLOW says %d"
                                    % (prev_last, e["first"], gap, pending))
                prev_last, pending = e["last"], 0
            assert not problems, (problems, d.shape())
            sh = d.shape()
            for i, x in enumerate(sh):
                if x == "OVERFLOW":
                    assert sh[i - 1] == "STOP:auto=1" and sh[i + 1:i + 3] == ["RESUME", "START"], sh
    finally:
        if d_ != str(tmp_path):
            shutil.rmtree(d_, ignore_errors=True)


def check_flush_keeps_all(tmp_path, steps, n, ssize=65536):
    d_ = scratch_dir(tmp_path)
    path = os.path.join(d_, "keepall.log")
    try:
        write_log(path, "log=APPEND", "ssize=%d" % ssize, "start", *steps, "shutdown",
                  timeout=60)
        d = dump(path, "skipflush", "norewind", timeout=60)
    finally:
        if d_ != str(tmp_path):
            shutil.rmtree(d_, ignore_errors=True)
    lost = sum(int(e["lost"]) for e in d.system() if e["id"] == "3")
    check_seq_data_exact(d)
    assert d.end["user"] + lost == n
    assert d.shape() == ["START", "run", "STOP:auto=0"], d.shape()[:12]
    run_ = d.user_runs()[0]
    assert (run_["first"], run_["last"], run_["n"]) == (0, n - 1, n)


def test_flush_policy_keeps_every_event_paced(tmp_path):
    """posix_trace_attr_getinherited.3p.txt, POSIX_TRACE_FLUSH: "the trace stream
    shall be flushed regularly as if posix_trace_flush() had been explicitly called";
    doc/semantics.md: a thread flushes when writers find an eighth of the stream in
    use.  A 2 MiB stream (it holds about 43,600 16-byte events of 48 bytes:
    doc/semantics.md, "Attributes") and an APPEND log;
    one thread records 1,000,000 events (23 times what the stream holds) at most one
    every 2000 ns (500 k events/s, well within what the flusher drains; the
    flusher may be kept off a CPU for up to about 75 ms, an eighth of the stream
    being its cue, before the stream fills): the log holds every one of them, in
    order and intact, and no OVERFLOW. (At 1 M events/s into 1 MiB, about 19 ms,
    it failed on machines busy with other builds.)"""
    check_flush_keeps_all(tmp_path, ["paced:1000000:2000"], 1000000, ssize=2 << 20)
