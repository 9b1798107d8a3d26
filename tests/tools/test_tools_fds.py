"""Issue 18: process_start comes first in every image, and -y/-yy name the
file, pipe or socket behind each descriptor (posixtrace-run live,
posixtrace-dump on a log: text, JSON, Chrome), learned from the trace: the
descriptors each image started with (event fds, recorded with -y only),
opens, pipes, sockets, dups, closes, fork children's copies.  Real programs
(cat, dash, python3, ls) under the shim; skipped when the shim is not built
or is built with sanitizers.  doc/tools.md "Descriptors (-y)", doc/events.md
(fds, socketpair), doc/json-schema.md (fds).
"""
import json
import os
import re
import socket
import subprocess

import pytest

from harness import program
from shimrun import ENV, PY, shim_usable, trun
from toolscommon import TIMEOUT, events, json_lines, sh, tdump, tool

pytestmark = pytest.mark.skipif(shim_usable() is not None, reason=str(shim_usable()))


def of(evs, name, pid=None):
    """Events named name ("posixtrace:open*": any function of the family)."""
    match = (lambda n: n.startswith(name[:-1])) if name.endswith("*") else (lambda n: n == name)
    return [e for e in evs if match(e[0]) and (pid is None or e[3] == pid)]


def traced_to_pipe(args):
    """Runs posixtrace-run ARGS with the program's stdout a pipe made here;
    returns (stderr text, what the program wrote, the pipe's inode)."""
    r, w = os.pipe()
    ino = os.fstat(w).st_ino
    full = dict(os.environ)
    full.update(ENV)
    try:
        p = subprocess.Popen([tool("posixtrace-run")] + [str(a) for a in args], stdout=w,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=full)
    finally:
        os.close(w)
    with os.fdopen(r, "rb") as rf:
        out = rf.read()
    try:
        _, err = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        p.kill()
        pytest.fail("posixtrace-run %s: timed out" % (args,))
    assert p.returncode == 0, err.decode(errors="replace")
    return err.decode(errors="replace"), out, ino


def test_cat_names_file_and_inherited_pipe(tmp_path):
    """cat FILE > a pipe of the test's: open's result, read and close name
    the file by its absolute path, write names descriptor 1 as the pipe it
    inherited (pipe:[its inode], from the fds event at its start); the
    program writes what it writes untraced."""
    f = tmp_path / "in.txt"
    f.write_text("hello fds\n")
    err, out, ino = traced_to_pipe(["-y", "-e", "open,read,write,close", "cat", f])
    assert out == b"hello fds\n"
    evs = events(err)
    path = str(f)
    opens = [e for e in of(evs, "posixtrace:open*") if '"%s"' % path in e[1]]
    assert len(opens) == 1 and re.match(r" = (\d+)<%s> " % re.escape(path), opens[0][2]), err
    fd = re.match(r" = (\d+)<", opens[0][2]).group(1)
    reads = [e for e in of(evs, "posixtrace:read") if e[1].startswith("fd=%s<" % fd)]
    assert reads and all(e[1].startswith("fd=%s<%s>, " % (fd, path)) for e in reads), err
    assert any(e[1].startswith("fd=1<pipe:[%d]>, " % ino) and 'buf="hello fds\\n"' in e[1]
               for e in of(evs, "posixtrace:write")), err
    assert any(e[1] == "fd=%s<%s>" % (fd, path) for e in of(evs, "posixtrace:close")), err
    assert not of(evs, "posixtrace:fds"), "the fds event is not printed unless -e asks"


def test_without_y_no_fds_event(tmp_path):
    """Without -y the shim does not read its descriptors (the stream's filter
    leaves event fds out); with -y -o the log holds them (and -e all prints
    them), and posixtrace-dump -y on that log names the descriptors as the
    live view does; -yy adds an inherited device's numbers."""
    f = tmp_path / "in.txt"
    f.write_text("x\n")
    devnull = open(os.devnull, "wb")
    log = tmp_path / "no.ptl"
    trun("-o", log, "cat", f, stdout=devnull)
    assert "posixtrace:fds" not in tdump("-e", "all", log).out
    log = tmp_path / "y.ptl"
    trun("-y", "-o", log, "cat", f, stdout=devnull)
    fds = of(events(tdump("-e", "fds", log).out), "posixtrace:fds")
    assert len(fds) == 1 and '"1 /dev/null"' in fds[0][1], fds
    dumped = events(tdump("-y", "-e", "open,read,write,close", log).out)
    live = events(trun("-y", "-e", "open,read,write,close", "cat", f, stdout=devnull).err)
    strip = lambda evs: [(e[0], e[1], re.sub(r" <[\d.]+>", "", e[2])) for e in evs]
    assert strip(dumped) == strip(live)
    assert any(e[1].startswith("fd=1</dev/null>, ") for e in of(dumped, "posixtrace:write"))
    # -yy: an inherited device with its numbers, as strace shows them
    dev = os.stat(os.devnull).st_rdev
    yy = of(events(tdump("-yy", "-e", "write", log).out), "posixtrace:write")
    assert yy and yy[0][1].startswith("fd=1</dev/null<char %d:%d>>, " % (os.major(dev), os.minor(dev))), yy
    assert '"1 char %d:%d"' % (os.major(dev), os.minor(dev)) in fds[0][1], fds


def test_dash_pipeline(tmp_path):
    """dash -c 'cat IN | cat > OUT': both cats started with the same pipe
    (pipe:[N] at both ends: the first writes to its 1, the second reads its
    0), the second's 1 is OUT (dash's redirection before the exec); dash's own
    pipe() names both its ends with that inode; the output is what it is
    untraced."""
    src, dst = tmp_path / "in", tmp_path / "out"
    src.write_text("through a pipe\n")
    p = trun("-y", "dash", "-c", "cat %s | cat > %s" % (src, dst))
    assert dst.read_text() == "through a pipe\n"
    evs = events(p.err)
    w = [e for e in of(evs, "posixtrace:write") if e[1].startswith("fd=1<pipe:[")]
    r = [e for e in of(evs, "posixtrace:read") if e[1].startswith("fd=0<pipe:[")]
    assert w and r, p.err
    n = re.match(r"fd=1<pipe:\[(\d+)\]>", w[0][1]).group(1)
    assert r[0][1].startswith("fd=0<pipe:[%s]>, " % n) and r[0][3] != w[0][3], p.err
    assert any(e[1].startswith("fd=1<%s>, " % dst) and e[3] == r[0][3]
               for e in of(evs, "posixtrace:write")), p.err
    assert any(re.search(r"rfd=\d+<pipe:\[%s\]>, wfd=\d+<pipe:\[%s\]>, ino=%s" % (n, n, n), e[1])
               for e in of(evs, "posixtrace:pipe*")), p.err


DUP_CLOSE = r"""
import os, sys
a, b = sys.argv[1:3]
fd = os.open(a, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.dup2(fd, 1)
os.write(1, b"to a\n")
os.close(fd)
fd2 = os.open(b, os.O_RDONLY)
assert fd2 == fd
os.read(fd2, 3)
pid = os.fork()
if pid == 0:               # at once: its events may come before the parent's fork event
    os.write(1, b"child\n")
    os.read(fd2, 1)
    os._exit(0)
os.waitpid(pid, 0)
"""


def test_dup2_close_reuse_fork(tmp_path):
    """python3: dup2 of a file onto stdout (dup2 names both, its result the
    file), write to 1 names the file; a closed number reused by another open
    names the new file; a fork child names what it inherited (its stdout, the
    reused number) from its first event on: its fork event names its parent
    (parent=PID), so its table is its parent's whatever the order of the two
    processes' events."""
    a, b = tmp_path / "a", tmp_path / "b"
    b.write_text("bbb")
    p = trun("-y", "-e", "open,dup,write,read,close,fork", PY, "-c", DUP_CLOSE, a, b,
             stdout=open(os.devnull, "wb"))
    assert a.read_text() == "to a\nchild\n"
    evs = events(p.err)
    op = [e for e in of(evs, "posixtrace:open*") if '"%s"' % a in e[1]][0]
    fd = re.match(r" = (\d+)<", op[2]).group(1)
    d = of(evs, "posixtrace:dup2")
    assert d and d[0][1] == "oldfd=%s<%s>, newfd=1</dev/null>" % (fd, a), p.err
    assert d[0][2].startswith(" = 1<%s> " % a), p.err
    main = op[3]
    assert any(e[1].startswith("fd=1<%s>, " % a) and e[3] == main
               for e in of(evs, "posixtrace:write")), p.err
    assert any(e[1].startswith("fd=%s<%s>, " % (fd, b)) for e in of(evs, "posixtrace:read")), p.err
    child = [e[3] for e in of(evs, "posixtrace:fork") if e[3] != main]
    assert child, p.err
    assert [e[1] for e in of(evs, "posixtrace:fork", child[0])] == ["parent=%d" % main], p.err
    assert [e[1] for e in of(evs, "posixtrace:fork", main)] == [""], p.err
    assert any(e[1].startswith("fd=1<%s>, " % a) and 'buf="child\\n"' in e[1]
               for e in of(evs, "posixtrace:write", child[0])), p.err
    assert any(e[1].startswith("fd=%s<%s>" % (fd, b)) for e in of(evs, "posixtrace:read", child[0])), p.err


SOCKETS = r"""
import socket, sys
port = int(sys.argv[1])
x, y = socket.socketpair()
x.send(b"p")
y.recv(1)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(1)
c = socket.create_connection(("127.0.0.1", port))
a, peer = s.accept()
print(peer[1])
c.send(b"hi")
a.recv(2)
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sockets_yy(tmp_path):
    """-yy: socketpair's two ends (UNIX), a TCP connection on 127.0.0.1: the
    listening socket with its bound address, the accepted one local->peer,
    the connecting one ?->server (its own port the trace does not tell);
    -y alone names sockets by inode (socket:[INODE], as /proc does)."""
    port = free_port()
    p = trun("-yy", "-e", "socketpair,send,recv,accept,bind", PY, "-c", SOCKETS, port)
    cport = int(p.out.strip())
    evs = events(p.err)
    sp = of(evs, "posixtrace:socketpair")
    m = re.search(r"sv0=(\d+)<socket:\[UNIX\]>, sv1=(\d+)<socket:\[UNIX\]>", sp[0][1])
    assert m, p.err
    assert any(e[1].startswith("fd=%s<socket:[UNIX]>, " % m.group(1)) for e in of(evs, "posixtrace:send")), p.err
    assert any("<socket:[TCP]>" in e[1] for e in of(evs, "posixtrace:bind")), p.err
    acc = of(evs, "posixtrace:accept4") + of(evs, "posixtrace:accept")
    want = "socket:[TCP:127.0.0.1:%d->127.0.0.1:%d]" % (port, cport)
    assert acc and "<socket:[TCP:127.0.0.1:%d]>" % port in acc[0][1], p.err
    assert re.match(r" = \d+<%s> " % re.escape(want), acc[0][2]), p.err
    assert any(e[1].startswith("fd=") and "<socket:[TCP:?->127.0.0.1:%d]>" % port in e[1]
               for e in of(evs, "posixtrace:send")), p.err
    assert any("<%s>" % want in e[1] for e in of(evs, "posixtrace:recv")), p.err
    p1 = trun("-y", "-e", "socketpair", PY, "-c", SOCKETS, free_port())
    m = re.search(r"sv0=\d+<socket:\[(\d+)\]>, sv1=\d+<socket:\[(\d+)\]>, ino0=(\d+), ino1=(\d+)",
                  p1.err)
    assert m and m.group(1) == m.group(3) and m.group(2) == m.group(4), p1.err


def test_json_and_chrome_fds(tmp_path):
    """JSON Lines: an "fds" object per call event with the descriptor fields
    (and "ret") whose file is known; Chrome: the same inside args."""
    f = tmp_path / "in.txt"
    f.write_text("j\n")
    log = tmp_path / "j.ptl"
    trun("-y", "-o", log, "cat", f, stdout=open(os.devnull, "wb"))
    js = json_lines(tdump("-y", "-j", "json", "-e", "open,read,write", log).out)
    op = [e for e in js if e["event"] == "posixtrace:open" and e["args"]["path"] == str(f)]
    assert op and op[0]["fds"] == {"ret": str(f)}, op
    rd = [e for e in js if e["event"] == "posixtrace:read" and e["args"]["fd"] == op[0]["ret"]]
    assert rd and all(e["fds"] == {"fd": str(f)} for e in rd), rd
    wr = [e for e in js if e["event"] == "posixtrace:write"]
    assert wr and wr[0]["fds"] == {"fd": "/dev/null"}, wr
    assert all("fds" not in e for e in json_lines(tdump("-j", "json", log).out))
    doc = json.loads(tdump("-y", "-j", "chrome", "-e", "read", log).out)
    ch = [e for e in doc["traceEvents"] if e.get("name") == "posixtrace:read"]
    assert ch and ch[0]["args"]["fds"] == {"fd": str(f)}, ch


def test_syscalls_mode_fds(tmp_path):
    """--syscalls: the system calls' descriptor arguments are named too
    (newfstatat, fadvise64, close as system calls; openat's result)."""
    f = tmp_path / "in.txt"
    f.write_text("s\n")
    p = trun("-q", "--syscalls", "-y", "cat", f, stdout=open(os.devnull, "wb"))
    if "system calls not traced" in p.err:
        pytest.skip("no Syscall User Dispatch here")
    evs = events(p.err)
    sys_fd = [e for e in evs if e[0].startswith("syscall:") and e[1].startswith("1</dev/null>")]
    assert sys_fd, p.err
    assert any(e[0] == "syscall:openat" and re.match(r" = \d+</", e[2]) for e in evs), p.err


def first_events(js, pid):
    return [e["event"] for e in js if e["pid"] == pid and e["kind"] == "call"]


def test_process_start_before_constructor_calls(tmp_path):
    """A library's constructor that runs before the shim's (t140_ctor's
    libt140ctor opens, reads 4 bytes of and closes $T140_FILE): the image's
    process_start is its first event, with its argv, and the constructor's
    calls follow with their arguments."""
    f = tmp_path / "ctor.txt"
    f.write_text("abcdefgh")
    prog = program("t140_ctor")
    p = sh([tool("posixtrace-run"), "-j", "json", prog, "arg1"], env=dict(ENV, T140_FILE=str(f)))
    assert p.out == "ctor read 4\n"
    js = json_lines(p.err)
    st = [e for e in js if e["event"] == "posixtrace:process_start"]
    assert len(st) == 1 and st[0]["args"]["argv"] == [prog, "arg1"], st
    calls = [e for e in js if e["pid"] == st[0]["pid"] and e["kind"] == "call"]
    assert [e["event"] for e in calls[:4]] == [
        "posixtrace:process_start", "posixtrace:open", "posixtrace:read", "posixtrace:close"], calls
    o, r, c = calls[1:4]
    assert (o["args"]["path"], o["args"]["flags"], o["ret"]) == (str(f), "O_RDONLY", 3)
    assert (r["args"]["fd"], r["args"]["count"], r["args"]["buf"], r["ret"]) == (3, 4, "abcd", 4)
    assert (c["args"]["fd"], c["ret"]) == (3, 0)


def test_ls_libselinux_constructor(tmp_path):
    """ls links libselinux, whose constructor reads /proc/filesystems before
    main: under the shim, process_start comes first and that fopen after it."""
    needed = subprocess.run(["readelf", "-d", "/usr/bin/ls"], stdout=subprocess.PIPE,
                            universal_newlines=True, timeout=TIMEOUT).stdout
    if "libselinux" not in needed:
        pytest.skip("ls does not link libselinux here")
    p = trun("-j", "json", "ls", "-d", str(tmp_path))
    assert p.out == "%s\n" % tmp_path
    js = json_lines(p.err)
    pid = [e["pid"] for e in js if e["event"] == "posixtrace:process_start"][0]
    names = first_events(js, pid)
    assert names[0] == "posixtrace:process_start", names
    fo = [e for e in js if e["event"] == "posixtrace:fopen" and e["pid"] == pid]
    assert fo and fo[0]["args"]["path"] == "/proc/filesystems", names


def test_odd_names_escaped(tmp_path):
    """A path with a newline and '>' in it: -y escapes them (\\x0a, \\x3e), so
    each event stays one line and the annotation's end stays unambiguous."""
    f = tmp_path / "a\nb>c"
    f.write_text("z")
    p = trun("-y", "-e", "read", PY, "-c", "import os,sys; os.read(os.open(sys.argv[1], 0), 1)",
             str(f))
    want = "%s/a\\x0ab\\x3ec" % tmp_path
    assert any(re.match(r"fd=\d+<%s>, count=1, buf=\"z\"" % re.escape(want), e[1])
               for e in of(events(p.err), "posixtrace:read")), p.err


def test_e_prints_less_than_y_needs(tmp_path):
    """-y -e read: the open, close and fds events the table learns from are
    recorded (the stream's filter lets them through) but not printed; the
    reads still name the file and the inherited stdout."""
    f = tmp_path / "in.txt"
    f.write_text("only reads\n")
    p = trun("-y", "-e", "read,write", "cat", f, stdout=open(os.devnull, "wb"))
    evs = events(p.err)
    assert {e[0] for e in evs} == {"posixtrace:read", "posixtrace:write"}, p.err
    assert any(re.match(r"fd=\d+<%s>, " % re.escape(str(f)), e[1]) for e in of(evs, "posixtrace:read")), p.err
    assert any(e[1].startswith("fd=1</dev/null>, ") for e in of(evs, "posixtrace:write")), p.err


MANY = r"""
import os, resource, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if hard != resource.RLIM_INFINITY and hard < 4200:
    print("skip"); sys.exit(0)
resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 4200), hard))
long = os.path.join(sys.argv[1], "d" * 200, "e" * 200, "f" * 200)
os.makedirs(os.path.dirname(long))
open(long, "w").close()
fds = [os.open(long if i == 0 else os.devnull, os.O_RDONLY) for i in range(4000)]
for fd in fds:
    os.set_inheritable(fd, True)
sys.stdout.flush()
os.execv("/bin/true", ["true"])
"""


def test_many_inherited_descriptors(tmp_path):
    """An image that starts with 4000 descriptors more than 64 fds events
    hold: the last event counts the ones not listed and posixtrace-dump -y
    says so on stderr (none dropped silently); a target longer than 512
    bytes is cut, flag DATA_CUT."""
    log = tmp_path / "many.ptl"
    p = trun("-y", "-o", log, PY, "-c", MANY, tmp_path)
    if p.out.strip() == "skip":
        pytest.skip("RLIMIT_NOFILE's hard limit is below 4200")
    js = json_lines(tdump("-j", "json", "-e", "fds,process_start", log).out)
    last = [i for i, e in enumerate(js) if e["event"] == "posixtrace:process_start"][-1]
    pid = js[last]["pid"]   # /bin/true, the image python exec'd
    mine = [e for e in js[last:] if e["event"] == "posixtrace:fds" and e["pid"] == pid]
    assert len(mine) == 64 and [e["args"]["more"] for e in mine] == [1] * 63 + [0], len(mine)
    listed = sum(len(e["args"]["fds"]) for e in mine)
    assert mine[-1]["args"]["unlisted"] > 0
    assert listed + mine[-1]["args"]["unlisted"] >= 4003, (listed, mine[-1]["args"]["unlisted"])
    cut = [e for e in mine if any(len(x) > 500 for x in e["args"]["fds"])]
    assert cut and cut[0]["data_cut"] is True
    d = tdump("-y", log)
    assert re.search(r"-y: process %d started with %d more descriptors" %
                     (pid, mine[-1]["args"]["unlisted"]), d.err), d.err
