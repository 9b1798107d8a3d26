"""A target that writes garbage over the stream it records into (issue 4: "The
reader treats the shared ring as untrusted (a buggy or hostile target writes into
it): every length and index it reads is checked; a corrupt stream gives an error,
never a crash in the controller").  Program: tests/t055_xproc_hostile.c.

The controller (R) must survive: its reads end (no endless stream of events from
a stream nobody records into any more), and posix_trace_get_status,
posix_trace_stop and posix_trace_shutdown return.  What it reads, and the codes
these return, are not checked (any error is acceptable; doc/semantics.md:
POSIX_TRACE_ERROR with EBADMSG for a corrupt record).  The target itself may
crash or hang.
"""
import pytest

from conftest import run, kv, lines

CASES = [("sparse", s) for s in (1, 2, 3, 4)] + [("words", s) for s in (1, 2, 5)] + \
    [("used", s) for s in (1, 2, 3)] + [("all", 1)]


@pytest.mark.parametrize("region,seed", CASES)
def test_controller_survives_corrupt_stream(region, seed):
    """R reads (timedgetnext, 3 s at most, 10^6 events at most) after T overwrote
    part of the stream (region, PRNG seed: see t055_xproc_hostile.c), then calls
    get_status, stop and shutdown: each returns, R exits 0 (no crash, no hang),
    and it read fewer than 10^6 events."""
    out = run("t055_xproc_hostile", region, seed, timeout=60)
    ls = lines(out)
    assert "T rec1=1" in ls and "T corrupt=1" in ls, out
    assert "R exit=0" in ls, out
    for call in ("get_status", "stop", "shutdown"):
        assert any(l.startswith("R %s rc=" % call) for l in ls), (call, out)
    n = kv([l for l in ls if l.startswith("R read n=")][0])
    assert int(n["n"]) < 1000000, ("the reader reports events without end", out)
