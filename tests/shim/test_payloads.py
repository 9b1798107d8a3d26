"""The payload declarations generated from include/posixtrace/events.def
(<posixtrace/payloads.h>, issue 14: one definition per event): a program
decodes the shim's events with the generated structs and field positions
(program tests/shim/t120_payloads.c). Format: doc/events.md, <posixtrace/events.h>.
"""
import os

import pytest

from harness import kv, run
from shimcommon import sanitized, shim_env


def test_generated_payload_structs_decode_the_shim_events():
    if sanitized():
        pytest.skip("needs the shim preloaded (not in the sanitizer build)")
    out = run("t120_payloads", env=shim_env())
    lines = out.splitlines()
    head = kv(lines[0])
    fd, (r, w) = int(head["fd"]), head["p"].split(",")
    evs = [(l.split()[0], kv(l)) for l in lines[1:]]
    assert [e[0] for e in evs] == ["open", "pipe", "rename"], out
    o, p, rn = evs[0][1], evs[1][1], evs[2][1]
    assert o == {"dirfd": "-100", "flags": "%#x" % (os.O_RDONLY | os.O_CLOEXEC), "mode": "0",
                 "ret": str(fd), "path": "/dev/null", "nvar": "1"}, out
    assert p == {"flags": "%#x" % os.O_NONBLOCK, "rfd": r, "wfd": w, "nvar": "0"}, out
    assert rn == {"olddirfd": "-100", "newdirfd": "7", "flags": "0",
                  "err": head["rename_errno"], "oldpath": "/nonexistent/a", "newpath": "b",
                  "nvar": "2"}, out
