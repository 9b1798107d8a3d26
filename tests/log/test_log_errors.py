"""Trace Log option: the error cases and the choices around them
(tests/log/t040_log_errors.c).

Pages: /work/shared/spec/posix_trace_create.3p.txt (create_withlog, flush,
shutdown; "shall fail" errors), posix_trace_close.3p.txt (open, rewind, close),
posix_trace_getnext_event.3p.txt, posix_trace_attr_getinherited.3p.txt (the
stream-full-policy default with a log), posix_trace_attr_getlogsize.3p.txt,
posix_trace_get_attr.3p.txt.  Implementation-defined: doc/semantics.md, "Trace
Log option".
"""
from harness import run, expect_lines, lines


def t040(tmp_path, case):
    return run("t040_log_errors", str(tmp_path), case, timeout=30)


def test_create_withlog_ebadf(tmp_path):
    """posix_trace_create.3p.txt: create_withlog "shall fail if: EBADF The file_desc
    argument is not a valid file descriptor open for writing": -1, a closed
    descriptor, a read-only descriptor (every log policy), a directory.  Nothing
    is written to the read-only file."""
    expect_lines(t040(tmp_path, "badfd"), """
        fd -1 rc=EBADF
        closed fd rc=EBADF
        read-only fd LOOP rc=EBADF
        read-only fd UNTIL_FULL rc=EBADF
        read-only fd APPEND rc=EBADF
        directory fd rc=EBADF
        read-only file size=0
        done""")


def test_create_withlog_file_types(tmp_path):
    """posix_trace_create.3p.txt: "EINVAL The file_desc argument refers to a file
    with a file type that does not support the log policy"; doc/semantics.md: a
    regular file holds every log-full policy; a FIFO, a socket or a character
    device (/dev/null) holds APPEND and UNTIL_FULL but not LOOP.  An APPEND log
    written into a FIFO is a whole number of 4096-byte units and, copied to a
    file, opens as a log holding START, the 5 events, STOP and the shutdown
    flush's FLUSH_START/FLUSH_STOP (doc/semantics.md)."""
    expect_lines(t040(tmp_path, "filetypes"), """
        fifo LOOP create rc=EINVAL
        fifo UNTIL_FULL create rc=0 shutdown rc=0
        fifo APPEND create rc=0 shutdown rc=0
        socket LOOP create rc=EINVAL
        socket UNTIL_FULL create rc=0 shutdown rc=0
        socket APPEND create rc=0 shutdown rc=0
        /dev/null LOOP create rc=EINVAL
        /dev/null UNTIL_FULL create rc=0 shutdown rc=0
        /dev/null APPEND create rc=0 shutdown rc=0
        regular LOOP create rc=0 shutdown rc=0
        regular UNTIL_FULL create rc=0 shutdown rc=0
        regular APPEND create rc=0 shutdown rc=0
        fifo bytes multiple_of_4096=1
        fifo log: posix_trace_start fifo_event(0) fifo_event(1) fifo_event(2) fifo_event(3) fifo_event(4) posix_trace_stop posix_trace_flush_start posix_trace_flush_stop
        done""")


def test_log_min_size(tmp_path):
    """doc/semantics.md: log-max-size for LOOP and UNTIL_FULL must leave room for at
    least 8 blocks after the 4 KiB header (4096 + 8 * 4096 = 36864 with the default
    attributes), else EINVAL ("One or more of the trace parameters specified by
    the attr parameter is invalid", posix_trace_create.3p.txt); APPEND ignores
    log-max-size (posix_trace_attr_getlogsize.3p.txt: "the implementation shall
    ignore the log-max-size attribute")."""
    want = []
    for pol in ("LOOP", "UNTIL_FULL", "APPEND"):
        for size in (1, 4096, 32768, 36863, 36864, 36865):
            ok = pol == "APPEND" or size >= 36864
            want.append("%s lsize=%d create rc=%s" % (pol, size,
                                                      "0 shutdown rc=0" if ok else "EINVAL"))
    expect_lines(t040(tmp_path, "minsize"), "\n".join(want) + "\ndone")


def test_create_withlog_bad_attr(tmp_path):
    """posix_trace_create.3p.txt (EINVAL, attr "shall have been initialized by
    posix_trace_attr_init()"); doc/semantics.md: an attributes object never
    initialized or destroyed gives EINVAL; a NULL trid EINVAL; the FLUSH
    stream-full-policy is refused without a log (posix_trace_attr_getinherited.3p.txt:
    "Defining this policy for an active trace stream without log shall be
    invalid") and accepted with one."""
    expect_lines(t040(tmp_path, "badattr"), """
        zeroed attr rc=EINVAL
        garbage attr rc=EINVAL
        destroyed attr rc=EINVAL
        NULL trid rc=EINVAL
        create without log FLUSH rc=EINVAL
        create_withlog FLUSH rc=0 shutdown rc=0
        done""")


def test_stream_policy_default_with_log(tmp_path):
    """posix_trace_attr_getinherited.3p.txt: "the default value for the
    stream-full-policy attribute shall be POSIX_TRACE_FLUSH for an active trace
    stream with log" (and LOOP without); doc/semantics.md: a policy never set
    (attr NULL, or not set in the object) is FLUSH with a log, any policy set
    explicitly is kept; posix_trace_get_attr reports it; the log-full-policy
    default is LOOP (posix_trace_attr_getinherited.3p.txt) and log-max-size 16 MiB
    (doc/semantics.md)."""
    expect_lines(t040(tmp_path, "defaults"), """
        attr NULL stream=FLUSH log=LOOP lsize=16777216
        attr not set stream=FLUSH log=LOOP lsize=16777216
        attr object stream=LOOP
        set LOOP stream=LOOP log=LOOP lsize=16777216
        set UNTIL_FULL stream=UNTIL_FULL log=LOOP lsize=16777216
        set FLUSH stream=FLUSH log=LOOP lsize=16777216
        no log stream=LOOP log=LOOP lsize=16777216
        done""")


def test_flush_errors(tmp_path):
    """posix_trace_create.3p.txt: posix_trace_flush "If no trace log has been
    associated with the trace stream ... shall return an error"; flush and
    shutdown "shall fail if: EINVAL The value of the trid argument does not
    correspond to an active trace stream with log" -- a stream without log
    (suspended or running), after shutdown, trid 0 and a made-up trid.  A flush of
    a suspended or running stream with log returns 0.  The descriptor stays open
    (the caller's)."""
    expect_lines(t040(tmp_path, "flush"), """
        flush without log rc=EINVAL
        flush without log running rc=EINVAL
        flush after shutdown (no log) rc=EINVAL
        flush suspended rc=0
        flush running rc=0
        shutdown rc=0
        flush after shutdown rc=EINVAL
        shutdown after shutdown rc=EINVAL
        flush trid 0 rc=EINVAL
        flush trid garbage rc=EINVAL
        fd still open=1
        done""")


def test_getnext_on_active_stream_with_log(tmp_path):
    """posix_trace_getnext_event.3p.txt: getnext reports events "either from an active
    trace stream without log or a pre-recorded trace stream"; trygetnext and
    timedgetnext from "an active trace stream without log".  doc/semantics.md: on an
    active stream with log the getnext family returns EINVAL (at once: no blocking),
    running or stopped."""
    expect_lines(t040(tmp_path, "getnext"), """
        getnext rc=EINVAL
        trygetnext rc=EINVAL
        timedgetnext rc=EINVAL
        returned at once=1
        getnext stopped rc=EINVAL
        shutdown rc=0
        done""")


def test_rewind_close_on_active_stream(tmp_path):
    """posix_trace_create.3p.txt: "the operations normally used by a trace analyzer
    process, such as posix_trace_rewind() or posix_trace_close(), cannot be invoked
    using the trace stream identifier returned by" create or create_withlog;
    posix_trace_close.3p.txt: EINVAL "The object pointed to by trid does not
    correspond to a valid trace log" (doc/semantics.md: EINVAL)."""
    expect_lines(t040(tmp_path, "rewind"), """
        rewind active with log rc=EINVAL
        close active with log rc=EINVAL
        shutdown rc=0
        rewind active without log rc=EINVAL
        close active without log rc=EINVAL
        shutdown rc=0
        done""")


def test_flush_status_during_flush(tmp_path):
    """posix_trace_create.3p.txt: "The termination of the flush operation can be polled
    by the posix_trace_get_status() function"; doc/semantics.md: posix_trace_flush
    flushes in the calling thread and returns when the log has it; the flush status is
    FLUSHING only meanwhile.  The log is a FIFO nobody reads: the flush of 20,000
    events (about 0.4 MB packed, more than the 16 data bytes of each) blocks on
    the full pipe, so from another thread get_status
    sees FLUSHING while posix_trace_flush has not returned; once the FIFO is read the
    flush returns 0 having written it all, and the status is NOT_FLUSHING, flush_error
    0."""
    expect_lines(t040(tmp_path, "flushing"), """
        before flush=NOT_FLUSHING
        during flush=FLUSHING returned=0
        flush rc=0 fifo_holds_the_events=1
        after flush=NOT_FLUSHING
        flush_error=0
        shutdown rc=0
        done""")


def test_open_not_a_log(tmp_path):
    """posix_trace_close.3p.txt: posix_trace_open "shall fail if: EINVAL The object
    pointed to by file_desc does not correspond to a valid trace log": /dev/null, an
    empty file, 8 KiB of zeros, a text file, a directory, a real log whose header has
    one byte changed (doc/log-format.md: the header checksum).  The real log opens
    and closes."""
    expect_lines(t040(tmp_path, "open"), """
        open /dev/null rc=EINVAL
        open empty file rc=EINVAL
        open zeros rc=EINVAL
        open text rc=EINVAL
        open directory rc=EINVAL
        open real log rc=0
        close it rc=0
        open header corrupted rc=EINVAL
        done""")


def test_regular_file_truncated(tmp_path):
    """doc/semantics.md: "A regular file is truncated and written from offset 0": a
    file holding 100 KiB of data, its offset at the end, becomes a log that starts
    at offset 0 (magic), is smaller than the old data, and opens with its 3 events
    -- for each log policy."""
    expect_lines(t040(tmp_path, "truncate"), """
        offset at end APPEND create rc=0 magic_at_0=1 smaller=1 open rc=0 user_events=3
        offset at end UNTIL_FULL create rc=0 magic_at_0=1 smaller=1 open rc=0 user_events=3
        offset at end LOOP create rc=0 magic_at_0=1 smaller=1 open rc=0 user_events=3
        done""")


def test_regular_file_o_append(tmp_path):
    """doc/semantics.md: "A regular file is truncated and written from offset 0"; a
    LOOP log cannot be kept in a descriptor open with O_APPEND (EINVAL).  For
    APPEND and UNTIL_FULL on an O_APPEND descriptor of a file already holding data,
    the log must still be a log posix_trace_open reads (posix_trace_create.3p.txt:
    information "shall be written to the trace log to allow detection of a valid
    trace log during the posix_trace_open() operation") -- or create_withlog must
    refuse the descriptor (EINVAL); a log appended after foreign data is neither."""
    ls = lines(t040(tmp_path, "oappend"))
    assert ls[-1] == "done"
    assert ls[2] == "O_APPEND LOOP create rc=EINVAL", ls
    for pol, l in zip(("APPEND", "UNTIL_FULL"), ls[:2]):
        assert l in ("O_APPEND %s create rc=EINVAL" % pol,
                     "O_APPEND %s create rc=0 magic_at_0=1 smaller=1 open rc=0 user_events=3"
                     % pol), ls
