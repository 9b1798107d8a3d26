"""Event type sets: tests/api/t003_eventset.c.

Page: posix_trace_eventset_add.3p.txt (shared by eventset_del, _empty, _fill,
_ismember).  Implementation-defined: doc/semantics.md, "Event type identifiers and
names" (valid ids 0..2047; WOPID = 0..7, SYSTEM = 0..255 and 1281..2047, ALL = 0..2047).
"""
from harness import run, expect_lines


def test_eventset_operations():
    """posix_trace_eventset_empty excludes every type; posix_trace_eventset_fill
    includes the types `what` names (WOPID: process-independent system events,
    SYSTEM: all system events, ALL: every type) -- doc/semantics.md gives the exact
    ranges -- and an invalid `what` is EINVAL ("The value of one of the arguments is
    invalid"); add of a member / del of a non-member are not errors; ismember reports
    membership; ids 1281..2047 (probes, system calls) are valid; ids outside 0..2047 give EINVAL and leave the set unchanged
    (doc/semantics.md); the primitives "operate on data objects addressable by the
    application, not on the current trace event filter of any trace stream"
    (posix_trace_eventset_add.3p.txt): a new stream's filter stays empty."""
    out = run("t003_eventset")
    bad = ""
    for i in (2048, 2049, 100000, 4294967295):
        bad += "add %d rc=EINVAL\ndel %d rc=EINVAL\nismember %d rc=EINVAL\n" % (i, i, i)
    expect_lines(out, """
        empty rc=0
        empty []
        fill WOPID rc=0
        fill WOPID [0-7]
        fill SYSTEM rc=0
        fill SYSTEM [0-255,1281-2047]
        fill ALL rc=0
        fill ALL [0-2047]
        fill ALL then WOPID [0-7]
        fill what=0 rc=EINVAL
        fill what=4 rc=EINVAL
        fill what=-1 rc=EINVAL
        fill what=100 rc=EINVAL
        add 300 rc=0
        add 300 again rc=0
        add 0 rc=0
        add 63 rc=0
        add 64 rc=0
        add 256 rc=0
        add 1280 rc=0
        after add [0,63-64,256,300,1280]
        del 300 rc=0
        del 300 again rc=0
        del 301 (never added) rc=0
        after del [0,63-64,256,1280]
        ismember 0 rc=0 member=1
        ismember 1 rc=0 member=0
        ismember 63 rc=0 member=1
        ismember 64 rc=0 member=1
        ismember 65 rc=0 member=0
        ismember 256 rc=0 member=1
        ismember 300 rc=0 member=0
        ismember 1279 rc=0 member=0
        ismember 1280 rc=0 member=1
        all minus 1,700 [0,2-699,701-2047]
        add 1281 rc=0
        add 2047 rc=0
        probe and syscall ids [1281,2047]
    """ + bad + """
        set unchanged by invalid ids=1
        after invalid [5]
        stream filter []
    """)
