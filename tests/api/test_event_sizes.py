"""Events of the largest sizes, through every path, read back whole (issue 12:
the log reader capped system events at 512 bytes, the writers at 1024, so a
log silently lost whole blocks while posixtrace-run reported "0 lost").

The limits: a user event carries at most max-data-size bytes
(posix_trace_attr_getmaxdatasize.3p.txt; at most 65536 here), a system event
at most 1024 (doc/log-format.md "Limits", libtrace/ring/pt_sizes.h); longer data is
cut and marked POSIX_TRACE_TRUNCATED_RECORD (posix_trace_event.3p.txt). Paths:
live reads (posix_trace_trygetnext_event.3p.txt, posixtrace-run's live
output), a FLUSH log with explicit posix_trace_flush (posix_trace_flush.3p.txt),
a LOOP log (posix_trace_attr_setlogfullpolicy.3p.txt), all read back with
posix_trace_open + posix_trace_getnext_event (posix_trace_open.3p.txt) or
posixtrace-dump, which must report no damage.
"""
import json
import os
import re
import shutil

import pytest

from harness import program, run
from toolscommon import sh, tdump, tool
from shimrun import ENV, shim_usable

SYS_MAX = 1024          # PT_SYS_DATA_BYTES
SYS_ID = 255            # POSIXTRACE_SYS_LAST
ROUNDS = 3


def fnv(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return "%016x" % h


def pattern(k, n):
    return bytes((i * 131 + k * 17 + 1) & 0xff for i in range(n))


def expected_events(maxdata, big):
    """t060's events, as read back: (id, len, trunc, fnv)."""
    out, k = [], 0
    for _ in range(ROUNDS):
        for eid, n, keep in ((big, maxdata, maxdata), (big, maxdata + 1, maxdata), (big, 0, 0),
                             (SYS_ID, SYS_MAX, SYS_MAX), (SYS_ID, SYS_MAX + 1, SYS_MAX)):
            out.append("ev id=%d len=%d trunc=%d fnv=%s"
                       % (eid, keep, int(n > keep), fnv(pattern(k, n)[:keep])))
            k += 1
    return out


@pytest.mark.parametrize("maxdata", [256, 1024, 65536])
@pytest.mark.parametrize("mode", ["live", "flush", "loop"])
def test_library_max_sizes(tmp_path, mode, maxdata):
    """A user event of exactly max-data-size bytes and one byte more (cut to
    max-data-size, TRUNCATED_RECORD), an empty one, a system event of 1024
    bytes and one of 1025 (cut to 1024), for max-data-size 256 (below the
    system limit), 1024 (equal) and 65536 (the largest allowed): read back
    live, from a FLUSH log flushed after each round and from a LOOP log,
    with exact lengths, flags and bytes (FNV-1a of the data); the logs read
    back with no invalid block, also by posixtrace-dump."""
    log = tmp_path / "t.ptl"
    out = run("t060_event_sizes", mode, str(maxdata), str(log))
    lines = out.splitlines()
    m = re.fullmatch(r"big id=(\d+)", lines[0])
    assert m, out
    evs = [l for l in lines if l.startswith("ev ")]
    assert evs == expected_events(maxdata, int(m.group(1)))
    pre = [int(l.split("=")[1]) for l in lines if l.startswith("pre ")]
    assert pre[0] == 0 and 1 in pre, out   # START first, STOP recorded
    assert "end" in lines and not any(l.startswith("read rc") for l in lines), out
    if mode == "live":
        return
    assert lines[-1] == "damage bad=0 first=-1", out
    p = tdump("-f", "json", log)
    assert p.err == ""
    js = [json.loads(l) for l in p.out.splitlines()]
    got = [(e["id"], e["data_len"], e["truncation"]) for e in js if e["id"] >= 8]
    want = [(int(l.split()[1][3:]), int(l.split()[2][4:]), int(l.split()[3][6:])) for l in evs]
    assert got == want


# ---- the shim's events, through posixtrace-run ----

needs_shim = pytest.mark.skipif(shim_usable() is not None, reason=str(shim_usable()))
RUN_LINE = re.compile(r"^posixtrace-run: (\d+) events in (.*), 0 lost$")
OUTPUTS = ["live", "flush", "loop"]


def traced(tmp_path, out, opts, cmd, rc=0):
    """Runs cmd under posixtrace-run with opts, printing live JSON or writing a
    FLUSH / LOOP log; returns the events read. A log must read back with no
    invalid block (posixtrace-dump exit 0, nothing on stderr) and hold as
    many events as posixtrace-run reported."""
    if out == "live":
        pr = tmp_path / "live.json"
        p = sh([tool("posixtrace-run"), "-f", "json", "--print-to", pr] + opts + ["--"] + cmd,
               rc=rc, env=ENV)
        assert re.search(r"^posixtrace-run: \d+ events, \d+ shown, 0 lost$", p.err, re.M), p.err
        return [json.loads(l) for l in pr.read_text().splitlines()]
    log = tmp_path / ("%s.ptl" % out)
    extra = ["--log-policy", "loop", "--log-size", "32M"] if out == "loop" else []
    p = sh([tool("posixtrace-run"), "-o", log] + extra + opts + ["--"] + cmd, rc=rc, env=ENV)
    assert "damaged" not in p.err, p.err
    counts = [RUN_LINE.match(l) for l in p.err.splitlines() if l.startswith("posixtrace-run:")]
    assert len(counts) == 1 and counts[0], p.err
    d = tdump("-f", "json", log)
    assert d.err == "" and d.returncode == 0
    evs = [json.loads(l) for l in d.out.splitlines()]
    assert len(evs) == int(counts[0].group(1))
    return evs


def of(evs, name):
    return [e for e in evs if e["event"] == "posixtrace:" + name]


def argv_len(argv):
    return sum(len(a.encode()) + 1 for a in argv)


@needs_shim
@pytest.mark.parametrize("out", OUTPUTS)
def test_exec_long_argv(tmp_path, out):
    """env /bin/true with 400 arguments: env's exec and both process_start
    events carry argv cut at a whole string to fit 1024 bytes (data_cut,
    doc/events.md), the exact payload length (header 32, fixed fields 8 each,
    each variable field a 4-byte count and its bytes), the argv a prefix of
    the real one whose next string would not have fitted."""
    args = [str(i) for i in range(1, 401)]
    evs = traced(tmp_path, out, [], ["env", "/bin/true"] + args)
    ex, ps = of(evs, "exec"), of(evs, "process_start")
    assert len(ex) == 1 and len(ps) == 2
    real = {"exec": ["/bin/true"] + args, "env": ["env", "/bin/true"] + args,
            "true": ["/bin/true"] + args}
    checks = [(ex[0], real["exec"], 32 + 24 + 4 + len(ex[0]["args"]["path"]) + 4)]
    for e in ps:
        want = real["env"] if e["args"]["exe"].endswith("/env") else real["true"]
        checks.append((e, want, 32 + 16 + 4 + len(e["args"]["exe"]) + 4))
    for e, want, fixed in checks:
        argv = e["args"]["argv"]
        assert argv == want[:len(argv)] and len(argv) < len(want)
        assert e["data_cut"] is True and e["truncation"] == 0
        assert e["data_len"] == fixed + argv_len(argv)
        assert e["data_len"] <= SYS_MAX < e["data_len"] + len(want[len(argv)]) + 1


@needs_shim
@pytest.mark.parametrize("out", OUTPUTS)
def test_open_long_path_and_write_max_strsize(tmp_path, out):
    """-s 1024 (the largest): cat of a 3000-byte file records write with the
    first 1024 - 32 - 16 - 4 = 972 bytes of the buffer, byte for byte, cut
    (data_cut), data_len exactly 1024; cat of a 2755-byte path records open
    with the path cut to 1024 - 32 - 24 - 4 = 964 bytes."""
    data = bytes((i * 7 + 3) & 0xff for i in range(3000))
    f = tmp_path / "data"
    f.write_bytes(data)
    longp = str(tmp_path / ("d" * 250) / ("e" * 2500))
    sh_cmd = "cat %s; cat %s > /dev/null; exit 0" % (longp, f)
    evs = traced(tmp_path, out, ["-s", "1024"], ["sh", "-c", sh_cmd])
    w = [e for e in of(evs, "write") if e["args"]["count"] == 3000]
    assert len(w) == 1
    buf = w[0]["args"]["buf"].encode("latin-1")
    assert (len(buf), w[0]["data_len"], w[0]["data_cut"]) == (972, SYS_MAX, True)
    assert buf == data[:972]
    o = [e for e in of(evs, "open") if e["args"]["path"].startswith(longp[:100])]
    assert len(o) == 1 and o[0]["errno_name"] == "ENOENT"
    assert o[0]["args"]["path"] == longp[:964]
    assert (o[0]["data_len"], o[0]["data_cut"]) == (SYS_MAX, True)


@needs_shim
@pytest.mark.parametrize("out", OUTPUTS)
def test_full_stack(tmp_path, out):
    """--stack=64 (the largest) on a 100-call-deep recursion: the open at the
    bottom has a stack event of exactly 64 frames, 32 + 4 + 64 * 8 = 548
    bytes (more than the 512 the reader used to accept)."""
    prog = program("t060_event_sizes")
    evs = traced(tmp_path, out, ["--stack=64", "-e", "open,stack"], [prog, "deep", "100"])
    full = [e for e in of(evs, "stack") if len(e["args"]["frames"]) == 64]
    assert full and all(e["data_len"] == 548 and not e["data_cut"] for e in full)
    assert of(evs, "open")


def is_prog(name, prog):
    """x86_64-linux-gnu-ld.bfd is ld, cc1 is cc1."""
    return re.search(r"(^|-)%s($|[.-])" % re.escape(prog), name) is not None


@needs_shim
@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("make") is None,
                    reason="needs make and gcc")
@pytest.mark.parametrize("out", ["flush", "loop"])
def test_make_gcc_log_complete(tmp_path, out):
    """make running gcc on a one-file program (long argvs: collect2, ld):
    the log reads back with no invalid block, and every process started has
    its process_start event, every exec'd program (cc1, as, collect2, ld)
    its exec event in its parent and its process_start."""
    (tmp_path / "hello.c").write_text("int main(void) { return 0; }\n")
    (tmp_path / "Makefile").write_text("hello: hello.c\n\tgcc -O2 -o hello hello.c\n")
    evs = traced(tmp_path, out, ["-s", "1024"], ["make", "-s", "-C", str(tmp_path)])
    assert (tmp_path / "hello").exists()
    starts = {e["pid"]: e["args"] for e in of(evs, "process_start")}
    pids = {e["pid"] for e in evs if e["event"].startswith("posixtrace:")}
    assert pids <= set(starts), pids - set(starts)
    exes = {os.path.basename(a["exe"]) for a in starts.values()}
    for p in ("make", "cc1", "as", "collect2", "ld"):
        assert any(is_prog(x, p) for x in exes), exes
    execd = {os.path.basename(e["args"]["path"]) for e in of(evs, "exec")}
    for p in ("cc1", "as", "collect2", "ld"):
        assert any(is_prog(x, p) for x in execd), execd
