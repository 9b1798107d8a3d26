"""Recorded events: the posix_trace_event_info fields, truncation, order.
Programs: tests/api/t011_events.c, tests/api/t012_truncation.c.

Pages: posix_trace_event.3p.txt, posix_trace_getnext_event.3p.txt, trace.h.0p.txt
(the posix_trace_event_info members).  Implementation-defined: doc/semantics.md,
"Events".
"""
from harness import run, expect_lines, kv


def test_event_ids_pids_threads_data():
    """posix_trace_event.3p.txt records "the event_id and the user data"; the
    posix_trace_event_info (trace.h.0p.txt) of each event carries posix_event_id,
    posix_pid == getpid() and (doc/semantics.md) posix_thread_id == pthread_self() of
    the recording thread -- 4 threads alive together plus main -- and the data
    byte for byte (posix_trace_getnext_event.3p.txt: "all the recorded data shall be
    transferred"), untruncated."""
    out = run("t011_events", "threads")
    ls = out.strip().splitlines()
    pid = kv(ls[0])["pid"]
    threads = {}
    for l in ls[1:6]:
        d = kv(l)
        threads[d["id"]] = (int(d["idx"]), d["tid"])
    assert len(set(t for _, t in threads.values())) == 5, "thread ids not distinct"
    seen = set()
    evs = ls[6:]
    assert len(evs) == 7, out
    for l in evs:
        d = kv(l)
        assert d["pid"] == pid, l
        assert d["trunc"] == "0", l
        if d["id"] in ("0", "1"):
            assert d["tid"] == threads["261"][1], l    # start/stop by main
            continue
        idx, tid = threads[d["id"]]
        assert d["tid"] == tid, l
        if idx == 4:
            assert d["data"] == "6d61696e" and d["len"] == "4", l
        else:
            want = "".join("%02x" % (idx * 16 + i) for i in range(idx + 1))
            assert d["data"] == want and d["len"] == str(idx + 1), l
        seen.add(idx)
    assert seen == {0, 1, 2, 3, 4}
    assert kv(evs[0])["id"] == "0" and kv(evs[-1])["id"] == "1"


def test_event_timestamps():
    """posix_timestamp is CLOCK_REALTIME (doc/semantics.md): each one lies within
    [before - 10us, after + 10us] of CLOCK_REALTIME readings taken around its
    posix_trace_event() call; tv_nsec is normalized; timestamps of one thread's
    successive events do not decrease; all 2000 events reported."""
    out = run("t011_events", "timestamp")
    n = 0
    last = 0
    for l in out.splitlines():
        if l.startswith("count="):
            assert l == "count=2000"
            continue
        d = kv(l)
        b, ts, a, ns = int(d["before"]), int(d["ts"]), int(d["after"]), int(d["nsec"])
        assert b - 10000 <= ts <= a + 10000, l
        assert 0 <= ns < 10**9, l
        assert ts >= last, l
        last = ts
        n += 1
    assert n == 2000


def test_prog_address():
    """posix_prog_address (trace.h.0p.txt) is the return address of the
    posix_trace_event() call (doc/semantics.md): it lies inside the calling function,
    after its entry and just before the return address of the next call in it; the
    same call site gives the same address, different call sites different ones."""
    out = run("t011_events", "address")
    expect_lines(out, """
        seen=4
        a in recorder_a=1
        b1 in recorder_b=1
        b2 in recorder_b=1
        same call site same address=1
        two call sites differ=1
        not main=1
    """)


def test_order_and_once():
    """posix_trace_getnext_event.3p.txt: "The report of a trace event shall be
    sequential starting from the oldest recorded trace event ... Once reported, a trace
    event cannot be reported again" -- 5000 events (read partly while recording) come
    back in order, each once, then unavailable != 0."""
    out = run("t011_events", "order")
    expect_lines(out, """
        count=5000 in_order=1 dups=0 system_events=2
        trygetnext after all rc=0
        unavailable=1
    """)


def pat(n):
    return "".join("%02x" % ((i * 7 + 3) & 0xff) for i in range(n))


def test_truncation():
    """posix_trace_event.3p.txt: data not longer than max-data-size is recorded
    POSIX_TRACE_NOT_TRUNCATED, longer data "is truncated to this declared maximum size"
    and marked POSIX_TRACE_TRUNCATED_RECORD (max-data-size 16, 256 default, 0, 65536).
    posix_trace_getnext_event.3p.txt: if num_bytes >= the recorded length all is
    transferred and the status is NOT_TRUNCATED or TRUNCATED_RECORD; if num_bytes is
    less, "the data transferred shall be truncated to a length of num_bytes, the value
    stored in the variable pointed to by data_len shall be equal to num_bytes", status
    POSIX_TRACE_TRUNCATED_READ; nothing written past num_bytes (canary).  Zero-length
    data (NULL or not) reads back with length 0, NOT_TRUNCATED.  System events too
    (START, 256 bytes; STOP read into 3 bytes)."""
    out = run("t012_truncation")
    c = " canary_ok=1"
    expect_lines(out, """
        -- maxdata 16
        start id=0 num_bytes=256 len=256 trunc=0{c}
        rec10 id=257 num_bytes=1024 len=10 trunc=0 data={p10}{c}
        rec16 id=257 num_bytes=1024 len=16 trunc=0 data={p16}{c}
        rec17 id=257 num_bytes=1024 len=16 trunc=1 data={p16}{c}
        rec1000 id=257 num_bytes=1024 len=16 trunc=1 data={p16}{c}
        recNULL0 id=257 num_bytes=1024 len=0 trunc=0 data={c}
        rec0 id=257 num_bytes=1024 len=0 trunc=0 data={c}
        read10_into4 id=257 num_bytes=4 len=4 trunc=2 data={p4}{c}
        read10_into9 id=257 num_bytes=9 len=9 trunc=2 data={p9}{c}
        read10_into10 id=257 num_bytes=10 len=10 trunc=0 data={p10}{c}
        read10_into0 id=257 num_bytes=0 len=0 trunc=2 data={c}
        read100rec_into8 id=257 num_bytes=8 len=8 trunc=2 data={p8}{c}
        read100rec_into16 id=257 num_bytes=16 len=16 trunc=1 data={p16}{c}
        read0_into0 id=257 num_bytes=0 len=0 trunc=0 data={c}
        stop_into3 id=1 num_bytes=3 len=3 trunc=2 data=000000{c}
        none rc=0 unavailable=1
        -- maxdata default
        start id=0 num_bytes=256 len=256 trunc=0{c}
        rec256 id=257 num_bytes=70000 len=256 trunc=0 pattern_ok=1{c}
        rec257 id=257 num_bytes=70000 len=256 trunc=1 pattern_ok=1{c}
        -- maxdata 0
        start id=0 num_bytes=256 len=256 trunc=0{c}
        rec5 id=257 num_bytes=64 len=0 trunc=1 data={c}
        rec0 id=257 num_bytes=64 len=0 trunc=0 data={c}
        -- maxdata 65536
        start id=0 num_bytes=256 len=256 trunc=0{c}
        rec65536 id=257 num_bytes=70000 len=65536 trunc=0 pattern_ok=1{c}
        rec65537 id=257 num_bytes=70000 len=65536 trunc=1 pattern_ok=1{c}
        read70000rec_into65535 id=257 num_bytes=65535 len=65535 trunc=2 pattern_ok=1{c}
    """.format(c=c, p4=pat(4), p8=pat(8), p9=pat(9), p10=pat(10), p16=pat(16)))
