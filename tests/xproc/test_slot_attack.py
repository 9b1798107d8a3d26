"""One process of a traced tree cannot steer another's writes (issue 13;
doc/design.md, "Writers keep their cursor"). Every process recording into a
stream can write all of its shared memory, so a writer takes nothing that
decides where it writes from there: its cursor (chunk, position, end,
anchor) is its own process's memory, chunk indices from the pool are
checked, and the geometry comes from a private copy of the first page,
checked against the attributes when the stream is mapped (pt_shm_check).
Without that, root tracing `su`, `sudo` or a daemon that drops privileges
would let the unprivileged part of the tree crash the privileged part or
make it write where it chooses.

tests/xproc/t058_slot_attack.c: under posixtrace-run (streams inherited), the
victim V records EVENTS numbered user events while its sibling A overwrites
what V's slots once held (slot), or the pool's indices (pool), or the shared
first page of the stream (head; then V starts a new image, which must refuse
the stream). V must end normally and, for slot, every one of its events must
be in the log exactly once, in order (posix_trace_event(3p): "the trace
event ... shall be recorded"); posixtrace-run exits 0 with its summary.
"""
import json
import re

import pytest

from harness import program
from toolscommon import sh, tool
from shimrun import ENV, shim_usable

PRELOAD = [] if shim_usable() is None else ["--no-preload"]
EVENTS = 20000


def run(tmp_path, mode, *extra):
    log = str(tmp_path / "s.ptl")
    argv = [tool("posixtrace-run")] + PRELOAD + ["-o", log, "--", program("t058_slot_attack"),
                                                mode, str(EVENTS)] + list(extra)
    p = sh(argv, rc=None, env=ENV, timeout=120)
    assert p.returncode == 0, "exit %d\n%s\n%s" % (p.returncode, p.out, p.err[-3000:])
    assert re.search(r"^posixtrace-run: \d+ events in .*, \d+ lost", p.err, re.M), p.err
    return p, log


def victim_events(log, victim):
    d = sh([tool("posixtrace-dump"), "-f", "json", log], rc=None, timeout=120)
    assert d.returncode in (0, 1), d.err
    evs = [json.loads(l) for l in d.out.splitlines() if l.startswith("{")]
    return [e for e in evs if e["pid"] == victim and e["event"].startswith("slot/")]


def victim_pid(tmp_path, p, log):
    d = sh([tool("posixtrace-dump"), "-f", "json", log], rc=None, timeout=120)
    pids = {json.loads(l)["pid"] for l in d.out.splitlines()
            if l.startswith("{") and '"slot/done"' in l}
    assert len(pids) == 1, (pids, p.out)
    return pids.pop()


def test_slot_overwritten(tmp_path):
    """A overwrites V's slots (chunk index, position, end, anchor, thread)
    without pause while V records 20000 events: V exits 0 and all of them
    are in the log, numbered 0..19999 in order, then slot/done."""
    p, log = run(tmp_path, "slot")
    assert p.out.splitlines() == ["V exit=0", "A exit=0"], p.out
    v = victim_pid(tmp_path, p, log)
    evs = victim_events(log, v)
    seqs = [int.from_bytes(bytes.fromhex(e["data"]), "little") for e in evs
            if e["event"] == "slot/ev"]
    assert seqs == list(range(EVENTS)), (len(seqs), seqs[:5])
    assert evs[-1]["event"] == "slot/done"


def test_pool_overwritten(tmp_path):
    """A sets the pool's top and fresh-chunk counter to indices past the
    stream: V's chunk switches find no chunk (its events counted lost, the
    stream's full status as the policy says) and never use one: V exits 0."""
    p, _ = run(tmp_path, "pool")
    assert p.out.splitlines() == ["V exit=0", "A exit=0"], p.out


def test_head_overwritten_new_image_refuses(tmp_path):
    """A scribbles the geometry on the stream's shared first page through a
    new mapping of the controller's memfd. V, which checked and copied that
    page when it started, goes on unharmed; the image V's child execs
    (t058 itself, which links the library and records one event) finds the
    geometry inconsistent with the attributes, refuses the stream and runs
    untraced: it exits 0, no crash, its event is not in the log, and
    posixtrace-run names it with that reason."""
    p, log = run(tmp_path, "head")
    assert p.out.splitlines() == ["C exit=0", "V exit=0", "A exit=0"], p.out
    v = victim_pid(tmp_path, p, log)
    seqs = [e for e in victim_events(log, v) if e["event"] == "slot/ev"]
    assert len(seqs) == EVENTS
    d = sh([tool("posixtrace-dump"), "-f", "json", log], rc=None, timeout=120)
    assert '"slot/probe"' not in d.out  # the new image recorded nothing into it
    if not PRELOAD:  # posixtrace-run says why (doc/tools.md, "Processes not traced")
        assert re.search(r"^posixtrace-run: pid \d+ \(\S*t058_slot_attack\): not traced: its "
                         r"new image refused the stream: its layout in shared memory was "
                         r"inconsistent", p.err, re.M), p.err
        assert re.search(r", 1 not traced$", p.err, re.M), p.err
