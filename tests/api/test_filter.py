"""The trace event type filter: tests/api/t014_filter.c.

Pages: posix_trace_get_filter.3p.txt (get_filter, set_filter),
posix_trace_create.3p.txt (empty filter at creation), posix_trace_event.3p.txt
(filtered-out events have no effect).  Implementation-defined: doc/semantics.md
(FILTER data = old + new sets, 512 bytes; FILTER only while running; the filter
applies to system events too; START data = the filter).
"""
from harness import run, expect_lines

STOP0 = "event id=1 name=posix_trace_stop pid=self tid=main len=4 auto=0 trunc=0"


def test_set_get_filter():
    """posix_trace_get_filter.3p.txt: the filter is empty by default ("all trace events
    shall be recorded"); SET makes it the given set, ADD the union, SUB removes the
    given set's members; get_filter returns the actual filter; a `how` other than the
    three values is invalid (EINVAL) and changes nothing.  No FILTER event is recorded
    while the stream is suspended (doc/semantics.md)."""
    out = run("t014_filter", "setget")
    expect_lines(out, """
        initial get_filter rc=0 filter=[]
        SET {257,300} rc=0
        after SET get_filter rc=0 filter=[257,300]
        ADD {258,300,1280} rc=0
        after ADD get_filter rc=0 filter=[257-258,300,1280]
        SUB {257,1280,999} rc=0
        after SUB get_filter rc=0 filter=[258,300]
        how=0 rc=EINVAL
        how=4 rc=EINVAL
        how=-1 rc=EINVAL
        how=1000 rc=EINVAL
        after invalid how get_filter rc=0 filter=[258,300]
        SET system rc=0
        after SET system get_filter rc=0 filter=[0-255,1281-2047]
        SUB all rc=0
        after SUB all get_filter rc=0 filter=[]
        ADD all rc=0
        after ADD all get_filter rc=0 filter=[0-2047]
        SET empty rc=0
        after SET empty get_filter rc=0 filter=[]
        event id=0 name=posix_trace_start pid=self tid=main len=256 filter=[] trunc=0
    """ + STOP0 + "\nend")


def test_filtered_events_and_filter_event():
    """posix_trace_event.3p.txt: "if the trace event specified by event_id is filtered
    out in the trace stream, the posix_trace_event() function shall have no effect".
    posix_trace_get_filter.3p.txt: "If this function is called while the trace is in
    progress, a special system trace event, POSIX_TRACE_FILTER, shall be recorded in the
    trace indicating both the old and the new sets" (doc/semantics.md: 512 bytes, old
    then new); set while suspended: no FILTER event, the filter shows in the START data;
    an invalid how records nothing."""
    out = run("t014_filter", "record")
    expect_lines(out, """
        ADD {foo} running rc=0
        SUB {foo,bar} running rc=0
        SET {baz,unnamed} running rc=0
        how=0 running rc=EINVAL
        SET empty suspended rc=0
        event id=0 name=posix_trace_start pid=self tid=main len=256 filter=[258] trunc=0
        event id=257 name=foo pid=self tid=main len=2 data=6631 trunc=0
        event id=259 name=baz pid=self tid=main len=2 data=7a31 trunc=0
        event id=2 name=posix_trace_filter pid=self tid=main len=512 old=[258] new=[257-258] trunc=0
        event id=259 name=baz pid=self tid=main len=2 data=7a32 trunc=0
        event id=2 name=posix_trace_filter pid=self tid=main len=512 old=[257-258] new=[] trunc=0
        event id=257 name=foo pid=self tid=main len=2 data=6633 trunc=0
        event id=258 name=bar pid=self tid=main len=2 data=6233 trunc=0
        event id=259 name=baz pid=self tid=main len=2 data=7a33 trunc=0
        event id=2 name=posix_trace_filter pid=self tid=main len=512 old=[] new=[256,259] trunc=0
        event id=257 name=foo pid=self tid=main len=2 data=6634 trunc=0
    """ + STOP0 + """
        end
        end get_filter rc=0 filter=[]
    """)


def test_filter_applies_to_system_events():
    """doc/semantics.md: "The filter applies to every event type, system ones included:
    a filtered-out POSIX_TRACE_START is not recorded" (likewise STOP); the state still
    changes (posix_trace_start.3p.txt: status RUNNING / SUSPENDED)."""
    out = run("t014_filter", "system")
    expect_lines(out, """
        start with START filtered rc=0
        started status stream=RUNNING full=NOT_FULL overrun=NO_OVERRUN
        stop rc=0
        start rc=0
        stop with STOP filtered rc=0
        stopped status stream=SUSPENDED full=NOT_FULL overrun=NO_OVERRUN
        event id=257 name=foo pid=self tid=main len=1 data=31 trunc=0
    """ + STOP0 + """
        event id=0 name=posix_trace_start pid=self tid=main len=256 filter=[1] trunc=0
        event id=257 name=foo pid=self tid=main len=1 data=32 trunc=0
        end
    """)
