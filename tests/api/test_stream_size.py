"""The stream size posix_trace_get_attr() reports against what the stream holds
(tests/api/t024_streamsize.c).

Pages: posix_trace_get_attr.3p.txt (get_attr copies the stream's attributes),
posix_trace_attr_getlogsize.3p.txt / posix_trace_attr_getstreamsize.3p.txt ("This
stream size is the current total memory size reserved for system and user trace
events in the trace stream"; the size rule), posix_trace_attr_getmaxusereventsize.3p.txt,
posix_trace_attr_setstreamsize.3p.txt ("the minimum allowed size"),
posix_trace_attr_getinherited.3p.txt (UNTIL_FULL, LOOP).  Implementation-defined:
doc/semantics.md, "Attributes" (the reported size, its exact value, the bytes an
event takes).
"""
from harness import run, kv, lines

def room(S):
    """A chunk's room for records (max-data-size 256): chunk size - 64 - 16;
    the chunk is 4 KiB, doubled while less than S / 1024, up to 64 KiB
    (doc/design.md "Geometry": 4 KiB up to S = 4 MiB, 16 KiB for 16 MiB)."""
    c = 4096
    while c < 65536 and c < S // 1024:
        c *= 2
    return c - 64 - 16


def test_reported_size_and_what_the_stream_holds():
    """doc/semantics.md: get_attr's stream size = max(S, ROOM) + ROOM per writer
    holding a chunk, exactly (ROOM = room(S)) (before start: no writer; after: T threads that all
    recorded).  Each event of 256 bytes takes at least 4 + 256 = 260 bytes of it (a
    compact record, doc/design.md "Records"), size(256) = 304 at most.
    With S = 4 KiB, 64 KiB, 1 MiB, 16 MiB, 1 and 4 threads, far more written than
    it can hold:
    - what it held is within the reported size: read * 260 <= reported;
    - it held more than stream-min-size worth of events (size rule,
      posix_trace_attr_getlogsize.3p.txt): read * size(256) > S;
    - full status FULL and overrun set; every event written is either read or
      counted in the OVERFLOW read (UNTIL_FULL: at the restart once drained,
      doc/semantics.md; LOOP: the gap): read + lost == written;
    - the reported size stays close to what was asked: reported - S <= T * ROOM
      for S >= ROOM (before the change a 64 KiB stream held 2276+ events, 655 KB)."""
    out = run("t024_streamsize", timeout=120)
    n = 0
    for l in lines(out):
        d = {k: (v if k == "policy" else int(v)) for k, v in kv(l).items()}
        S, T, evsize = d["S"], d["threads"], d["evsize"]
        ROOM = room(S)
        assert evsize == 304, l
        cap = max(S, ROOM)
        assert d["before"] == cap, l
        assert d["reported"] == cap + T * ROOM, l
        assert d["read"] * 260 <= d["reported"], l
        assert d["read"] * evsize > S, l
        assert d["written"] * 260 > d["reported"], l
        assert d["overrun"] == 1 and d["full"] == 1, l
        assert d["read"] + d["lost"] == d["written"], l
        n += 1
    assert n == 16
