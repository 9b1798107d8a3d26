"""posix_trace_event() as <trace.h> defines it: the want-table test made inline
in the caller, in front of the library's function (doc/semantics.md,
"posix_trace_event in the header"). Program: tests/api/t028_event_inline.c,
built as a PIE and, as t028_event_inline_nopie, position-dependent (the want
table copied into the program by a copy relocation).

Pages: posix_trace_event.3p.txt (the event and its data are recorded when a
stream is running and the event type is not filtered out: "the
posix_trace_event() function shall have no effect" otherwise);
XSH 2.1.1 "Use of Functions" (a function a header also defines as a macro is
still available as a function: (name)(...), its address, #undef; "each of its
arguments exactly once").
"""
import re

import pytest

from harness import run
from toolscommon import trun

PROGS = ["t028_event_inline", "t028_event_inline_nopie"]


def events(out):
    """(name, data hex) of each 'event' line of the program's output."""
    return [(m.group(1), m.group(2)) for m in
            re.finditer(r"^event id=\d+ name=(\S+) .* data=(\S*) trunc=0$", out, re.M)]


@pytest.mark.parametrize("prog", PROGS)
def test_arguments_evaluated_once(prog):
    """Three calls with no stream, three recorded, three filtered out: each
    argument expression is evaluated exactly once per call in every case, and
    only the running, unfiltered calls record (lengths 1, 2, 3 of "abc")."""
    out = run(prog, "once")
    counts = re.findall(r"^counts id=(\d+) data=(\d+) len=(\d+)$", out, re.M)
    assert counts == [("3", "3", "3"), ("6", "6", "6"), ("9", "9", "9")], out
    user = [e for e in events(out) if e[0] == "inline/a"]
    assert user == [("inline/a", "61"), ("inline/a", "6162"), ("inline/a", "616263")], out


@pytest.mark.parametrize("prog", PROGS)
def test_function_forms(prog):
    """The macro, (posix_trace_event)(...), a pointer to the function and a
    call after #undef posix_trace_event each record their event."""
    out = run(prog, "forms")
    user = [bytes.fromhex(d).decode() for n, d in events(out) if n == "inline/a"]
    assert user == ["macro", "function", "pointer", "undef"], out


@pytest.mark.parametrize("prog", PROGS)
def test_traced_by_another_process(prog):
    """posixtrace-run (another process) posts its stream to the program, whose
    first event rings the doorbell through the want table the program reads
    inline -- its own copy in the position-dependent build: all 50 ticks are
    recorded, none lost."""
    from harness import program
    p = trun("--no-preload", program(prog), "user", "50")
    assert p.out == "done 50\n"
    ticks = [l for l in p.err.splitlines() if " inline/tick(" in l]
    assert len(ticks) == 50, p.err
    assert re.search(r"^posixtrace-run: \d+ events, 50 shown, 0 lost$", p.err, re.M), p.err
