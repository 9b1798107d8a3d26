"""Events read back exactly, whatever form their records take in the stream
(doc/design.md "Records": a chunk's classes, one per call site and event type,
compact records stamped by delta, VARLEN classes for sites whose length varies,
EVENT records when a chunk's classes are used up, for truncated events and for
stamps a delta cannot carry). Program: tests/api/t029_encoding.c, which derives
every event's data from (thread, index) and checks it byte for byte, with its
id, length, truncation status, program address and timestamp.

Pages: posix_trace_event.3p.txt ("the posix_trace_event() function shall record
the event_id and the user data"; data longer than max-data-size truncated,
posix_trace_attr_getmaxdatasize.3p.txt), posix_trace_getnext_event.3p.txt (the
posix_trace_event_info fields: posix_prog_address "the address at which the trace
point was invoked", posix_timestamp, posix_truncation_status
POSIX_TRACE_TRUNCATED_RECORD), trace.h.0p.txt.
"""
import re

import pytest

from harness import run

LINE = re.compile(r"^(\S+) events=(\d+) sites=(\d+) addrs=(\d+) trunc=(\d+) bad=(\d+) "
                  r"order=(\S+) first=(\d+) overflows=(\d+)$", re.M)


def results(out):
    return {m.group(1): tuple(int(x) if x.isdigit() else x for x in m.groups()[1:])
            for m in LINE.finditer(out)}


def truncated(lens):
    return sum(1 for n in lens if n > 256)


LENGTHS = [(j * 13) % 301 for j in range(3000)]


def test_call_sites():
    """6000 16-byte events from 100 call sites in turn (more than a chunk's 63
    classes and a writer's 32 cached ones): every event exact, each site one
    program address, the 100 addresses distinct, timestamps non-decreasing."""
    r = results(run("t029_encoding", "sites", timeout=60))
    assert r["sites"] == (6000, 100, 100, 0, 0, "ok", 0, 0)


def test_lengths_that_vary():
    """3000 events from 3 sites with lengths 0..300 (max-data-size 256): the
    data of each exact, the longer ones truncated to 256 bytes and reported
    POSIX_TRACE_TRUNCATED_RECORD, the others POSIX_TRACE_NOT_TRUNCATED."""
    r = results(run("t029_encoding", "lengths", timeout=60))
    assert r["lengths"] == (3000, 3, 3, truncated(LENGTHS), 0, "ok", 0, 0)


def test_threads():
    """4 threads, 4000 events each from 100 sites with lengths 8..107: every
    event exact and in its thread's order; the reader's merge keeps the
    timestamps non-decreasing."""
    r = results(run("t029_encoding", "threads", timeout=60))
    assert r["threads"] == (16000, 100, 100, 0, 0, "ok", 0, 0)


def test_stamps_past_a_delta():
    """Events 0, 1 and 80 ms apart (past the 2^26 ticks or ns a compact
    record's delta carries, on either clock): each timestamp lies between
    CLOCK_REALTIME read just before and just after its call (20 us of slack
    for the tick-to-time conversion)."""
    r = results(run("t029_encoding", "gaps", timeout=60))
    assert r["gaps"] == (40, 3, 3, 0, 0, "ok", 0, 0)


def test_through_a_log(tmp_path):
    """The same events through a log (stream-full-policy FLUSH, a flush between
    the first two sets), and a third set of three call sites with fixed
    lengths of 13, 129 and 200 bytes, in runs of five events from one site
    (the flusher's fast paths for compact records, libtrace/log/flusher.c
    pack_run, a site's first event and the same site again: padded data, a
    length of two varint bytes): read back from the log, every event exact,
    nothing lost."""
    out = run("t029_encoding", "log", str(tmp_path / "enc.log"), timeout=60)
    r = results(out)
    assert r["log-sites"] == (6000, 100, 100, 0, 0, "ok", 0, 0), out
    assert r["log-lengths"] == (3000, 3, 3, truncated(LENGTHS), 0, "ok", 0, 0), out
    assert r["log-fixed"] == (3000, 3, 3, 0, 0, "ok", 0, 0), out


def test_loop_keeps_the_last_events():
    """A 64 KiB LOOP stream given 20000 events of 8..260 bytes from 100 sites:
    what is read is one OVERFLOW and the run of the last events, up to the last
    one recorded, each exact (each chunk read alone, its classes with it)."""
    r = results(run("t029_encoding", "loop", timeout=60))
    n, sites, addrs, trunc, bad, order, first, ovf = r["loop"]
    assert (bad, order, ovf) == (0, "ok", 1), r
    assert first + n == 20000 and 300 <= n <= 600, r
    assert sites == addrs and sites > 90, r
    assert trunc == truncated([8 + (j * 13) % 253 for j in range(first, 20000)]), r
