"""Trace Log option under concurrency (tests/log/t043_log_race.c): several threads
recording, explicit flushes from other threads while the FLUSH policy's own
flusher runs, and posix_trace_clear meanwhile.  The log is read back and checked
by the program.

Pages: /work/shared/spec/posix_trace_create.3p.txt (flush: "During the flush
operation, it shall be possible to trace new trace events up to the point when the
trace stream becomes full"), posix_trace_clear.3p.txt, posix_trace_attr_getinherited.3p.txt
(FLUSH: the UNTIL_FULL rules when the stream fills).  Choices: doc/semantics.md
("Trace Log option": losses "reported in the log"; "Events": each thread's order;
OVERFLOW "number of events lost").
"""
from harness import run, kv, lines


def race(tmp_path, mode, timeout=60):
    out = run("t043_log_race", str(tmp_path / "race.log"), mode, timeout=timeout)
    ls = lines(out)
    res = {k: int(v) for k, v in kv([l for l in ls if l.startswith("result")][0]).items()}
    after = [l for l in ls if l.startswith("after last clear")]
    if after:
        a = kv(after[0])
        res["after_recorded"], res["after_read"] = int(a["recorded"]), int(a["read"])
    assert "shutdown rc=0" in ls, out
    # every posix_trace_clear returned 0 (the clear modes call it 100 times)
    assert "clears n=%d failed=0" % (0 if mode == "flushers" else 100) in ls, out
    return res, out


def test_explicit_flushes_while_recording(tmp_path):
    """4 threads record 200,000 events each back to back while 2 threads call
    posix_trace_flush in a loop and the FLUSH policy's flusher runs: every flush returns
    0; the log holds each thread's events intact and in its order, no
    POSIX_TRACE_ERROR, and every event is either read or counted in an OVERFLOW: read +
    lost == recorded (doc/semantics.md)."""
    for _ in range(2):
        r, out = race(tmp_path, "flushers")
        assert r["recorded"] == 800000
        assert (r["bad_data"], r["bad_order"], r["errors"], r["other"], r["flush_fail"]) == (
            0, 0, 0, 0, 0), out
        assert r["read"] + r["lost"] == r["recorded"], out


def test_clear_while_flushing(tmp_path):
    """posix_trace_clear on a stream with log (LOOP, 64 MiB) while one thread records
    without pause and the FLUSH policy's flusher runs (the default with a log, no other
    thread of the application involved): 100 clears 1 ms apart, each returning 0, then
    at least 10,000 more events.  The program does not crash; the log holds intact events in order and no
    POSIX_TRACE_ERROR; and of the events recorded after the last clear returned (the
    log cannot wrap: 64 MiB), each is in the log or counted lost in an OVERFLOW
    (posix_trace_clear.3p.txt: clear reinitializes the stream and the log; only the
    events "that occurred during the posix_trace_clear() call" are unspecified).
    Three runs."""
    for _ in range(3):
        r, out = race(tmp_path, "clearauto")
        assert (r["bad_data"], r["bad_order"], r["errors"], r["other"]) == (0, 0, 0, 0), out
        assert r["after_recorded"] >= 10000, out
        assert r["after_read"] <= r["after_recorded"], out
        assert r["after_read"] + r["lost"] >= r["after_recorded"], \
            "after the last clear: %d events recorded, %d in the log, %d reported lost" % (
                r["after_recorded"], r["after_read"], r["lost"])


def test_clear_while_flushing_explicitly(tmp_path):
    """As test_clear_while_flushing, with one more thread calling posix_trace_flush in a
    loop (posix_trace_clear and posix_trace_flush from two threads at once)."""
    for _ in range(3):
        r, out = race(tmp_path, "clear")
        assert (r["bad_data"], r["bad_order"], r["errors"], r["other"], r["flush_fail"]) == (
            0, 0, 0, 0, 0), out
        assert r["after_recorded"] >= 10000, out
        assert r["after_read"] <= r["after_recorded"], out
        assert r["after_read"] + r["lost"] >= r["after_recorded"], \
            "after the last clear: %d events recorded, %d in the log, %d reported lost" % (
                r["after_recorded"], r["after_read"], r["lost"])
