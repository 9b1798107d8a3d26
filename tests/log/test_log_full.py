"""Issue 13 item 9: a log that cannot be written whole (a full filesystem,
a file size limit, /dev/full) loses no event silently.  The events of a
batch whose write failed are counted lost and the failed write is undone
(no torn block is left); the stream's status records the error as
posix_stream_flush_error (posix_trace_get_attr.3p.txt: "the flush_error
status", reset by posix_trace_get_status; trace.h.0p.txt: struct
posix_trace_status_info; posix_trace_flush.3p.txt), and the log's last
STATUS block says it with the events lost in all (doc/log-format.md
"STATUS", doc/semantics.md "Trace Log option").  posixtrace-run says how
many events were lost and why and exits 125; posixtrace-dump warns that the
log is incomplete and exits 1 (doc/tools.md).

The counts are exact: every event recorded by a writer is in the log or
counted lost.  The writers are the target (t200_tools_target "user N":
N "tools/tick" and one "tools/text") and posixtrace-run itself (the START
of posix_trace_start() and the STOP of posix_trace_shutdown()).
"""
import os
import re
import resource
import signal
import struct
import subprocess
import time

import pytest

import logfmt
from toolscommon import target, tdump, tool, trun

TICKS = 4000000
WRITERS_EXTRA = 1 + 2  # tools/text, and the controller's START and STOP


def log_counts(path):
    """(events of writer slots in the log, lost count of its last STATUS block,
    its flush_error)."""
    data = open(path, "rb").read()
    bsize = struct.unpack_from("<I", data, 16)[0]  # the stream's chunk size (header)
    bs = logfmt.blocks_in_order(data, bsize)
    seqs = [b.seq for b in bs]
    assert seqs == list(range(1, len(bs) + 1)), "blocks out of order or torn"
    assert (len(data) - logfmt.HDR_SIZE) % bsize == 0, "a torn block is left"
    n = sum(1 for b in bs if b.slot != logfmt.SLOT_SYS
            for r in b.recs if r.kind == logfmt.REC_EVENT)
    st = [b for b in bs if b.type == logfmt.STATUS][-1]
    v = struct.unpack_from("<7iiQ", st.payload)
    return n, v[8], v[4]


def check_failed_run(p, path, errname, errno_):
    n, lost, err = log_counts(path)
    assert err == errno_
    assert n + lost == TICKS + WRITERS_EXTRA, (n, lost)
    assert lost > 0
    msg = "%s: writing the log failed: %s: the log is incomplete, %d events lost in all" % (
        path, os.strerror(errno_), lost)
    assert msg in p.err, p.err
    m = re.search(r"(\d+) events in %s, (\d+) lost" % re.escape(path), p.err)
    assert m and int(m.group(2)) == lost, p.err
    assert "filled faster" not in p.err and "log overflowed" not in p.err
    d = tdump(path, rc=1, stdout=subprocess.DEVNULL)
    assert d.err == ("posixtrace-dump: %s: incomplete log: writing it failed (%s); "
                     "%d events lost in all\n" % (path, os.strerror(errno_), lost))
    info = tdump("--info", path)  # says it, as a status field
    assert "flush error %d," % errno_ in info.out


def test_file_size_limit(tmp_path):
    """RLIMIT_FSIZE (SIGXFSZ ignored): writes past it fail with EFBIG.  The limit
    (64 KiB) is set on posixtrace-run once its stream exists (it would bound the
    stream's memfd too), before the program records: the stream holds far more
    than 64 KiB of log, so the log fills whatever the flusher's pace."""
    path = str(tmp_path / "big.ptl")
    limit = 65536
    r = subprocess.Popen([tool("posixtrace-run"), "-o", path, "--no-preload", "--",
                          "/bin/sh", "-c", 'read go && exec "$0" user %d' % TICKS, target()],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(signal.SIGXFSZ, signal.SIG_IGN))
    try:
        deadline = time.monotonic() + 30
        while not (os.path.exists(path) and os.path.getsize(path) >= logfmt.HDR_SIZE):
            assert time.monotonic() < deadline and r.poll() is None, "no log header"
            time.sleep(0.01)
        resource.prlimit(r.pid, resource.RLIMIT_FSIZE, (limit, limit))
        out, err = r.communicate(b"go\n", timeout=60)
    finally:
        if r.poll() is None:
            r.kill()
            r.wait()
    p = subprocess.CompletedProcess(r.args, r.returncode)
    p.out, p.err = out.decode(errors="replace"), err.decode(errors="replace")
    assert r.returncode == 125, p.err
    assert p.out == "done %d\n" % TICKS
    assert os.path.getsize(path) <= limit
    check_failed_run(p, path, "EFBIG", 27)


def test_tmpfs_full(tmp_path):
    """A real 1 MiB tmpfs: ENOSPC.  The stream (16 MiB) is larger than the
    filesystem, so the log fills whatever the flusher's pace: if it falls behind,
    the events the stream holds at shutdown are more than 1 MiB of log."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)],
                       capture_output=True, timeout=30)
    if r.returncode != 0:
        pytest.skip("mount failed: %s" % r.stderr.decode(errors="replace").strip())
    try:
        path = str(mnt / "log.ptl")
        p = trun("-o", path, "--no-preload", "--stream-size=16M", target(), "user", str(TICKS),
                 rc=125)
        assert p.out == "done %d\n" % TICKS
        check_failed_run(p, path, "ENOSPC", 28)
    finally:
        subprocess.run(["umount", str(mnt)], timeout=30)


def test_dev_full():
    """/dev/full, a character device, takes APPEND (and UNTIL_FULL) logs but
    not LOOP (doc/semantics.md "Trace Log option"); its first write, the log
    header, fails: the stream is not created and the program is not run."""
    p = trun("-o", "/dev/full", "--no-preload", target(), "user", "10", rc=125)
    assert p.out == ""
    assert p.err == "posixtrace-run: cannot create the trace stream: No space left on device\n"
    p = trun("-o", "/dev/full", "--log-policy=loop", "--no-preload", target(), "user", "10",
             rc=125)
    assert p.err == "posixtrace-run: cannot create the trace stream: Invalid argument\n"
