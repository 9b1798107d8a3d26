"""Trace Log option: clear, the end of the writer (exit, exec, SIGKILL) and write
errors (EFBIG, ENOSPC).  Programs: tests/log/t042_log_write.c, tests/log/t048_log_dump.c.

Pages: /work/shared/spec/posix_trace_clear.3p.txt (clear with log),
posix_trace_create.3p.txt (shutdown at exit/exec/termination; flush and shutdown
"shall fail if: EFBIG ... ENOSPC"; create_withlog ENOSPC), posix_trace_get_attr.3p.txt
(flush_error reset by get_status).  Choices: doc/semantics.md ("Trace Log option").
"""
import os
import subprocess

import pytest

from logcommon import write_log, dump, check_seq_data_exact, killed_writer


def test_clear_restarts_the_log(tmp_path):
    """posix_trace_clear.3p.txt: with a log, clear "shall reinitialize the trace log
    ... as if it were returning from the posix_trace_create_withlog() function ... The
    first trace event recorded in the trace log after the call to posix_trace_clear()
    shall be the same as the first trace event recorded in the active trace stream
    after the call ... The posix_log_full_status status shall be set to
    POSIX_TRACE_NOT_FULL"; doc/semantics.md: the log starts over.  Stream FLUSH, log
    LOOP of 1 MiB: 1000 events flushed, 500 more, clear (the file is back to its
    header), 300 events, shutdown: the log holds only the 300 (1500..1799), STOP and
    the shutdown's flush marks; the stream stays RUNNING."""
    path = str(tmp_path / "clear.log")
    w = write_log(path, "log=LOOP", "lsize=1048576", "start", "e:1000", "flush", "e:500",
                  "size", "clear", "size", "status", "e:300", "shutdown")
    assert w.of("clear") == [{"rc": "0"}]
    sizes = [int(x["bytes"]) for x in w.of("size")]
    assert sizes[0] > 4096 and sizes[1] == 4096, sizes
    s = w.statuses()[0]
    assert (s["stream"], s["log_full"], s["log_overrun"], s["flush_error"]) == (
        "RUNNING", "NOT_FULL", "NO_OVERRUN", "0"), s
    d = dump(path, "skipflush")
    check_seq_data_exact(d)
    assert d.shape() == ["run", "STOP:auto=0"], d.shape()
    r = d.user_runs()[0]
    assert (r["first"], r["last"]) == (1500, 1799)
    assert d.flush_marks == {"start": 1, "stop": 1, "unpaired": 0}
    assert d.line("rewind") == "rewind rc=0 n=%d same=1" % d.end["n"]


def test_clear_full_until_full_log(tmp_path):
    """posix_trace_clear.3p.txt: "The posix_log_full_status status shall be set to
    POSIX_TRACE_NOT_FULL" and "the associated trace stream status remains unchanged".
    Stream LOOP, log UNTIL_FULL of 64 KiB filled by a flush (stream SUSPENDED, log FULL):
    after clear the log is NOT_FULL (overrun reset too: a new log), the stream still
    SUSPENDED, the file back to its header; posix_trace_start and 300 events: the log
    holds START, the 300, STOP (auto = 0) and nothing from before the clear."""
    path = str(tmp_path / "clearfull.log")
    w = write_log(path, "stream=LOOP", "log=UNTIL_FULL", "ssize=1048576", "lsize=65536",
                  "start", "e:10000", "flush", "status", "clear", "status", "size", "start",
                  "e:300", "shutdown")
    s0, s1 = w.statuses()
    assert (s0["stream"], s0["log_full"]) == ("SUSPENDED", "FULL"), s0
    assert (s1["stream"], s1["log_full"], s1["log_overrun"]) == (
        "SUSPENDED", "NOT_FULL", "NO_OVERRUN"), s1
    assert w.size() == 4096
    d = dump(path, "skipflush")
    check_seq_data_exact(d)
    assert d.shape() == ["START", "run", "STOP:auto=0"], d.shape()
    r = d.user_runs()[0]
    assert (r["first"], r["last"]) == (10000, 10299)
    assert (d.status["log_full"], d.status["log_overrun"]) == ("NOT_FULL", "NO_OVERRUN")


def test_shutdown_of_suspended_stream(tmp_path):
    """posix_trace_create.3p.txt: shutdown stops the stream "as if posix_trace_stop()
    had been invoked" -- posix_trace_start.3p.txt: "If the trace stream is suspended
    when this function is called, the POSIX_TRACE_STOP system trace event shall not be
    recorded".  Started, 10 events, stopped, 10 events (not recorded), shutdown: START,
    the 10, one STOP (auto = 0), the shutdown's flush marks.  A stream never started:
    only the flush marks."""
    path = str(tmp_path / "stopped.log")
    write_log(path, "log=APPEND", "start", "e:10", "stop", "e:10", "shutdown")
    d = dump(path)
    check_seq_data_exact(d)
    assert d.shape() == ["START", "run", "STOP:auto=0", "FLUSH_START", "FLUSH_STOP"], d.shape()
    r = d.user_runs()[0]
    assert (r["first"], r["last"]) == (0, 9)
    write_log(path, "log=APPEND", "e:10", "shutdown")
    d = dump(path)
    assert d.shape() == ["FLUSH_START", "FLUSH_STOP"], d.shape()


@pytest.mark.parametrize("stream,log", [("FLUSH", "APPEND"), ("LOOP", "UNTIL_FULL"),
                                        ("UNTIL_FULL", "LOOP")])
def test_exit_without_shutdown(tmp_path, stream, log):
    """posix_trace_create.3p.txt: "If the process exits ... the trace streams that the
    process had created and that have not yet been shut down, shall be automatically
    shut down as if an explicit call were made to the posix_trace_shutdown()
    function" -- and a shutdown flushes everything and closes the log.  A program
    records 1000 events and returns from main: the log holds START, the 1000 events,
    STOP (auto = 0) and the shutdown's flush marks (doc/semantics.md)."""
    path = str(tmp_path / "exit.log")
    w = write_log(path, "stream=" + stream, "log=" + log, "lsize=1048576", "start",
                  "e:1000", "exit")
    assert w.steps[-1] == "exiting without shutdown"
    d = dump(path, "skipflush")
    check_seq_data_exact(d)
    assert d.shape() == ["START", "run", "STOP:auto=0"], d.shape()
    r = d.user_runs()[0]
    assert (r["first"], r["last"], r["pid"]) == (0, 999, w.pid)
    assert d.flush_marks == {"start": 1, "stop": 1, "unpaired": 0}
    assert d.status["stream"] == "SUSPENDED"


def test_exec_without_shutdown(tmp_path):
    """posix_trace_create.3p.txt: "If the process exits, invokes a member of the exec
    family of functions, or is terminated, the trace streams ... shall be automatically
    shut down as if an explicit call were made to the posix_trace_shutdown()
    function".  A program records 1000 events and execs /bin/true: the log holds
    START, the 1000 events and STOP (auto = 0)."""
    path = str(tmp_path / "exec.log")
    w = write_log(path, "log=APPEND", "start", "e:1000", "exec")
    assert w.steps[-1] == "exec without shutdown"
    d = dump(path, "skipflush")
    check_seq_data_exact(d)
    assert d.shape() == ["START", "run", "STOP:auto=0"], d.shape()
    r = d.user_runs()[0]
    assert (r["first"], r["last"]) == (0, 999)


@pytest.mark.parametrize("flushes", [1, 2, 10, 100])
def test_writer_killed(tmp_path, flushes):
    """doc/semantics.md: "a process killed leaves its log as last flushed";
    doc/log-format.md: a log whose writer was killed has every block of every completed
    flush and the EVENTS blocks written since; a torn block is detected and skipped.  A
    writer records 100 events, flushes, pauses 1 ms, again, until SIGKILLed once its
    `flushes`-th posix_trace_flush has returned: posix_trace_open succeeds and reads
    START, then events 0..n-1 in order with their exact data (one run: nothing missing
    in the middle), at least the 100 of each completed flush, FLUSH_START/FLUSH_STOP in
    pairs, timestamps never decreasing; rewind reads the same again."""
    path = str(tmp_path / "killed.log")
    head = killed_writer(path, flushes, "log=APPEND", "start", "loop:100:1000")
    d = dump(path, "skipflush")
    assert d.open == "0"
    check_seq_data_exact(d)
    assert d.shape() == ["START", "run"], d.shape()
    r = d.user_runs()[0]
    assert r["first"] == 0 and r["n"] >= 100 * flushes and r["pid"] == head["pid"], r
    assert d.flush_marks["unpaired"] == 0 and d.flush_marks["start"] >= flushes
    assert d.end["backwards"] == 0
    assert d.line("rewind") == "rewind rc=0 n=%d same=1" % d.end["n"]


def test_writer_killed_loop_log(tmp_path):
    """As test_writer_killed with a 256 KiB LOOP log that wraps many times before the
    kill, after 1,000 flushes of 100 events (about ten times: doc/log-format.md: the
    reader orders the valid blocks by seq): the log opens
    and reads one run of consecutive events with exact data, timestamps never
    decreasing; its file never exceeds log-max-size."""
    path = str(tmp_path / "killedloop.log")
    killed_writer(path, 1000, "log=LOOP", "lsize=262144", "start", "loop:100:200")
    assert os.path.getsize(path) <= 262144
    d = dump(path, "skipflush")
    assert d.open == "0"
    check_seq_data_exact(d)
    assert d.shape() in (["run"], ["START", "run"]), d.shape()
    r = d.user_runs()[0]
    assert r["n"] >= 100, r
    assert d.end["backwards"] == 0


def test_efbig(tmp_path):
    """posix_trace_create.3p.txt: flush and shutdown "shall fail if: EFBIG The trace log
    file has attempted to exceed an implementation-defined maximum file size"
    (RLIMIT_FSIZE of 64 KiB, SIGXFSZ ignored, set after the stream was created);
    doc/semantics.md: the failure shows as posix_stream_flush_error until the next
    posix_trace_get_status (posix_trace_get_attr.3p.txt: "the flush_error status shall
    be reset to zero immediately after the call completes").  The file stops at the
    limit and still opens: START, then events 0..n-1 intact (a prefix)."""
    path = str(tmp_path / "efbig.log")
    w = write_log(path, "stream=UNTIL_FULL", "log=APPEND", "fsize:65536", "start", "e:3000",
                  "flush", "status", "status", "e:10", "shutdown", "size")
    assert w.of("setrlimit") == [{"rc": "0"}]
    assert w.of("flush")[0]["rc"] == "EFBIG"
    s0, s1 = w.statuses()
    assert (s0["flush_error"], s1["flush_error"]) == ("EFBIG", "0"), (s0, s1)
    assert w.of("shutdown")[0]["rc"] == "EFBIG"
    assert w.size() == 65536
    d = dump(path, "skipflush")
    assert d.open == "0"
    check_seq_data_exact(d)
    assert d.shape() == ["START", "run"], d.shape()
    assert d.user_runs()[0]["first"] == 0


def test_efbig_flush_policy(tmp_path):
    """As test_efbig with the FLUSH stream policy (the automatic flusher writes too):
    posix_trace_flush and posix_trace_shutdown return EFBIG, the status reports
    flush_error EFBIG once."""
    path = str(tmp_path / "efbig2.log")
    w = write_log(path, "log=APPEND", "fsize:65536", "start", "e:3000", "flush", "status",
                  "shutdown", "size")
    assert w.of("flush")[0]["rc"] == "EFBIG"
    assert w.statuses()[0]["flush_error"] == "EFBIG"
    assert w.of("shutdown")[0]["rc"] == "EFBIG"
    assert w.size() == 65536
    d = dump(path, "skipflush", "norewind")
    assert d.open == "0"
    check_seq_data_exact(d)


@pytest.fixture
def small_tmpfs(tmp_path):
    """A 64 KiB tmpfs (needs mount privileges: skipped without them)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    try:
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        pytest.skip("cannot mount a tmpfs: %s" % e)
    if p.returncode != 0:
        pytest.skip("cannot mount a tmpfs: %s" % p.stderr.decode(errors="replace").strip())
    try:
        yield str(mnt)
    finally:
        subprocess.run(["umount", "-l", str(mnt)], timeout=20)


def test_enospc(small_tmpfs, tmp_path):
    """posix_trace_create.3p.txt: flush and shutdown "shall fail if: ENOSPC No space left
    on device" -- a log on a 64 KiB tmpfs; flush_error ENOSPC once
    (posix_trace_get_attr.3p.txt, doc/semantics.md); the log (copied out) still opens:
    START, then a prefix of the events, intact."""
    path = os.path.join(small_tmpfs, "log")
    w = write_log(path, "stream=UNTIL_FULL", "log=APPEND", "start", "e:3000", "flush",
                  "status", "status", "e:10", "shutdown", "size")
    assert w.of("flush")[0]["rc"] == "ENOSPC"
    s0, s1 = w.statuses()
    assert (s0["flush_error"], s1["flush_error"]) == ("ENOSPC", "0"), (s0, s1)
    assert w.of("shutdown")[0]["rc"] == "ENOSPC"
    copy = str(tmp_path / "copy.log")
    with open(path, "rb") as f, open(copy, "wb") as g:
        g.write(f.read())
    d = dump(copy, "skipflush")
    assert d.open == "0"
    check_seq_data_exact(d)
    assert d.shape() == ["START", "run"], d.shape()
    assert d.user_runs()[0]["first"] == 0


def test_enospc_at_create(small_tmpfs):
    """posix_trace_create.3p.txt: create_withlog "shall fail if: ENOSPC No space left on
    device. The device corresponding to the argument file_desc does not contain the
    space required to create this trace log" (doc/semantics.md: the header cannot be
    written) -- the tmpfs filled up first."""
    fd = os.open(os.path.join(small_tmpfs, "fill"), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while os.write(fd, b"\0" * 4096) > 0:
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    w = write_log(os.path.join(small_tmpfs, "log"), "log=APPEND", "start")
    assert w.create == "ENOSPC", w.out
