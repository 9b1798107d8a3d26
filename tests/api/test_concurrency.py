"""Concurrent recording: tests/api/t019_concurrent.c (4 writers + a reader, big stream),
tests/api/t020_loop_concurrent.c (4 writers + a reader, small LOOP stream),
tests/api/t021_signal.c (recording from signal handlers).

Pages: posix_trace_event.3p.txt, posix_trace_getnext_event.3p.txt (order, each
event once), posix_trace_attr_getinherited.3p.txt (LOOP).  doc/semantics.md,
"Events" (thread id, each thread's events in its order) and "Concurrency and
processes" (lock-free, async-signal-safe recording).
"""
from harness import run, kv, lines


def test_four_writers_one_reader():
    """4 threads x 50000 events into a 64 MiB stream while a reader drains it with
    posix_trace_getnext_event: every (thread, seq) reported exactly once
    (posix_trace_getnext_event.3p.txt: "Once reported, a trace event cannot be reported
    again"; posix_trace_event.3p.txt: every event recorded -- no loss in a stream this
    size), in each thread's order with non-decreasing timestamps per thread and the
    thread's pthread_self() as posix_thread_id (doc/semantics.md "Each thread's events
    are reported in its order"), each timestamp within [before - 10 us, after + 10 us]
    of CLOCK_REALTIME readings around its call (doc/semantics.md: posix_timestamp is
    CLOCK_REALTIME), data intact, pid = getpid(); no OVERFLOW/ERROR;
    one START, one STOP; nothing left; no overrun.  doc/semantics.md: "Reported
    timestamps never decrease from one reported event to the next" (all threads)."""
    out = run("t019_concurrent", timeout=120)
    ls = lines(out)
    for i in range(4):
        d = kv(ls[i])
        assert ls[i].startswith("thread %d " % i)
        assert (d["count"], d["last"], d["order_bad"], d["ts_bad"], d["data_bad"],
                d["tid_ok"], d["tid_bad"]) == ("50000", "50000", "0", "0", "0", "1", "0"), ls[i]
    assert ls[4:] == [
        "timestamps_outside_call=0",
        "start=1 stop=1 overflow=0 error=0 other=0 bad=0 pid_bad=0",
        "global_ts_decreases=0",
        "end status stream=SUSPENDED full=NOT_FULL overrun=NO_OVERRUN",
        "left=0"], out


def test_loop_overwrite_concurrent():
    """A 64 KiB POSIX_TRACE_LOOP stream overwritten by 4 concurrent writers (50000
    events each) while a reader drains it (posix_trace_attr_getinherited.3p.txt: LOOP
    reuses the oldest events' resources): no crash; each thread's reported events have
    strictly increasing sequence numbers and intact data (doc/semantics.md: each
    thread's events reported in its order); every OVERFLOW is immediately followed by a
    RESUME; reported timestamps never decrease (doc/semantics.md); reported + lost (sum of the OVERFLOW counts, doc/semantics.md) == recorded
    = START + 200000 + STOP; the STOP (recorded last) is reported; no ERROR event."""
    out = run("t020_loop_concurrent", timeout=120)
    ls = lines(out)
    decreases = [l for l in ls if l.startswith("timestamp decrease:")]
    ls = [l for l in ls if not l.startswith("timestamp decrease:")]
    d = kv(ls[0])
    assert d["recorded"] == "200002" and d["balance_ok"] == "1", ls[0]
    assert int(d["reported"]) + int(d["lost"]) == 200002, ls[0]
    assert ls[2] == "order_bad=0 data_bad=0 resume_bad=0 resume_eq_overflow=1", ls[2]
    assert ls[3] == "stop=1 start_le_1=1 error=0 other=0", ls[3]
    # doc/semantics.md, "Events": reported timestamps never decrease
    assert ls[4] == "global_ts_decreases=0", "\n".join(ls[4:] + decreases[:10])
    assert ls[5:] == ["left=0"], ls


def test_record_from_signal_handlers():
    """posix_trace_event is async-signal-safe (doc/semantics.md "Concurrency and
    processes"): a thread records 200000 events in a loop while SIGUSR1 (pthread_kill
    from another thread, every 100 us) and SIGALRM (setitimer, every 1 ms) handlers on
    the same thread also record, possibly nested in a posix_trace_event call or in each
    other.  Every event of the loop and of each handler is reported
    (posix_trace_event.3p.txt), each source in order, data (sequence + checksum) intact
    and not truncated, posix_thread_id the recording thread; no OVERFLOW/ERROR;
    reported timestamps never decrease (doc/semantics.md)."""
    out = run("t021_signal", timeout=120)
    ls = lines(out)
    assert ls[0] == "loop recorded=200000 reported_to=200000 bad_order=0", ls[0]
    for i, name in ((1, "usr1"), (2, "alrm")):
        d = kv(ls[i])
        assert ls[i].startswith(name + " ")
        assert int(d["handled"]) > 0, ls[i]     # the scenario really ran handlers
        assert d["reported_to"] == d["handled"] and d["bad_order"] == "0", ls[i]
    assert ls[4] == "bad_data=0 bad_tid=0 overflow=0 error=0 other=0", ls[4]
    assert ls[5] == "ts_decreases=0", ls[5]    # doc/semantics.md, "Events"
    assert len(ls) == 6
