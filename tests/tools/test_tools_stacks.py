"""Call stacks (posixtrace-run -k) and their symbols (posixtrace-dump
--symbolize) on real programs: python3, and tests/tools/t203_stacks.c, compiled
here with gcc -g (open() from a function inlined into leaf(), called by
middle(), from main and from a thread), and compiled again changed for the
build-id check.

What is checked (issue 18, "Stacks and symbols"; doc/events.md, the stack
event; doc/tools.md, "Symbols"):
- stacks change nothing the program can see: descriptor numbers, the
  descriptors open, signal dispositions, the objects mapped;
- a stack holds the program's frames only, frame 0 being the call's own
  program address: no frame of the shim, libposixtrace or the unwinder;
- every stack can be symbolized, the first one too; JSON has them
  symbolized (frames_sym); functions inlined at an address are named; a
  separate debug file (.gnu_debuglink) is used; no process is spawned;
- an object rebuilt since the trace was recorded is reported once and its
  addresses stay offsets (no wrong names);
- -p refuses --stack and --strsize (the running process's shim has its own).
"""
import json
import os
import re
import shutil
import subprocess

import pytest

from shimrun import PY, shim_usable
from toolscommon import TIMEOUT, json_lines, sh, tdump, tool, trun

pytestmark = pytest.mark.skipif(shim_usable() is not None, reason=str(shim_usable()))

GCC = shutil.which("gcc")
needs_gcc = pytest.mark.skipif(GCC is None, reason="gcc not found")
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "t203_stacks.c")
CFLAGS = ["-g", "-O2", "-fno-optimize-sibling-calls", "-pthread"]
TRACE_SYSTEM = ("libposixtrace-preload.so", "libposixtrace.so.", "libgcc_s.so.")


def build(out, *defs):
    sh([GCC] + CFLAGS + list(defs) + ["-o", str(out), SRC])
    return out


def line_of(text):
    """The line number of the source line of t203_stacks.c holding text."""
    with open(SRC) as f:
        ls = [i + 1 for i, l in enumerate(f) if text in l]
    assert len(ls) == 1, (text, ls)
    return ls[0]


def stacks_log(tmp_path, prog, *args):
    log = tmp_path / "s.ptl"
    p = trun("-q", "-k", "-o", str(log), str(prog), *args)
    return log, p


def modules(js):
    """(path, base, end, build id) of each module event."""
    return [(e["args"]["path"], int(e["args"]["base"], 16),
             int(e["args"]["base"], 16) + int(e["args"]["size"], 16), e["args"]["build_id"])
            for e in js if e["event"] == "posixtrace:module"]


PROBE = r'''
import json, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
fds = sorted(int(n) for n in os.listdir("/proc/self/fd"))
status = open("/proc/self/status").read().splitlines()
sig = [l for l in status if l.startswith(("SigBlk", "SigIgn", "SigCgt"))]
maps = sorted({l.split()[5] for l in open("/proc/self/maps") if len(l.split()) > 5})
print(json.dumps([fd, fds, sig, maps]))
'''


def is_unwinder(path):
    return os.path.basename(path).startswith("libgcc_s.so.")


def test_stack_changes_nothing_visible(tmp_path):
    """A traced python3 that opens a file gets descriptor 3 with and without
    --stack, and sees the same descriptors, signal dispositions and mapped
    objects (the unwinder opened a pipe in the program: its open returned 5),
    but for the unwinder itself (libgcc_s), which the shim loads only when
    stacks are asked for (preload/unwind.c): a traced program that does not
    load it itself has it mapped with --stack only."""
    data = tmp_path / "data"
    data.write_text("x")
    untraced = subprocess.run([PY, "-c", PROBE, str(data)], capture_output=True, text=True,
                              timeout=TIMEOUT, check=True)
    own_unwinder = any(is_unwinder(m) for m in json.loads(untraced.stdout)[3])
    outs = []
    for opts in ([], ["-k"], ["-k", "64"]):
        log = tmp_path / ("l%d.ptl" % len(outs))
        p = trun("-q", "-e", "file,stack", *opts, "-o", str(log), PY, "-c", PROBE, str(data))
        outs.append(json.loads(p.out))
        js = json_lines(tdump("-f", "json", str(log)).out)
        opens = [e for e in js if e["event"] == "posixtrace:open" and
                 e["args"]["path"] == str(data)]
        assert len(opens) == 1 and opens[0]["ret"] == 3, opens
        nstacks = len([e for e in js if e["event"] == "posixtrace:stack"])
        assert (nstacks > 0) == bool(opts), (opts, nstacks)
    assert outs[0][0] == 3 and outs[0][1][:4] == [0, 1, 2, 3], outs[0]
    for o in outs[1:]:
        assert o[:3] == outs[0][:3], (o, outs[0])
        added = sorted(set(o[3]) - set(outs[0][3]))
        assert set(outs[0][3]) <= set(o[3]) and all(is_unwinder(m) for m in added), added
        assert any(is_unwinder(m) for m in o[3]), o[3]
    assert own_unwinder or not any(is_unwinder(m) for m in outs[0][3]), outs[0][3]


def test_stack_without_unwinder_is_said(tmp_path):
    """When libgcc_s.so.1 cannot be loaded (here a bogus file of that name
    first in LD_LIBRARY_PATH), -k says so once on stderr, records no stack
    and traces the program all the same (preload/unwind.c)."""
    bogus = tmp_path / "lib"
    bogus.mkdir()
    (bogus / "libgcc_s.so.1").write_bytes(b"not an ELF object")
    path = str(bogus) + ":" + os.environ.get("LD_LIBRARY_PATH", "")
    log = tmp_path / "s.ptl"
    p = trun("-k", "-o", str(log), PY, "-c", "import os; os.close(os.open('/', os.O_RDONLY))",
             env={"LD_LIBRARY_PATH": path})
    said = [l for l in p.err.splitlines() if "libgcc_s.so.1 (the unwinder) could not be loaded" in l]
    assert len(said) == 1 and "no call stacks" in said[0], p.err
    js = json_lines(tdump("-f", "json", str(log)).out)
    assert not [e for e in js if e["event"] == "posixtrace:stack"]
    assert [e for e in js if e["event"] == "posixtrace:open" and e["args"]["path"] == "/"], \
        sorted({e["event"] for e in js})


@needs_gcc
def test_stack_frames_are_the_programs(tmp_path):
    """Each stack follows its call in the same thread; frame 0 is the call's
    program address; no frame lies in the trace system's objects (shim,
    libposixtrace, unwinder), from main (main_wrapper) or from a thread (the
    shim's trampoline); symbolized, the stack of open() in main and in the
    thread is exactly the program's call chain, the inlined function named."""
    prog = build(tmp_path / "prog")
    log, p = stacks_log(tmp_path, prog)
    assert p.out == "3\n"
    js = json_lines(tdump("-f", "json", "--symbolize", str(log)).out)
    system = [m for m in modules(js) if os.path.basename(m[0]).startswith(TRACE_SYSTEM)]
    assert len(system) == 3, modules(js)
    last = {}
    nstacks = 0
    for e in js:
        if e["event"] == "posixtrace:stack":
            call = last[e["tid"]]
            frames = [int(a, 16) for a in e["args"]["frames"]]
            assert frames and frames[0] == int(call["addr"], 16), (call, e)
            assert e["frames_sym"][0] == call["addr_sym"], (call, e)
            for a in frames:
                assert not any(b <= a < end for _, b, end, _ in system), (hex(a), e, system)
            assert not any("libposixtrace" in s for s in e["frames_sym"]), e
            nstacks += 1
        elif e["kind"] == "call" and e["event"] != "posixtrace:module":
            last[e["tid"]] = e
    assert nstacks >= 5, nstacks
    inl = "open_inlined (t203_stacks.c:%d) inlined in leaf (t203_stacks.c:%d) in prog" % (
        line_of("return open(path"), line_of("int fd = open_inlined(path);"))
    mid = "middle (t203_stacks.c:%d) in prog" % line_of("int fd = leaf(path);")
    chains = [e["frames_sym"] for e in js if e["event"] == "posixtrace:stack" and
              e["frames_sym"][0] == inl]
    assert len(chains) == 2, [e.get("frames_sym") for e in js]
    main, thread = sorted(chains, key=lambda c: "main (" not in c[2])
    assert main[:3] == [inl, mid, "main (t203_stacks.c:%d) in prog" % line_of(
        "int fd = middle(path);")], main
    assert all(f.endswith((" in libc.so.6", "_start in prog")) for f in main[3:]), main
    assert thread[:3] == [inl, mid, "thread_main (t203_stacks.c:%d) in prog" % line_of(
        "close(middle(arg));")], thread
    assert all(f.endswith(" in libc.so.6") for f in thread[3:]) and thread[3:], thread


@needs_gcc
def test_every_stack_symbolized(tmp_path):
    """The map of the process comes before its first call: the first stack
    is symbolized like the others (none of its frames left in hex), in the
    text and the JSON output; process_start, which has no call site, has no
    stack. JSON keeps the raw frames and adds frames_sym, the same strings
    as the text output."""
    prog = build(tmp_path / "prog")
    log, _ = stacks_log(tmp_path, prog)
    js = json_lines(tdump("-f", "json", "--symbolize", str(log)).out)
    names = [e["event"] for e in js]
    start = names.index("posixtrace:process_start")
    assert names[start + 1] == "posixtrace:module", names
    stacks = [e for e in js if e["event"] == "posixtrace:stack"]
    for e in stacks:
        assert len(e["frames_sym"]) == len(e["args"]["frames"]), e
        assert not any(s.startswith("0x") for s in e["frames_sym"]), e
    assert stacks[0]["frames_sym"][0].startswith("open_inlined ("), stacks[0]
    text = [l for l in tdump("--time=none", "-s", str(log)).out.splitlines()
            if "posixtrace:stack(" in l]
    assert len(text) == len(stacks)
    for l, e in zip(text, stacks):
        assert "(frames=[" + ", ".join(e["frames_sym"]) + "])" in l, (l, e)


def test_symbolize_spawns_nothing(tmp_path):
    """posixtrace-dump --symbolize reads the objects in process: python3's
    log with stacks is symbolized without starting any program (one execve:
    posixtrace-dump's own)."""
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace not found")
    log = tmp_path / "py.ptl"
    trun("-q", "-k", "-o", str(log), PY, "-c", 'import os; [os.stat("/tmp") for i in range(50)]')
    trace = tmp_path / "strace.txt"
    sh([strace, "-f", "-qq", "-e", "trace=execve,fork,vfork,clone3", "-o", str(trace),
        tool("posixtrace-dump"), "--symbolize", "-o", str(tmp_path / "out.txt"), str(log)])
    calls = [l for l in trace.read_text().splitlines()
             if re.match(r"^\d+ +(execve|fork|vfork|clone3?)\(", l)]
    # (a libtool wrapper script of the build tree runs sed first, then the binary)
    own = [i for i, l in enumerate(calls) if re.search(r'execve\("[^"]*posixtrace-dump"', l)]
    assert own and calls[own[-1] + 1:] == [], calls
    out = (tmp_path / "out.txt").read_text()
    assert re.search(r"posixtrace:stack\(frames=\[[^\]]* in python3[.\d]*[,\]]", out), out[:2000]


@needs_gcc
def test_separate_debug_file(tmp_path):
    """The program's debug information in a separate file (objcopy
    --only-keep-debug, --add-gnu-debuglink, the binary stripped of it) gives
    the same functions and lines; libc's frames get lines from its debug file
    under /usr/lib/debug/.build-id when installed (libc6-dbg)."""
    prog = build(tmp_path / "prog")
    log, _ = stacks_log(tmp_path, prog)
    whole = tdump("--time=none", "-s", str(log)).out
    dbg = tmp_path / "prog.debug"
    sh(["objcopy", "--only-keep-debug", str(prog), str(dbg)])
    sh(["objcopy", "--strip-debug", "--add-gnu-debuglink=" + str(dbg), str(prog)])
    assert b".debug_info" not in open(prog, "rb").read()
    # the stripped binary keeps its build id: the trace still matches it
    split = tdump("--time=none", "-s", str(log))
    assert split.err == "" and split.out == whole
    assert "inlined in leaf (t203_stacks.c:" in whole
    js = json_lines(tdump("-f", "json", str(log)).out)
    libc = [m for m in modules(js) if os.path.basename(m[0]).startswith("libc.so")]
    bid = libc[0][3] if libc else ""
    if bid and os.path.exists("/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])):
        assert re.search(r"__libc_start_main_impl \(libc-start\.c:\d+\) in libc\.so\.6", whole)


@needs_gcc
def test_symbolize_checks_build_id(tmp_path):
    """The program rebuilt changed after the trace (another build id, the
    same names at other addresses): --symbolize says so once on stderr, with
    both build ids, and shows its addresses as prog+0xOFF, never a name
    (text and JSON); other objects are still named. The program removed: one
    message, offsets."""
    prog = build(tmp_path / "prog")
    log, _ = stacks_log(tmp_path, prog)
    js = json_lines(tdump("-f", "json", str(log)).out)
    recorded = [m[3] for m in modules(js) if m[0] == str(prog)]
    assert len(set(recorded)) == 1, modules(js)
    build(tmp_path / "prog", "-DCHANGED")
    now = sh(["readelf", "-n", str(prog)]).out
    new_id = re.search(r"Build ID: ([0-9a-f]+)", now).group(1)
    assert new_id != recorded[0]
    for fmt in ("text", "json"):
        p = tdump("-f", fmt, "-s", str(log))
        assert p.err == ("posixtrace-dump: %s: not the file the trace recorded (build id %s, "
                         "the trace's %s: rebuilt or replaced since); its addresses are shown "
                         "as offsets\n" % (prog, new_id, recorded[0])), p.err
        for name in ("open_inlined", "leaf", "middle", r"\bmain \(", "thread_main", "other_fun"):
            assert not re.search(name, p.out), (name, p.out)
        assert re.search(r"frames=\[prog\+0x[0-9a-f]+, prog\+0x[0-9a-f]+, ", p.out) or \
            re.search(r'"frames_sym":\["prog\+0x[0-9a-f]+","prog\+0x[0-9a-f]+",', p.out), p.out
        assert " in libc.so.6" in p.out
    os.unlink(prog)
    p = tdump("-s", str(log))
    assert p.err == ("posixtrace-dump: %s: No such file or directory; its addresses are shown "
                     "as offsets\n" % prog), p.err
    assert "open_inlined" not in p.out and "@prog+0x" in p.out


@pytest.mark.parametrize("opt", [["-k"], ["-k", "8"], ["-s", "64"], ["--strsize", "0"]])
def test_pid_refuses_stack_and_strsize(opt):
    """-p PID with --stack or --strsize: refused (exit 125) with the reason,
    before anything is attached (the running process's shim took its
    settings from its environment when it started)."""
    proc = subprocess.Popen(["sleep", "30"])
    try:
        p = trun("-p", str(proc.pid), *opt, rc=125)
        assert p.out == ""
        assert p.err == ("posixtrace-run: -p PID: --stack and --strsize cannot change a running "
                         "process (its shim took POSIXTRACE_STACK and POSIXTRACE_STRSIZE from "
                         "its environment at start) (see --help)\n"), p.err
    finally:
        proc.kill()
        proc.wait(timeout=TIMEOUT)
