"""Controllers and targets that die (issue 4).  Program: tests/xproc/t053_xproc_death.c
(helpers tests/common/xproc.h).

Pages: posix_trace_create.3p.txt ("If the process exits, invokes a member of the
exec family of functions, or is terminated, the trace streams that the process had
created and that have not yet been shut down, shall be automatically shut down"),
posix_trace_shutdown.3p.txt, posix_trace_open.3p.txt, posix_trace_get_status.3p.txt
(overrun status).  Choices: doc/semantics.md (lost events reported as
POSIX_TRACE_OVERFLOW + POSIX_TRACE_RESUME; "a process killed leaves its log as last
flushed"); doc/design.md (streams are memfds named "posixtrace:<name>", so what a
dead controller leaves behind shows in its targets' /proc/<pid>/maps).

System events of a stream for target T (START, STOP, OVERFLOW, RESUME) carry T's
pid (SYS).
"""
import pytest

from harness import run, kv, lines
from xproccommon import Col, check_run, check_intact, others_can_run

SYS = "T"


def death(*args):
    return run("t053_xproc_death", *args, timeout=90)


def shm_leftovers(out):
    """posixtrace objects that appeared in /dev/shm during the run and stayed
    after the next create + shutdown."""
    l = [l for l in lines(out) if l.startswith("after shm_new=")][0]
    names = l.split("=", 1)[1]
    names = [] if names == "-" else names.split(",")
    return [n for n in names if "posixtrace" in n.lower()]


def test_kill_controller():
    """A controller process reading the stream of a running target is killed with
    SIGKILL.  The target is not disturbed: it keeps recording (2000 more events)
    and exits normally (status 0); it unmaps the dead controller's stream (its
    /proc/<pid>/maps no longer names the memfd "posixtrace:xpdeath"); a new
    controller can trace it again (reads 1000 of its events); no posixtrace object
    is left in /dev/shm."""
    out = death("kill_ctl")
    assert lines(out)[:7] == ["C read1000=1", "T maps_live_stream=1", "C signal=9",
                              "target progressed=1", "T maps_dead_stream=0",
                              "M retrace read1000=1 rc=0", "T exit=0"], out
    assert shm_leftovers(out) == [], out


def test_kill_privileged_controller_of_other_user():
    """A root controller traces a process of uid 65534; such a stream is a /dev/shm
    object "posixtrace-<ctrlpid>-..." (doc/semantics.md "Tracing other
    processes"), which the target maps.  The controller, having read the target's
    1000 events and "done", is killed with SIGKILL: the target records 1000 more
    without harm and unmaps the stream; the object stays until the next create for
    another user's process, which removes it (issue 4: "no /dev/shm leftovers after
    the next create"); that new stream gets the target's 100 next events; after its
    shutdown nothing of this run is left in /dev/shm."""
    why = others_can_run("t052_xproc_exec")
    if why:
        pytest.skip(why)
    out = death("kill_ctl_otheruser")
    ls = lines(out)
    if ls and ls[0].startswith("skip: "):
        pytest.skip(ls[0][len("skip: "):])
    assert ls[:7] == ["C read=1", "shm_live=1", "T maps_live_stream=1", "C signal=9",
                      "T maps_dead_stream=0", "shm_after_kill=1",
                      "shm_after_next_create=0"], out
    m = Col(out, "M")
    assert m.sys == {("posix_trace_start", SYS): 1, ("posix_trace_stop", SYS): 1}, out
    ks = m.keys()
    assert set(ks) == {("T", 0, "xp/ev"), ("T", 0, "xp/done")}, out
    check_run(ks[("T", 0, "xp/ev")], 100, first=2000)
    check_run(ks[("T", 0, "xp/done")], 1, first=1)
    assert "shm_mine_after_shutdown=0" in ls and "T exit=0" in ls, out
    assert shm_leftovers(out) == [], out


def test_exec_controller():
    """A controller that calls exec (here /bin/true) has its streams shut down
    (posix_trace_create.3p.txt): the target keeps recording, unmaps the stream,
    can be traced again and exits normally; nothing left in /dev/shm."""
    out = death("exec_ctl")
    assert lines(out)[:7] == ["C read1000=1", "T maps_live_stream=1", "C exit=0",
                              "target progressed=1", "T maps_dead_stream=0",
                              "M retrace read1000=1 rc=0", "T exit=0"], out
    assert shm_leftovers(out) == [], out


def test_kill_controller_with_log(tmp_path):
    """A controller with a log (APPEND) for another process calls
    posix_trace_flush, then is killed with SIGKILL.  The target records 3 x 1000
    more events without harm, unmaps the stream and exits normally.  The log opens
    with posix_trace_open and holds every event flushed: START, FLUSH_START/STOP of
    the explicit flush, the 3 x 1000 events of the target's three threads and
    "done", intact, with the target's pid and names (doc/semantics.md: "a process
    killed leaves its log as last flushed")."""
    out = death("kill_ctl_log", str(tmp_path / "k.log"))
    ls = lines(out)
    assert ls[:6] == ["C flush rc=0", "T maps_live_stream=1", "C signal=9",
                      "T maps_dead_stream=0", "T exit=0", "L open rc=0"], out
    assert "L read rc=0" in ls
    s = Col(out, "L")
    assert s.lost == 0 and s.foreign == 0, out
    assert s.sys == {("posix_trace_start", SYS): 1, ("posix_trace_flush_start", SYS): 1,
                     ("posix_trace_flush_stop", SYS): 1}, out
    ks = s.keys()
    assert set(ks) == {("T", 0, "xp/ev"), ("T", 1, "xp/ev"), ("T", 2, "xp/ev"),
                       ("T", 0, "xp/done")}, out
    for thr in range(3):
        check_run(ks[("T", thr, "xp/ev")], 1000)
    check_run(ks[("T", 0, "xp/done")], 1)
    assert shm_leftovers(out) == [], out


@pytest.mark.parametrize("mode", ["stuck", "stuck_zombie"])
def test_target_killed_inside_a_record(mode):
    """T1, a child of the target in an INHERITED stream, records 100 events, then
    one whose data runs into an unreadable page: the copy faults inside
    posix_trace_event after the record was begun, and T1 blocks in its SIGSEGV
    handler.  The reader has read T1's 100 events and stands at the unfinished
    record; T1 is killed with SIGKILL (and reaped at once, or -- stuck_zombie --
    only after the reader is done).  The reader does not hang: it skips the
    half-written record, counts it lost (one POSIX_TRACE_OVERFLOW with lost=1, then
    RESUME; overrun status OVERRUN) and goes on with T2's 1000 events recorded
    afterwards, all intact; no "xp/big" event is reported."""
    out = death(mode)
    ls = lines(out)
    assert ls[:6] == ["S read T1's 100 rc=0 n=100", "S collect rc=0",
                      "S status stream=RUNNING full=NOT_FULL overrun=OVERRUN",
                      "T1 signal=9", "T2 exit=0", "T exit=0"], out
    s = Col(out, "S")
    assert s.sys == {("posix_trace_start", SYS): 1, ("posix_trace_overflow", SYS): 1,
                     ("posix_trace_resume", SYS): 1, ("posix_trace_stop", SYS): 1}, out
    assert s.lost == 1 and s.foreign == 0, out
    ks = s.keys()
    assert set(ks) == {("T", 0, "xp/ev"), ("T", 0, "xp/done"), ("T1", 0, "xp/ev"),
                       ("T2", 0, "xp/ev"), ("T2", 0, "xp/done")}, out
    check_run(ks[("T1", 0, "xp/ev")], 100)
    check_run(ks[("T2", 0, "xp/ev")], 1000)
    assert ks[("T1", 0, "xp/ev")]["pid"] == "T1" and ks[("T2", 0, "xp/ev")]["pid"] == "T2"


def test_targets_killed_mid_burst():
    """Three writers (children of the target, INHERITED stream, LOOP, 16 MiB),
    each recording 8 KiB events from two threads without pause, are killed with
    SIGKILL one after the other, mostly while inside posix_trace_event; the
    controller reads all the while.  The reader neither hangs nor crashes; every
    event it reports is intact and in its thread's order; the losses it reports
    account exactly for the writers' events it did not deliver: for each writer
    thread, between (calls returned - events read) and (calls begun - events
    read), summed.  Afterwards another child's 1000 events all arrive."""
    out = death("burst")
    ls = lines(out)
    assert ls[:4] == ["S collect rc=0", "writers not killed by SIGKILL=0", "T2 exit=0",
                      "T exit=0"], out
    s = Col(out, "S")
    assert s.foreign == 0
    assert s.sys[("posix_trace_start", SYS)] == 1 and s.sys[("posix_trace_stop", SYS)] == 1
    assert s.sys.get(("posix_trace_overflow", SYS), 0) == \
        s.sys.get(("posix_trace_resume", SYS), 0), out
    ks = s.keys()
    check_run(ks[("T2", 0, "xp/ev")], 1000)
    check_run(ks[("T2", 0, "xp/done")], 1)
    check_run(ks[("T", 0, "xp/ev")], 1)
    lo = hi = 0
    for l in ls:
        if l.startswith("W") and " started=" in l:
            d = kv(l)
            role = l.split()[0]
            u = ks.get((role, int(d["thr"]), "xp/big"))
            n = 0
            if u is not None:
                check_intact(u)
                assert u["pid"] == role, u
                n = int(u["n"])
                assert int(u["seq"].split("..")[1]) < int(d["started"]), (u, l)
            lo += int(d["completed"]) - n
            hi += int(d["started"]) - n
    others = [k for k in ks if k[0] not in ("T", "T2", "W1", "W2", "W3")]
    assert others == [], out
    assert lo <= s.lost <= hi, ("lost=%d not in [%d, %d]" % (s.lost, lo, hi), out)
