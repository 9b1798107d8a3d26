"""Tracing another process: a controller creates streams for a target process
(issue 4).  Program: tests/xproc/t050_xproc_basic.c (helpers tests/common/xproc.h; the other
users' processes run tests/xproc/t052_xproc_exec.c).

Pages: posix_trace_create.3p.txt ("The pid argument represents the target process
to be traced", EPERM, ESRCH; the trid "may only be used by the process that created
it"), posix_trace_event.3p.txt (events recorded "in the trace stream into which the
calling process is being traced and in which event_id is not filtered out"; "no
effect" when no stream is running), posix_trace_getnext_event.3p.txt (blocking,
timedgetnext), posix_trace_set_filter.3p.txt, posix_trace_trid_eventid_open.3p.txt,
posix_trace_eventid_get_name.3p.txt, posix_trace_open.3p.txt.  Choices:
doc/semantics.md ("Events": pid and thread of the recording process;
"Concurrency and processes").

System events written by the controller (START, STOP) carry the traced
process's pid (SYS below): the controller records them in its own slot on the
target's behalf.
"""
import os

import pytest

from harness import run, kv, lines
from xproccommon import Col, check_run, start_stop, others_can_run

SYS = "T"   # pid label of the START/STOP events of a stream for target T


def prog(*args, **kw):
    return run("t050_xproc_basic", *args, **kw)


def t052():
    from harness import program
    return program("t052_xproc_exec")


def test_basic_three_threads():
    """Controller and target are separate processes; the stream is created and
    started before the target's first posix_trace_event.  The target records 1000
    events from each of three threads (its main thread and two it creates after
    the start) and "xp/done": every event arrives once, in each thread's order,
    with posix_pid the target's pid, posix_thread_id the recording thread's
    pthread_self (three distinct values), the event id the target's
    posix_trace_eventid_open returned, the data byte for byte and the target's
    name through posix_trace_eventid_get_name (posix_trace_event.3p.txt,
    posix_trace_getnext_event.3p.txt; doc/semantics.md "Events").  Nothing lost."""
    out = prog("basic")
    s = Col(out, "S")
    assert s.sys == start_stop(SYS), out
    assert s.lost == 0 and s.foreign == 0, out
    tid = kv([l for l in lines(out) if l.startswith("S target_id=")][0])
    assert tid["name"] == "xp/ev", out
    assert "S get_name(target's id) rc=0" in out
    ks = s.keys()
    assert set(ks) == {("T", 0, "xp/ev"), ("T", 1, "xp/ev"), ("T", 2, "xp/ev"),
                       ("T", 0, "xp/done")}, out
    tids = set()
    for thr in range(3):
        u = ks[("T", thr, "xp/ev")]
        check_run(u, 1000)
        assert u["pid"] == "T" and u["id"] == tid["target_id"], u
        tids.add(u["tid"])
    assert len(tids) == 3, out
    check_run(ks[("T", 0, "xp/done")], 1)
    assert ks[("T", 0, "xp/done")]["tid"] == ks[("T", 0, "xp/ev")]["tid"]
    assert "T exit=0" in lines(out)


def test_stream_created_after_target_recorded():
    """The target records 1000 events while nobody traces it (posix_trace_event:
    "no effect"), then a stream is created for it: the 1000 events it records next
    all arrive, none of the earlier ones."""
    out = prog("after")
    s = Col(out, "S")
    assert s.sys == start_stop(SYS) and s.lost == 0 and s.foreign == 0, out
    ks = s.keys()
    assert set(ks) == {("T", 0, "xp/ev"), ("T", 0, "xp/done")}, out
    check_run(ks[("T", 0, "xp/ev")], 1000, first=1000)
    assert ks[("T", 0, "xp/ev")]["pid"] == "T"
    assert "T exit=0" in lines(out)


def test_inspector_running_target():
    """A long-running target records without pause (a short sleep every 50
    events); twice a stream is created for it, read while it runs, and shut down
    while it still records.  Each time: no event whose posix_trace_event returned
    before posix_trace_create was called (no_early), every event begun after
    posix_trace_start returned (covers), contiguous, in order, intact, nothing
    lost; the target exits normally."""
    out = prog("inspector")
    ls = lines(out)
    for session in (1, 2):
        d = kv([l for l in ls if l.startswith("session=%d " % session)][0])
        assert d["rc"] == "0" and d["keys"] == "1", out
        for k in ("no_early", "covers", "reached"):
            assert d[k] == "1", (k, out)
        for k in ("gaps", "lost", "disorder", "bad", "namebad", "foreign"):
            assert d[k] == "0", (k, out)
        assert d["pid"] == "T"
    assert "T exit=0" in ls


def test_two_controllers_one_target():
    """Two controller processes each create and start a stream for the same target
    (posix_trace_create.3p.txt: a stream per call); each stream gets every event
    of the target's three threads, intact, and nothing else."""
    out = prog("two_ctl")
    for c in ("C1", "C2"):
        s = Col(out, c)
        assert s.sys == start_stop(SYS) and s.lost == 0 and s.foreign == 0, out
        ks = s.keys()
        assert set(ks) == {("T", 0, "xp/ev"), ("T", 1, "xp/ev"), ("T", 2, "xp/ev"),
                           ("T", 0, "xp/done")}, out
        for thr in range(3):
            check_run(ks[("T", thr, "xp/ev")], 500)
        check_run(ks[("T", 0, "xp/done")], 1)
        assert c + " exit=0" in lines(out)
    assert "T exit=0" in lines(out)


def test_two_streams_different_filters():
    """Two streams for one target, S1 filtering out "xp/a", S2 filtering out
    "xp/b" (posix_trace_set_filter.3p.txt; posix_trace_event.3p.txt: recorded in
    each stream "in which event_id is not filtered out"): S1 gets the 500 "xp/b"
    and not one "xp/a", S2 the reverse; both get "xp/done"."""
    out = prog("two_filters")
    s1, s2 = Col(out, "S1"), Col(out, "S2")
    for s in (s1, s2):
        assert s.sys == start_stop(SYS) and s.lost == 0 and s.foreign == 0, out
    k1, k2 = s1.keys(), s2.keys()
    assert set(k1) == {("T", 1, "xp/b"), ("T", 0, "xp/done")}, out
    assert set(k2) == {("T", 0, "xp/a"), ("T", 0, "xp/done")}, out
    check_run(k1[("T", 1, "xp/b")], 500)
    check_run(k2[("T", 0, "xp/a")], 500)
    assert "T exit=0" in lines(out)


def test_stop_start_by_controller():
    """posix_trace_stop.3p.txt / posix_trace_start.3p.txt by a controller in
    another process take effect at the target's next recording call
    (doc/semantics.md "Tracing other processes"): of three batches of 100 events,
    the one recorded while the stream was stopped is missing (n=200, seq 0..299,
    one gap of 100); two START and two STOP events."""
    out = prog("stop_start")
    s = Col(out, "S")
    assert s.sys == {("posix_trace_start", SYS): 2, ("posix_trace_stop", SYS): 2}, out
    ks = s.keys()
    assert set(ks) == {("T", 0, "xp/ev"), ("T", 0, "xp/done")}, out
    u = ks[("T", 0, "xp/ev")]
    assert u["n"] == "200" and u["seq"] == "0..299" and u["gaps"] == "100", u
    assert u["disorder"] == "0" and u["bad"] == "0" and u["namebad"] == "0", u
    assert s.lost == 0 and "T exit=0" in lines(out)


def test_controller_opens_names_first():
    """The target opened "xp/b" then "xp/a" (ids 257, 258 in it) before any stream
    existed; the controller creates S1 and S2 for it and, before the target
    records, calls posix_trace_trid_eventid_open(S1, "xp/a"), (S1, "xp/c") and
    (S2, "xp/a"), and filters S2's id of "xp/a" out.
    posix_trace_eventid_equal.3p.txt (trid_eventid_open): "If the user trace event
    name has already been mapped for the traced process, then the previously
    assigned trace event type identifier shall be returned"; posix_trace_event.3p.txt
    (eventid_open with no stream): "shall store this information for future trace
    streams created for this process".  So:
    - S1's and S2's id of "xp/a" is the target's (258), and the S1 events named
      "xp/a" carry it; "xp/c" gets an id of its own, naming no event;
    - every event's posix_trace_eventid_get_name is the name the target used;
    - S2's filter removes exactly the "xp/a" events."""
    out = prog("names_ctl")
    ls = lines(out)
    for l in ("S1 trid_eventid_open(xp/a) rc=0", "S1 trid_eventid_open(xp/c) rc=0",
              "S2 trid_eventid_open(xp/a) rc=0"):
        assert l in ls, out
    ids = kv([l for l in ls if l.startswith("ids ")][0])
    assert ids["S1_a"] == ids["target_a"] and ids["S2_a"] == ids["target_a"], out
    assert ids["S1_c"] not in (ids["target_a"], ids["target_b"]), out
    s1, s2 = Col(out, "S1"), Col(out, "S2")
    k1, k2 = s1.keys(), s2.keys()
    assert set(k1) == {("T", 0, "xp/a"), ("T", 0, "xp/b"), ("T", 0, "xp/done")}, out
    check_run(k1[("T", 0, "xp/a")], 100)
    check_run(k1[("T", 0, "xp/b")], 100)
    assert k1[("T", 0, "xp/a")]["id"] == ids["S1_a"], out
    assert len({k1[k]["id"] for k in k1} | {ids["S1_c"]}) == 4, out
    assert "S1 get_name(%s) rc=0 name=xp/a" % ids["S1_a"] in ls, out
    assert "S1 get_name(%s) rc=0 name=xp/c" % ids["S1_c"] in ls, out
    assert set(k2) == {("T", 0, "xp/b"), ("T", 0, "xp/done")}, out
    check_run(k2[("T", 0, "xp/b")], 100)
    assert s1.lost == 0 and s2.lost == 0


def test_fork_child_keeps_names_for_new_streams():
    """The target opened "xp/b", "xp/a", "xp/done" before any stream existed, then
    forked K. posix_trace_event.3p.txt (eventid_open with no stream): the names are
    stored "for future trace streams created for this process"; K, a copy of its
    parent, has them too (its inbox takes them from its parent's at the fork,
    doc/design.md "Other processes"). On a stream the controller creates for K
    after the fork, before K records, posix_trace_trid_eventid_open(S, "xp/a")
    returns the id K has for it (posix_trace_eventid_equal.3p.txt: "If the user
    trace event name has already been mapped for the traced process, then the
    previously assigned trace event type identifier shall be returned"), which
    only K's inbox tells the controller then; K's events carry the ids and names
    the target opened."""
    out = prog("names_fork")
    ls = lines(out)
    assert "S trid_eventid_open(xp/a) rc=0" in ls, out
    ids = kv([l for l in ls if l.startswith("ids ")][0])
    assert ids["S_a"] == ids["target_a"], out
    s = Col(out, "S")
    ks = s.keys()
    assert set(ks) == {("K", 0, "xp/a"), ("K", 0, "xp/b"), ("K", 0, "xp/done")}, out
    check_run(ks[("K", 0, "xp/a")], 10)
    check_run(ks[("K", 0, "xp/b")], 10)
    assert ks[("K", 0, "xp/a")]["id"] == ids["target_a"], out
    assert ks[("K", 0, "xp/b")]["id"] == ids["target_b"], out
    assert s.lost == 0 and "T exit=0" in ls, out


def test_exec_forgets_the_old_images_names():
    """The target opened "xp/old1".."xp/old3" (ids 257..259) before any stream
    existed; the controller created an INHERITED stream S1 for it (so its next
    image keeps the process's inbox, doc/design.md "Other processes"), and the
    target exec'd a program that opened "xp/ev" and "xp/done" (the ids S1 left
    free: 257..259 are its names of the old image's). The names a process stored
    "for future trace streams" (posix_trace_event.3p.txt) are those its image
    opened: a stream S created after the exec names "xp/ev" by the new image's
    id and has no name for 257..259, which only the old image had opened."""
    out = prog("names_exec", t052())
    ls = lines(out)
    ev = kv([l for l in ls if l.startswith("ids ")][0])["target_ev"]
    assert "S get_name(%s) rc=0 name=xp/ev" % ev in ls, out
    for old in (257, 258, 259):
        assert "S get_name(%d) rc=EINVAL name=-" % old in ls, out
    assert "T exit=0" in ls, out


def test_controller_opens_names_after_target_attached():
    """Once the target has recorded into the stream, the controller's
    posix_trace_trid_eventid_open of the target's names returns the target's ids
    (posix_trace_eventid_equal.3p.txt: "the previously assigned trace event type
    identifier shall be returned"), and posix_trace_set_filter with that id, made
    while the target runs, takes effect at the target's next recording call
    (doc/semantics.md "Tracing other processes"): the second 100 "xp/a" are not
    recorded, the "xp/b" are; one FILTER event."""
    out = prog("names_ctl_after")
    ls = lines(out)
    assert "S trid_eventid_open(xp/a) rc=0" in ls and "S trid_eventid_open(xp/b) rc=0" in ls
    ids = kv([l for l in ls if l.startswith("ids ")][0])
    assert ids["S_a"] == ids["target_a"] and ids["S_b"] == ids["target_b"], out
    s = Col(out, "S")
    assert s.sys == {("posix_trace_start", SYS): 1, ("posix_trace_filter", SYS): 1,
                     ("posix_trace_stop", SYS): 1}, out
    ks = s.keys()
    assert set(ks) == {("T", 0, "xp/a"), ("T", 0, "xp/b"), ("T", 0, "xp/done")}, out
    check_run(ks[("T", 0, "xp/a")], 100)
    check_run(ks[("T", 0, "xp/b")], 200)
    check_run(ks[("T", 0, "xp/done")], 2)
    assert s.lost == 0 and "T exit=0" in ls


@pytest.mark.parametrize("mode", ["names_ctl_first", "names_ctl_first_attached"])
def test_target_opens_names_controller_opened_first(mode):
    """A name the controller registered first with posix_trace_trid_eventid_open
    on a stream for the target gives the target the same id when the target
    later calls posix_trace_eventid_open with it (posix_trace_event.3p.txt and
    posix_trace_eventid_equal.3p.txt: "If the trace event name has already been
    used, the previously assigned trace event type identifier shall be
    returned"), whether or not the target has recorded into (and so attached)
    the stream before; its events with that id are read as "xp/x" under the
    controller's id.  A name the target opened before the stream existed
    ("xp/y") keeps the target's id, for the controller and for the target's
    second open (doc/semantics.md "Tracing other processes", Names)."""
    out = prog(mode)
    ls = lines(out)
    ids = kv([l for l in ls if l.startswith("ids ")][0])
    assert ids["S_x"] == ids["target_x"] == "1280", out
    assert ids["S_y"] == ids["target_y"] == ids["target_y2"] == "257", out
    s = Col(out, "S")
    assert s.sys == {("posix_trace_start", SYS): 1, ("posix_trace_stop", SYS): 1}, out
    ks = s.keys()
    assert set(ks) == {("T", 0, "xp/x"), ("T", 0, "xp/y"), ("T", 0, "xp/done")}, out
    check_run(ks[("T", 0, "xp/x")], 10)
    check_run(ks[("T", 0, "xp/y")], 10)
    assert ks[("T", 0, "xp/x")]["id"] == "1280" and ks[("T", 0, "xp/y")]["id"] == "257", out
    if mode == "names_ctl_first":
        check_run(ks[("T", 0, "xp/done")], 1, first=1)
    else:
        check_run(ks[("T", 0, "xp/done")], 2)
    # nothing else from the controller: no collector error, every call rc=0
    assert s.other == ["S trid_eventid_open(xp/x) rc=0", "S trid_eventid_open(xp/y) rc=0",
                       "S get_name(1280) rc=0 name=xp/x", "S get_name(257) rc=0 name=xp/y"], out
    assert s.lost == 0 and "T exit=0" in ls, out


def test_esrch():
    """posix_trace_create.3p.txt: ESRCH, "The pid argument does not refer to an
    existing process": a child that has exited and not yet been waited for (a
    zombie; doc/semantics.md "Tracing other processes"), one that has been waited
    for, and a pid above
    the largest the kernel hands out; for posix_trace_create and
    posix_trace_create_withlog (with a valid log descriptor)."""
    out = prog("esrch")
    assert lines(out) == ["zombie=1", "zombie create rc=ESRCH", "zombie exit=0",
                          "child exit=0",
                          "exited create rc=ESRCH", "exited create_withlog rc=ESRCH",
                          "nosuch create rc=ESRCH", "nosuch create_withlog rc=ESRCH"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to setuid to scratch uids 65534/65533")
def test_eperm_other_users():
    """posix_trace_create.3p.txt: EPERM, "The caller does not have appropriate
    privileges to trace the process specified by pid" (issue 4: like ptrace, same
    uid or CAP_SYS_PTRACE).  A controller running as uid 65534 (a process started
    under that uid, execed after setuid) gets EPERM from posix_trace_create and
    posix_trace_create_withlog for a root process and for a process of uid 65533;
    for a process of its own uid the stream works: all 100 events and "done".
    Root (CAP_SYS_PTRACE) may trace the uid-65534 process: create returns 0 and the
    stream gets its events."""
    why = others_can_run("t052_xproc_exec")
    if why:
        pytest.skip(why)
    out = prog("eperm", t052())
    ls = lines(out)
    assert ls[:6] == ["C uid=65534",
                      "C create(root M) rc=EPERM",
                      "C create_withlog(root M) rc=EPERM",
                      "C create(TB other uid) rc=EPERM",
                      "C create_withlog(TB other uid) rc=EPERM",
                      "C create(TA same uid) rc=0"], out
    c = Col(out, "C")
    assert c.sys == start_stop("TA") and c.lost == 0, out
    kc = c.keys()
    assert set(kc) == {("TA", 0, "xp/ev"), ("TA", 0, "xp/done")}, out
    check_run(kc[("TA", 0, "xp/ev")], 100)
    assert "C exit=0" in ls and "TA exit=0" in ls and "TB exit=0" in ls, out
    assert "root create(TA) rc=0" in ls, out
    r = Col(out, "R")
    kr = r.keys()
    assert set(kr) == {("TA", 0, "xp/ev"), ("TA", 0, "xp/done")}, out
    check_run(kr[("TA", 0, "xp/ev")], 100, first=100)


def test_trid_in_forked_child_of_controller():
    """A trid for another process's stream is valid only in the process that
    created it (posix_trace_create.3p.txt; doc/semantics.md): in a fork()ed child
    of the controller every function given it returns EINVAL; the controller's
    stream is not disturbed and gets the target's 10 events."""
    out = prog("einval_child")
    ls = lines(out)
    for fn in ("get_status", "set_filter", "trid_eventid_open", "trygetnext_event", "stop",
               "start", "clear", "shutdown"):
        assert "child posix_trace_%s rc=EINVAL" % fn in ls, out
    assert "child exit=0" in ls
    s = Col(out, "S")
    assert s.sys == start_stop(SYS) and s.lost == 0, out
    ks = s.keys()
    assert set(ks) == {("T", 0, "xp/ev"), ("T", 0, "xp/done")}, out
    check_run(ks[("T", 0, "xp/ev")], 10)
    assert "T exit=0" in ls


def test_blocking_reads_woken_by_target():
    """posix_trace_getnext_event.3p.txt: getnext blocks "until an event is
    available"; timedgetnext until then or the timeout.  The controller blocks
    (timedgetnext with a 20 s deadline, then getnext) while the target waits 300 ms
    and records one event: each call returns that event (seq 0, then 1) rather than
    timing out; with nothing coming, timedgetnext returns ETIMEDOUT at its 200 ms
    deadline."""
    out = prog("wake")
    ls = lines(out)
    assert ls[0] == "before: 1 event(s)", out   # START
    assert ls[1] == "timedgetnext rc=0 unavailable=0 name=xp/ev pid=T seq=0", out
    assert ls[2] == "getnext rc=0 unavailable=0 name=xp/ev pid=T seq=1", out
    assert ls[3].startswith("timedgetnext(nothing) rc=ETIMEDOUT"), out
    assert ls[4] == "T exit=0"


def test_recording_with_nobody_tracing():
    """The target's posix_trace_event has "no effect" (posix_trace_event.3p.txt)
    when no stream is running for it, and its process keeps working: 3 x 30000
    events before any stream, 3 x 30000 after its stream was shut down, 3 x 30000
    after a controller that started a stream for it exited without shutting it
    down (the library shuts it down at exit).  Streams created in between get
    exactly their own phase's events."""
    out = prog("untraced")
    p1, p2 = Col(out, "P1"), Col(out, "P2")
    k1 = p1.keys()
    assert set(k1) == {("T", 0, "xp/ev"), ("T", 0, "xp/done")}, out
    check_run(k1[("T", 0, "xp/ev")], 1000, first=30000)
    k2 = p2.keys()
    assert set(k2) == {("T", 0, "xp/ev"), ("T", 1, "xp/ev"), ("T", 2, "xp/ev"),
                       ("T", 0, "xp/done")}, out
    check_run(k2[("T", 0, "xp/ev")], 1000, first=91000)
    check_run(k2[("T", 1, "xp/ev")], 1000, first=90000)
    check_run(k2[("T", 2, "xp/ev")], 1000, first=90000)
    assert p1.lost == 0 and p2.lost == 0
    assert "C exit=0" in lines(out) and "T exit=0" in lines(out)


def test_target_without_library():
    """A process without libposixtrace (/bin/sleep) can be traced (create returns
    0) but records nothing (issue 4: "A target that never loads the library simply
    records nothing"): the stream has only START and STOP."""
    out = prog("nolib")
    s = Col(out, "S")
    # the child had exec'd sleep (EOF on the close-on-exec pipe) before the create
    assert "exec wait=-1" in lines(out), out
    assert "S create(sleep) rc=0" in lines(out), out
    assert s.sys == start_stop(SYS) and s.users == [] and s.lost == 0, out
    assert "T signal=9" in lines(out)


def test_log_of_another_process(tmp_path):
    """posix_trace_create_withlog for another process (log APPEND): after
    posix_trace_shutdown, posix_trace_open reads back all 3 x 2000 events of the
    target's three threads and "done", intact, with the target's pid and names
    (posix_trace_create.3p.txt, posix_trace_open.3p.txt)."""
    out = prog("log", str(tmp_path / "x.log"))
    ls = lines(out)
    assert ls[0] == "L create_withlog rc=0" and "L open rc=0" in ls and "L read rc=0" in ls
    s = Col(out, "L")
    assert s.lost == 0 and s.foreign == 0, out
    ks = s.keys()
    assert set(ks) == {("T", 0, "xp/ev"), ("T", 1, "xp/ev"), ("T", 2, "xp/ev"),
                       ("T", 0, "xp/done")}, out
    for thr in range(3):
        check_run(ks[("T", thr, "xp/ev")], 2000)
        assert ks[("T", thr, "xp/ev")]["pid"] == "T"
    assert s.sys[("posix_trace_start", SYS)] == 1
    assert "T exit=0" in ls
