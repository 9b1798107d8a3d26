"""The shim's system-call mode (issue 15): posixtrace-run --syscalls records
every system call of every traced thread as a "syscall:<name>" system event
(id 1536 + its number), through Linux's Syscall User Dispatch
(preload/README.md, "System calls"; doc/events.md, "System calls").

Each program runs traced and untraced: its output, files and exit status
must be the same. The events are read back from the log as JSON
(doc/json-schema.md). Side by side with strace -f: the same system calls by
name and result (apart from the calls made before the shim is loaded and
those listed in doc/events.md).
"""
import json
import os
import re
import shutil
import subprocess

import pytest

from harness import program
from shimcommon import sanitized, shim_path
from shimrun import run_env, trace_log
from toolscommon import sh, tdump, tool

pytestmark = [
    pytest.mark.skipif(not os.path.exists(shim_path()), reason="the shim is not built"),
    pytest.mark.skipif(os.uname().machine != "x86_64", reason="the mode is x86-64 only"),
]
PY = "/usr/bin/python3"


def trun(*args, rc=0):
    return sh([tool("posixtrace-run")] + list(args), env=run_env(), rc=rc)


def plain(*argv, cwd=None):
    p = subprocess.run(list(argv), capture_output=True, timeout=60, cwd=cwd)
    return p.returncode, p.stdout


def traced(tmp_path, *argv):
    """argv under posixtrace-run --syscalls -o LOG: (events, the program's
    stdout as posixtrace-run passed it)."""
    js, p = trace_log(tmp_path / "t.ptl", "--syscalls", *argv, run=trun)
    return [e for e in js if e["event"] != "posixtrace:module"], p.out


def sc(js, name, pid=None):
    return [e for e in js if e["event"] == "syscall:" + name and (pid is None or e["pid"] == pid)]


def test_ls_l(tmp_path):
    """ls -l: getdents64 on the directory, a stat-family call per entry with
    its path, and the write of the listing to stdout, whose bytes begin the
    listing; output identical to the untraced run."""
    d = tmp_path / "dir"
    d.mkdir()
    for n in ("alpha", "beta", "gamma"):
        (d / n).write_text(n)
    rc, want = plain("ls", "-l", str(d))
    js, out = traced(tmp_path, "ls", "-l", str(d))
    assert rc == 0 and out == want.decode()
    assert [e["ret"] for e in sc(js, "getdents64")][-1] == 0  # the end of the directory
    assert any(e["ret"] > 0 for e in sc(js, "getdents64"))
    stats = [e for e in js if e["event"] in ("syscall:statx", "syscall:newfstatat",
                                              "syscall:lstat", "syscall:stat")]
    for n in ("alpha", "beta", "gamma"):
        assert any(e["args"].get("path", "").endswith("dir/" + n) and e["ret"] == 0
                   for e in stats), n
    w = [e for e in sc(js, "write") if e["args"]["fd"] == 1]
    assert w and w[0]["ret"] == len(want) and want.decode().startswith(w[0]["args"]["buf"])


def test_cat_write(tmp_path):
    """cat FILE: its fstat of stdout and of the file (system calls libc makes
    for it), the file's open (cat calls open(): the wrapper records it, once)
    and the write of its 12 bytes to stdout (the wrapper's event, or, where cat
    copies with copy_file_range/sendfile, that system call)."""
    f = tmp_path / "in.txt"
    f.write_text("hello world\n")
    js, out = traced(tmp_path, "cat", str(f))
    assert out == "hello world\n"
    op = [e for e in js if e["event"] in ("posixtrace:open", "syscall:openat")
          and e["args"]["path"] == str(f)]
    assert len(op) == 1 and op[0]["ret"] >= 0, op
    assert len([e for e in sc(js, "fstat") + sc(js, "newfstatat") if e["ret"] == 0]) >= 2
    writes = [e for e in js if e["event"] in ("syscall:write", "posixtrace:write")
              and e["args"]["fd"] == 1]
    copies = sc(js, "copy_file_range") + sc(js, "sendfile")
    assert any(e["ret"] == 12 for e in writes + copies), (writes, copies)


def test_python3(tmp_path):
    """python3 importing modules, with a thread and a subprocess: output and
    status as untraced; the interpreter's stat-family calls and mmaps are
    there; the thread's calls carry its own thread id."""
    code = ("import threading,subprocess,json;t=threading.Thread(target=lambda:print('thr'));"
            "t.start();t.join();print(subprocess.run(['echo','sub'],capture_output=True).stdout)")
    rc, want = plain(PY, "-c", code)
    js, out = traced(tmp_path, PY, "-c", code)
    assert rc == 0 and out == want.decode()
    assert len(sc(js, "newfstatat")) + len(sc(js, "stat")) > 10
    assert len(sc(js, "mmap")) > 5
    tids = {e["tid"] for e in js if e["event"].startswith("syscall:")}
    assert len(tids) >= 3  # main thread, the Python thread, the subprocess


def test_t130_same_as_untraced(tmp_path):
    """Every mode of t130_syscalls prints and exits as it does untraced (in a
    sanitizer build not the seccomp one: its filter trapping getppid hangs
    the leak checker's exit even untraced)."""
    modes = ["rawfork", "rawvfork", "rawthread", "threads", "signals", "altstack", "sigsys",
             "blockmask", "rawexec", "vforkexec"] + ([] if sanitized() else ["seccomp"])
    for mode in modes:
        rc, want = plain(program("t130_syscalls"), mode)
        p = trun("--syscalls", "-q", program("t130_syscalls"), mode, rc=rc)
        assert sorted(p.out.splitlines()) == sorted(want.decode().splitlines()), mode


def test_raw_clone_fork(tmp_path):
    """syscall(SYS_clone, SIGCHLD): the call is recorded in both processes,
    the child's pid in the parent and 0 in the child; the child is armed
    again (dispatch is not inherited): its getppid and its exit_group(3) are
    recorded with its own pid."""
    js, out = traced(tmp_path, program("t130_syscalls"), "rawfork")
    assert "child 1\n" in out and "parent child-exit 3\n" in out
    cl = sc(js, "clone")
    parent = [e for e in cl if e["ret"] > 0]
    child = [e for e in cl if e["ret"] == 0]
    assert len(parent) == 1 and len(child) == 1, cl
    cpid = parent[0]["ret"]
    assert child[0]["pid"] == cpid and child[0]["args"]["flags"] == "0x11"
    assert [e["ret"] for e in sc(js, "getppid", cpid)] == [parent[0]["pid"]]
    ex = sc(js, "exit_group", cpid)
    assert len(ex) == 1 and ex[0]["args"]["status"] == 3 and not ex[0]["returned"]


def test_raw_vfork_and_thread(tmp_path):
    """A raw vfork and a raw CLONE_VM thread run in the program's frame
    (the region's stubs): both work. The vfork is recorded when it returns
    in the parent (the child's pid), the thread's clone at entry; the vfork
    child is armed: its exit_group(4) is recorded under its own pid."""
    js, out = traced(tmp_path, program("t130_syscalls"), "rawvfork")
    assert out == "vfork child-exit 4\n"
    vf = sc(js, "vfork")
    assert len(vf) == 1 and vf[0]["returned"] and vf[0]["ret"] > 0, vf
    ex = sc(js, "exit_group", vf[0]["ret"])
    assert len(ex) == 1 and ex[0]["tid"] == vf[0]["ret"] and ex[0]["args"]["status"] == 4, ex
    js, out = traced(tmp_path, program("t130_syscalls"), "rawthread")
    assert out == "thread\nrawthread done 1\n"
    cl = sc(js, "clone")
    assert len(cl) == 1 and int(cl[0]["args"]["flags"], 16) & 0x100  # CLONE_VM


def test_threads(tmp_path):
    """8 pthreads making 100 getppid each: 800 getppid events, 100 per
    thread, each under its own thread id; also with -e getppid, where no
    thread event is wanted (the threads are armed all the same)."""
    for sel in ([], ["-e", "getppid"]):
        js, out = traced(tmp_path, *sel, program("t130_syscalls"), "threads", "8")
        assert "threads 8 joined\n" in out
        per = {}
        for e in sc(js, "getppid"):
            per[e["tid"]] = per.get(e["tid"], 0) + 1
        assert sorted(per.values()) == [100] * 8, (sel, per)


def test_signals(tmp_path):
    """A SIGALRM handler interrupting a blocking read: EINTR without
    SA_RESTART (5 times), the read completed under SA_RESTART; the
    handler's own system calls (a getppid per signal) are recorded although
    the read it interrupts is a wrapper's (selector ALLOW): the shim runs the
    program's handlers with BLOCK."""
    js, out = traced(tmp_path, program("t130_syscalls"), "signals")
    m = re.match(r"eintr 5 restarted 1 x hits (\d+)\n", out)
    assert m, out
    assert len(sc(js, "getppid")) == int(m.group(1))
    assert len(sc(js, "setitimer")) == 6


def test_own_sigsys_and_seccomp(tmp_path):
    """The program's own SIGSYS handler is kept for it (sigaction gives it
    back) and reached by kill(SIGSYS) and by a seccomp SECCOMP_RET_TRAP, whose
    result the handler sets: the recorded getppid has that result."""
    js, out = traced(tmp_path, program("t130_syscalls"), "sigsys")
    assert out == "sigsys same=1 calls=1 code=0\n"
    if sanitized():
        return  # the leak checker's exit hangs under the filter, traced or not
    js, out = traced(tmp_path, program("t130_syscalls"), "seccomp")
    assert out == "seccomp same=1 getppid=4242 calls=1 code=1\n"
    assert [e["ret"] for e in sc(js, "getppid")] == [4242]


def test_sigsys_never_blocked(tmp_path):
    """sigprocmask blocking SIGSYS, pthread_sigmask of a full set: the program
    keeps running (SIGSYS left out of the mask), other signals are blocked
    as asked."""
    js, out = traced(tmp_path, program("t130_syscalls"), "blockmask")
    assert out == "blockmask 1 1 usr1-blocked=1\n"
    assert len(sc(js, "getppid")) == 2


def test_raw_execve(tmp_path):
    """A raw execve system call (trapped, made from the handler): recorded
    before (NORETURN) with its path and argv; the new image is armed again
    (dispatch is reset by exec): its 3 getppid are recorded under the same
    pid."""
    prog = program("t130_syscalls")
    js, out = traced(tmp_path, prog, "rawexec")
    assert out == "getppid 3\nrawexec child-exit 0\n"
    ex = sc(js, "execve")
    assert len(ex) == 1 and not ex[0]["returned"], ex
    assert ex[0]["args"]["path"] == prog and ex[0]["args"]["argv"] == [prog, "getppid", "3"]
    assert len(sc(js, "getppid", ex[0]["pid"])) == 3


def test_vfork_exec_parent_traced(tmp_path):
    """vfork() + execl through the shim's wrappers: the child's exec leaves
    the shared selector ALLOW; the parent puts it back when vfork returns
    there, so its own getppid calls after are recorded (2), and the exec'd
    image's (3)."""
    js, out = traced(tmp_path, program("t130_syscalls"), "vforkexec")
    assert out == "getppid 3\nvforkexec child-exit 0\nparent getppid 1\n"
    pp = sc(js, "getppid")
    pids = sorted({e["pid"] for e in pp})
    assert len(pids) == 2 and sorted(len(sc(js, "getppid", p)) for p in pids) == [2, 3], pp


def test_program_own_dispatch_refused(tmp_path):
    """A program's own PR_SET_SYSCALL_USER_DISPATCH would take the thread's
    dispatch from the shim: it fails with EINVAL, as on a kernel without it,
    with one line on stderr (untraced, turning dispatch off succeeds)."""
    rc, want = plain(program("t130_syscalls"), "ownsud")
    assert want == b"ownsud 0 0\n"
    p = trun("--syscalls", "-q", program("t130_syscalls"), "ownsud")
    assert p.out == "ownsud -1 Invalid argument\n"
    assert "the program's own Syscall User Dispatch is refused (EINVAL)" in p.err


def test_extension_call(tmp_path):
    """posixtrace_shim_set_syscalls(1) from a program that runs under the
    shim without the mode: the 3 getppid made while it is on are recorded,
    the 2 after posixtrace_shim_set_syscalls(0) are not."""
    js, p = trace_log(tmp_path / "t.ptl", program("t130_syscalls"), "selfon", run=trun)
    assert p.out == "selfon on=0 off=0\n"
    assert len(sc(js, "getppid")) == 3


def test_without_dispatch(tmp_path):
    """Where the prctl is refused (a seccomp filter fails it with EINVAL, as
    a kernel without Syscall User Dispatch does): one plain line on stderr,
    the program runs as without tracing and its libc calls are traced as
    before (the wrappers' events), no system-call event."""
    f = tmp_path / "x"
    f.write_text("data\n")
    js, p = trace_log(tmp_path / "t.ptl", "--syscalls", program("t130_syscalls"), "noprctl",
                      "cat", str(f), run=trun)
    assert p.out == "data\n"
    assert re.search(r"^posixtrace-preload: system calls not traced \(this kernel has no "
                     r"Syscall User Dispatch.*libc calls are traced as before$", p.err, re.M), p.err
    start = next(i for i, e in enumerate(js) if e["event"] == "posixtrace:process_start"
                 and e["args"]["exe"].endswith("/cat"))
    after = js[start:]  # cat's image (t130 itself, before its exec, was traced)
    assert not [e for e in after if e["event"].startswith("syscall:")]
    assert [e for e in after if e["event"] == "posixtrace:open" and e["args"]["path"] == str(f)]


def test_fork_exec_chain(tmp_path):
    """sh -c 'a | b > file': every process's calls; the exec'd images are
    armed again (the shell's and tr's system calls are there under their
    own pids); the file as untraced."""
    out = tmp_path / "out"
    js, _ = traced(tmp_path, "sh", "-c", "echo hello | tr a-z A-Z > %s" % out)
    assert out.read_text() == "HELLO\n"
    pids = {e["pid"] for e in js if e["event"].startswith("syscall:")}
    assert len(pids) >= 3
    assert any(e["args"].get("buf") == "HELLO\n" for e in sc(js, "write"))


def test_not_twice(tmp_path):
    """A call a wrapper records is not recorded again as a system call: cat's
    open of its file is posixtrace:open or syscall:openat, never both."""
    f = tmp_path / "x"
    f.write_text("x")
    js, _ = traced(tmp_path, PY, "-c", "open(%r).read()" % str(f))
    wrapped = [e for e in js if e["event"] == "posixtrace:open" and e["args"]["path"] == str(f)]
    raw = [e for e in sc(js, "openat") if e["args"]["path"] == str(f)]
    assert len(wrapped) + len(raw) == 1, (wrapped, raw)


def test_text_like_strace(tmp_path):
    """posixtrace-run --syscalls prints system calls by position with
    symbolic arguments, as strace does: newfstatat(AT_FDCWD, "DIR", ...),
    mmap's PROT_*/MAP_* and rt_sigprocmask's SIG_* (their tables generated
    from the system headers), errors as -1 ENOENT (...)."""
    d = tmp_path / "d"
    d.mkdir()
    p = trun("--syscalls", "-e", "syscall", PY, "-c",
             "import os,signal;os.stat(%r);signal.pthread_sigmask(signal.SIG_BLOCK,[]);"
             "os.access('/nonexistent',0)" % str(d))
    assert re.search(r"syscall:newfstatat\(AT_FDCWD, \"%s\", 0x[0-9a-f]+, 0\) = 0 <" % re.escape(str(d)),
                     p.err), p.err[-3000:]
    assert re.search(r"syscall:mmap\(0, \d+, PROT_READ\|PROT_WRITE, MAP_PRIVATE\|MAP_ANONYMOUS, -1, 0\)"
                     r" = 0x[0-9a-f]+", p.err)
    assert re.search(r"syscall:rt_sigprocmask\(SIG_BLOCK, ", p.err)
    assert re.search(r"syscall:access\(\"/nonexistent\", 0\) = -1 ENOENT|"
                     r"syscall:faccessat2?\(AT_FDCWD, \"/nonexistent\", 0.*\) = -1 ENOENT", p.err)


def test_filter_names(tmp_path):
    """-e syscall keeps system calls only; -e 'syscall:getdents64' (or without
    the prefix) one call."""
    d = tmp_path / "d"
    d.mkdir()
    p = trun("--syscalls", "-e", "syscall", "ls", str(d))
    names = set(re.findall(r"^\S+ \d+/\d+ ([^(]+)\(", p.err, re.M))
    assert names and all(n.startswith("syscall:") for n in names), names
    p = trun("--syscalls", "-e", "getdents64", "ls", str(d))
    names = set(re.findall(r"^\S+ \d+/\d+ ([^(]+)\(", p.err, re.M))
    assert names == {"syscall:getdents64"}, names


@pytest.mark.skipif(shutil.which("strace") is None, reason="no strace")
def test_same_as_strace(tmp_path):
    """ls -l DIR side by side with strace -f -qq: every system call strace
    lists from ls's first call naming DIR (the shim is long loaded then)
    appears by name, with the same results for the stat family, getdents64,
    the xattr calls and ioctl (pointers and addresses differ from run to
    run); open/close/read/write may be a wrapper's event instead."""
    d = tmp_path / "d"
    d.mkdir()
    (d / "f").write_text("f")
    st = subprocess.run(["strace", "-f", "-qq", "-o", str(tmp_path / "st"), "ls", "-l", str(d)],
                        capture_output=True, timeout=60)
    assert st.returncode == 0
    want = []
    for l in (tmp_path / "st").read_text().splitlines():
        m = re.match(r"^(?:\d+\s+)?(\w+)\(.*\)\s+=\s+(-?\d+|0x[0-9a-f]+)", l)
        if m:
            want.append((m.group(1), int(m.group(2), 0)))
    js, _ = traced(tmp_path, "ls", "-l", str(d))
    got = [(e["event"][8:], e["ret"]) for e in js if e["event"].startswith("syscall:")]
    # from ls's first call naming DIR (the shim is loaded by then)
    lines = (tmp_path / "st").read_text().splitlines()
    first = next(i for i, l in enumerate(lines) if str(d) in l and "execve" not in l)
    tail = []
    for l in lines[first:]:
        m = re.match(r"^(?:\d+\s+)?(\w+)\(.*\)\s+=\s+(-?\d+|0x[0-9a-f]+|\?)", l)
        if m:
            tail.append((m.group(1), None if m.group(2) == "?" else int(m.group(2), 0)))
    wrapped = {"posixtrace:" + n for n in ("open", "close", "read", "write", "fopen", "fclose")}
    has_wrapped = any(e["event"] in wrapped for e in js)
    for name, ret in tail:
        mine = [r for n, r in got if n == name]
        if not mine and name in ("openat", "close", "read", "write") and has_wrapped:
            continue  # recorded by a wrapper under its own event
        assert mine, name
        if ret is not None and name in ("statx", "newfstatat", "getdents64", "lgetxattr",
                                        "getxattr", "ioctl", "fstat"):
            assert ret in mine or -1 in mine, (name, ret, mine)


def test_futex_not_by_default(tmp_path):
    """futex floods a trace (every contended lock): posixtrace-run's default
    set, -e all and -e syscall leave it out; -e futex and -e syscall:futex
    select it: the 2 threads' 5 FUTEX_WAKE_PRIVATE (129) each, on their own
    word, result 0."""
    prog = program("t130_syscalls")
    for sel in ([], ["-e", "all"], ["-e", "syscall"], ["-e", "thread"]):
        js, out = traced(tmp_path, *sel, prog, "futex", "5")
        assert out.startswith("futex 2x5 "), out
        assert sc(js, "futex") == [], sel
        assert any(e["event"].startswith("syscall:") for e in js) or sel == ["-e", "thread"]
    for sel in ("futex", "syscall:futex", "syscall,futex"):
        js, out = traced(tmp_path, "-e", sel, prog, "futex", "5")
        words = out.split()[2:4]
        for w in words:
            mine = [e for e in sc(js, "futex") if e["args"]["uaddr"] == w]
            assert len(mine) == 5 and len({e["tid"] for e in mine}) == 1, (sel, w, mine)
            assert all(e["args"]["op"] == 129 and e["ret"] == 0 for e in mine)


def _strace_env():
    """The environment for a sanitized program under strace (LeakSanitizer
    refuses to run under ptrace)."""
    return dict(os.environ, ASAN_OPTIONS="detect_leaks=0") if sanitized() else None


def _strace(tmp_path, calls, *argv):
    """The text of strace -f -qq -e trace=calls over argv (which must succeed)."""
    st = subprocess.run(["strace", "-f", "-qq", "-e", "trace=" + calls, "-o",
                         str(tmp_path / "st")] + list(argv), capture_output=True, timeout=60,
                        env=_strace_env())
    assert st.returncode == 0, st.stderr
    return (tmp_path / "st").read_text()


def _strace_polls(tmp_path, *argv):
    """strace -f's poll lines of argv: [(fds as [(fd, events)], result, revents by fd)]."""
    res = []
    for l in _strace(tmp_path, "poll", *argv).splitlines():
        m = re.search(r"poll\(\[(.*?)\], \d+, -?\d+\) = (\d+)(?: \(\[(.*)\]\))?", l)
        if m:
            fds = [(int(a), b) for a, b in re.findall(r"fd=(\d+), events=([\w|]+)", m.group(1))]
            rev = {int(a): b for a, b in re.findall(r"fd=(\d+), revents=([\w|]+)", m.group(3) or "")}
            res.append((fds, int(m.group(2)), rev))
    return res


def test_poll_decoded(tmp_path):
    """poll of a pipe's ends: the pollfd array with each fd, its events and
    (on return) its revents by name (tables generated from <poll.h>), as
    strace -f shows them; epoll_ctl's op and event, epoll_wait's ready
    events (as many as its result), select's nfds and timeout."""
    js, out = traced(tmp_path, "-e", "poll,epoll_ctl,epoll_wait,pselect6,select",
                     program("t130_syscalls"), "poll")
    m = re.match(r"poll 2 1 1 1 fds (\d+) (\d+) (\d+) (\d+) (\d+)\n", out)
    assert m, out
    r, w, qr, qw, ep = (int(x) for x in m.groups())
    polls = sc(js, "poll")
    assert [e["args"]["fds"] for e in polls] == [
        [{"fd": r, "events": "POLLIN", "revents": "POLLIN"},
         {"fd": w, "events": "POLLOUT", "revents": "POLLOUT"}],
        [{"fd": r, "events": "POLLIN", "revents": "POLLHUP"}]], polls
    assert [(e["args"]["nfds"], e["args"]["timeout"], e["ret"]) for e in polls] == [(2, 1000, 2),
                                                                                   (1, 1000, 1)]
    ctl = sc(js, "epoll_ctl")
    assert len(ctl) == 1 and ctl[0]["args"] == {"epfd": ep, "op": "EPOLL_CTL_ADD", "fd": qr,
                                                "event": [{"events": "EPOLLIN", "data": "0x7"}]}
    wt = sc(js, "epoll_wait")
    assert len(wt) == 1 and wt[0]["ret"] == 1
    assert wt[0]["args"]["events"] == [{"events": "EPOLLIN", "data": "0x7"}]
    sel = sc(js, "pselect6") + sc(js, "select")
    assert len(sel) == 1 and sel[0]["args"]["nfds"] == qr + 1 and sel[0]["ret"] == 1
    assert sel[0]["args"]["timeout"] in ({"tv_sec": 0, "tv_nsec": 0}, {"tv_sec": 0, "tv_usec": 0})
    p = trun("--syscalls", "-e", "poll", program("t130_syscalls"), "poll")
    assert ("syscall:poll([{fd=%d, events=POLLIN, revents=POLLIN}, {fd=%d, events=POLLOUT, "
            "revents=POLLOUT}], 2, 1000) = 2" % (r, w)) in p.err, p.err
    if shutil.which("strace") is None:
        return
    want = _strace_polls(tmp_path, program("t130_syscalls"), "poll")
    got = [([(f["fd"], f["events"]) for f in e["args"]["fds"]], e["ret"],
            {f["fd"]: f["revents"] for f in e["args"]["fds"] if "revents" in f}) for e in polls]
    assert got == want, (got, want)


def test_trace_api_calls_not_recorded(tmp_path):
    """A program that uses the trace API itself (a stream with a log, a
    recording thread, flush, shutdown, the log read back): the system calls
    libposixtrace makes for it (memfd, mmap, the log's writes, futex, its
    threads' creation) are not recorded; the program's own getppid markers
    and its calls between them (none but the recording thread's) are."""
    log = tmp_path / "own.log"
    js, out = traced(tmp_path, "-e", "all,futex", program("t131_sudapi"), str(log))
    assert out == "api 40000\n"
    pid = next(e["pid"] for e in sc(js, "getppid"))
    marks = [i for i, e in enumerate(js) if e["event"] == "syscall:getppid" and e["tid"] == pid]
    assert len(marks) == 3, marks
    between = [e["event"] for e in js[marks[0] + 1:marks[2]]
               if e["tid"] == pid and e["event"].startswith("syscall:")]
    assert between == ["syscall:getppid"], between
    lib = {"memfd_create", "fallocate", "ftruncate", "pwritev", "pwrite64", "pread64",
           "membarrier", "futex", "gettid"}
    assert not [e for e in js if e["event"][8:] in lib], [e["event"] for e in js
                                                          if e["event"][8:] in lib]


def test_exec_and_spawn_repairs_not_recorded(tmp_path):
    """With the shim's exec and spawn events filtered out (-e fcntl), the
    calls libposixtrace makes before an exec or a spawn (the reserved
    descriptor checked and kept across the exec: fcntl F_GETFD/F_SETFD) are
    the trace system's and are not recorded; the program's own fcntl calls
    are, as strace -f lists them: dash's exec, os.posix_spawn, os.system."""
    js, _ = traced(tmp_path, "-e", "fcntl", "/bin/sh", "-c", "exec /bin/true")
    assert sc(js, "fcntl") == [], sc(js, "fcntl")
    prog = 'import os; os.posix_spawn("/bin/true", ["true"], {}); os.system("true")'
    js, _ = traced(tmp_path, "-e", "fcntl", PY, "-c", prog)
    ours = [(e["args"]["fd"], e["ret"]) for e in sc(js, "fcntl")]
    assert ours and not [fd for fd, _ in ours if fd >= 1000], ours
    theirs = [(int(m.group(1)), int(m.group(2), 0)) for m in
              re.finditer(r"fcntl\((\d+), .*\) += (-?(?:0x[0-9a-f]+|\d+))",
                          _strace(tmp_path, "fcntl", PY, "-c", prog))]
    assert ours == theirs, (ours, theirs)


def test_fcntl_argument_by_command(tmp_path):
    """syscall:fcntl shows its third argument as the command takes it, as
    strace -f does: none for F_GETFD/F_GETFL, O_ flags for F_SETFL, FD_
    flags for F_SETFD, a number for F_DUPFD (the calls on the program's
    descriptor, argument lists compared as text)."""
    prog = ("import os, fcntl; fd = os.open('/dev/null', os.O_RDONLY); "
            "fcntl.fcntl(fd, fcntl.F_SETFL, os.O_NONBLOCK); fcntl.fcntl(fd, fcntl.F_SETFD, 1); "
            "fcntl.fcntl(fd, fcntl.F_SETFD, 0); fcntl.fcntl(fd, fcntl.F_DUPFD, 100); "
            "fcntl.fcntl(fd, fcntl.F_GETFL); fcntl.fcntl(fd, fcntl.F_GETFD); print(fd)")
    p = trun("--syscalls", "-e", "fcntl", PY, "-c", prog)
    fd = p.out.strip()
    ours = re.findall(r" syscall:fcntl\((%s, [^)]*)\) = " % fd, p.err)
    theirs = re.findall(r"fcntl\((%s, [^)]*)\) += " % fd,
                        _strace(tmp_path, "fcntl", PY, "-c", prog))
    assert ours == theirs and len(ours) >= 6, (ours, theirs)
    assert ours[-6:-3] == ["%s, F_SETFL, O_RDONLY|O_NONBLOCK" % fd, "%s, F_SETFD, FD_CLOEXEC" % fd,
                        "%s, F_SETFD, 0" % fd], ours


def test_close_range_as_the_program_made_it(tmp_path):
    """Python's subprocess with close_fds closes its descriptors with
    close_range, which the shim splits around the trace system's descriptor:
    recorded as the calls the program made, exactly strace -f's, in the
    vfork child."""
    prog = "import subprocess; subprocess.run(['true'], close_fds=True)"
    p = trun("--syscalls", "-e", "close_range", PY, "-c", prog)
    ours = re.findall(r" syscall:close_range\(([^)]*)\) = (\S+)", p.err)
    theirs = re.findall(r"close_range\(([^)]*)\) += (\S+)",
                        _strace(tmp_path, "close_range", PY, "-c", prog))
    assert ours == theirs and ours, (ours, theirs)


def test_address_is_callers(tmp_path):
    """A system call's program address is the return address into the code
    that called the function holding the `syscall` instruction (as for the
    shim's other events, and strace -k's second frame): t130's getppid calls,
    made through libc's syscall(), resolve to t130's getppids, every time
    (the first unwinds, later ones use the call site's learned offset); with
    -k, the stack's frame 0 is that address and the next frames are main's
    callers in libc; ls's writes to stderr resolve into libc's stdio."""
    prog = program("t130_syscalls")
    p = trun("--syscalls", "-a", "-k", "3", "-e", "getppid,stack", prog, "getppid", "4")
    calls = [l for l in p.err.splitlines() if "syscall:getppid()" in l]
    assert len(calls) == 4 and all(re.search(r" @getppids\b.* in t130_syscalls$", l)
                                   for l in calls), p.err
    stacks = [l for l in p.err.splitlines() if "posixtrace:stack(" in l]
    assert len(stacks) == 4 and all(re.search(r"stack\(frames=\[getppids .*, __libc_start", l)
                                    for l in stacks), stacks
    log = tmp_path / "a.ptl"
    trun("--syscalls", "-q", "-k", "2", "-e", "getppid,stack", "-o", str(log), prog, "getppid", "2")
    js = [json.loads(l) for l in tdump("-f", "json", str(log)).out.splitlines()]
    gp = [e for e in js if e["event"] == "syscall:getppid"]
    st = [e for e in js if e["event"] == "posixtrace:stack"]
    assert len(gp) == 2 and len(st) == 2 and [s["args"]["frames"][0] for s in st] == \
        [e["addr"] for e in gp], (gp, st)
    p = trun("--syscalls", "-a", "-e", "syscall:write", "ls", str(tmp_path / "nonexistent"), rc=2)
    w = [l for l in p.err.splitlines() if "syscall:write(2, " in l]
    assert w and all(re.search(r" @\S+ .*in libc\.so\.6$", l) for l in w), w
    assert not [l for l in w if re.search(r" @(__GI_)?(__libc_)?write\b", l)], w


EARLY_LIB = r"""
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
static int fds[2], ready[2];
static pthread_t early;
static void *run(void *p)
{
    char c;
    (void)p;
    (void)!write(ready[1], "r", 1);
    if (read(fds[0], &c, 1) != 1) /* blocked here while the shim starts */
        return NULL;
    for (int i = 0; i < 3; i++)
        syscall(SYS_getppid);
    return NULL;
}
__attribute__((constructor)) static void start(void)
{
    sigset_t s, old;
    sigemptyset(&s);
#ifdef BLOCK_SIGSYS /* the thread is born with SIGSYS blocked */
    sigaddset(&s, SIGSYS);
#endif
    pthread_sigmask(SIG_BLOCK, &s, &old);
    char c;
    if (pipe(fds) == 0 && pipe(ready) == 0 && pthread_create(&early, NULL, run, NULL) == 0)
        (void)!read(ready[0], &c, 1); /* the thread runs before the shim's constructor */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}
long early_go(void)
{
    (void)!write(fds[1], "g", 1);
    pthread_join(early, NULL);
    return syscall(SYS_gettid);
}
"""
EARLY_MAIN = r"""
#include <stdio.h>
long early_go(void);
int main(void)
{
    printf("early main %ld\n", early_go());
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
def test_thread_before_shim(tmp_path):
    """A library whose constructor starts a thread (glibc runs it before the
    shim's: the thread exists, blocked in read, when the mode is turned on):
    the shim asks it with a SIGSYS of its own to arm itself; its read goes
    on (SA_RESTART) and its 3 getppid are recorded under its own thread id;
    the output is the untraced one and nothing is said on stderr."""
    (tmp_path / "early.c").write_text(EARLY_LIB)
    (tmp_path / "main.c").write_text(EARLY_MAIN)
    for cmd in (["gcc", "-shared", "-fPIC", "-o", "libearly.so", "early.c", "-lpthread"],
                ["gcc", "-o", "main", "main.c", "-L.", "-learly", "-Wl,-rpath," + str(tmp_path)]):
        subprocess.run(cmd, cwd=tmp_path, check=True, timeout=120)
    rc, want = plain(str(tmp_path / "main"))
    assert rc == 0 and want.startswith(b"early main ")
    js, p = trace_log(tmp_path / "t.ptl", "--syscalls", str(tmp_path / "main"), run=trun)
    assert p.out.startswith("early main ") and "posixtrace-preload" not in p.err, p.err
    main_tid = int(p.out.split()[2])
    gp = sc(js, "getppid")
    assert len(gp) == 3 and len({e["tid"] for e in gp}) == 1 and gp[0]["tid"] != main_tid, gp
    assert [e for e in sc(js, "read") + [e for e in js if e["event"] == "posixtrace:read"]
            if e["tid"] == gp[0]["tid"] and e["ret"] == 1], "the early thread's read went on"
    # the same thread blocking SIGSYS: not armed, and said so
    subprocess.run(["gcc", "-DBLOCK_SIGSYS", "-shared", "-fPIC", "-o", "libearly.so", "early.c",
                    "-lpthread"], cwd=tmp_path, check=True, timeout=120)
    js, p = trace_log(tmp_path / "t2.ptl", "--syscalls", str(tmp_path / "main"), run=trun)
    assert p.out.startswith("early main ")
    assert ("posixtrace-preload: 1 thread started before the shim could not be armed (SIGSYS "
            "blocked, or thread data shared): its system calls are not traced") in p.err, p.err
    assert sc(js, "getppid") == []


def test_posix_spawn_clone3(tmp_path):
    """posix_spawn and system() (libc's own spawn): clone3 with CLONE_VM |
    CLONE_VFORK on a stack of their own, made through the region's stub (the
    child must not start in the handler's frame): recorded when it returns
    in the parent, with the child's pid, no ENOSYS and no fallback to clone (as strace -f shows it: the same clone3
    calls); each child's image is traced (its getppid under its own pid);
    output as untraced. With posix_spawn's own event kept (the default), its
    clone3 is the wrapper's and the child is traced the same."""
    prog = program("t130_syscalls")
    rc, want = plain(prog, "spawn")
    js, out = traced(tmp_path, "-e", "syscall", prog, "spawn")
    assert rc == 0 and out == want.decode()
    me = next(e["pid"] for e in js if e["event"] == "syscall:clone3")
    c3 = sc(js, "clone3", me)
    assert len(c3) == 2 and all(e["returned"] and e["tid"] == me for e in c3), c3
    assert sc(js, "clone", me) == []
    kids = [e["ret"] for e in sc(js, "wait4", me) if e["ret"] > 0]
    assert kids == [e["ret"] for e in c3]  # recorded when it returns: the child's pid
    assert len(sc(js, "getppid", kids[0])) == 3 and len(sc(js, "getppid", kids[1])) >= 2
    js, out = traced(tmp_path, prog, "spawn")
    assert out == want.decode()
    sp = [e for e in js if e["event"] == "posixtrace:posix_spawn"]
    assert len(sp) == 1 and len(sc(js, "getppid", sp[0]["args"]["child"])) == 3, sp
    if shutil.which("strace") is None:
        return
    lines = _strace(tmp_path, "clone,clone3", prog, "spawn").splitlines()
    assert len([l for l in lines if "clone3(" in l]) == 2 and not [l for l in lines
                                                                 if "clone(" in l], lines
