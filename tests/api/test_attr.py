"""Trace stream attributes: tests/api/t001_attr.c (the object on its own) and
tests/api/t002_attr_stream.c (attributes of created streams).

Pages: posix_trace_attr_destroy.3p.txt (init/destroy),
posix_trace_attr_getclockres.3p.txt (clockres, createtime, genversion, name),
posix_trace_attr_getinherited.3p.txt (inheritance, log/stream full policies),
posix_trace_attr_getlogsize.3p.txt (log/stream/data sizes, event sizes),
posix_trace_get_attr.3p.txt, posix_trace_create.3p.txt.
Implementation-defined values: doc/semantics.md, "Attributes: defaults and bounds".
"""
import re

from harness import run, expect_lines, kv

DEFAULTS = """
    name=""
    genversion="posixtrace 0.1"
    clockres=0.000000001
    streamsize=1048576
    maxdatasize=256
    logsize=16777216
    streamfullpolicy=LOOP
    logfullpolicy=LOOP
    inherited=CLOSE_FOR_CHILD
"""


def prefixed(prefix, block):
    return "\n".join("%s %s" % (prefix, l.strip()) for l in block.strip().splitlines())


def test_defaults():
    """posix_trace_attr_init sets every attribute to its default
    (posix_trace_attr_destroy.3p.txt): trace name "" (posix_trace_attr_getclockres.3p.txt:
    "The default value is a null string"), inheritance CLOSE_FOR_CHILD, log-full-policy
    LOOP, stream-full-policy LOOP (posix_trace_attr_getinherited.3p.txt); the
    read-only generation-version and clock-resolution set; implementation-defined
    defaults per doc/semantics.md (stream 1 MiB, data 256, log 16 MiB,
    genversion "posixtrace 0.1", clockres = clock_getres(CLOCK_REALTIME) = 1 ns).
    A destroyed object can be reinitialized (posix_trace_attr_destroy.3p.txt)."""
    out = run("t001_attr", "defaults")
    expect_lines(out, "init rc=0\n" + prefixed("default", DEFAULTS) + """
        clockres_equals_clock_getres_realtime=1
        destroy rc=0
        reinit rc=0
    """ + prefixed("reinit", DEFAULTS) + "\ndestroy rc=0")


def test_set_get_and_bounds():
    """Every setter stores what its getter returns; values outside the accepted
    ranges of doc/semantics.md give EINVAL and leave the attribute unchanged:
    stream-min-size 1..1 GiB, max-data-size 0..65536, log-max-size 1..SIZE_MAX;
    stream-full-policy LOOP/UNTIL_FULL/FLUSH, log-full-policy LOOP/UNTIL_FULL/APPEND,
    inheritance CLOSE_FOR_CHILD/INHERITED (posix_trace_attr_getinherited.3p.txt,
    posix_trace_attr_getlogsize.3p.txt: "EINVAL The value specified by one of the
    arguments is invalid")."""
    out = run("t001_attr", "setget")
    big = 2**64 - 1
    expect_lines(out, """
        setstreamsize 65536 rc=0 now=65536
        setstreamsize 0 rc=EINVAL now=65536
        setstreamsize 1 rc=0 now=1
        setstreamsize 1073741824 rc=0 now=1073741824
        setstreamsize 1073741825 rc=EINVAL now=1073741824
        setstreamsize %(big)d rc=EINVAL now=1073741824
        setmaxdatasize 1000 rc=0 now=1000
        setmaxdatasize 0 rc=0 now=0
        setmaxdatasize 65536 rc=0 now=65536
        setmaxdatasize 65537 rc=EINVAL now=65536
        setmaxdatasize %(big)d rc=EINVAL now=65536
        setlogsize 12345 rc=0 now=12345
        setlogsize 1 rc=0 now=1
        setlogsize %(big)d rc=0 now=%(big)d
        setlogsize 0 rc=EINVAL now=%(big)d
        setstreamfullpolicy 2 rc=0 now=UNTIL_FULL
        setstreamfullpolicy 3 rc=0 now=FLUSH
        setstreamfullpolicy 1 rc=0 now=LOOP
        setstreamfullpolicy 4 rc=EINVAL now=LOOP
        setstreamfullpolicy 0 rc=EINVAL now=LOOP
        setstreamfullpolicy 5 rc=EINVAL now=LOOP
        setstreamfullpolicy -1 rc=EINVAL now=LOOP
        setlogfullpolicy 2 rc=0 now=UNTIL_FULL
        setlogfullpolicy 4 rc=0 now=APPEND
        setlogfullpolicy 1 rc=0 now=LOOP
        setlogfullpolicy 3 rc=EINVAL now=LOOP
        setlogfullpolicy 0 rc=EINVAL now=LOOP
        setlogfullpolicy 5 rc=EINVAL now=LOOP
        setlogfullpolicy -1 rc=EINVAL now=LOOP
        setinherited 2 rc=0 now=INHERITED
        setinherited 1 rc=0 now=CLOSE_FOR_CHILD
        setinherited 0 rc=EINVAL now=CLOSE_FOR_CHILD
        setinherited 3 rc=EINVAL now=CLOSE_FOR_CHILD
        setinherited -1 rc=EINVAL now=CLOSE_FOR_CHILD
        final name=""
        final genversion="posixtrace 0.1"
        final clockres=0.000000001
        final streamsize=1073741824
        final maxdatasize=65536
        final logsize=%(big)d
        final streamfullpolicy=LOOP
        final logfullpolicy=LOOP
        final inherited=CLOSE_FOR_CHILD
    """ % {"big": big})


def test_setname_truncation():
    """posix_trace_attr_setname (posix_trace_attr_getclockres.3p.txt): a name longer
    than {TRACE_NAME_MAX}-1 may be truncated to TRACE_NAME_MAX-1 characters;
    doc/semantics.md: TRACE_NAME_MAX is 256, names are kept to 255 characters, longer
    ones truncated (rc 0).  getname writes at most TRACE_NAME_MAX bytes."""
    out = run("t001_attr", "name")
    exp = []
    for n in (0, 1, 8, 254, 255, 256, 257, 300, 1000):
        exp.append("setname len=%d rc=0 got_len=%d prefix_ok=1 canary_ok=1" % (n, min(n, 255)))
    exp.append('name="hello world"')
    expect_lines(out, "\n".join(exp))


ATTR_FUNCS = """posix_trace_attr_getclockres posix_trace_attr_getcreatetime
posix_trace_attr_getgenversion posix_trace_attr_getname posix_trace_attr_setname
posix_trace_attr_getinherited posix_trace_attr_setinherited
posix_trace_attr_getlogfullpolicy posix_trace_attr_setlogfullpolicy
posix_trace_attr_getstreamfullpolicy posix_trace_attr_setstreamfullpolicy
posix_trace_attr_getlogsize posix_trace_attr_setlogsize posix_trace_attr_getmaxdatasize
posix_trace_attr_setmaxdatasize posix_trace_attr_getmaxsystemeventsize
posix_trace_attr_getmaxusereventsize posix_trace_attr_getstreamsize
posix_trace_attr_setstreamsize posix_trace_attr_destroy""".split()


def test_invalid_attr_objects():
    """doc/semantics.md: "Functions given a NULL or uninitialized (not
    posix_trace_attr_init'ed, or destroyed) attributes object return EINVAL" --
    every posix_trace_attr_* function, for a NULL pointer, a zeroed object, a
    garbage-filled object and a destroyed one (the pages' "EINVAL The value of attr
    is invalid", posix_trace_attr_destroy.3p.txt and the other attr pages);
    a destroyed object can be reinitialized (posix_trace_attr_destroy.3p.txt)."""
    out = run("t001_attr", "invalid")
    exp = ["NULL posix_trace_attr_init rc=EINVAL"]
    for variant in ("NULL", "zeroed", "garbage", "destroyed"):
        exp += ["%s %s rc=EINVAL" % (variant, f) for f in ATTR_FUNCS]
    exp += ["reinit rc=0", "reinit getstreamsize rc=0", "reinit streamsize=1048576",
            "reinit destroy rc=0"]
    expect_lines(out, "\n".join(exp))


def test_event_sizes():
    """posix_trace_attr_getmaxusereventsize / getmaxsystemeventsize
    (posix_trace_attr_getlogsize.3p.txt) with the formula of doc/semantics.md:
    user = 48 + 4*ceil(min(n, max-data-size)/4), system = 48 + 1024, whatever the
    max-data-size."""
    out = run("t001_attr", "sizes")
    seen = 0
    for line in out.splitlines():
        m = re.match(r"maxdata=(\d+) system=(\d+)$", line)
        if m:
            assert int(m.group(2)) == 1072, line
            seen += 1
            continue
        m = re.match(r"maxdata=(\d+) n=(\d+) user=(\d+)$", line)
        assert m, line
        md, n, size = map(int, m.groups())
        assert size == 48 + 4 * ((min(n, md) + 3) // 4), line
        seen += 1
    assert seen == 5 * (1 + 19)


STREAM_ATTRS = """
    name="stream-one"
    genversion="posixtrace 0.1"
    clockres=0.000000001
    streamsize=65536
    maxdatasize=1000
    logsize=12345
    streamfullpolicy=UNTIL_FULL
    logfullpolicy=APPEND
    inherited=CLOSE_FOR_CHILD
    maxsystemeventsize=1072
    maxusereventsize(10)=60
"""


def test_get_attr_and_later_changes():
    """posix_trace_get_attr copies the attributes of the stream
    (posix_trace_get_attr.3p.txt); "If the attributes of the object pointed to by attr
    are modified later, the attributes of the trace stream shall not be affected"
    (posix_trace_create.3p.txt) and "any function affecting that attributes object,
    including destruction, shall not affect any trace stream previously created"
    (posix_trace_attr_destroy.3p.txt): checked through get_attr and through
    behaviour (a 100-byte event is not truncated: the stream's max-data-size is still
    1000, not the 16 set afterwards).  "A single attributes object can be used in
    multiple calls to posix_trace_create()" (posix_trace_attr_destroy.3p.txt).
    The stream size read back is the memory reserved for events now
    (posix_trace_attr_getstreamsize.3p.txt; doc/semantics.md): with no writer yet,
    max(65536, one chunk's room) = 65536."""
    out = run("t002_attr_stream", "getattr")
    expect_lines(out, "create rc=0\nget_attr rc=0\n" + prefixed("stream", STREAM_ATTRS)
                 + "\ncreate2 rc=0\ndistinct_trids=1\nget_attr rc=0\n"
                 + prefixed("stream2", STREAM_ATTRS)
                 + "\nget_attr rc=0\n" + prefixed("after_modify", STREAM_ATTRS)
                 + "\nget_attr rc=0\n" + prefixed("after_destroy", STREAM_ATTRS)
                 + "\nuser event len=100 trunc=0 data_ok=1")


def test_create_null_attr_uses_defaults():
    """posix_trace_create.3p.txt: "If the argument attr is NULL, the default
    attributes shall be used"; the stream is created suspended
    (posix_trace_create.3p.txt); defaults per doc/semantics.md."""
    out = run("t002_attr_stream", "nullattr")
    expect_lines(out, "create NULL attr rc=0\nget_attr rc=0\n" + prefixed("null", DEFAULTS) + """
        null maxsystemeventsize=1072
        null maxusereventsize(10)=60
        null status stream=SUSPENDED full=NOT_FULL overrun=NO_OVERRUN
    """)


def test_create_bad_attr():
    """posix_trace_create.3p.txt: "EINVAL One or more of the trace parameters specified
    by the attr parameter is invalid"; doc/semantics.md: an uninitialized or destroyed
    attributes object gives EINVAL, and stream-full-policy FLUSH without a log gives
    EINVAL (posix_trace_attr_getinherited.3p.txt: "Defining this policy for an active
    trace stream without log shall be invalid")."""
    out = run("t002_attr_stream", "badattr")
    expect_lines(out, """
        create zeroed attr rc=EINVAL
        create garbage attr rc=EINVAL
        create destroyed attr rc=EINVAL
        create FLUSH without log rc=EINVAL
        create UNTIL_FULL rc=0
        create LOOP rc=0
    """)


def test_createtime():
    """posix_trace_create.3p.txt: "The creation-time attribute of the newly created
    trace stream shall be set to ... the value of the CLOCK_REALTIME clock";
    posix_trace_attr_getcreatetime (posix_trace_attr_getclockres.3p.txt) reads it
    back through posix_trace_get_attr: it lies between CLOCK_REALTIME readings taken
    before and after the call (10 us slack), does not change, and a later stream has a
    later one.  The stream's clock resolution is 1 ns (doc/semantics.md)."""
    out = run("t002_attr_stream", "createtime")
    n = 0
    for line in out.splitlines():
        if line.startswith("createtime before="):
            d = kv(line)
            b, ct, a = int(d["before"]), int(d["ct"]), int(d["after"])
            assert b - 10000 <= ct <= a + 10000, line
            n += 1
        elif line.startswith("createtime "):
            assert line.endswith("=1"), line
        else:
            assert line == "clockres=0.000000001", line
    assert n == 3
