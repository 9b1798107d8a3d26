"""A hostile target attacking the words it shares with its controller, and a third
user's /dev/shm objects (issue 13: "a hostile traced program must not be able to
steer, hang or kill through its controller").  Program: tests/xproc/t056_xproc_locks.c
(helpers tests/common/xproc.h).

Design (doc/design.md, "Other processes"): the stream's names table is guarded by
a plain lock word holding its holder's thread id (libtrace/ring/slock.c), never a
robust mutex whose list pointers the controller would follow; every wait on it
has a deadline and a dead holder is taken over.  Inbox entries are claimed by CAS
on their state word, with no lock at all.  A privileged controller's alive page
has a name with a random part, created O_EXCL; targets check the owner, mode and
size of every named object before mapping it.

Pages: posix_trace_eventid_equal.3p.txt (posix_trace_trid_eventid_open; its
ERRORS list nothing for a busy table: doc/semantics.md chooses EAGAIN),
posix_trace_create.3p.txt (EAGAIN: "No more trace streams can be started now").
"""
import os

import pytest

from harness import run, lines
from xproccommon import Col, check_intact, check_run, others_can_run


def locks(mode):
    return run("t056_xproc_locks", mode, timeout=90)


def test_names_lock_held_garbage_and_storm():
    """The target T holds the stream's names lock word with its own live thread
    id: the controller's posix_trace_trid_eventid_open returns EAGAIN after
    waiting its bound (>= 0.9 s, < 2 s).  Released: the next name gets id 1280
    (the top id, PT_ID_MAX) at once.  Held by a process that is gone: taken over,
    id 1279 in < 1 s.  Words that name no thread (0xffffffff, 0x40000000,
    0xdeadbeef, 0x7fffffff: also what a robust mutex's owner-died and waiter bits
    would look like): taken over, ids 1278..1275.  A thread of T writing random
    values over the word and the 60 bytes after it (where the old robust mutex's
    list pointers were) during 20 calls: each returns 0 or EAGAIN within 2 s;
    afterwards names work.  The controller exits 0 (no crash, no hang), and T is
    left alive."""
    ls = lines(locks("names"))
    assert ls[:10] == [
        "T attached=1",
        "R held rc=EAGAIN id=0 waited_900ms=1 under_2000ms=1",
        "R released rc=0 id=1280 waited_900ms=0 under_100ms=1",
        "R dead_holder_pid=1",
        "R dead_holder rc=0 id=1279 waited_900ms=0 under_1000ms=1",
        "R garbage=ffffffff rc=0 id=1278 waited_900ms=0 under_1000ms=1",
        "R garbage=40000000 rc=0 id=1277 waited_900ms=0 under_1000ms=1",
        "R garbage=deadbeef rc=0 id=1276 waited_900ms=0 under_1000ms=1",
        "R garbage=7fffffff rc=0 id=1275 waited_900ms=0 under_1000ms=1",
        "R storm calls=20 ok_or_eagain=20 other=0 slow=0"], ls
    after = ls[10]
    assert after.startswith("R after_storm rc=0 id=") and after.endswith(" under_1000ms=1"), ls
    assert ls[11:] == ["R shutdown rc=0", "R exit=0", "T exited"], ls


def test_inbox_entries_busy_and_flipped():
    """T marks all 64 entries of its inbox BUSY: posix_trace_create for T returns
    EAGAIN at once (< 0.5 s; nothing waits for the target).  Then T marks them
    BUSY as claimed by a process that is gone (a controller killed between
    claiming an entry and posting its stream, libtrace/xproc/inbox.c): a create
    takes one back and returns 0.  Then a thread of T
    flips entry state words at random (FREE, BUSY, POSTED, 0xffffffff) and
    writes garbage where the inbox lock was, during 30 create + start + shutdown
    cycles: every create returns 0 or EAGAIN, every start and shutdown of a
    created stream 0, in < 10 s.  After T cleans up, a new stream gets T's 100
    events and "done" intact.  The controller exits 0, T is left alive."""
    out = locks("inbox")
    ls = lines(out)
    assert ls[:4] == ["R create all_busy rc=EAGAIN under_500ms=1",
                      "R create abandoned rc=0",
                      "R storm creates=30 ok_or_eagain=30 other=0 bad_ops=0 under_10s=1",
                      "R create after rc=0"], out
    r = Col(out, "R")
    ks = r.keys()
    assert set(ks) == {("T", 0, "xp/ev"), ("T", 0, "xp/done")}, out
    assert int(ks[("T", 0, "xp/ev")]["n"]) == 100, out
    check_intact(ks[("T", 0, "xp/ev")])
    assert r.lost == 0, out
    assert ls[-3:] == ["R shutdown rc=0", "R exit=0", "T exited"], out


def test_member_table_garbage():
    """A thread of T fills the stream's member table with garbage entries (state
    valid, pids 1, M, T or random, descriptors 0, 1, 2, -1, 999..1001, 100000)
    while the controller stops and starts the stream 20 times (each rings every
    member: it opens /proc/<pid>/fd/<n> without blocking and maps only a sealed
    inbox of the right size): every call returns 0, all within 10 s; shutdown
    returns 0; the controller exits 0."""
    ls = lines(locks("members"))
    assert ls == ["T attached=1", "R members cycles=20 rc_bad=0 under_10s=1",
                  "R shutdown rc=0", "R exit=0", "T exited"], ls


def _xuser(mode):
    why = others_can_run("t052_xproc_exec")
    if why:
        pytest.skip(why)
    out = locks(mode)
    ls = lines(out)
    if ls and ls[0].startswith("skip: "):
        pytest.skip(ls[0][len("skip: "):])
    return out, ls


@pytest.mark.skipif(os.geteuid() != 0,
                    reason="needs root to setuid to scratch uids 65534/65533")
def test_third_user_precreates_alive_name():
    """Root (M) traces T of uid 65534.  Before that, B (uid 65533) creates
    /dev/shm/posixtrace-alive-<M's pid>-<M's start>, mode 0666, 4096 bytes (the
    name the alive page had, which a third user could predict).  M's create
    returns 0 and does not adopt it: M's alive page is another object (its name
    has a random part), owned by root, mode 0644, 4096 bytes; B's object is left
    as B made it.  B then opens every posixtrace object of M's for writing: all
    (the alive page and the stream, owned by uid 65534, mode 0600) are denied
    (EACCES), and it truncates its own object (which nobody uses).  T is not
    harmed: all 200 events and "done" arrive intact, T exits 0.  M's shutdown
    returns 0 and leaves B's object alone (not ours to remove)."""
    out, ls = _xuser("xuser_precreate")
    assert ls[:4] == ["B precreate rc=0", "M create rc=0",
                      "M alive real=1 real_root_0644=1 precreated=1 precreated_intact=1",
                      "B opened_not_own=0 denied=2"], out
    m = Col(out, "M")
    ks = m.keys()
    assert set(ks) == {("T", 0, "xp/ev"), ("T", 0, "xp/done")}, out
    check_run(ks[("T", 0, "xp/ev")], 200)
    tail = [l for l in ls if l.startswith(("M shutdown", "M precreated", "B exit", "T exit"))]
    assert tail == ["M shutdown rc=0", "M precreated_left=1", "B exit=0", "T exit=0"], out


@pytest.mark.skipif(os.geteuid() != 0,
                    reason="needs root to setuid to scratch uids 65534/65533")
def test_target_refuses_fake_alive_page():
    """Root (M) creates a stream for T (uid 65534); before T attaches, M's alive
    page is replaced by B's object under the same name (uid 65533, mode 0644,
    4096 bytes, its lock word saying "held": a controller forever alive).  T
    refuses the stream (the page is neither root's nor M's): none of its 100
    events and "done" arrive, and T goes on (exit 0).  M's next stream gets the
    next 100 events and "done" intact."""
    out, ls = _xuser("xuser_fake_alive")
    assert ls[:5] == ["M create rc=0", "M alive_names=1", "B fake rc=0",
                      "M fake user_events=0", "M shutdown rc=0"], out
    assert "M create2 rc=0" in ls, out
    m2 = Col(out, "M2")
    ks = m2.keys()
    assert set(ks) == {("T", 0, "xp/ev"), ("T", 0, "xp/done")}, out
    check_run(ks[("T", 0, "xp/ev")], 100, first=100)
    tail = [l for l in ls if l.startswith(("M shutdown2", "B exit", "T exit"))]
    assert tail == ["M shutdown2 rc=0", "B exit=0", "T exit=0"], out
