"""Blocking writers, an extension (tests/api/t027_block.c): a writer whose stream
is full waits, bounded, for the stream's consumer instead of losing events.

Not in the standard: <posixtrace/control.h> posixtrace_attr_setblocking and
doc/semantics.md "Blocking writers" (when a writer waits, for how long, and
what then). The standard policies are unchanged with it off:
posix_trace_attr_getinherited.3p.txt (LOOP overwrites, UNTIL_FULL stops, FLUSH
flushes), posix_trace_event.3p.txt (an event that does not fit is lost and
the overrun status says so).
"""
import pytest

from harness import run, kv, lines


def writers(out):
    """[(read, last, backwards)] per writer, and the 'total' line's dict."""
    ws, total = [], None
    for l in lines(out):
        d = kv(l)
        if l.startswith("writer "):
            ws.append((int(d["read"]), int(d["last"]), int(d["backwards"])))
        elif l.startswith("total "):
            total = {k: int(v) for k, v in d.items()}
    return ws, total


def test_attr():
    """Defaults (off), the range (more than 0, at most 10 s, tv_nsec below 1e9),
    EINVAL for anything else and for an attributes object not initialized;
    a refused value leaves the attribute as it was; posix_trace_get_attr
    gives the stream's own (doc/semantics.md "Blocking writers").
    posixtrace_stream_consumer: 0 on an active stream (a no-op without the
    attribute), EINVAL on a stream shut down or a trid that is none."""
    out = run("t027_block", "attr")
    assert lines(out) == lines("""
        default rc=0 sec=0 nsec=0
        get NULL rc=EINVAL
        set NULL rc=0
        set zero rc=EINVAL
        then rc=0 sec=0 nsec=0
        set 1ns rc=0
        then rc=0 sec=0 nsec=1
        set 100ms rc=0
        then rc=0 sec=0 nsec=100000000
        set max rc=0
        then rc=0 sec=10 nsec=0
        set max+1ns rc=EINVAL
        then rc=0 sec=0 nsec=0
        set negsec rc=EINVAL
        then rc=0 sec=0 nsec=0
        set negnsec rc=EINVAL
        then rc=0 sec=0 nsec=0
        set nsec1e9 rc=EINVAL
        then rc=0 sec=0 nsec=0
        set huge rc=EINVAL
        then rc=0 sec=0 nsec=0
        stream rc=0 sec=0 nsec=250000000
        stream off rc=0 sec=0 nsec=0
        consumer off rc=0
        consumer shut down rc=EINVAL
        consumer bad trid rc=EINVAL
        destroyed get rc=EINVAL sec=-1 nsec=-1
        destroyed set rc=EINVAL
        NULL attr set rc=EINVAL
        NULL attr get rc=EINVAL
        """)


@pytest.mark.parametrize("policy", ["loop", "until-full"])
@pytest.mark.parametrize("nwriters", [1, 4])
def test_slow_reader_gets_everything(policy, nwriters):
    """A 64 KiB stream (about 1600 events of 8 bytes), writers recording 20000
    to 50000 events each as fast as they can, a reader sleeping 1 ms every 50
    events: with a 2 s timeout every event arrives, each writer's in order,
    none lost, no OVERFLOW, overrun status NO_OVERRUN. Off, the same run loses
    events, counted (LOOP overwrites, UNTIL_FULL stops:
    posix_trace_attr_getinherited.3p.txt)."""
    n = 50000 if nwriters == 1 else 20000
    out = run("t027_block", "slow", policy, 2000, nwriters, n, timeout=120)
    ws, total = writers(out)
    assert ws == [(n, n - 1, 0)] * nwriters, out
    assert total == {"read": n * nwriters, "overflow": 0}, out
    assert "overrun=NO_OVERRUN" in out
    off = run("t027_block", "slow", policy, 0, nwriters, n, timeout=120)
    ws, total = writers(off)
    assert total["overflow"] > 0 and total["read"] + total["overflow"] == n * nwriters, off
    assert "overrun=OVERRUN" in off


@pytest.mark.parametrize("policy", ["loop", "until-full"])
def test_declared_consumer(policy):
    """posixtrace_stream_consumer (<posixtrace/control.h>): a reader that says
    it will read, then reads only 300 ms after two writers began, still gets
    every event (the writers waited for it, 2 s at most); without the
    attribute the same run loses events."""
    out = run("t027_block", "declared", policy, 2000, 2, 20000, timeout=120)
    ws, total = writers(out)
    assert ws == [(20000, 19999, 0)] * 2 and total == {"read": 40000, "overflow": 0}, out
    ws, total = writers(run("t027_block", "declared", policy, 0, 2, 20000, timeout=120))
    assert total["overflow"] > 0 and total["read"] + total["overflow"] == 40000


def test_flush_policy_waits_for_the_flusher():
    """FLUSH (posix_trace_attr_getinherited.3p.txt): the flusher thread is the
    consumer. One writer recording 300000 events back to back into a 64 KiB
    stream: with blocking, the log has them all, none lost; without, every
    event is either in the log or counted lost (POSIX_TRACE_OVERFLOW), none
    lost silently -- whether any is lost depends on whether the flusher keeps
    up with the writer on the machine (it may: the writer's clock is
    clock_gettime with POSIXTRACE_CLOCK=realtime), so the number is not
    asserted (test_slow_reader_gets_everything shows the waits with a reader
    that lags for sure)."""
    out = run("t027_block", "flush", 2000, 300000, timeout=120)
    assert "consumer with log rc=EINVAL" in out
    ws, total = writers(out)
    assert ws == [(300000, 299999, 0)] and total == {"read": 300000, "overflow": 0}
    ws, total = writers(run("t027_block", "flush", 0, 300000, timeout=120))
    assert total["read"] + total["overflow"] == 300000 and total["read"] > 0, total
    assert len(ws) == 1 and ws[0][2] == 0, ws


@pytest.mark.parametrize("mode", ["noreader", "selfreader"])
def test_no_consumer_no_wait(mode):
    """Nobody to make room: no reader ever called the getnext family
    (noreader), or the only reader is the recording thread itself
    (selfreader): 25 streams' worth of events with a 2 s timeout take no
    wait (well under the timeout) and are lost as without the attribute
    (LOOP: overrun)."""
    out = run("t027_block", mode, 2000, 40000)
    d = kv(lines(out)[0])
    assert int(d["elapsed_ms"]) < 1000, out
    assert "overrun=OVERRUN" in out


def test_stalled_reader_bounds_the_wait():
    """A reader that read once and stopped: the writer waits the timeout
    (300 ms) once, then the consumer counts as stalled until it gives a chunk
    back, and the writer overwrites (LOOP) without waiting again: the run takes
    about 300 ms, not one per chunk. Losses are counted exactly: the events
    read plus the OVERFLOW counts are all that were recorded."""
    out = run("t027_block", "stall", 300, 40000)
    ls = lines(out)
    ms = int(kv(ls[0])["elapsed_ms"])
    assert 290 <= ms < 1500, out
    ws, total = writers(out)
    assert total["overflow"] > 0 and "read+lost=40000" in out, out
    assert ws[0][1] == 39999 and ws[0][2] == 0


@pytest.mark.parametrize("how", ["stop", "shutdown"])
def test_stop_and_shutdown_release_waiters(how):
    """A writer waiting (5 s timeout, a stalled reader) is released by
    posix_trace_stop or posix_trace_shutdown at once: it is done well before
    its timeout."""
    out = run("t027_block", "release", how, 5000)
    d = kv(lines(out)[0])
    assert int(d["released_ms"]) < 500 and int(d["writer_ms"]) < 2000, out
