"""Unit tests of libtrace's internal parts, called directly (no stream made
through the API): the free-chunk pool (tests/unit/t300_pool.c), the chunk
chain the consumer follows (t301_chain.c), the PACKED encoding of trace logs
(t302_logpack.c), the choice of a stream's clock (t303_clock.c, doc/semantics.md
"Timestamps"), a stream's geometry from its attributes (t305_geometry.c,
doc/design.md "Geometry": the chunk size by stream size, the chunk count,
the least log size), the encoding of a chunk's records (t306_recfmt.c,
doc/design.md "Records"); and, over a stream made through the API, a look of the log
flusher's thread called directly: a LOOP log keeps the report of a full
stream's gap with the events around it (t304_flush_gap.c).  Each program
runs its cases and prints "ok CASE" for each, "FAIL file:line: check" for a
check that failed, and a summary line.

Invariants: doc/design.md (the pool, the chains, orphan slots),
doc/log-format.md ("PACKED payload", "What the writer guarantees").
"""
import re

import pytest

from harness import run


@pytest.mark.parametrize("prog", ["t300_pool", "t301_chain", "t302_logpack", "t303_clock",
                                  "t304_flush_gap", "t305_geometry", "t306_recfmt"])
def test_unit(prog):
    """Every case of the program passes: exit status 0, no FAIL line, a
    summary of at least one check and none failed."""
    out = run(prog, timeout=180)
    assert "FAIL" not in out, out
    m = re.search(r"^%s: (\d+) checks, 0 failed$" % prog, out, re.M)
    assert m and int(m.group(1)) > 0, out
