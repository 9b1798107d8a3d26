"""posixtrace-run --block[=MS]: blocking writers (doc/tools.md "Blocking
writers", doc/semantics.md "Blocking writers"): a traced program whose
stream is full waits for posixtrace-run to read and print (or for the log's
flusher) instead of losing events.
"""
import re

import pytest

from harness import lines
from shimrun import ENV, shim_usable, trun
from toolscommon import events, tdump

# dd is traced through the shim, which a sanitizer build cannot preload
needs_shim = pytest.mark.skipif(shim_usable() is not None, reason=str(shim_usable()))

DD = ["--", "dd", "bs=1", "count=20000", "if=/dev/zero", "of=/dev/null"]


def rw_counts(text):
    evs = events(text)
    reads = sum(1 for n, a, r, p in evs if n == "posixtrace:read" and a.startswith("fd=0, count=1,")
                and r.startswith(" = 1 "))
    writes = sum(1 for n, a, r, p in evs if n == "posixtrace:write"
                 and a.startswith("fd=1, count=1,") and r.startswith(" = 1 "))
    return reads, writes


def end_line(err):
    m = re.search(r"posixtrace-run: (\d+) events, (\d+) shown, (\d+) lost", err)
    assert m, err
    return int(m.group(1)), int(m.group(3))


@needs_shim
def test_block_dd_every_event(tmp_path):
    """dd copying 20000 single bytes makes 20000 read and 20000 write calls, far
    more than a 64 KiB stream holds while posixtrace-run prints them: with
    --block every one of them is printed and none is lost; without it the same
    run loses events and says so. (The events go to a file: dd's own report
    on stderr would otherwise land in the middle of a line.)"""
    out = tmp_path / "events.txt"
    p = trun("--block", "--stream-size", "64K", "--print-to", out, *DD, timeout=120)
    assert rw_counts(out.read_text()) == (20000, 20000)
    total, lost = end_line(p.err)
    assert lost == 0 and total >= 40000
    p = trun("--stream-size", "64K", "--print-to", out, *DD, timeout=120)
    total, lost = end_line(p.err)
    assert lost > 0 and rw_counts(out.read_text()) != (20000, 20000)
    assert ", --block to make it wait," in p.err


@needs_shim
def test_block_log(tmp_path):
    """With -o (the FLUSH policy's flusher is the consumer) and --block=50 the
    log holds all 40000 calls, 0 lost (posixtrace-dump -c counts them)."""
    log = tmp_path / "dd.pt"
    p = trun("--block=50", "--stream-size", "64K", "-o", log, *DD, timeout=120)
    assert re.search(r"\d+ events in .*, 0 lost", p.err), p.err
    d = tdump("-c", log)
    rows = {l.split()[-1]: int(l.split()[3]) for l in lines(d.out + d.err)
            if l.split() and l.split()[-1] in ("posixtrace:read", "posixtrace:write")}
    assert rows == {"posixtrace:read": 20000, "posixtrace:write": 20000}


@pytest.mark.parametrize("value", ["0", "10001", "x", "-5", "1.5"])
def test_block_range(value):
    """--block=MS: a whole number of ms from 1 to 10000, checked before
    anything runs; the message names the option, the value and the range."""
    p = trun("--block=" + value, "true", rc=125)
    assert "--block %s: expected a whole number from 1 to 10000" % value in p.err


@needs_shim
def test_block_dead_controller_releases_writers(tmp_path):
    """posixtrace-run stopped (SIGSTOP: its reader stalls, the traced dd waits
    for room, up to 10 s per --block=10000) then killed (SIGKILL): the
    writer sees the controller dead (its alive page) and goes on at once,
    untraced: the shell's mark after dd appears within 6 s of the kill, not
    after the 10 s timeout."""
    import os
    import signal
    import subprocess
    import time
    from toolscommon import tool
    mark = tmp_path / "done"
    p = subprocess.Popen([tool("posixtrace-run"), "--block=10000", "--stream-size", "64K", "--",
                          "sh", "-c", "dd bs=1 count=1000000 if=/dev/zero of=/dev/null "
                          "2>/dev/null; touch %s" % mark],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=dict(os.environ, **ENV))
    try:
        time.sleep(0.5)
        assert p.poll() is None and not mark.exists(), "dd finished before the stop"
        os.kill(p.pid, signal.SIGSTOP)
        time.sleep(0.3)
        os.kill(p.pid, signal.SIGKILL)
        killed = time.monotonic()
        p.wait(timeout=10)
        while not mark.exists() and time.monotonic() - killed < 20:
            time.sleep(0.05)
        took = time.monotonic() - killed
        assert mark.exists() and took < 6, "dd went on %.1f s after the kill" % took
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(timeout=10)
