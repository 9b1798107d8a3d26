"""Reading events: getnext (blocking), trygetnext, timedgetnext.
Program: tests/api/t015_readers.c (one mode per test; every blocking call is bounded by
a watchdog thread in the program and by the subprocess timeout).

Pages: posix_trace_getnext_event.3p.txt (shared by trygetnext and timedgetnext),
posix_trace_create.3p.txt (shutdown wakes blocked readers).  doc/semantics.md,
"Concurrency and processes".
"""
from harness import run, expect_lines


def test_trygetnext_never_blocks():
    """posix_trace_getnext_event.3p.txt: "The posix_trace_trygetnext_event() function
    shall not block ... if no trace event was reported, the variable pointed to by the
    unavailable argument shall be set to a value different from zero" (suspended and
    running empty streams, 1000 calls), and zero when an event is reported."""
    out = run("t015_readers", "try_empty")
    expect_lines(out, """
        suspended empty rc=0 unavailable=1
        running empty x1000 all_unavailable=1
        one event rc=0 unavailable=0 len=2
        then rc=0 unavailable=1
        fast=1
    """)


def test_getnext_blocks_until_event():
    """posix_trace_getnext_event.3p.txt: "The posix_trace_getnext_event() function shall
    block if the trid argument identifies an active trace stream and there is currently
    no trace event ready": a reader thread stays blocked 200 ms, and is woken by an
    event another thread records (returned after that event's timestamp)."""
    out = run("t015_readers", "getnext_wakes")
    expect_lines(out, """
        reader still blocked=1
        getnext rc=0 unavailable=0 id=257 len=4 data=77616b65
        waited=1 returned_after_event=1
    """)


def test_getnext_on_suspended_stream_woken_by_start():
    """posix_trace_getnext_event.3p.txt: getnext blocks on an active (created, not shut
    down) stream with nothing to report, suspended included; posix_trace_start records
    START (posix_trace_start.3p.txt), which wakes it."""
    out = run("t015_readers", "getnext_start")
    expect_lines(out, """
        reader still blocked=1
        getnext rc=0 unavailable=0 id=0 len=256 data=%s
    """ % ("00" * 32))


def test_timedgetnext_past_abstime():
    """posix_trace_getnext_event.3p.txt: the timeout expires "if the absolute time
    specified by abstime has already passed at the time of the call": ETIMEDOUT at once
    (abstime 0, now - 1 s, now)."""
    out = run("t015_readers", "timed_past")
    expect_lines(out, """
        abstime=0 rc=ETIMEDOUT
        immediate=1
        abstime=now-1s rc=ETIMEDOUT
        immediate=1
        abstime=now rc=ETIMEDOUT
        immediate=1
    """)


def test_timedgetnext_waits_until_abstime():
    """posix_trace_getnext_event.3p.txt: with nothing available, timedgetnext waits and
    returns ETIMEDOUT "when the value of that clock [CLOCK_REALTIME] equals or exceeds
    abstime": for 50 ms and 150 ms timeouts it returns no earlier than abstime
    (CLOCK_REALTIME read after the return >= abstime; elapsed monotonic time >= the
    timeout) and not much later (< 5 s)."""
    out = run("t015_readers", "timed_wait")
    expect_lines(out, """
        timeout 50ms rc=ETIMEDOUT
        timeout 50ms returned_at_or_after_abstime=1 waited_enough=1 not_too_long=1
        timeout 150ms rc=ETIMEDOUT
        timeout 150ms returned_at_or_after_abstime=1 waited_enough=1 not_too_long=1
    """)


def test_timedgetnext_invalid_abstime():
    """posix_trace_getnext_event.3p.txt: "EINVAL There is no trace event immediately
    available from the trace stream, and the timeout argument is invalid" (tv_nsec
    1e9, -1, 2e9); "Under no circumstance shall the function fail with a timeout if a
    trace event is immediately available from the trace stream. The validity of the
    abstime argument need not be checked if a trace event is immediately available":
    available events are returned with an invalid or past abstime, in order."""
    out = run("t015_readers", "timed_invalid")
    expect_lines(out, """
        empty tv_nsec=1000000000 rc=EINVAL
        empty tv_nsec=-1 rc=EINVAL
        empty tv_nsec=2000000000 rc=EINVAL
        available tv_nsec=1000000000 rc=0 unavailable=0 id=257 len=2 data=7831
        available abstime=0 rc=0 unavailable=0 id=257 len=2 data=7832
        available abstime=now-1s rc=0 unavailable=0 id=257 len=2 data=7833
        empty again abstime=0 rc=ETIMEDOUT
    """)


def test_timedgetnext_woken_by_event():
    """posix_trace_getnext_event.3p.txt: timedgetnext waits "as in the
    posix_trace_getnext_event() function": an event recorded by another thread wakes
    it well before its 10 s timeout."""
    out = run("t015_readers", "timed_wakes")
    expect_lines(out, """
        reader still blocked=1
        timedgetnext rc=0 unavailable=0 id=257 len=4 data=77616b65
        well before timeout=1
    """)


def test_shutdown_wakes_getnext():
    """posix_trace_create.3p.txt (posix_trace_shutdown): "Any thread blocked on one of
    the trace_getnext_event() functions (which specified this trid) before this call is
    unblocked with the error [EINVAL]" (doc/semantics.md: shutdown wakes them): a
    reader blocked in posix_trace_getnext_event returns EINVAL promptly."""
    out = run("t015_readers", "shutdown_getnext", timeout=60)
    expect_lines(out, """
        reader still blocked=1
        shutdown rc=0
        getnext rc=EINVAL
        woken promptly=1
    """)


def test_shutdown_wakes_timedgetnext():
    """posix_trace_create.3p.txt (posix_trace_shutdown), as above for a reader blocked
    in posix_trace_timedgetnext_event with a 20 s timeout: EINVAL, well before the
    timeout."""
    out = run("t015_readers", "shutdown_timed", timeout=60)
    expect_lines(out, """
        reader still blocked=1
        shutdown rc=0
        timedgetnext rc=EINVAL
        woken promptly=1
    """)


def test_getnext_eintr():
    """posix_trace_getnext_event.3p.txt: "EINTR The operation was interrupted by a
    signal, and so the call had no effect": a reader blocked in getnext, signalled
    (SIGUSR1, handler installed without SA_RESTART), returns EINTR; the next event is
    then read normally."""
    out = run("t015_readers", "eintr_getnext")
    expect_lines(out, """
        getnext rc=EINTR
        handler ran=1
        then event=1 id_ok=1
    """)


def test_timedgetnext_eintr():
    """posix_trace_getnext_event.3p.txt: EINTR for posix_trace_timedgetnext_event too
    (blocked with a 20 s timeout, signalled)."""
    out = run("t015_readers", "eintr_timed")
    expect_lines(out, """
        timedgetnext rc=EINTR
        handler ran=1
        then event=1 id_ok=1
    """)


def test_two_concurrent_readers():
    """posix_trace_getnext_event.3p.txt: "Once reported, a trace event cannot be
    reported again"; doc/semantics.md: the readers "may be called from several threads;
    they are serialized" -- two threads draining one stream while 20000 events are
    recorded see each event exactly once between them."""
    out = run("t015_readers", "two_readers")
    expect_lines(out, "two readers total=20000 once=20000 missing=0 dup=0 bad=0")
