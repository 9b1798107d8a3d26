"""The trace-log reader: pre-recorded streams opened with posix_trace_open().
Program: tests/log/t030_logread.c; logs written by tests/lib/logfmt.py.

Pages: posix_trace_open.3p.txt / posix_trace_close.3p.txt (open, close, rewind:
"the timestamp of the oldest trace event recorded in the trace log"),
posix_trace_getnext_event.3p.txt (event fields, data, truncation statuses,
unavailable), posix_trace_get_attr.3p.txt (attributes and status of a
pre-recorded stream).  The file format and what a reader does with torn,
truncated or corrupt files: doc/log-format.md.  Event names, timestamps and
truncation statuses: doc/semantics.md.

The expected output of most tests comes from logfmt.reference(), a second,
independent reading of the log (merge by timestamp then slot, timestamps from
anchors, union of the NAMES blocks, newest STATUS); test_order_fields_and_ties,
test_tsc_timestamps and test_circular_log_ordered_by_seq spell theirs out by
hand, so the reference itself is checked.
"""
import glob
import os
import random
import shutil
import subprocess

import pytest

from harness import run, expect_lines, lines, diff_msg, srcdir
import logfmt as L

BUF = 65536 + 1024   # t030's default data buffer (TC_BUFSZ)


def write(tmp_path, name, data):
    p = os.path.join(str(tmp_path), name)
    with open(p, "wb") as f:
        f.write(data)
    return p


def check_dumps(cases, num=None):
    """cases: [(path, Reading or None)]; runs one t030_logread over all the paths
    and compares each file's output with logfmt.dump_text."""
    args = ["dump"] + (["-b", num] if num is not None else []) + [p for p, _ in cases]
    out = run("t030_logread", *args, timeout=300)
    got, cur = {}, None
    for l in lines(out):
        if l.startswith("file "):
            cur = l[5:]
            got[cur] = []
        got[cur].append(l)
    for path, reading in cases:
        want = L.dump_text(path, reading, BUF if num is None else num)
        assert got.get(path) == want, "%s\n%s" % (path, diff_msg(got.get(path, []), want))


# ---- valid logs ----------------------------------------------------------------------
@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("clock_mode", [1, 2])
@pytest.mark.parametrize("policy", [L.APPEND, L.UNTIL_FULL, L.LOOP])
def test_typical_log_read_back(tmp_path, clock_mode, policy, packed):
    """A log like the writer's (doc/log-format.md, "What the writer guarantees"):
    4 flushes of 3 writer slots plus the system slot 0xFFFF, NAMES and STATUS
    after each; data of 0..256 bytes, truncated records, anchor records
    (clock_mode 1: TSC ticks, ticks_per_ns 2.5) or CLOCK_REALTIME ns (2).
    Every field is read back exactly: ids, pids and threads (block header),
    program addresses, timestamps to the ns (anchors; doc/semantics.md
    hold-back), data bytes, truncation statuses (posix_trace_getnext_event.3p.txt:
    TRUNCATED_RECORD when cut at recording, NOT_TRUNCATED else); order by
    timestamp, ties by slot.  Attributes from the header
    (posix_trace_get_attr.3p.txt), status from the newest STATUS block, names
    from the union of the NAMES blocks (each flush writes the new ones; a
    circular log all of them) plus the predefined ones; the type list
    (posix_trace_eventtypelist_getnext_id) is the named ids.  A rewind after 3
    events, and a second one at the end, restart from the oldest event
    (posix_trace_rewind).  LOOP: a circular log of 10 positions that wrapped:
    only the surviving blocks, in seq order.  packed: two of the slots are
    written as PACKED blocks (doc/log-format.md, "PACKED payload"), read back
    exactly as the EVENTS ones."""
    log = L.typical(clock_mode=clock_mode, log_policy=policy, flushes=4, per_flush=60,
                    log_size=4096 + 10 * 4096, packed=packed,
                    stream_policy=L.LOOP if policy == L.LOOP else L.FLUSH)
    p = write(tmp_path, "typical.log", log.to_bytes())
    check_dumps([(p, L.reference(log))])


def test_packed_edge_cases(tmp_path):
    """doc/log-format.md, "PACKED payload": stamps as zigzag deltas from the
    block header's anchor_ticks (or 0), going backwards and jumping by 2^63 and
    more (modulo 2^64); ids omitted while they repeat (also id 0 first, which
    repeats the initial 0); addresses omitted while they repeat, else zigzag
    deltas (down as well as up, to 0 and to 2^64 - 1); data of 0, 1, 127, 128
    and max(max_data_size, 1024) bytes (a two-byte length); the truncated flag;
    anchors (clock_mode 1), also as the first record and right after another.
    Every event is read back exactly, merged with an EVENTS slot."""
    big = (1 << 64) - 1
    recs = [L.ev(0, 5, 0), L.ev(0, 6, 0, b"x"), L.anchor(1000, 1700000000 * 10 ** 9),
            L.anchor(1001, 1700000000 * 10 ** 9 + 7), L.ev(300, 1002, big, bytes(127)),
            L.ev(300, 900, big, bytes(range(128))), L.ev(1280, 950, 0x10, b"", True),
            L.ev(1280, 950, 0x10, bytes(1024), True), L.ev(257, (1 << 63) + 77, 0x8, b"ab"),
            L.ev(257, 3, 0x8, b"cd"), L.ev(258, 4, 0x7fff00001000, bytes(range(200, 255)))]
    cases = []
    for cm in (1, 2):
        log = L.Log(clock_mode=cm, ticks_per_ns=2.0 if cm == 1 else 1.0, tick0=100,
                    real0_ns=1600000000 * 10 ** 9 if cm == 1 else 0, max_data_size=64,
                    name="packed-edges-%d" % cm)
        log.packed(3, 77, 0x1234, recs if cm == 1 else [r for r in recs if r.kind != L.REC_ANCHOR])
        log.packed(3, 77, 0x1234, [L.ev(259, 2000, 0x20), L.anchor(2001, 17 * 10 ** 17)],
                   anchor_ticks=1500, anchor_ns=16 * 10 ** 17)
        log.events(0, 76, 0x99, [L.ev(257, 7, 0x5, b"raw")])
        log.names({257: "a", 258: "b", 259: "c", 300: "d", 1280: "e"})
        p = write(tmp_path, "edges-%d.log" % cm, log.to_bytes())
        cases.append((p, L.reference(log)))
    check_dumps(cases)
    # the tests' own decoder (logfmt.blocks_in_order) inverts the encoder
    data = open(cases[0][0], "rb").read()
    got = [(r.kind, r.id, r.ts, r.addr, r.data, r.flags)
           for b in L.blocks_in_order(data) if b.slot == 3 for r in b.recs]
    want = [(r.kind, r.id if r.kind == L.REC_EVENT else 0, r.ts, r.addr, r.data, r.flags)
            for r in recs + [L.ev(259, 2000, 0x20), L.anchor(2001, 17 * 10 ** 17)]]
    assert got == want


def test_truncated_reads(tmp_path):
    """posix_trace_getnext_event.3p.txt: with num_bytes smaller than the data,
    num_bytes bytes are copied, *data_len == num_bytes, POSIX_TRACE_TRUNCATED_READ;
    with num_bytes >= the data length the record's own status (NOT_TRUNCATED or
    TRUNCATED_RECORD).  num_bytes 0 with data NULL: length 0, TRUNCATED_READ
    for every event with data."""
    log = L.typical(clock_mode=1, flushes=2, per_flush=40)
    p = write(tmp_path, "t.log", log.to_bytes())
    for num in (0, 1, 8, 9, 255, 256):
        check_dumps([(p, L.reference(log))], num=num)


def order_log():
    log = L.Log(clock_mode=2, name="order")
    log.events(3, 30, 300, [L.ev(257, 1000, 0x10, b"a"), L.ev(257, 2000, 0x11, b"")])
    log.events(1, 10, 100, [L.ev(258, 1000, 0x20, b"bb"), L.ev(258, 3000, 0x21)])
    log.events(L.SLOT_SYS, 4242, 0, [L.ev(3, 1000, 0, (5).to_bytes(8, "little")),
                                     L.ev(4, 1000)])
    log.events(1, 10, 101, [L.ev(258, 3000, 0x22, b"ccc", truncated=True)])
    log.names({257: "foo", 258: "bar"})
    return log


ORDER_HEAD = """
    open rc=0
    attr name=order create=1700000000.123456789 stream_size=1048576 max_data=256 log_size=266240 stream_policy=FLUSH log_policy=APPEND inherit=CLOSE_FOR_CHILD
    status stream=SUSPENDED full=NOT_FULL overrun=NO_OVERRUN flush=NOT_FLUSHING flush_error=0 log_overrun=NO_OVERRUN log_full=NOT_FULL
    types 0=posix_trace_start 1=posix_trace_stop 2=posix_trace_filter 3=posix_trace_overflow 4=posix_trace_resume 5=posix_trace_flush_start 6=posix_trace_flush_stop 7=posix_trace_error 256=posix_trace_unnamed_userevent 257=foo 258=bar
    name 1281 rc=EINVAL
"""


def test_order_fields_and_ties(tmp_path):
    """doc/log-format.md, "Order of events": events of all slots merged by ts,
    ties by the system slot 0xFFFF first (a gap's OVERFLOW and RESUME carry the
    stamp of the event after the gap), then lower slot value (slot 1, then 3),
    then recording order (slot 1's two blocks, in seq order, at ts 3000); pid and
    thread from each block header (a slot's next block may have another thread),
    program address from the record; system events have thread 0 and address 0
    (doc/semantics.md).  No STATUS block: SUSPENDED, NOT_FULL, NO_OVERRUN,
    NOT_FLUSHING, 0, NO_OVERRUN, NOT_FULL.  Expected output written out by hand."""
    p = write(tmp_path, "order.log", order_log().to_bytes())
    out = run("t030_logread", "dump", p)
    expect_lines(out, "file %s" % p + ORDER_HEAD + """
        ev id=3 pid=4242 tid=0 addr=0 ts=0.000001000 len=8 trunc=0 data=0500000000000000
        ev id=4 pid=4242 tid=0 addr=0 ts=0.000001000 len=0 trunc=0 data=
        ev id=258 pid=10 tid=100 addr=0x20 ts=0.000001000 len=2 trunc=0 data=6262
        ev id=257 pid=30 tid=300 addr=0x10 ts=0.000001000 len=1 trunc=0 data=61
        ev id=257 pid=30 tid=300 addr=0x11 ts=0.000002000 len=0 trunc=0 data=
        ev id=258 pid=10 tid=100 addr=0x21 ts=0.000003000 len=0 trunc=0 data=
        ev id=258 pid=10 tid=101 addr=0x22 ts=0.000003000 len=3 trunc=1 data=636363
        end n=7
        rewind rc=0 n=7 same=1
        close rc=0
    """)
    out = run("t030_logread", "dump", "-b", 2, p)
    expect_lines(out, "file %s" % p + ORDER_HEAD + """
        ev id=3 pid=4242 tid=0 addr=0 ts=0.000001000 len=2 trunc=2 data=0500
        ev id=4 pid=4242 tid=0 addr=0 ts=0.000001000 len=0 trunc=0 data=
        ev id=258 pid=10 tid=100 addr=0x20 ts=0.000001000 len=2 trunc=0 data=6262
        ev id=257 pid=30 tid=300 addr=0x10 ts=0.000001000 len=1 trunc=0 data=61
        ev id=257 pid=30 tid=300 addr=0x11 ts=0.000002000 len=0 trunc=0 data=
        ev id=258 pid=10 tid=100 addr=0x21 ts=0.000003000 len=0 trunc=0 data=
        ev id=258 pid=10 tid=101 addr=0x22 ts=0.000003000 len=2 trunc=2 data=6363
        end n=7
        rewind rc=0 n=7 same=1
        close rc=0
    """)
    check_dumps([(p, L.reference(order_log()))])


def test_tsc_timestamps(tmp_path):
    """doc/log-format.md, "Timestamps", clock_mode 1: anchor_ns + (ts -
    anchor_ticks) / ticks_per_ns with the latest anchor record before the event
    in its block, else the block header's anchor, else (tick0, real0_ns) of the
    file header; truncated toward zero.  Reported timestamps are held back to
    the previous one when they would go back by less than 1 ms, and a larger
    step back shows (doc/semantics.md, as for live streams).  Ticks compare
    modulo 2^64 across slots (signed differences).  Negative CLOCK_REALTIME
    times give a normalized timespec (tv_nsec in 0..999999999)."""
    log = L.Log(clock_mode=1, ticks_per_ns=2.0, tick0=1000, real0_ns=5 * 10 ** 9, name="tsc")
    log.events(0, 1, 2, [L.ev(257, 3000),                       # tick0: 5 s + 1000 ns
                         L.anchor(10000, 6 * 10 ** 9),
                         L.ev(257, 10010),                      # 6 s + 5 ns
                         L.ev(257, 9000)])                      # 6 s - 500 ns: held back
    log.events(0, 1, 2, [L.ev(258, 20003)], anchor_ticks=20000, anchor_ns=7 * 10 ** 9)
    log.events(0, 1, 2, [L.ev(259, 1004)])                      # 5 s + 2 ns: shows
    p1 = write(tmp_path, "tsc.log", log.to_bytes())
    wrap = L.Log(clock_mode=1, ticks_per_ns=1.0, tick0=2 ** 64 - 1000, real0_ns=10 ** 18,
                 name="wrap")
    wrap.events(0, 1, 1, [L.ev(257, 2 ** 64 - 10), L.ev(257, 5)])
    wrap.events(1, 1, 2, [L.ev(258, 2 ** 64 - 5), L.ev(258, 20)])
    p2 = write(tmp_path, "wrap.log", wrap.to_bytes())
    neg = L.Log(clock_mode=2, name="neg")
    neg.events(0, 1, 1, [L.ev(257, -1), L.ev(257, 0)])
    neg.events(1, 1, 1, [L.ev(258, -1500000000)])
    p3 = write(tmp_path, "neg.log", neg.to_bytes())
    out = run("t030_logread", "dump", p1, p2, p3)
    evs = [l for l in lines(out) if l.startswith("ev ")]
    assert [l.split(" ts=")[1].split()[0] for l in evs] == [
        "5.000001000", "6.000000005", "6.000000005", "7.000000001", "5.000000002",
        "1000000000.000000990", "1000000000.000000995", "1000000000.000001005",
        "1000000000.000001020",
        "-2.500000000", "-1.999999999", "0.000000000"], out
    assert [l.split()[1] for l in evs[5:9]] == ["id=257", "id=258", "id=257", "id=258"]
    # the tick-wrap order is beyond the reference (plain integer order)
    check_dumps([(p1, L.reference(log)), (p3, L.reference(neg))])


def test_circular_log_ordered_by_seq(tmp_path):
    """doc/log-format.md, "Order of blocks", log policy LOOP: n = (log_size -
    4096) / B = 8 positions; 13 blocks written, so seqs 9..13 overwrote
    positions 0..4 and seqs 6..8 are at 5..7.  The reader orders the valid
    blocks by seq, not by position: every event has the same timestamp and
    slot, so only seq order puts them 6, 7, ..., 12; the NAMES block of seq 1
    was overwritten, the one of seq 13 names 257; the only STATUS block was
    overwritten: the defaults."""
    log = L.Log(clock_mode=2, log_policy=L.LOOP, stream_policy=L.LOOP,
                log_size=4096 + 8 * 4096, name="ring")
    log.names({257: "old"})
    log.status(stream=L.RUNNING)
    for seq in range(3, 13):
        log.events(0, 7, 8, [L.ev(257, 500, seq, bytes([seq]))])
    log.names({257: "new"})
    assert [b.seq for _, b in log.layout()] == [9, 10, 11, 12, 13, 6, 7, 8]
    p = write(tmp_path, "ring.log", log.to_bytes())
    out = run("t030_logread", "dump", p)
    expect_lines(out, """
        file %s
        open rc=0
        attr name=ring create=1700000000.123456789 stream_size=1048576 max_data=256 log_size=36864 stream_policy=LOOP log_policy=LOOP inherit=CLOSE_FOR_CHILD
        status stream=SUSPENDED full=NOT_FULL overrun=NO_OVERRUN flush=NOT_FLUSHING flush_error=0 log_overrun=NO_OVERRUN log_full=NOT_FULL
        types 0=posix_trace_start 1=posix_trace_stop 2=posix_trace_filter 3=posix_trace_overflow 4=posix_trace_resume 5=posix_trace_flush_start 6=posix_trace_flush_stop 7=posix_trace_error 256=posix_trace_unnamed_userevent 257=new
        name 1281 rc=EINVAL
    """ % p + "\n".join(
        "ev id=257 pid=7 tid=8 addr=%#x ts=0.000000500 len=1 trunc=0 data=%02x" % (s, s)
        for s in range(6, 13)) + """
        end n=7
        rewind rc=0 n=7 same=1
        close rc=0
    """)
    check_dumps([(p, L.reference(log))])
    # not yet wrapped: a file shorter than the n positions
    short = L.Log(clock_mode=2, log_policy=L.LOOP, log_size=4096 + 8 * 4096, name="short")
    short.events(0, 1, 1, [L.ev(257, 1)])
    short.events(1, 1, 1, [L.ev(258, 1)])
    check_dumps([(write(tmp_path, "short.log", short.to_bytes()), L.reference(short))])


def corrupt(data, off):
    b = bytearray(data)
    b[off] ^= 1 << (off % 8)
    return bytes(b)


def test_names_union_status_newest(tmp_path):
    """doc/log-format.md, "NAMES payload": the name table is the union of the
    entries of all valid NAMES blocks in seq order, a later entry for an id
    replacing an earlier one; a corrupt NAMES block contributes nothing.
    "STATUS payload": the valid STATUS block with the highest seq is the status;
    when it is corrupt the next newest valid one is.  Status values are returned
    as recorded (posix_trace_get_status on a pre-recorded stream); ids 0..7 and
    256 keep their predefined names unless a table entry gives one."""
    log = L.Log(clock_mode=2, name="ns")
    log.names({257: "a", 260: "keep"})
    log.status(stream=L.RUNNING, full=L.FULL)
    log.names({257: "b", 258: "c", 3: "my_overflow"})
    log.status(stream=L.SUSPENDED, overrun=L.OVERRUN, flush=L.FLUSHING, flush_error=28,
               log_overrun=L.OVERRUN, log_full=L.FULL)
    data = log.to_bytes()
    lay = dict((b.seq, o) for o, b in log.layout())
    cases = [(write(tmp_path, "ns.log", data), L.reference(log))]
    for seq in (1, 3, 4):
        bad = corrupt(data, lay[seq] + 70)
        cases.append((write(tmp_path, "ns-%d.log" % seq, bad),
                      L.reference(log, lambda o, b, s=seq: b.seq != s)))
    check_dumps(cases)
    assert cases[0][1].names[257] == "b" and cases[0][1].names[260] == "keep"
    assert 260 not in cases[1][1].names and cases[1][1].names[258] == "c"
    assert cases[2][1].names[257] == "a" and cases[2][1].names[3] == "posix_trace_overflow"
    assert cases[3][1].status["stream"] == L.RUNNING


def test_log_changing_under_the_reader(tmp_path):
    """doc/log-format.md, "Reading a log that changes": the reader reads each
    EVENTS block again when it reports its events; a block that changed since
    posix_trace_open (one bit flipped in its payload, or in its header) is skipped
    from then on, in the first pass and after posix_trace_rewind alike; the
    attributes, status and names read at open stay as they were."""
    log = small_typical()
    data = log.to_bytes()
    for o, b in [(o, b) for o, b in log.layout() if b.type == L.EVENTS][1:4]:
        for off in (o + 8, o + 64 + len(b.payload) // 2):
            p = write(tmp_path, "chg-%d.log" % off, data)
            full, part = L.reference(log), L.reference(log, lambda o_, b_, b=b: b_ is not b)
            want = L.Reading(full.hdr, full.status, full.names, part.events)
            out = run("t030_logread", "dump", "-f", off, p)
            assert lines(out) == L.dump_text(p, want), diff_msg(lines(out),
                                                                L.dump_text(p, want))


# ---- damaged and foreign files -----------------------------------------------------
def small_typical():
    return L.typical(clock_mode=1, flushes=3, per_flush=25, max_data_size=48)


def test_truncated_files(tmp_path):
    """doc/log-format.md: a file cut short ends in a partial block, which is
    invalid; the unit of integrity is the block.  Cut at every 1 KiB and at a
    sample of odd offsets: a file whose 4096-byte header is incomplete is not a
    log (posix_trace_open: EINVAL); any other opens and yields exactly the
    events (names, status) of the blocks wholly present."""
    log = small_typical()
    data = log.to_bytes()
    B = log.block_size
    rnd = random.Random(7)
    cuts = sorted(set(list(range(0, len(data), 1024)) +
                      [rnd.randrange(len(data)) | 1 for _ in range(40)] + [4095, 4096, 4097]))
    cases = []
    for c in cuts:
        p = write(tmp_path, "cut-%d.log" % c, data[:c])
        cases.append((p, None if c < 4096 else
                      L.reference(log, lambda o, b, c=c: o + B <= c)))
    check_dumps(cases)


def block_span(log, off):
    """The block whose header or payload holds file offset off, or None (file
    header, padding)."""
    for o, b in log.layout():
        if o <= off < o + L.BLK_HDR + len(b.payload):
            return b
    return None


def test_bit_flips(tmp_path):
    """doc/log-format.md: every block carries a checksum of its header and
    payload; the file header one of its first 4088 bytes.  A single flipped bit
    in the file header (any field, the reserved area, the checksum) makes the
    file "not a log" (EINVAL); in a block's header or payload it makes that block
    invalid, skipped; in a block's zero padding it changes nothing.  Never a
    crash (the test also runs in the sanitizer build)."""
    log = small_typical()
    data = log.to_bytes()
    rnd = random.Random(11)
    offs = set(range(0, 360, 5)) | {4087, 4088, 4095}
    offs |= {rnd.randrange(360, 4088) for _ in range(10)}
    for o, b in log.layout():
        offs |= {o + i for i in range(0, 64, 3)}
        offs |= {o + 64 + rnd.randrange(max(len(b.payload), 1)) for _ in range(3)}
        offs.add(o + 64 + len(b.payload) + rnd.randrange(log.block_size - 64 - len(b.payload)))
    cases = []
    for off in sorted(o for o in offs if o < len(data)):
        p = write(tmp_path, "flip-%d.log" % off, corrupt(data, off))
        hit = block_span(log, off)
        cases.append((p, None if off < 4096 else
                      L.reference(log, lambda o, b, hit=hit: b is not hit)))
    check_dumps(cases)


HEADER_BAD = [
    dict(magic=b"PXTRACEX"), dict(version=4), dict(version=0), dict(header_size=4095),
    dict(header_size=8192), dict(block_size=2048), dict(block_size=4097),
    dict(block_size=12288), dict(block_size=32 << 20), dict(block_size=0),
    dict(flags=2), dict(flags=1), dict(flags=0, log_policy=L.LOOP),
    dict(create_nsec=1000000000), dict(clock_mode=0), dict(clock_mode=3),
    dict(ticks_per_ns=0.0), dict(ticks_per_ns=-1.0), dict(ticks_per_ns=float("inf")),
    dict(ticks_per_ns=float("nan")), dict(max_data_size=65537),
    dict(stream_policy=0), dict(stream_policy=4), dict(log_policy=3), dict(log_policy=5),
    dict(inheritance=0), dict(inheritance=3), dict(name=b"n" * 256),
    dict(checksum=0), dict(checksum=12345),
]
HEADER_OK = [
    dict(block_size=16 << 20), dict(block_size=8192), dict(create_nsec=999999999),
    dict(create_sec=-5), dict(clock_mode=1, ticks_per_ns=3.1), dict(max_data_size=65536),
    dict(max_data_size=0), dict(stream_policy=L.UNTIL_FULL, log_policy=L.UNTIL_FULL),
    dict(stream_policy=L.LOOP, log_policy=L.LOOP), dict(inheritance=L.INHERITED),
    dict(name=b"n" * 255), dict(version=2), dict(version=3),
]


def test_header_checks(tmp_path):
    """doc/log-format.md, "File header": magic, version 1 to 3, header_size 4096,
    block_size a power of two in 4096..16 MiB, flags bit 0 only and set exactly
    for log policy LOOP, create_nsec < 10^9, clock_mode 1 or 2, ticks_per_ns
    finite and > 0, max_data_size <= 65536, valid policies and inheritance, a
    NUL-terminated name, the checksum: any field out of range is EINVAL
    (posix_trace_open.3p.txt: "does not correspond to a valid trace log"), even
    with a right checksum; the limits themselves are accepted."""
    paths = []
    for i, kw in enumerate(HEADER_BAD + HEADER_OK):
        paths.append(write(tmp_path, "h%02d.log" % i, L.pack_header(**kw)))
    out = run("t030_logread", "open", *paths)
    want = ["open %s rc=%s" % (p, "EINVAL" if i < len(HEADER_BAD) else "0")
            for i, p in enumerate(paths)]
    assert lines(out) == want, diff_msg(lines(out), want)


def test_foreign_empty_directory_wronly(tmp_path):
    """posix_trace_open.3p.txt: EINVAL when file_desc "does not correspond to a
    valid trace log": an empty file, a text file, a file of 4095 bytes of a
    header, a directory, /dev/null; "the file_desc argument shall be open for
    reading": a write-only descriptor, -1 and a closed descriptor give EBADF."""
    log = small_typical().to_bytes()
    empty = write(tmp_path, "empty", b"")
    text = write(tmp_path, "text", b"hello, world\n" * 1000)
    cut = write(tmp_path, "cut", log[:4095])
    good = write(tmp_path, "good", log)
    out = run("t030_logread", "open", empty, text, cut, str(tmp_path), "/dev/null", good)
    expect_lines(out, """
        open %s rc=EINVAL
        open %s rc=EINVAL
        open %s rc=EINVAL
        open %s rc=EINVAL
        open /dev/null rc=EINVAL
        open %s rc=0
    """ % (empty, text, cut, tmp_path, good))
    expect_lines(run("t030_logread", "open", "-w", good), "open %s rc=EBADF" % good)
    expect_lines(run("t030_logread", "badfd"), """
        open -1 rc=EBADF
        open closed rc=EBADF
    """)


def raw_case(tmp_path, name, kind, payload, **hdr):
    """A log of: a valid EVENTS block (id 257), a NAMES block {257: good}, a STATUS
    block (RUNNING), then a block of `kind` with the given payload (and header
    fields), then a valid EVENTS block (id 259).  The bad block's checksum is
    right: only its content is wrong.  Returns (path, expected reading)."""
    log = L.Log(clock_mode=2, name=name)
    log.events(0, 1, 1, [L.ev(257, 10)])
    log.names({257: "good"})
    log.status(stream=L.RUNNING)
    bad = L.Block(kind, 4, payload, **hdr)
    if kind in (L.EVENTS, L.PACKED):
        bad.recs = []
    log.blocks.append(bad)
    log.events(0, 1, 1, [L.ev(259, 30)])
    p = write(tmp_path, name + ".log", log.to_bytes())
    return p, L.reference(log, lambda o, b: b is not bad)


def rec(word, id_=257, ts=20, addr=0, len_=0, flags=0, data=b""):
    import struct
    return struct.pack("<IIQQII", word, id_, ts, addr, len_, flags) + data


EV = L.REC_EVENT << 24
AN = L.REC_ANCHOR << 24
BAD_EVENTS = {
    "type3": rec((3 << 24) | 32),
    "type0": rec(32),
    "size24": rec(EV | 24)[:24],
    "size36": rec(EV | 36, len_=4, data=b"abcd"),
    "size-past-end": rec(EV | 48, len_=16, data=bytes(8)),
    "id2048": rec(EV | 32, id_=2048),
    "len-too-big": rec(EV | (32 + 1032), len_=1025, data=bytes(1032)),
    "len-size-mismatch": rec(EV | 48, len_=8, data=bytes(16)),
    "anchor-len": rec(AN | 40, id_=0, len_=8, data=bytes(8)),
    "anchor-id": rec(AN | 32, id_=5),
    "trailing": rec(EV | 32) + bytes(8),
    "zeros": bytes(16),
    # the trace system's own counts and error numbers, out of pt_bounds.h's range
    "overflow-count": rec(EV | 40, id_=3, len_=8, data=(2**64 - 1).to_bytes(8, "little")),
    "overflow-2^56+1": rec(EV | 40, id_=3, len_=8, data=(2**56 + 1).to_bytes(8, "little")),
    "overflow-len4": rec(EV | 40, id_=3, len_=4, data=bytes([1, 0, 0, 0, 0, 0, 0, 0])),
    "error-errno": rec(EV | 40, id_=7, len_=4, data=(577528422).to_bytes(4, "little") + bytes(4)),
    "error-0": rec(EV | 40, id_=7, len_=4, data=bytes(8)),
    "error-134": rec(EV | 40, id_=7, len_=4, data=(134).to_bytes(4, "little") + bytes(4)),
}
BAD_PACKED = {
    "kind0": bytes([0, 0]) + b"\x00",
    "kind3": bytes([3, 0, 1, 0]),
    "reserved-bit5": bytes([1 | 32, 0, 1, 0]),
    "reserved-bit7": bytes([1 | 128, 0, 1, 0]),
    "anchor-flags": bytes([2 | 4, 0, 0]),
    "one-byte": bytes([1]),
    "varint-cut": bytes([1, 0x80]),
    "varint-11": bytes([1]) + b"\x80" * 10 + b"\x00" + bytes([1, 0]),
    "varint-65bit": bytes([1]) + b"\xff" * 9 + b"\x02" + bytes([1, 0]),
    "id2048": bytes([1, 0]) + L.varint(2048) + bytes([0]),
    "len1025": bytes([1, 0, 1]) + L.varint(1025) + bytes(1025),
    "len-past-end": bytes([1, 0, 1, 5]) + b"abcd",
    "no-len": bytes([1, 0, 1]),
    "anchor-no-ns": bytes([2, 0]),
    "trailing": bytes([1, 0, 1, 0, 1]),
    "overflow-count": bytes([1, 0, 3, 8]) + (2**64 - 1).to_bytes(8, "little"),
    "error-errno": bytes([1, 0, 7, 4]) + (577528422).to_bytes(4, "little"),
    "error-same-id-0": bytes([1, 0, 7, 4]) + (5).to_bytes(4, "little") + bytes([1 | 8, 0, 4]) + bytes(4),
}
BAD_NAMES = {
    "n0": L.names_payload({}) + bytes([1, 1, 0, 0, 0, 0, 0, 0]),
    "n64": b"\x01\x01\x00\x00\x40\x00\x00\x00" + b"x" * 64,
    "id2048": b"\x00\x08\x00\x00\x01\x00\x00\x00" + b"x\x00\x00\x00",
    "nul": b"\x01\x01\x00\x00\x03\x00\x00\x00" + b"a\x00b\x00",
    "trailing": L.names_payload({300: "x"}) + bytes(4),
    "past-end": b"\x01\x01\x00\x00\x08\x00\x00\x00" + b"abcd",
}
BAD_STATUS = {
    "short": L.status_payload(L.STATUS_DEFAULT)[:36],
    "long": L.status_payload(L.STATUS_DEFAULT) + bytes(8),
    "stream0": L.status_payload(dict(L.STATUS_DEFAULT, stream=0)),
    "full3": L.status_payload(dict(L.STATUS_DEFAULT, full=3)),
    "error-neg": L.status_payload(dict(L.STATUS_DEFAULT, flush_error=-1)),
    "error-big": L.status_payload(dict(L.STATUS_DEFAULT, flush_error=4096)),
    "logfull0": L.status_payload(dict(L.STATUS_DEFAULT, log_full=0)),
}


def test_invalid_blocks_skipped(tmp_path):
    """doc/log-format.md, "Blocks": a block is valid when its magic, type,
    payload_len and checksum are right and its payload parses; EVENTS records of
    type 1 or 2, sizes multiples of 8 >= 32 that exactly fill the payload, ids <=
    2047, len <= max(max_data_size, 1024) with size == 32 + len rounded up, anchors
    of size 32, len 0, id 0; NAMES entries with ids <= 2047, lengths 1..63, no
    NUL, exactly filling the payload; PACKED records with a tag of kind 1 or 2
    and no reserved bit (an anchor: no flag bit), varints of at most 10 bytes
    and 64 bits, ids <= 2047, len <= max(max_data_size, 1024) and within the
    payload, exactly filling it; an OVERFLOW (id 3) whose data is not an 8-byte
    count <= 2^56, an ERROR (id 7) whose data is not a 4-byte errno 1..133
    (doc/log-format.md "Limits", libtrace/ring/pt_bounds.h); STATUS of 40 bytes with values <trace.h>
    defines; slots 0..255 or 0xFFFF; seq >= 1.  Each bad block (with a right
    checksum) is skipped: the events, names and status of the other blocks are
    read as if it were not there."""
    cases = []
    for k, v in BAD_EVENTS.items():
        cases.append(raw_case(tmp_path, "ev-" + k, L.EVENTS, v))
    for k, v in BAD_PACKED.items():
        cases.append(raw_case(tmp_path, "packed-" + k, L.PACKED, v))
    for k, v in BAD_NAMES.items():
        cases.append(raw_case(tmp_path, "names-" + k, L.NAMES, v))
    for k, v in BAD_STATUS.items():
        cases.append(raw_case(tmp_path, "status-" + k, L.STATUS, v))
    good = rec(EV | 32)
    cases.append(raw_case(tmp_path, "slot256", L.EVENTS, good, slot=256))
    cases.append(raw_case(tmp_path, "slot65534", L.EVENTS, good, slot=0xFFFE))
    cases.append(raw_case(tmp_path, "type0", 0, good))
    cases.append(raw_case(tmp_path, "type5", 5, good))
    cases.append(raw_case(tmp_path, "packed-slot256", L.PACKED, bytes([1, 0, 1, 0]), slot=256))
    cases.append(raw_case(tmp_path, "magic", L.EVENTS, good, magic=b"PXBL"))
    cases.append(raw_case(tmp_path, "plen-big", L.EVENTS, good, payload_len=4096 - 63))
    cases.append(raw_case(tmp_path, "badsum", L.EVENTS, good, checksum=1))
    check_dumps(cases)


def test_sys_counts_at_their_bounds(tmp_path):
    """The largest OVERFLOW count (2^56) and the error numbers 1 and 133 are
    read (doc/log-format.md "Limits"); one past them makes the block invalid
    (test_invalid_blocks_skipped)."""
    import struct
    log = L.Log(clock_mode=2, name="bounds")
    log.events(0xFFFF, 0, 0, [L.ev(3, 10, data=struct.pack("<Q", 2**56)), L.ev(4, 10),
                              L.ev(7, 20, data=struct.pack("<i", 1)),
                              L.ev(7, 30, data=struct.pack("<i", 133))])
    log.packed(0xFFFF, 0, 0, [L.ev(3, 40, data=struct.pack("<Q", 7)),
                              L.ev(7, 50, data=struct.pack("<i", 74))])
    log.events(0, 1, 1, [L.ev(257, 60)])
    p = write(tmp_path, "bounds.log", log.to_bytes())
    check_dumps([(p, L.reference(log))])


def test_seq_zero_and_duplicates(tmp_path):
    """doc/log-format.md: seq starts at 1 (a block of seq 0 is invalid); when two
    valid blocks have the same seq, the first in file order wins."""
    log = L.Log(clock_mode=2, name="dup")
    log.events(0, 1, 1, [L.ev(257, 10)])
    dup = log.events(0, 1, 1, [L.ev(258, 20)])
    dup.seq = 1
    zero = log.events(1, 1, 1, [L.ev(259, 30)])
    zero.seq = 0
    log.events(2, 1, 1, [L.ev(260, 40)])
    p = write(tmp_path, "dup.log", log.to_bytes())
    check_dumps([(p, L.reference(log, lambda o, b: b is not dup and b is not zero))])


def test_many_slots(tmp_path):
    """All 256 writer slots and the system slot in one log (the merge over 257
    cursors), blocks of 128 KiB, an event of 64 KiB (max-data-size 65536)."""
    log = L.Log(clock_mode=2, block_size=1 << 17, max_data_size=65536, name="many")
    rnd = random.Random(3)
    for s in list(range(256)) + [L.SLOT_SYS]:
        recs = [L.ev(257 + s % 100, rnd.randrange(1000), s, bytes([s % 256]) * (s % 13))
                for _ in range(3)]
        recs.sort(key=lambda r: r.ts)
        log.events(s, 1000 + s % 7, s, recs)
    log.events(9, 1, 9, [L.ev(300, 2000, 0, bytes(range(256)) * 256)])
    p = write(tmp_path, "many.log", log.to_bytes())
    check_dumps([(p, L.reference(log))])


def test_million_events_read_exactly(tmp_path):
    """A large pre-recorded stream (1,000,000 events over 4 writer slots, 64 KiB
    blocks; posix_trace_open.3p.txt, posix_trace_getnext_event.3p.txt) is read
    completely: exactly 1,000,000 events, then, after posix_trace_rewind, the same
    1,000,000 again, each with its slot's id and pid, its own data, and timestamps
    increasing.  (No rate is asserted here: rates belong in make bench.)"""
    p = write(tmp_path, "m.log", L.bulk(1000000))
    out = run("t030_logread", "bench", p, timeout=120)
    ls = lines(out)
    assert ls[:2] == ["n=1000000", "checked=1000000 bad=0"], out


# ---- fuzzing -----------------------------------------------------------------------
def test_fuzz_short(tmp_path):
    """A short libFuzzer run of fuzz/fuzz_logread.c over the seed corpus of
    fuzz/make_corpus.py (20000 inputs or 20 s): the reader never crashes, leaks,
    reads out of bounds or hangs on arbitrary files (doc/log-format.md: "A
    reader treats the file as untrusted input").  Skipped without clang or its
    libFuzzer runtime."""
    clang = os.environ.get("CLANG", "clang")
    if shutil.which(clang) is None:
        pytest.skip("clang not found (needed for the libFuzzer target)")
    src = srcdir()
    exe = os.path.join(str(tmp_path), "fuzz_logread")
    srcs = [os.path.join(src, "fuzz", "fuzz_logread.c"), os.path.join(src, "libtrace", "api", "attr.c")]
    srcs += sorted(glob.glob(os.path.join(src, "libtrace", "log", "logread*.c")))
    srcs.append(os.path.join(src, "libtrace", "log", "xxh.c"))  # XXH3, header-only
    cmd = [clang, "-g", "-O1", "-fsanitize=fuzzer,address,undefined",
           "-fno-sanitize-recover=undefined", "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra",
           "-Werror", "-I" + os.path.join(src, "include"), "-I" + os.path.join(src, "libtrace"),
           "-o", exe] + srcs
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    if p.returncode != 0 and b"clang_rt.fuzzer" in p.stdout:
        pytest.skip("clang has no libFuzzer runtime")
    assert p.returncode == 0, p.stdout.decode(errors="replace")
    corpus = os.path.join(str(tmp_path), "corpus")
    subprocess.run(["/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3",
                    os.path.join(src, "fuzz", "make_corpus.py"), corpus], check=True,
                   stdout=subprocess.DEVNULL, timeout=120)
    env = {k: v for k, v in os.environ.items() if k not in ("ASAN_OPTIONS", "UBSAN_OPTIONS")}
    p = subprocess.run([exe, "-runs=20000", "-max_total_time=20", "-max_len=262144",
                        "-artifact_prefix=%s/" % tmp_path, corpus],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120, env=env)
    out = p.stdout.decode(errors="replace")
    assert p.returncode == 0 and "Done" in out, out[-4000:]
