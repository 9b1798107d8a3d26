"""Timestamps over about a minute: tests/api/t022_timestamps.c.

Pages: posix_trace_getnext_event.3p.txt ("Trace events shall be reported in the
order in which they were generated, up to an implementation-defined time
resolution"), trace.h.0p.txt (posix_timestamp).  doc/semantics.md, "Events":
posix_timestamp is CLOCK_REALTIME; events whose posix_trace_event() calls do not
overlap in time are reported in the order they were recorded, across threads.
"""
import os

import pytest

from harness import run, kv, lines

SECONDS = int(os.environ.get("POSIXTRACE_TS_SECONDS", "60"))
SLACK = 10000   # 10 us


@pytest.mark.slow
def test_timestamps_over_a_minute():
    """2 threads record sporadically (every 25..75 ms) for SECONDS (default 60) s while
    a reader drains with getnext; each call is bracketed by CLOCK_REALTIME readings.
    Every call is reported exactly once with its thread id; every timestamp lies in
    [before - 10 us, after + 10 us]; the global report order is consistent with the
    calls: no event is reported after one whose call started after its call ended
    (doc/semantics.md), each thread's events are in its order, and reported
    timestamps never decrease (doc/semantics.md)."""
    out = run("t022_timestamps", SECONDS, timeout=SECONDS + 120)
    recs = {}
    evs = []
    done = None
    for l in lines(out):
        d = kv(l)
        if l.startswith("rec "):
            recs[(int(d["t"]), int(d["seq"]))] = (int(d["before"]), int(d["after"]))
        elif l.startswith("ev "):
            assert d["tid_ok"] == "1", l
            evs.append((int(d["t"]), int(d["seq"]), int(d["ts"])))
        elif l.startswith("done "):
            done = d
        else:
            raise AssertionError("unexpected line: " + l)
    assert done and int(done["recs"]) == len(recs) == int(done["evs"]) == len(evs)
    # expect about one event every 50 ms per thread
    assert len(recs) >= 2 * SECONDS * 10, len(recs)
    assert sorted((t, s) for t, s, _ in evs) == sorted(recs), "missing or repeated events"
    last_seq = {0: -1, 1: -1}
    last_ts = 0
    max_before = None      # latest call start among the events reported so far
    for t, s, ts in evs:
        b, a = recs[(t, s)]
        assert b - SLACK <= ts <= a + SLACK, ("timestamp outside its call", t, s, b, ts, a)
        assert s == last_seq[t] + 1, ("thread order", t, s)
        # doc/semantics.md: "Reported timestamps never decrease from one reported
        # event to the next"
        assert ts >= last_ts, ("timestamp decreased", t, s, ts, last_ts)
        last_ts = ts
        last_seq[t] = s
        if max_before is not None:
            assert max_before[0] <= a, (
                "event %s reported after %s although its call ended first"
                % ((t, s), max_before[1]))
        if max_before is None or b > max_before[0]:
            max_before = (b, (t, s))
