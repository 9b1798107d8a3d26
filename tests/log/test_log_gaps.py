"""Issue 13 item 10: a block removed from a log never goes unnoticed.

The writer numbers its blocks 1, 2, ... with no gap, even when a write fails
(doc/log-format.md "Order of blocks", "A write that fails"), and marks the
STATUS blocks of the log's last flush final, with the blocks written after
it (log-format.md "STATUS payload"): posix_trace_create.3p.txt, "when the
posix_trace_shutdown() function is called, all trace events that have not yet
been flushed to the trace log shall be flushed ... and the trace log shall be
closed", and "unspecified information shall be written to the trace log to
allow detection of a valid trace log during the posix_trace_open() operation"
(posix_trace_close.3p.txt for posix_trace_open).  The reader
(posixtrace_log_missing(), <posixtrace/log.h>; log-format.md "What a reader
reports") counts the seq numbers no block accounts for, and says whether the
log ends with its final STATUS block.  posixtrace-dump reads through
posix_trace_open: "damaged log: N block(s) missing" with exit status 1, and
for a log not closed a warning with exit status 0 (doc/tools.md).

Every block position of each log is removed in turn (no sample), then pairs.
"""
import struct
import subprocess

import pytest

import logfmt
from harness import program
from logcommon import killed_writer
from toolscommon import target, tdump, trun
from shimrun import shim_usable

NOT_CLOSED = ("posixtrace-dump: %s: log not closed: it does not end with the status its "
              "writer writes last, so its end may be missing (the writer was killed or is "
              "still writing it, or its last blocks were removed)\n")
MISSING = "posixtrace-dump: %s: damaged log: %d block(s) missing: their events are not read\n"


def block_size(data):
    return struct.unpack_from("<I", data, 16)[0]


def positions(data):
    """The whole block positions of a log file."""
    return (len(data) - logfmt.HDR_SIZE) // block_size(data)


def without(data, *pos):
    """The log with the blocks at these positions removed (the file shrinks)."""
    B, out, last = block_size(data), bytearray(), 0
    for p in sorted(pos):
        off = logfmt.HDR_SIZE + p * B
        out += data[last:off]
        last = off + B
    return bytes(out + data[last:])


def check(tmp_path, data, rc, err, name="cut.ptl"):
    """posixtrace-dump of `data`: exit status rc, stderr exactly err with the
    file's path for each %s."""
    path = str(tmp_path / name)
    with open(path, "wb") as f:
        f.write(data)
    p = tdump(path, rc=rc, stdout=subprocess.DEVNULL)
    assert p.err == err.replace("%s", path), p.err
    return p


def status_flags(data):
    """(seq, flags word) of each STATUS block of a log that never wrapped."""
    return [(b.seq, struct.unpack_from("<I", b.payload, 28)[0])
            for b in logfmt.blocks_in_order(data, block_size(data)) if b.type == logfmt.STATUS]


def check_each_removed(tmp_path, data):
    """An APPEND or UNTIL_FULL log, closed, in seq order: intact, it reads with
    nothing on stderr; with any one block removed, 1 block missing (exit 1),
    but for the last one (the final STATUS): not closed (exit 0)."""
    n = positions(data)
    bs = logfmt.blocks_in_order(data, block_size(data))
    assert [b.seq for b in bs] == list(range(1, n + 1))
    assert bs[-1].type == logfmt.STATUS and status_flags(data)[-1] == (n, 1)
    assert all(f == 0 for _, f in status_flags(data)[:-1])
    check(tmp_path, data, 0, "")
    for i in range(n - 1):
        check(tmp_path, without(data, i), 1, MISSING % ("%s", 1))
    check(tmp_path, without(data, n - 1), 0, NOT_CLOSED)
    return n


@pytest.mark.skipif(shim_usable() is not None, reason=str(shim_usable()))
def test_run_log_each_block_removed(tmp_path):
    """A real APPEND log: posixtrace-run -o of /bin/sh running a few commands
    (the shim records their calls).  Each of its blocks removed in turn."""
    path = tmp_path / "sh.ptl"
    trun("-q", "-o", str(path), "--", "/bin/sh", "-c",
         "ls /usr; cat /etc/hostname; echo x > /dev/null; ls /nonexistent; true")
    data = path.read_bytes()
    assert check_each_removed(tmp_path, data) >= 5


def test_run_log_no_preload_each_block_removed(tmp_path):
    """posixtrace-run -o of a program that records 3000 user events itself
    (t200_tools_target, --no-preload; also in a sanitizer build, where the
    shim cannot be preloaded into /bin/sh).  Each block removed in turn."""
    path = tmp_path / "user.ptl"
    trun("-q", "-o", str(path), "--no-preload", "--", target(), "user", "3000")
    assert check_each_removed(tmp_path, path.read_bytes()) >= 5


def api_log(tmp_path, name, *args):
    path = str(tmp_path / name)
    out = subprocess.run([program("t042_log_write"), path] + list(args), capture_output=True,
                         timeout=60, text=True)
    assert out.stdout.endswith("done\n"), out.stdout + out.stderr
    return open(path, "rb").read()


def test_api_flush_log_each_block_removed(tmp_path):
    """A log written through the API (posix_trace_create_withlog, stream-full
    policy FLUSH, log APPEND): 4000 events, posix_trace_flush after each 400,
    shutdown; ten flushes, each ending with a STATUS block, only the last
    final.  Each block removed in turn."""
    data = api_log(tmp_path, "api.ptl", "stream=FLUSH", "log=APPEND", "start", "ef:4000:400",
                   "shutdown")
    assert len(status_flags(data)) >= 10
    check_each_removed(tmp_path, data)


def test_until_full_log_each_block_removed(tmp_path):
    """An UNTIL_FULL log (64 KiB) that filled: the flush that filled it is its
    last (STOP), final though shutdown writes nothing after it
    (posix_trace_create.3p.txt: the trace log-full-policy UNTIL_FULL). Each
    block removed in turn."""
    data = api_log(tmp_path, "uf.ptl", "stream=FLUSH", "log=UNTIL_FULL", "lsize=65536",
                   "start", "ef:20000:500", "shutdown")
    assert len(data) <= 65536
    check_each_removed(tmp_path, data)


def test_two_blocks_removed(tmp_path):
    """Two blocks removed: 2 missing, apart or side by side; the last and
    one before it: not closed and 1 missing; the last two: not closed."""
    data = api_log(tmp_path, "two.ptl", "stream=FLUSH", "log=APPEND", "start", "ef:2000:400",
                   "shutdown")
    n = positions(data)
    check(tmp_path, without(data, 1, n - 3), 1, MISSING % ("%s", 2))
    check(tmp_path, without(data, 4, 5), 1, MISSING % ("%s", 2))
    check(tmp_path, without(data, 0, 1), 1, MISSING % ("%s", 2))
    check(tmp_path, without(data, 2, n - 1), 1, NOT_CLOSED + MISSING % ("%s", 1))
    check(tmp_path, without(data, n - 2, n - 1), 0, NOT_CLOSED)


def test_loop_log_each_block_removed(tmp_path):
    """A LOOP log (64 KiB: 15 positions) that wrapped many times: the valid
    blocks are the newest 15 seq numbers, intact it reads with nothing on
    stderr.  Any one position removed: 1 block missing (the newest removed:
    the one it overwrote counts, and the log is not closed)."""
    data = api_log(tmp_path, "loop.ptl", "stream=FLUSH", "log=LOOP", "lsize=65536", "start",
                   "ef:20000:500", "shutdown")
    n = positions(data)
    assert n == 15
    seqs = [struct.unpack_from("<Q", data, logfmt.HDR_SIZE + i * 4096 + 8)[0] for i in range(n)]
    newest = max(seqs)
    assert newest > 2 * n and sorted(seqs) == list(range(newest - n + 1, newest + 1))
    check(tmp_path, data, 0, "")
    for i in range(n):
        err = (NOT_CLOSED if seqs[i] == newest else "") + MISSING % ("%s", 1)
        check(tmp_path, without(data, i), 1, err)
    check(tmp_path, without(data, seqs.index(newest - 5), seqs.index(newest - 9)), 1,
          MISSING % ("%s", 2))


def test_failed_write_final_status_in_place(tmp_path):
    """A write that fails (RLIMIT_FSIZE, EFBIG) after some blocks of a flush
    were written: the new STATUS block does not fit and the last one is
    rewritten in place (log-format.md "A write that fails"); at shutdown it
    is final and counts the blocks written after it, so the log reads as
    closed (only "incomplete log"); its last block removed: 1 missing (the
    final STATUS says where the log ends); its STATUS block removed: 1
    missing, not closed."""
    data = api_log(tmp_path, "efbig.ptl", "stream=UNTIL_FULL", "log=APPEND", "start", "e:100",
                   "flush", "fsize:32768", "e:3000", "flush", "e:10", "shutdown")
    n = positions(data)
    assert len(data) == 32768
    (sseq, flags), = status_flags(data)
    tail = n - sseq
    assert tail > 0 and flags == 1 | tail << 8, (sseq, hex(flags))
    path = str(tmp_path / "efbig.ptl")
    inc = tdump(path, rc=1, stdout=subprocess.DEVNULL).err
    assert inc.startswith("posixtrace-dump: %s: incomplete log: writing it failed "
                          "(File too large); " % path) and inc.count("\n") == 1, inc
    inc = inc.replace(path, "%s")
    check(tmp_path, without(data, n - 1), 1, MISSING % ("%s", 1) + inc)
    # its only STATUS block removed: a gap, no end known, and no flush error left
    check(tmp_path, without(data, sseq - 1), 1, NOT_CLOSED + MISSING % ("%s", 1))


def test_loop_failed_writes_leave_no_gap(tmp_path):
    """A LOOP log (64 KiB, 15 positions) that wrapped, then a file size limit of
    32 KiB (RLIMIT_FSIZE: every write past position 6 fails with EFBIG) and ten
    more flushes.  A write of a wrapped LOOP log is not undone (log-format.md "A
    write that fails"): the blocks not written give back their seq numbers and
    positions, so the log's 15 valid blocks still hold 15 consecutive seq
    numbers, the newest STATUS (rewritten in place) is final and counts the
    blocks after it: only "incomplete log", nothing missing, closed."""
    data = api_log(tmp_path, "lf.ptl", "stream=FLUSH", "log=LOOP", "lsize=65536", "start",
                   "ef:5000:500", "fsize:32768", "ef:5000:500", "shutdown")
    n = positions(data)
    seqs = [struct.unpack_from("<Q", data, logfmt.HDR_SIZE + i * 4096 + 8)[0] for i in range(n)]
    assert n == 15 and sorted(seqs) == list(range(max(seqs) - 14, max(seqs) + 1)), seqs
    path = str(tmp_path / "lf.ptl")
    p = tdump(path, rc=1, stdout=subprocess.DEVNULL)
    assert p.err.startswith("posixtrace-dump: %s: incomplete log: writing it failed "
                            "(File too large); " % path) and p.err.count("\n") == 1, p.err


@pytest.mark.parametrize("policy", ["APPEND", "LOOP"])
def test_killed_writer_not_closed(tmp_path, policy):
    """A writer (t042_log_write: 100 events, posix_trace_flush, 1 ms pause, in a
    loop) killed with SIGKILL after 10 flushes (LOOP: 64 KiB, wrapped): its log
    is not closed (a warning, exit 0, as before), and no block is missing
    (doc/semantics.md: "a process killed leaves its log as last flushed").  A
    kill in the middle of a write may leave a torn block: an invalid block
    (exit 1), still no block missing."""
    path = str(tmp_path / "killed.ptl")
    args = ["log=" + policy, "start", "loop:100:1000"]
    if policy == "LOOP":
        args.insert(1, "lsize=65536")
    killed_writer(path, 10, *args)
    data = open(path, "rb").read()
    if policy == "LOOP":
        seqs = [struct.unpack_from("<Q", data, logfmt.HDR_SIZE + i * 4096 + 8)[0]
                for i in range(positions(data))]
        assert positions(data) == 15 and max(seqs) > 15  # it wrapped
    p = tdump(path, rc=None, stdout=subprocess.DEVNULL)
    if "invalid block" in p.err:  # torn by the kill
        assert p.returncode == 1 and p.err.count("\n") == 2, p.err
        assert p.err.endswith(NOT_CLOSED % path), p.err
    else:
        assert p.returncode == 0 and p.err == NOT_CLOSED % path, p.err
