"""Stream life cycle: create, start/stop, shutdown, clear, TRACE_SYS_MAX, fork.
Programs: tests/api/t006_lifecycle.c, t007_sysmax.c, t008_shutdown.c, t009_clear.c,
t010_fork.c.

Pages: posix_trace_create.3p.txt (create, shutdown), posix_trace_start.3p.txt
(start, stop), posix_trace_clear.3p.txt, posix_trace_get_attr.3p.txt (get_status),
posix_trace_get_filter.3p.txt, posix_trace_event.3p.txt, posix_trace_attr_getinherited.3p.txt
(CLOSE_FOR_CHILD).  Implementation-defined: doc/semantics.md ("Reporting of system
events", "Limits", "Concurrency and processes", the START/STOP data).
"""
from harness import run, expect_lines, kv

START_EMPTY = "event id=0 name=posix_trace_start pid=self tid=main len=256 filter=[] trunc=0"
STOP0 = "event id=1 name=posix_trace_stop pid=self tid=main len=4 auto=0 trunc=0"


def test_create_pid():
    """posix_trace_create.3p.txt: "ESRCH The pid argument does not refer to an existing
    process" (a reaped child's pid, INT_MAX); "If the pid argument is zero, the calling
    process shall be traced" -- and getpid() names the calling process too: that
    stream records this process's events (suspended at creation)."""
    out = run("t006_lifecycle", "pid")
    expect_lines(out, """
        create reaped child pid rc=ESRCH
        create INT_MAX pid rc=ESRCH
        create getpid() rc=0
        getpid status stream=SUSPENDED full=NOT_FULL overrun=NO_OVERRUN
    """ + START_EMPTY + """
        event id=257 name=bypid pid=self tid=main len=3 data=706964 trunc=0
    """ + STOP0 + "\nend")


def test_start_stop():
    """posix_trace_create.3p.txt: "A trace stream shall be created in a suspended
    state ... its trace event type filter shall be empty".  posix_trace_start.3p.txt:
    start records POSIX_TRACE_START and the status becomes RUNNING; start while
    running records no second START; stop records POSIX_TRACE_STOP and the status
    becomes SUSPENDED; stop while suspended records no second STOP.
    posix_trace_event.3p.txt: "if the created trace stream is not running ... the
    posix_trace_event() function shall have no effect" (events while suspended are
    absent), and a filtered-out event type is not recorded.  doc/semantics.md: START
    data is the filter in force (256 bytes: a filter set while suspended shows in the
    next START), STOP data is int auto = 0; pid/thread of the recording thread;
    zero-length data.  get_status (posix_trace_get_attr.3p.txt) reports the state."""
    out = run("t006_lifecycle", "startstop")
    expect_lines(out, """
        create rc=0
        created status stream=SUSPENDED full=NOT_FULL overrun=NO_OVERRUN
        created filter=[]
        end
        start rc=0
        started status stream=RUNNING full=NOT_FULL overrun=NO_OVERRUN
        start again rc=0
        started again status stream=RUNNING full=NOT_FULL overrun=NO_OVERRUN
        stop rc=0
        stopped status stream=SUSPENDED full=NOT_FULL overrun=NO_OVERRUN
        stop again rc=0
        stopped again status stream=SUSPENDED full=NOT_FULL overrun=NO_OVERRUN
    """ + START_EMPTY + """
        event id=257 name=foo pid=self tid=main len=4 data=61626364 trunc=0
        event id=258 name=bar pid=self tid=main len=0 data= trunc=0
    """ + STOP0 + """
        end
        restart rc=0
        stop rc=0
        event id=0 name=posix_trace_start pid=self tid=main len=256 filter=[258] trunc=0
        event id=257 name=foo pid=self tid=main len=2 data=0102 trunc=0
    """ + STOP0 + """
        end
        end status stream=SUSPENDED full=NOT_FULL overrun=NO_OVERRUN
        shutdown rc=0
    """)


def test_start_stop_timestamps():
    """posix_trace_start.3p.txt: "The effect of calling the posix_trace_start()
    function shall be recorded in the trace stream as the POSIX_TRACE_START system trace
    event" (likewise STOP): the START/STOP timestamps (CLOCK_REALTIME, doc/semantics.md)
    lie within the start()/stop() calls (10 us slack), one START and one STOP per
    cycle."""
    out = run("t006_lifecycle", "timing")
    ls = out.strip().splitlines()
    assert len(ls) == 20, out
    for i in range(0, 20, 4):
        for call, ev, want in ((ls[i], ls[i + 1], "0"), (ls[i + 2], ls[i + 3], "1")):
            c, e = kv(call), kv(ev)
            assert e["id"] == want, (call, ev)
            assert int(c["before"]) - 10000 <= int(e["ts"]) <= int(c["after"]) + 10000, (call, ev)


def test_trace_sys_max():
    """posix_trace_create.3p.txt: "EAGAIN No more trace streams can be started now.
    {TRACE_SYS_MAX} has been exceeded"; doc/semantics.md: TRACE_SYS_MAX = 64 streams one
    process may have created and not yet shut down, one more gives EAGAIN; shutting one
    down makes room (posix_trace_shutdown frees "all the resources")."""
    out = run("t007_sysmax")
    expect_lines(out, """
        created=64 distinct=1
        create #64 rc=EAGAIN
        create #64 NULL attr rc=EAGAIN
        usable=64
        shutdown #10 rc=0
        create again rc=0
        create #64 again rc=EAGAIN
        shut down=64
        create after all shut down rc=0
        shutdown rc=0
    """)


TRID_FUNCS = """posix_trace_start posix_trace_stop posix_trace_clear posix_trace_get_attr
posix_trace_get_status posix_trace_get_filter posix_trace_set_filter
posix_trace_set_filter posix_trace_eventid_get_name posix_trace_trid_eventid_open
posix_trace_eventtypelist_getnext_id posix_trace_eventtypelist_rewind
posix_trace_trygetnext_event posix_trace_getnext_event posix_trace_timedgetnext_event
posix_trace_shutdown""".split()


def test_shutdown_invalidates_trid():
    """posix_trace_create.3p.txt: "When the posix_trace_shutdown() function returns, the
    trid argument becomes an invalid trace stream identifier" -- every function taking
    a trid then fails with EINVAL (posix_trace_start.3p.txt, posix_trace_clear.3p.txt,
    posix_trace_get_attr.3p.txt, posix_trace_get_filter.3p.txt,
    posix_trace_eventid_equal.3p.txt, posix_trace_eventtypelist_getnext_id.3p.txt,
    posix_trace_getnext_event.3p.txt: "EINVAL The trace stream identifier argument trid
    is invalid"), the blocking readers without blocking; shutdown "shall
    unconditionally deallocate the resources regardless of whether all trace events have
    been retrieved"; recording afterwards has no effect; a new stream works and does not
    see the old one's events; same for a never-valid trid."""
    out = run("t008_shutdown", timeout=60)
    exp = ["shutdown rc=0"]
    exp += ["shutdown %s rc=EINVAL" % f for f in TRID_FUNCS]
    exp += ["allones %s rc=EINVAL" % f for f in TRID_FUNCS]
    exp += ["new status stream=SUSPENDED full=NOT_FULL overrun=NO_OVERRUN", START_EMPTY,
            "event id=257 name=ev pid=self tid=main len=3 data=6e6577 trunc=0", STOP0, "end",
            "old trid get_status rc=EINVAL same_as_new=0"]
    expect_lines(out, "\n".join(exp))


def test_clear_running():
    """posix_trace_clear.3p.txt: "All trace events in the trace stream recorded before
    the call to posix_trace_clear() shall be lost" (START included); "the mapping of
    trace event type identifiers to trace event names shall be unchanged" (type list,
    get_name); "if it was running, it remains running" (new events are recorded);
    posix_stream_full_status NOT_FULL."""
    out = run("t009_clear", "running")
    expect_lines(out, """
        clear rc=0
        cleared status stream=RUNNING full=NOT_FULL overrun=NO_OVERRUN
        end
        list [0,1,2,3,4,5,6,7,256,257,258]
        name of 258=beta
        event id=258 name=beta pid=self tid=main len=5 data=6166746572 trunc=0
        event id=257 name=alpha pid=self tid=main len=1 data=41 trunc=0
        end
        clear empty rc=0
        cleared empty status stream=RUNNING full=NOT_FULL overrun=NO_OVERRUN
    """ + STOP0 + "\nend")


def test_clear_suspended():
    """posix_trace_clear.3p.txt: "if it was suspended, it remains suspended" (events
    recorded meanwhile have no effect: posix_trace_event.3p.txt); the events before the
    clear, STOP included, are lost; start works afterwards."""
    out = run("t009_clear", "suspended")
    expect_lines(out, """
        clear rc=0
        cleared status stream=SUSPENDED full=NOT_FULL overrun=NO_OVERRUN
        end
    """ + START_EMPTY + """
        event id=257 name=alpha pid=self tid=main len=1 data=33 trunc=0
    """ + STOP0 + "\nend")


def test_clear_full_stream():
    """posix_trace_clear.3p.txt: "The posix_stream_full_status status shall be set to
    POSIX_TRACE_NOT_FULL" -- for an UNTIL_FULL stream that stopped itself when full
    (doc/semantics.md: SUSPENDED + FULL, overrun set); none of the events recorded
    before the clear is reported afterwards; after posix_trace_start new events are
    recorded and reported."""
    out = run("t009_clear", "full")
    expect_lines(out, """
        filled status stream=SUSPENDED full=FULL overrun=OVERRUN
        clear rc=0
        cleared full=NOT_FULL
        after clear old_events=0 marker=1 other=0
        end status stream=RUNNING full=NOT_FULL overrun=NO_OVERRUN
    """)


def test_fork_child():
    """posix_trace_create.3p.txt: "The trace stream identifier returned by the
    posix_trace_create() function ... is valid only in the process that made the
    function call. If it is used from another process, that is a child process, ...
    these functions shall return with the error [EINVAL]" (doc/semantics.md: every
    function given it).  Default inheritance CLOSE_FOR_CHILD
    (posix_trace_attr_getinherited.3p.txt): "After a fork() ... the child shall not be
    traced, and tracing of the parent shall continue" -- the child's posix_trace_event
    calls leave nothing in the parent's stream, and neither the child's calls nor its
    normal exit() affect the parent's stream.  "The posix_trace_create() function may
    be called multiple times from the same or different processes": the child creates
    and uses a stream of its own (its events carry the child's pid)."""
    out = run("t010_fork")
    exp = ["child %s rc=EINVAL" % f for f in """posix_trace_get_attr posix_trace_get_status
        posix_trace_get_filter posix_trace_set_filter posix_trace_eventid_get_name
        posix_trace_trid_eventid_open posix_trace_eventtypelist_getnext_id
        posix_trace_eventtypelist_rewind posix_trace_trygetnext_event
        posix_trace_getnext_event posix_trace_timedgetnext_event posix_trace_stop
        posix_trace_start posix_trace_clear posix_trace_shutdown""".split()]
    exp += ["child create rc=0",
            "event id=0 name=posix_trace_start pid=self tid=main len=256 filter=[] trunc=0",
            "event id=257 name=ev pid=self tid=main len=4 data=6d696e65 trunc=0",
            "event id=1 name=posix_trace_stop pid=self tid=main len=4 auto=0 trunc=0",
            "end", "child shutdown own rc=0"]
    exp += ["child exited=1 status=0",
            "parent status stream=RUNNING full=NOT_FULL overrun=NO_OVERRUN",
            START_EMPTY,
            "event id=257 name=ev pid=self tid=main len=6 data=6265666f7265 trunc=0",
            "event id=257 name=ev pid=self tid=main len=5 data=6166746572 trunc=0",
            STOP0, "end", "parent shutdown rc=0"]
    expect_lines(out, "\n".join(exp))
