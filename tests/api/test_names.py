"""Event names and event type lists: tests/api/t004_names.c, tests/api/t005_names_limit.c.

Pages: posix_trace_event.3p.txt (posix_trace_eventid_open),
posix_trace_eventid_equal.3p.txt (eventid_equal, eventid_get_name,
trid_eventid_open), posix_trace_eventtypelist_getnext_id.3p.txt (getnext_id,
rewind).  Implementation-defined: doc/semantics.md, "Limits" and "Event type
identifiers and names".
"""
from harness import run, expect_lines

N63 = "zBCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJK"

SYSNAMES = ["posix_trace_start", "posix_trace_stop", "posix_trace_filter",
            "posix_trace_overflow", "posix_trace_resume", "posix_trace_flush_start",
            "posix_trace_flush_stop", "posix_trace_error"]


def test_names_and_type_list():
    """posix_trace_eventid_open (posix_trace_event.3p.txt): same name -> the
    previously assigned id, new names get 257, 258, ... (doc/semantics.md, in the order
    first opened); names of exactly TRACE_EVENT_NAME_MAX (63) characters are accepted,
    longer ones give ENAMETOOLONG; names opened before any stream exist are "stored
    for future trace streams"; user and system names are separate namespaces
    (doc/semantics.md).  Recording with no stream has no effect.
    posix_trace_eventid_get_name (posix_trace_eventid_equal.3p.txt): the system
    names of doc/semantics.md; the same name on successive calls; EINVAL for ids
    "not associated with any name" and for an invalid trid; the name fits in
    TRACE_EVENT_NAME_MAX+1 bytes.  posix_trace_trid_eventid_open: the process's
    mapping (the previously assigned id for a known name), ENAMETOOLONG, EINVAL for
    an invalid trid.  posix_trace_eventid_equal: non-zero iff equal.
    posix_trace_eventtypelist_getnext_id / rewind
    (posix_trace_eventtypelist_getnext_id.3p.txt): the list (doc/semantics.md:
    0..7, 256, then the user ids in id order), unavailable != 0 at the end (and
    still at the end on the next call), rewind restarts it, EINVAL for an invalid
    trid.  Recorded events carry the ids."""
    out = run("t004_names")
    names = "\n".join("get_name %d rc=0 name=%s len=%d canary_ok=1" % (i, n, len(n))
                      for i, n in enumerate(SYSNAMES))
    bad = ""
    for w in ("shutdown", "allones"):
        bad += ("%s get_name rc=EINVAL\n%s get_name(0) rc=EINVAL\n"
                "%s trid_eventid_open rc=EINVAL\n%s getnext_id rc=EINVAL\n"
                "%s rewind rc=EINVAL\n") % ((w,) * 5)
    expect_lines(out, """
        len n63=63 n64=64
        open foo rc=0 id=257
        open foo again rc=0 id=257
        open bar rc=0 id=258
        open posix_trace_start (user namespace) rc=0 id=259
        open n63 rc=0 id=260
        open n64 rc=ENAMETOOLONG
        open foo once more rc=0 id=257
        list [0,1,2,3,4,5,6,7,256,257,258,259,260]
    """ + names + """
        get_name 256 rc=0 name=posix_trace_unnamed_userevent len=29 canary_ok=1
        get_name 257 rc=0 name=foo len=3 canary_ok=1
        get_name 258 rc=0 name=bar len=3 canary_ok=1
        get_name 259 rc=0 name=posix_trace_start len=17 canary_ok=1
        get_name 260 rc=0 name=%(n63)s len=63 canary_ok=1
        get_name 261 rc=EINVAL
        get_name 260 equals n63=1
        get_name 257 rc=0 name=foo len=3 canary_ok=1
        get_name 1000 rc=EINVAL
        get_name 1280 rc=EINVAL
        get_name 1281 rc=EINVAL
        get_name 2047 rc=EINVAL
        get_name 5000 rc=EINVAL
        get_name 4294967295 rc=EINVAL
        trid_open baz rc=0 id=261
        trid_open foo rc=0 id=257
        trid_open baz again rc=0 id=261
        open baz rc=0 id=261
        trid_open n63 rc=0 id=260
        trid_open n64 rc=ENAMETOOLONG
        open late rc=0 id=262
        get_name 262 rc=0 name=late len=4 canary_ok=1
        list [0,1,2,3,4,5,6,7,256,257,258,259,260,261,262]
        exhausted getnext_id rc=0 unavailable=1
        exhausted getnext_id rc=0 unavailable=1
        rewind rc=0
        after rewind getnext_id rc=0 unavailable=0 id=0
        after rewind getnext_id rc=0 unavailable=0 id=1
        rewind rc=0
        list after rewind [0,1,2,3,4,5,6,7,256,257,258,259,260,261,262]
        equal 257 257 = 1
        equal 257 258 = 0
        equal 0 0 = 1
        equal 0 1 = 0
        equal 256 256 = 1
        equal 256 257 = 0
        event id=0 name=posix_trace_start pid=self tid=main len=256 filter=[] trunc=0
        event id=257 name=foo pid=self tid=main len=1 data=66 trunc=0
        event id=262 name=late pid=self tid=main len=1 data=6c trunc=0
        event id=259 name=posix_trace_start pid=self tid=main len=1 data=73 trunc=0
        event id=256 name=posix_trace_unnamed_userevent pid=self tid=main len=1 data=75 trunc=0
        event id=1 name=posix_trace_stop pid=self tid=main len=4 auto=0 trunc=0
        end
    """ % {"n63": N63} + bad + """
        get_name 257 rc=0 name=foo len=3 canary_ok=1
    """)


def test_user_event_limit():
    """TRACE_USER_EVENT_MAX = 1024 names per process (doc/semantics.md): ids 257..1280;
    past the limit posix_trace_eventid_open and posix_trace_trid_eventid_open return
    POSIX_TRACE_UNNAMED_USEREVENT (posix_trace_event.3p.txt,
    posix_trace_eventid_equal.3p.txt: "If the per-process user trace event name limit
    ... has been reached, the pre-defined POSIX_TRACE_UNNAMED_USEREVENT ... shall be
    returned"), with rc 0; known names keep their ids; ENAMETOOLONG still applies;
    the type list holds 0..7, 256, 257..1280 in order (8 + 1 + 1024 = 1033 ids);
    both the last named id and the unnamed id record."""
    out = run("t005_names_limit")
    expect_lines(out, """
        trid_open last rc=0 id=1280
        opened 1024 names bad=0
        open one more rc=0
        one more id=256
        open another rc=0
        another id=256
        trid_open one more rc=0
        trid one more id=256
        open ev0 rc=0
        ev0 id=257
        open ev1023 rc=0
        ev1023 id=1280
        open too long rc=ENAMETOOLONG
        get_name 257 rc=0 name=ev0
        get_name 1280 rc=0 name=ev1023
        get_name 1281 rc=EINVAL
        list count=1033 in_order=1
        event id=0 name=posix_trace_start pid=self tid=main len=256 filter=[] trunc=0
        event id=1280 name=ev1023 pid=self tid=main len=1 data=7a trunc=0
        event id=256 name=posix_trace_unnamed_userevent pid=self tid=main len=1 data=75 trunc=0
        event id=1 name=posix_trace_stop pid=self tid=main len=4 auto=0 trunc=0
        end
    """)
