"""Writing posixtrace trace logs (doc/log-format.md) for tests and the fuzz corpus,
and a reference reading of them: what a correct reader reports.

Standard library only.  The checksum, XXH3_64bits, comes from libxxhash.so
(installed with libxxhash-dev, whose header posixtrace compiles in) through
ctypes, or from the python3-xxhash module when that is installed.

    log = Log(clock_mode=1, ticks_per_ns=2.5, tick0=1000, real0_ns=...)
    log.events(slot=0, pid=100, thread=7, recs=[ev(257, ts=..., data=b"x")])
    log.names({257: "foo"})
    log.status(stream=RUNNING)
    data = log.to_bytes()
    expected = dump_text("path", reference(log))   # what tests/log/t030_logread prints
"""
import ctypes
import ctypes.util
import heapq
import struct

HDR_SIZE = 4096
BLK_HDR = 64
REC_HDR = 32
EVENTS, NAMES, STATUS, PACKED = 1, 2, 3, 4
REC_EVENT, REC_ANCHOR = 1, 2
SLOT_SYS = 0xFFFF
LOOP, UNTIL_FULL, FLUSH, APPEND = 1, 2, 3, 4
CLOSE_FOR_CHILD, INHERITED = 1, 2
RUNNING, SUSPENDED = 1, 2
FULL, NOT_FULL = 1, 2
OVERRUN, NO_OVERRUN = 1, 2
FLUSHING, NOT_FLUSHING = 1, 2
HOLD_NS = 1000000
SYS_NAMES = ["posix_trace_start", "posix_trace_stop", "posix_trace_filter",
             "posix_trace_overflow", "posix_trace_resume", "posix_trace_flush_start",
             "posix_trace_flush_stop", "posix_trace_error"]
UNNAMED = "posix_trace_unnamed_userevent"
POLICY_NAMES = {LOOP: "LOOP", UNTIL_FULL: "UNTIL_FULL", FLUSH: "FLUSH", APPEND: "APPEND"}
INHERIT_NAMES = {CLOSE_FOR_CHILD: "CLOSE_FOR_CHILD", INHERITED: "INHERITED"}


def _load_xxh3():
    try:
        import xxhash  # python3-xxhash
        return xxhash.xxh3_64_intdigest
    except ImportError:
        pass
    lib = None
    for name in (ctypes.util.find_library("xxhash"), "libxxhash.so.0", "libxxhash.so"):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            continue
    if lib is None:
        raise ImportError("no XXH3: need libxxhash (libxxhash-dev) or python3-xxhash")
    fn = lib.XXH3_64bits
    fn.restype = ctypes.c_uint64
    fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lambda b: fn(bytes(b), len(b))


xxh3 = _load_xxh3()


def u64(v):
    return v & 0xFFFFFFFFFFFFFFFF


def s64(v):
    v = u64(v)
    return v - (1 << 64) if v >> 63 else v


# ---- byte layouts --------------------------------------------------------------
def pack_header(block_size=4096, flags=None, create_sec=1700000000, create_nsec=123456789,
                clock_mode=2, ticks_per_ns=1.0, stream_size=1 << 20, max_data_size=256,
                log_size=None, stream_policy=FLUSH, log_policy=APPEND,
                inheritance=CLOSE_FOR_CHILD, creator_pid=4242, name=b"",
                tick0=0, real0_ns=0, version=1, header_size=HDR_SIZE, magic=b"PXTRACEL",
                checksum=None):
    """The 4096-byte file header; flags default to the circular bit of log_policy,
    log_size to 16 MiB."""
    if flags is None:
        flags = 1 if log_policy == LOOP else 0
    if log_size is None:
        log_size = 16 << 20
    if isinstance(name, str):
        name = name.encode()
    h = bytearray(HDR_SIZE)
    struct.pack_into("<8sIIII", h, 0, magic, version, header_size, block_size, flags)
    struct.pack_into("<qII", h, 24, create_sec, create_nsec, clock_mode)
    struct.pack_into("<dQQQ", h, 40, ticks_per_ns, stream_size, max_data_size, log_size)
    struct.pack_into("<IIII", h, 72, stream_policy, log_policy, inheritance, creator_pid)
    h[88:88 + len(name)] = name
    struct.pack_into("<Qq", h, 344, u64(tick0), real0_ns)
    struct.pack_into("<Q", h, 4088, xxh3(bytes(h[:4088])) if checksum is None else checksum)
    return bytes(h)


def pack_block(type_, seq, payload, block_size, slot=0, pid=0, thread=0, anchor_ticks=0,
               anchor_ns=0, magic=b"PXBK", checksum=None, payload_len=None):
    """One block of block_size bytes: header, payload, zero padding."""
    plen = len(payload) if payload_len is None else payload_len
    h = struct.pack("<4sHHQIIIIQQq", magic, type_, 0, seq, plen, slot, pid, 0,
                    u64(thread), u64(anchor_ticks), anchor_ns)
    if checksum is None:
        checksum = xxh3(h + bytes(payload))
    b = h + struct.pack("<Q", checksum) + bytes(payload)
    assert len(b) <= block_size, "payload too large for the block"
    return b + bytes(block_size - len(b))


def round_up(n, m):
    return (n + m - 1) // m * m


class Rec:
    """An EVENTS record: an event (kind 1) or an anchor (kind 2)."""
    def __init__(self, kind, id_=0, ts=0, addr=0, data=b"", flags=0):
        self.kind, self.id, self.ts, self.addr = kind, id_, u64(ts), u64(addr)
        self.data, self.flags = bytes(data), flags

    def size(self):
        return REC_HDR + round_up(len(self.data), 8)

    def pack(self):
        return (struct.pack("<IIQQII", (self.kind << 24) | self.size(), self.id, self.ts,
                            self.addr, len(self.data), self.flags)
                + self.data + bytes(round_up(len(self.data), 8) - len(self.data)))


def varint(v):
    """Unsigned LEB128."""
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def zigzag(v):
    """A signed 64-bit value (taken modulo 2^64) as zigzag."""
    v = s64(u64(v))
    return u64((v << 1) ^ (v >> 63))


def packed_payload(recs, anchor_ticks=0):
    """A PACKED payload (doc/log-format.md) for recs, as a block whose header
    anchor_ticks is given: the tag, the stamp as a zigzag delta, the id unless
    it repeats, the address as a zigzag delta when it changes, len, data."""
    ts, addr, id_ = u64(anchor_ticks), 0, 0
    out = bytearray()
    for r in recs:
        if r.kind == REC_ANCHOR:
            out += bytes([2]) + varint(zigzag(r.ts - ts)) + varint(zigzag(s64(r.addr)))
            ts = r.ts
            continue
        tag = 1 | (4 if r.flags & 1 else 0) | (8 if r.id == id_ else 0)
        tag |= 16 if r.addr != addr else 0
        out += bytes([tag]) + varint(zigzag(r.ts - ts))
        if r.id != id_:
            out += varint(r.id)
        if r.addr != addr:
            out += varint(zigzag(r.addr - addr))
        out += varint(len(r.data)) + r.data
        ts, addr, id_ = r.ts, r.addr, r.id
    return bytes(out)


def ev(id_, ts, addr=0, data=b"", truncated=False):
    return Rec(REC_EVENT, id_, ts, addr, data, 1 if truncated else 0)


def anchor(ticks, ns):
    return Rec(REC_ANCHOR, 0, ticks, u64(ns))


def names_payload(table):
    out = b""
    for id_, name in sorted(table.items()):
        nb = name.encode() if isinstance(name, str) else name
        out += struct.pack("<II", id_, len(nb)) + nb + bytes(round_up(len(nb), 4) - len(nb))
    return out


STATUS_KEYS = ("stream", "full", "overrun", "flush", "flush_error", "log_overrun", "log_full")
STATUS_DEFAULT = dict(stream=SUSPENDED, full=NOT_FULL, overrun=NO_OVERRUN, flush=NOT_FLUSHING,
                      flush_error=0, log_overrun=NO_OVERRUN, log_full=NOT_FULL)


def status_payload(st, lost=0):
    return struct.pack("<7iIQ", *[st[k] for k in STATUS_KEYS], 0, lost)


# ---- a log ----------------------------------------------------------------------
class Block:
    def __init__(self, type_, seq, payload, **hdr):
        self.type, self.seq, self.payload, self.hdr = type_, seq, payload, hdr
        self.recs, self.table, self.st = None, None, None

    @property
    def slot(self):
        return self.hdr.get("slot", 0)


class Log:
    """A log being built: header fields (see pack_header) and blocks in the
    order written (seq 1, 2, ...)."""
    def __init__(self, **hdr):
        self.hdr = dict(block_size=4096, clock_mode=2, ticks_per_ns=1.0, tick0=0, real0_ns=0,
                        max_data_size=256, log_policy=APPEND, stream_policy=FLUSH,
                        inheritance=CLOSE_FOR_CHILD, create_sec=1700000000,
                        create_nsec=123456789, stream_size=1 << 20, name="", log_size=None,
                        creator_pid=4242)
        self.hdr.update(hdr)
        if self.hdr["log_size"] is None:
            self.hdr["log_size"] = HDR_SIZE + 64 * self.block_size
        self.blocks = []

    @property
    def block_size(self):
        return self.hdr["block_size"]

    @property
    def circular(self):
        return self.hdr["log_policy"] == LOOP

    def capacity(self):
        return self.block_size - BLK_HDR

    def _add(self, b):
        self.blocks.append(b)
        return b

    def events(self, slot, pid, thread, recs, anchor_ticks=0, anchor_ns=0):
        payload = b"".join(r.pack() for r in recs)
        b = Block(EVENTS, len(self.blocks) + 1, payload, slot=slot, pid=pid, thread=thread,
                  anchor_ticks=anchor_ticks, anchor_ns=anchor_ns)
        b.recs = list(recs)
        return self._add(b)

    def packed(self, slot, pid, thread, recs, anchor_ticks=0, anchor_ns=0):
        payload = packed_payload(recs, anchor_ticks)
        b = Block(PACKED, len(self.blocks) + 1, payload, slot=slot, pid=pid, thread=thread,
                  anchor_ticks=anchor_ticks, anchor_ns=anchor_ns)
        b.recs = list(recs)
        return self._add(b)

    def names(self, table):
        b = Block(NAMES, len(self.blocks) + 1, names_payload(table))
        b.table = dict(table)
        return self._add(b)

    def status(self, lost=0, **st):
        full = dict(STATUS_DEFAULT)
        full.update(st)
        b = Block(STATUS, len(self.blocks) + 1, status_payload(full, lost))
        b.st = full
        return self._add(b)

    def n_positions(self):
        n = max(self.hdr["log_size"] - HDR_SIZE, 0) // self.block_size
        return max(n, 8)

    def layout(self):
        """[(file offset, Block)] of the blocks the file holds, by offset."""
        pos = {}
        for i, b in enumerate(self.blocks):
            p = i % self.n_positions() if self.circular else i
            pos[p] = b
        return [(HDR_SIZE + p * self.block_size, pos[p]) for p in sorted(pos)]

    def header_bytes(self):
        return pack_header(**self.hdr)

    def block_bytes(self, b):
        return pack_block(b.type, b.seq, b.payload, self.block_size, **b.hdr)

    def to_bytes(self):
        out = bytearray(self.header_bytes())
        for off, b in self.layout():
            if len(out) < off:
                out += bytes(off - len(out))
            out[off:off + self.block_size] = self.block_bytes(b)
        return bytes(out)


# ---- the blocks of a log as written (no checks: for logs the library wrote) -----
def _unvarint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def _unzigzag(v):
    return (v >> 1) ^ -(v & 1)


def unpack_payload(payload, anchor_ticks=0):
    """The records of a PACKED payload (the inverse of packed_payload), as Recs
    with absolute stamps."""
    ts, addr, id_, i, out = u64(anchor_ticks), 0, 0, 0, []
    while i < len(payload):
        tag = payload[i]
        d, i = _unvarint(payload, i + 1)
        ts = u64(ts + _unzigzag(d))
        if tag == 2:
            a, i = _unvarint(payload, i)
            out.append(anchor(ts, _unzigzag(a)))
            continue
        if not tag & 8:
            id_, i = _unvarint(payload, i)
        if tag & 16:
            a, i = _unvarint(payload, i)
            addr = u64(addr + _unzigzag(a))
        n, i = _unvarint(payload, i)
        out.append(ev(id_, ts, addr, payload[i:i + n], bool(tag & 4)))
        i += n
    return out


def unpack_events(payload):
    """The records of an EVENTS payload."""
    out, i = [], 0
    while i + REC_HDR <= len(payload):
        c, id_, ts, addr, n, flags = struct.unpack_from("<IIQQII", payload, i)
        out.append(Rec(c >> 24, id_, ts, addr, payload[i + REC_HDR:i + REC_HDR + n], flags))
        i += c & 0xFFFFFF
    return out


def blocks_in_order(data, block_size=4096):
    """The blocks of a log that never wrapped, in file order, as Blocks with
    .recs for EVENTS and PACKED ones."""
    out = []
    for off in range(HDR_SIZE, len(data) - BLK_HDR + 1, block_size):
        (magic, type_, _, seq, plen, slot, pid, _, thread, aticks,
         ans) = struct.unpack_from("<4sHHQIIIIQQq", data, off)
        payload = data[off + BLK_HDR:off + BLK_HDR + plen]
        b = Block(type_, seq, payload, slot=slot, pid=pid, thread=thread,
                  anchor_ticks=aticks, anchor_ns=ans)
        b.recs = (unpack_payload(payload, aticks) if type_ == PACKED else
                  unpack_events(payload) if type_ == EVENTS else [])
        out.append(b)
    return out


# ---- reference reading ----------------------------------------------------------
class Event:
    def __init__(self, id_, pid, thread, addr, ns, data, flags):
        self.id, self.pid, self.thread, self.addr = id_, pid, thread, addr
        self.ns, self.data, self.flags = ns, data, flags


class Reading:
    """What a reader reports: hdr (dict), status (dict), names {id: name}, events."""
    def __init__(self, hdr, status, names, events):
        self.hdr, self.status, self.names, self.events = hdr, status, names, events


def _trunc_int(x):
    if x >= 2.0 ** 63:
        return (1 << 63) - 1
    if x <= -2.0 ** 63:
        return -(1 << 63)
    return int(x)


def _slot_events(log, blocks):
    """(ts, slot, Event) of one slot's blocks (in seq order), as the reader times them."""
    h = log.hdr
    for b in blocks:
        if b.hdr.get("anchor_ticks", 0):
            at, an = b.hdr["anchor_ticks"], b.hdr.get("anchor_ns", 0)
        else:
            at, an = h["tick0"], h["real0_ns"]
        for r in b.recs:
            if r.kind == REC_ANCHOR:
                at, an = r.ts, s64(r.addr)
                continue
            if h["clock_mode"] == 2:
                ns = s64(r.ts)
            else:
                d = float(s64(r.ts - at)) / h["ticks_per_ns"]
                ns = max(min(an + _trunc_int(d), (1 << 63) - 1), -(1 << 63))
            yield r.ts, b.slot, Event(r.id, b.hdr.get("pid", 0), b.hdr.get("thread", 0),
                                      r.addr, ns, r.data, r.flags)


def _tie_rank(slot):
    """Among equal stamps: the system slot 0xFFFF first, then lower slots."""
    return 0 if slot == SLOT_SYS else slot + 1


def reference(log, valid=None):
    """The reading of log when only the blocks for which valid(offset, block) is
    true are intact (all by default).  Names: the union of the NAMES blocks in
    seq order; status: the newest STATUS block.  Events merged by (ts, slot 0xFFFF
    first, then slot), ts taken as
    signed 64-bit (the reader's signed differences agree while no two ts are
    2^63 or more apart: no tick wrap), timestamps with the reader's hold-back
    (doc/semantics.md)."""
    lay = [(o, b) for o, b in log.layout() if valid is None or valid(o, b)]
    blocks = sorted((b for _, b in lay), key=lambda b: b.seq)
    names = {i: n for i, n in enumerate(SYS_NAMES)}
    names[256] = UNNAMED
    for b in blocks:
        if b.type == NAMES:
            names.update(b.table)
    sts = [b for b in blocks if b.type == STATUS]
    status = sts[-1].st if sts else dict(STATUS_DEFAULT)
    evb = [b for b in blocks if b.type in (EVENTS, PACKED)]
    slots = sorted({b.slot for b in evb})
    per_slot = [list(_slot_events(log, [b for b in evb if b.slot == s])) for s in slots]
    events, last = [], None
    for _, _, e in heapq.merge(*per_slot, key=lambda t: (s64(t[0]), _tie_rank(t[1]))):
        if last is not None and e.ns < last and last - e.ns < HOLD_NS:
            e = Event(e.id, e.pid, e.thread, e.addr, last, e.data, e.flags)
        last = e.ns
        events.append(e)
    return Reading(dict(log.hdr), status, names, events)


# ---- what tests/log/t030_logread prints ---------------------------------------------
def esc(s):
    b = s.encode() if isinstance(s, str) else s
    return "".join(chr(c) if 0x20 < c < 0x7f and c != 0x5c else "\\x%02x" % c for c in b)


def ts_text(ns):
    return "%d.%09d" % (ns // 1000000000, ns % 1000000000)


def event_line(e, num=65536 + 1024):
    n = min(num, len(e.data))
    trunc = 2 if n < len(e.data) else (1 if e.flags & 1 else 0)
    return "ev id=%d pid=%d tid=%d addr=%s ts=%s len=%d trunc=%d data=%s" % (
        e.id, s32(e.pid), e.thread, hex(e.addr) if e.addr else "0", ts_text(e.ns), n, trunc,
        e.data[:n].hex())


def s32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


def dump_text(path, reading, num=65536 + 1024):
    """The output of 't030_logread dump [-b num] path' for reading (None: EINVAL)."""
    out = ["file %s" % path]
    if reading is None:
        return out + ["open rc=EINVAL"]
    h, st = reading.hdr, reading.status
    onoff = lambda v, a, an, bn: an if v == a else bn
    out.append("open rc=0")
    out.append("attr name=%s create=%d.%09d stream_size=%d max_data=%d log_size=%d "
               "stream_policy=%s log_policy=%s inherit=%s" % (
                   esc(h["name"]), h["create_sec"], h["create_nsec"], h["stream_size"],
                   h["max_data_size"], h["log_size"], POLICY_NAMES[h["stream_policy"]],
                   POLICY_NAMES[h["log_policy"]], INHERIT_NAMES[h["inheritance"]]))
    out.append("status stream=%s full=%s overrun=%s flush=%s flush_error=%d log_overrun=%s "
               "log_full=%s" % (
                   onoff(st["stream"], RUNNING, "RUNNING", "SUSPENDED"),
                   onoff(st["full"], FULL, "FULL", "NOT_FULL"),
                   onoff(st["overrun"], OVERRUN, "OVERRUN", "NO_OVERRUN"),
                   onoff(st["flush"], FLUSHING, "FLUSHING", "NOT_FLUSHING"),
                   st["flush_error"],
                   onoff(st["log_overrun"], OVERRUN, "OVERRUN", "NO_OVERRUN"),
                   onoff(st["log_full"], FULL, "FULL", "NOT_FULL")))
    out.append("types" + "".join(" %d=%s" % (i, esc(n)) for i, n in sorted(reading.names.items())))
    out.append("name 1281 rc=EINVAL")
    out += [event_line(e, num) for e in reading.events]
    out.append("end n=%d" % len(reading.events))
    out.append("rewind rc=0 n=%d same=1" % len(reading.events))
    out.append("close rc=0")
    return out


# ---- a typical log ---------------------------------------------------------------
def _pack_slot(log, slot, pid, thread, recs, anchor_ticks=0, anchor_ns=0, packed=False):
    """EVENTS (or PACKED) blocks for recs, each as full as the block size allows."""
    cap, cur = log.capacity(), []
    add = log.packed if packed else log.events

    def size(rs):
        return len(packed_payload(rs, anchor_ticks)) if packed else sum(r.size() for r in rs)
    for r in recs:
        if cur and size(cur + [r]) > cap:
            add(slot, pid, thread, cur, anchor_ticks, anchor_ns)
            cur = []
        cur.append(r)
    if cur:
        add(slot, pid, thread, cur, anchor_ticks, anchor_ns)


def typical(clock_mode=1, log_policy=APPEND, flushes=4, per_flush=40, block_size=4096,
            max_data_size=256, seed=1, packed=False, **hdr):
    """A deterministic log like a writer's: per flush, the EVENTS blocks of 3
    writer slots and of the system slot, then NAMES (the names not written
    yet; all of them for a circular log) and STATUS.  Several data
    sizes (0, 1, 7, 8, 9, 100, max), truncated records, anchors (clock_mode 1),
    equal timestamps across slots."""
    import random
    rnd = random.Random(seed)
    tpn = 2.5 if clock_mode == 1 else 1.0
    real0 = 1700000000 * 10 ** 9 + 5000
    tick0 = 10 ** 12 if clock_mode == 1 else 0
    log = Log(clock_mode=clock_mode, ticks_per_ns=tpn, tick0=tick0,
              real0_ns=real0 if clock_mode == 1 else 0, log_policy=log_policy,
              block_size=block_size, max_data_size=max_data_size, name="typical-%d" % seed,
              **hdr)
    writers = [(0, 1001, 0x7f0000001000), (1, 1001, 0x7f0000002000), (5, 1002, 0x7f0000003000)]
    t = tick0 + 1000 if clock_mode == 1 else real0 + 1000
    sizes = [0, 1, 7, 8, 9, 100, max_data_size]
    names, written = {257: "alpha", 258: "beta"}, {}
    for f in range(flushes):
        per = {w[0]: [] for w in writers}
        for i in range(per_flush):
            slot, pid, thr = writers[rnd.randrange(3)]
            if rnd.random() < 0.8:
                t += rnd.randrange(1, 5000)
            if clock_mode == 1 and rnd.random() < 0.1:
                per[slot].append(anchor(t, real0 + int((t - tick0) / tpn) + rnd.randrange(-40, 40)))
            n = sizes[rnd.randrange(len(sizes))]
            data = bytes((i * 7 + j + f) & 0xFF for j in range(n))
            per[slot].append(ev(257 + rnd.randrange(3), t, 0x401000 + i * 16, data,
                                truncated=(n == max_data_size and i % 2 == 0)))
        for slot, pid, thr in writers:
            if per[slot]:
                # packed: slots 0 and 5 PACKED, slot 1 EVENTS (a log may mix them)
                _pack_slot(log, slot, pid, thr, per[slot], packed=packed and slot != 1)
        t += 100
        log.events(SLOT_SYS, 4242, 0, [ev(5, t, 0), ev(6, t + 1, 0)])
        if f == 1:
            names[259] = "gamma"
        new = {i: n for i, n in names.items() if i not in written or log.circular}
        if new:
            log.names(new)
        written.update(new)
        log.status(stream=RUNNING, flush_error=0 if f < 2 else 28, lost=f)
    return log


def bulk(n, slots=4, block_size=65536, data_len=8):
    """The bytes of a large log (clock_mode 2) with n events spread over
    writer slots in turn, timestamps 1000, 1001, ...; built directly, fast."""
    rec = struct.Struct("<IIQQII%ds" % round_up(data_len, 8))
    size = rec.size
    per_block = (block_size - BLK_HDR) // size
    hdr = pack_header(block_size=block_size, clock_mode=2, log_policy=APPEND,
                      name="bulk", max_data_size=max(data_len, 8))
    out = [hdr]
    seq = 0
    recs = [[] for _ in range(slots)]
    word = (REC_EVENT << 24) | size

    def flush(s):
        nonlocal seq
        seq += 1
        payload = b"".join(recs[s])
        out.append(pack_block(EVENTS, seq, payload, block_size, slot=s, pid=100 + s,
                              thread=1000 + s))
        recs[s].clear()

    for i in range(n):
        s = i % slots
        recs[s].append(rec.pack(word, 257 + s, 1000 + i, i, data_len, 0,
                                i.to_bytes(8, "little")[:data_len]))
        if len(recs[s]) == per_block:
            flush(s)
    for s in range(slots):
        if recs[s]:
            flush(s)
    return b"".join(out)
