"""posixtrace-run against a traced program that attacks everything it
shares with it (issue 13, "Tests": a hostile-target harness; doc/design.md
"Untrusted stream memory"): random bytes, words and whole pages in its
streams, the names lock word, the member table, its inbox, truncation of the
controller's memfds. tests/xproc/t057_hostile_run.c says what each attack does.

The controller must end with a clean result or an error, never a crash, a
hang or a write outside its memory: posixtrace-run exits with the program's
status (0: t057 always exits 0, its worker's fate is its own business), prints
its end-of-run line, and a sanitizer build reports nothing of its own
(posixtrace-run is instrumented there; the worker's stderr is /dev/null). The
log it wrote is read by posixtrace-dump without a crash: exit 0, or 1 with a
damage report (doc/tools.md). Pages: posix_trace_create.3p.txt (a stream
for another process), posix_trace_getnext_event.3p.txt.
"""
import re

import pytest

from harness import program
from toolscommon import sh, tool
from shimrun import ENV, shim_usable

# Where the shim cannot be preloaded (a sanitizer build), t057 records through
# the library it is linked with (--no-preload): the attacks are the same, and
# posixtrace-run, instrumented, is what the test is about.
PRELOAD = [] if shim_usable() is None else ["--no-preload"]

ATTACKS = ["bytes", "words", "page", "lock", "members", "counters", "loop", "inbox", "shrink",
           "all"]
SANITIZER = re.compile(r"AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:")
SUMMARY_LOG = re.compile(r"^posixtrace-run: \d+ events in .*, \d+ lost", re.M)
SUMMARY_LIVE = re.compile(r"^posixtrace-run: \d+ events(, \d+ shown)?, \d+ lost", re.M)
SECONDS = 2


def run_hostile(args, attacks, seed):
    argv = [tool("posixtrace-run")] + PRELOAD + args + ["--", program("t057_hostile_run"),
                                              attacks, str(seed), str(SECONDS)]
    p = sh(argv, rc=None, env=ENV, timeout=120)
    assert p.returncode == 0, "exit %d\n%s" % (p.returncode, p.err[-3000:])
    assert not SANITIZER.search(p.err), p.err[-5000:]
    assert re.search(r"^W (exit=\d+|signal=\d+|killed at deadline)$", p.out, re.M), p.out
    return p


@pytest.mark.parametrize("attacks", ATTACKS)
def test_hostile_target_log(tmp_path, attacks):
    """posixtrace-run -o: the run ends with its summary line, and the log
    reads back without a crash (0, or 1 when it reports damage)."""
    log = str(tmp_path / "h.ptl")
    p = run_hostile(["-o", log], attacks, 7)
    assert SUMMARY_LOG.search(p.err), p.err[-3000:]
    d = sh([tool("posixtrace-dump"), log], rc=None, timeout=120, stdout=open("/dev/null", "wb"))
    assert d.returncode in (0, 1), "dump exit %d\n%s" % (d.returncode, d.err[-3000:])
    assert not SANITIZER.search(d.err), d.err[-5000:]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_hostile_target_live(tmp_path, seed):
    """Live reading (events printed as they come), every attack mixed."""
    p = run_hostile(["--print-to", str(tmp_path / "live.txt")], "all", seed)
    assert SUMMARY_LIVE.search(p.err), p.err[-3000:]


@pytest.mark.parametrize("output", ["log", "live"])
def test_corrupt_counters_never_printed(tmp_path, output):
    """issue 13 item 11: the stream's lost count raised by 2^55 at a time and
    its pending error set to 577528422 (no errno) are never reported as
    numbers: each is a posix_trace_error with EBADMSG (doc/semantics.md
    "Corrupt counters": a count that grows faster than its writers could
    lose events), no OVERFLOW carries such a count, the log's STATUS blocks
    stay valid (no damage) and the end-of-run line counts no such loss."""
    log, live = str(tmp_path / "c.ptl"), str(tmp_path / "live.txt")
    p = run_hostile(["-o", log] if output == "log" else ["--print-to", live], "counters", 5)
    if output == "log":
        d = sh([tool("posixtrace-dump"), log], rc=0, timeout=120)
        text, err = d.out + d.err, d.err
    else:
        text, err = open(live).read(), p.err
    assert "posix_trace_error(error=EBADMSG)" in text
    assert "577528422" not in text + p.err
    lost = [int(n) for n in re.findall(r"posix_trace_overflow\(lost=(\d+)\)", text)]
    assert all(n < 1 << 40 for n in lost), lost[:5]
    summary = re.search(r"^posixtrace-run: \d+ events.*?, (\d+) lost", p.err, re.M)
    assert summary and int(summary.group(1)) < 1 << 40, p.err[-2000:]
    assert re.search(r"^posixtrace-run: \d+ trace error\(s\)", p.err, re.M), p.err[-2000:]
    assert "damaged" not in err


def test_chunk_loops_read_once(tmp_path):
    """Chunk chains that a target links into loops are read once, not again
    and again: the flusher (like the reader) requires each chunk of a chain
    to be later (seq) than the one before (libtrace/ring/consume.c,
    pt_chain_advance), reports the chain as corrupt (posix_trace_error,
    EBADMSG) and follows it no more. Before, the log of a 2 s run grew to
    gigabytes of the same records."""
    log = tmp_path / "loop.ptl"
    p = run_hostile(["-o", str(log)], "loop", 3)
    assert log.stat().st_size < 64 << 20, (log.stat().st_size, p.err[-2000:])
    d = sh([tool("posixtrace-dump"), str(log)], rc=0, timeout=120)
    assert "posix_trace_error(error=EBADMSG)" in d.out
