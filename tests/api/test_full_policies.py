"""Stream-full policies: UNTIL_FULL (tests/api/t016_until_full.c), LOOP
(tests/api/t017_loop.c), and the stream-min-size rule (tests/api/t018_sizerule.c).

Pages: posix_trace_attr_getinherited.3p.txt (the stream-full-policy values),
posix_trace_attr_getlogsize.3p.txt (the size rule), posix_trace_start.3p.txt (start/
stop while full), posix_trace_get_attr.3p.txt (get_status, overrun reset),
posix_trace_getnext_event.3p.txt.  Implementation-defined: doc/semantics.md,
"Reporting of system events" (UNTIL_FULL restart sequence, OVERFLOW/RESUME, full and
overrun status) and "Attributes" (event size formula).
"""
import re

from harness import run, kv, lines

MIN_8 = (65536 - 1072) // 56   # user events of 8 bytes that fit next to a START


def parse_events(ls):
    """Consumes event/user lines up to and including 'end'; returns a list of dicts
    (kind 'user' with first/last/n/first_ts/last_ts, or kind 'event' with the fields)."""
    out = []
    while ls:
        l = ls.pop(0)
        if l == "end":
            return out
        m = re.match(r"user seq=(\d+)\.\.(\d+) n=(\d+)(?: first_ts=(\d+) last_ts=(\d+))?$", l)
        if m:
            out.append({"kind": "user", "first": int(m.group(1)), "last": int(m.group(2)),
                        "n": int(m.group(3)),
                        "first_ts": int(m.group(4) or 0), "last_ts": int(m.group(5) or 0)})
            continue
        assert l.startswith("event "), l
        d = kv(l)
        d["kind"] = "event"
        d["line"] = l
        out.append(d)
    raise AssertionError("no 'end' line")


def test_until_full():
    """POSIX_TRACE_UNTIL_FULL (posix_trace_attr_getinherited.3p.txt): "The trace stream
    will run until the trace stream resources are exhausted. Then the trace stream will
    stop" -- status SUSPENDED + FULL (doc/semantics.md), overrun set, then reset by the
    next get_status (posix_trace_get_attr.3p.txt); start/stop while full change nothing
    and record nothing (posix_trace_start.3p.txt: "If the trace stream is full, the
    POSIX_TRACE_START [STOP] system trace event shall not be recorded and the status of
    the trace stream shall not be changed").  Reading: the recorded events (a run of
    consecutive sequence numbers from the first, at least (64 KiB - 1072) / 56 of them:
    posix_trace_attr_getlogsize.3p.txt), then "a POSIX_TRACE_STOP trace event shall be
    reported after reporting the last recorded trace event" (auto = 1, not earlier than
    the last event); "The trace system shall restart the trace stream when it is empty
    ... A POSIX_TRACE_START trace event shall be reported before reporting the next
    recorded trace event": doc/semantics.md -- OVERFLOW (lost = recorded - reported) +
    RESUME + START, all timestamped at the restart (while the reader drained); status
    RUNNING + NOT_FULL; twice; events are recorded again afterwards."""
    out = run("t016_until_full", timeout=120)
    ls = lines(out)
    for rnd in (1, 2):
        assert ls.pop(0) == "round %d" % rnd
        rec = kv(ls.pop(0))
        first, nrec = int(rec["from"]), int(rec["n"])
        assert ls[:6] == [
            "full status stream=SUSPENDED full=FULL overrun=OVERRUN",
            "full again status stream=SUSPENDED full=FULL overrun=NO_OVERRUN",
            "stop while full rc=0",
            "after stop status stream=SUSPENDED full=FULL overrun=NO_OVERRUN",
            "start while full rc=0",
            "after start status stream=SUSPENDED full=FULL overrun=NO_OVERRUN"], ls[:6]
        del ls[:6]
        evs = parse_events(ls)
        user_read = int(kv(ls.pop(0))["user"])
        times = {k: int(v) for k, v in kv(ls.pop(0)).items()}
        assert ls.pop(0) == "restarted status stream=RUNNING full=NOT_FULL"
        if rnd == 1:
            st = evs.pop(0)
            assert st["id"] == "0" and st["filter"] == "[]" and st["tid"] == "main", st["line"]
        u = evs.pop(0)
        assert u["kind"] == "user" and u["first"] == first, u
        k = u["n"]
        assert k == user_read
        assert MIN_8 <= k < nrec, (k, nrec)
        assert times["fill0"] - 10000 <= u["first_ts"] and u["last_ts"] <= times["fill1"] + 10000
        kinds = [(e["id"], e.get("auto"), e.get("lost"), e["len"]) for e in evs]
        assert kinds == [("1", "1", None, "4"), ("3", None, str(nrec - k), "8"),
                         ("4", None, None, "0"), ("0", None, None, "256")], \
            [e["line"] for e in evs]
        assert all(e["pid"] == "self" for e in evs)
        stop, ovf, res, start = evs
        assert start["filter"] == "[]"
        assert int(stop["ts"]) >= u["last_ts"]
        t = int(ovf["ts"])
        assert int(res["ts"]) == t and int(start["ts"]) == t, [e["line"] for e in evs]
        assert times["read0"] - 10000 <= t <= times["read1"] + 10000
        assert t >= int(stop["ts"])
    evs = parse_events(ls)
    assert evs[0]["kind"] == "user" and (evs[0]["first"], evs[0]["n"]) == (1000000, 3)
    assert evs[1]["line"] == (
        "event id=1 name=posix_trace_stop pid=self tid=main len=4 auto=0 trunc=0 ts="
        + evs[1]["ts"])
    assert len(evs) == 2
    assert ls == ["end status stream=SUSPENDED full=NOT_FULL overrun=NO_OVERRUN"]


def check_loop(mode, lost_extra, read_before):
    """Checks t017_loop's output; returns the second status line taken while
    overwritten (checked by test_loop_full_status_kept)."""
    out = run("t017_loop", mode, timeout=120)
    ls = lines(out)
    if mode == "middle":
        assert ls.pop(0) == "part status stream=RUNNING full=NOT_FULL overrun=NO_OVERRUN"
        assert ls.pop(0) == "read first 100"
    total = int(kv(ls.pop(0))["total"])
    # doc/semantics.md: full while no free chunk is left (LOOP: overwriting); overrun
    # set when events are lost, reset by get_status (posix_trace_get_attr.3p.txt)
    assert ls.pop(0) == "overwritten status stream=RUNNING full=FULL overrun=OVERRUN"
    again = ls.pop(0)
    assert again.startswith("overwritten again status stream=RUNNING full=")
    assert again.endswith(" overrun=NO_OVERRUN"), again
    evs = parse_events(ls)
    ovf, res, u = evs[0], evs[1], evs[2]
    assert len(evs) == 3, evs
    assert (ovf.get("id"), res.get("id")) == ("3", "4"), evs
    assert ovf["len"] == "8" and res["len"] == "0"
    assert u["kind"] == "user" and u["last"] == total - 1, u
    # the most recent events are kept, the gap is where the loss is, and its count is
    # exact: reported + lost == recorded
    assert u["first"] == read_before + int(ovf["lost"]) - lost_extra, (u, ovf)
    assert u["n"] == total - u["first"]
    assert u["n"] >= MIN_8
    # OVERFLOW and RESUME carry the timestamp of the first event kept after the gap
    assert int(ovf["ts"]) == int(res["ts"]) == u["first_ts"], evs
    assert int(kv(ls.pop(0))["user"]) == u["n"]
    assert ls.pop(0) == "drained status stream=RUNNING full=NOT_FULL overrun=NO_OVERRUN"
    evs = parse_events(ls)
    assert len(evs) == 2
    assert (evs[0]["first"], evs[0]["n"]) == (total, 10)
    assert evs[1]["line"] == "event id=1 name=posix_trace_stop pid=self tid=main len=4 auto=0 trunc=0"
    assert ls == ["end status stream=SUSPENDED full=NOT_FULL overrun=NO_OVERRUN"]
    return again


def test_loop_overwrites_oldest():
    """POSIX_TRACE_LOOP (posix_trace_attr_getinherited.3p.txt): "when the trace stream is
    full, the trace system shall reuse the resources allocated to the oldest trace
    events recorded. In this way, the trace stream will always contain the most recent
    trace events recorded."  doc/semantics.md: the gap is reported where it is as
    OVERFLOW (uint64 lost count) immediately followed by RESUME, both timestamped like
    the first event kept; full status FULL while overwriting; overrun set then reset
    by get_status (posix_trace_get_attr.3p.txt).  START filtered out: lost == first kept sequence number.  After
    draining: NOT_FULL, and new events are recorded without loss."""
    check_loop("nostart", 0, 0)


def test_loop_overwrites_start_too():
    """As test_loop_overwrites_oldest (posix_trace_attr_getinherited.3p.txt, LOOP;
    doc/semantics.md) with START recorded: START is the oldest event, overwritten
    first, and counts among the lost: lost == first kept sequence number + 1."""
    check_loop("withstart", 1, 0)


def test_loop_gap_in_the_middle():
    """As test_loop_overwrites_oldest (posix_trace_attr_getinherited.3p.txt, LOOP;
    doc/semantics.md "A gap of lost events is reported where it is"): 100 events read
    first, then the stream is overwritten: the gap (OVERFLOW + RESUME) starts after
    event 99 and lost == first kept - 100."""
    check_loop("middle", 0, 100)


def test_loop_full_status_kept():
    """doc/semantics.md: "Full status is FULL ... while no free chunk is left (LOOP: the
    stream is overwriting)"; posix_trace_get_attr.3p.txt: get_status resets the
    *overrun* status only.  A second get_status on the overwritten LOOP stream, with
    nothing recorded or read in between, still reports FULL (and NO_OVERRUN)."""
    again = check_loop("nostart", 0, 0)
    assert again == "overwritten again status stream=RUNNING full=FULL overrun=NO_OVERRUN"


def test_size_rule():
    """posix_trace_attr_getlogsize.3p.txt: "The values returned as the maximum memory
    sizes of the user and system trace events shall be such that if the sum of the
    maximum memory sizes of a set of the trace events that may be recorded in a trace
    stream is less than or equal to the stream-min-size attribute of that trace stream,
    the system provides the necessary resources for recording all those trace events,
    without loss."  With stream size S and data length d, floor(S / size(d)) events
    (less one system event size when START is recorded) recorded without reading are all
    read back, intact and in order, nothing else, no overrun, stream still RUNNING:
    several d (0..1000, truncated at 256), S = 4 KiB, 64 KiB, 1 MiB, LOOP and
    UNTIL_FULL, 1, 16 or 64 threads alive at once sharing the events, and a mix of two
    sizes.  Sizes follow doc/semantics.md (48 + 4*ceil(min(d, 256)/4))."""
    out = run("t018_sizerule", timeout=60)
    n_one = n_mixed = 0
    for l in lines(out):
        d = kv(l)
        if "mixed" in l:
            assert int(d["n"]) > 0 and d["read"] == d["n"], l
            assert d["other"] == "0" and d["overrun"] == "0", l
            n_mixed += 1
            continue
        S, dl, start = int(d["S"]), int(d["d"]), int(d["start"])
        size = 48 + 4 * ((min(dl, 256) + 3) // 4)
        assert int(d["evsize"]) == size, l
        assert int(d["n"]) == (S - (1072 if start else 0)) // size, l
        assert d["read"] == d["n"], l
        assert d["start_read"] == str(start), l
        assert d["other"] == "0" and d["bad"] == "0" and d["overrun"] == "0", l
        assert d["stream"] == "RUNNING", l
        n_one += 1
    assert (n_one, n_mixed) == (24, 2)
