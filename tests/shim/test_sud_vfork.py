"""Children that share their parent's memory until they exec, under
posixtrace-run --syscalls (issue 15, "the hard cases ... vfork children"):
vfork(), clone with CLONE_VM | CLONE_VFORK, glibc's posix_spawn (clone3
with CLONE_VM | CLONE_VFORK: posix_spawn, system(), popen(), make's
recipes) and Python's subprocess (vfork). The shim arms the child right
after the call returns in it (preload/README.md, "System calls: Syscall
User Dispatch"): its system calls between the clone and its exec are
recorded under its own pid and thread id, with the same names and results
as strace -f lists for it; the parent's events keep its pid and thread id,
and the call's result there is the child's pid (doc/events.md, "System
calls"). Outputs and exit statuses are those of the untraced run.
"""
import os
import re
import shutil
import subprocess

import pytest

from harness import program
from shimcommon import sanitized, shim_path
from shimrun import run_env, trace_log
from toolscommon import sh, tool

pytestmark = [
    pytest.mark.skipif(not os.path.exists(shim_path()), reason="the shim is not built"),
    pytest.mark.skipif(os.uname().machine != "x86_64", reason="the mode is x86-64 only"),
]
PY = "/usr/bin/python3"
T132 = "t132_vforks"
need_strace = pytest.mark.skipif(shutil.which("strace") is None, reason="no strace")


def trun(*args, rc=0):
    return sh([tool("posixtrace-run")] + list(args), env=run_env(), rc=rc)


def plain(*argv, cwd=None):
    p = subprocess.run(list(argv), capture_output=True, timeout=60, cwd=cwd)
    return p.returncode, p.stdout.decode()


def traced(tmp_path, *argv, rc=0):
    js, p = trace_log(tmp_path / "t.ptl", "--syscalls", *argv, run=lambda *a: trun(*a, rc=rc))
    return [e for e in js if e["event"] != "posixtrace:module"], p.out


def calls(js, pid):
    """pid's call events, in the order of their start."""
    return [e for e in js if e["pid"] == pid and e.get("kind") == "call"]


def before_exec(js, pid):
    """pid's calls before its new image starts: up to its process_start, or
    to an execve recorded before it was made and not again as failed."""
    mine = [e for e in sorted(js, key=lambda e: e["ts_ns"] - (e.get("duration_ns") or 0))
            if e["pid"] == pid and e.get("kind") == "call" or
            e["pid"] == pid and e["event"] == "posixtrace:process_start"]
    out = []
    for i, e in enumerate(mine):
        if e["event"] == "posixtrace:process_start":
            break
        out.append(e)
        nxt = mine[i + 1] if i + 1 < len(mine) else None
        if e["event"] == "syscall:execve" and not e["returned"] and \
                (nxt is None or nxt["event"] != "syscall:execve"):
            break
    return out


def strace_children(tmp_path, *argv, cwd=None):
    """strace -f -qq of argv: {pid: [(name, result)]} for every process but
    the first, up to its first successful execve; result None for calls that
    do not return (exit_group, a successful execve), else the number, or the
    error name for -1 (`-1 ENOENT`). rt_sigaction of SIGSYS is left out: a
    child that resets the actions of the signals blocked in it (posix_spawn)
    does not see SIGSYS blocked under the shim, which never lets it be
    (doc/events.md, "System calls")."""
    out = tmp_path / "st"
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0") if sanitized() else None
    st = subprocess.run(["strace", "-f", "-qq", "-o", str(out)] + list(argv), capture_output=True,
                        timeout=60, cwd=cwd, env=env)
    assert st.returncode == 0, st.stderr
    first, lists, pending, done = None, {}, {}, set()
    for l in out.read_text().splitlines():
        m = re.match(r"^(\d+)\s+(.*)$", l)
        if not m:
            continue
        pid, rest = int(m.group(1)), m.group(2)
        first = pid if first is None else first
        if pid == first or pid in done or rest.startswith("+++") or rest.startswith("---") or \
                rest.startswith("rt_sigaction(SIGSYS,"):
            continue
        r = re.match(r"^<\.\.\. (\w+) resumed>.*\)\s+=\s+(.*)$", rest)
        if r:
            name, res = r.group(1), r.group(2)
            i = pending.pop(pid)
        else:
            r = re.match(r"^(\w+)\(", rest)
            if not r:
                continue
            name = r.group(1)
            lists.setdefault(pid, []).append((name, None))
            i = len(lists[pid]) - 1
            if rest.endswith("<unfinished ...>"):
                pending[pid] = i
                continue
            res = re.search(r"\)\s+=\s+(.*)$", rest).group(1)
        v = res.split()[0]
        val = None if v == "?" or (name == "execve" and v == "0") else \
            ("-1 " + res.split()[1] if v == "-1" else int(v, 0))
        lists[pid][i] = (name, val)
        if name == "execve" and v == "0":
            done.add(pid)
    return lists


def mine(events):
    """Our system-call events as strace_children's pairs (a call recorded
    before it is made and not returned: None)."""
    res = []
    for e in events:
        if not e["event"].startswith("syscall:"):
            continue
        v = None if not e["returned"] else ("-1 " + e["errno_name"] if e["ret"] == -1 else e["ret"])
        res.append((e["event"][8:], v))
    return res


def subsequence(want, got):
    """want appears in got in order (got may have more)."""
    it = iter(got)
    return all(any(w == g for g in it) for w in want)


def check_child(js, parent, child):
    """The child's events carry its pid and thread id; the parent's its own."""
    assert all(e["tid"] == child for e in calls(js, child))
    assert not [e for e in calls(js, parent) if e["tid"] != parent]
    assert not [e for e in js if e.get("tid") == child and e["pid"] != child]


@need_strace
def test_posix_spawn_file_actions(tmp_path):
    """posix_spawn with file actions (open FILE on 3, dup2 3 onto 0, close 3)
    of /bin/cat: the child's calls from the clone3 to its execve (signal
    resets, the actions' openat/dup2/close, the execve of /bin/cat with its
    argv) are recorded under its own pid and thread id, with the names and
    results strace -f lists for it; clone3 returns the child's pid in the
    parent. With posix_spawn's own event kept (the default), the spawn is
    that event (its child = the child's pid), the clone3 is not recorded
    again, and the child's calls are there all the same."""
    f = tmp_path / "in.txt"
    f.write_text("file actions\n")
    prog = program(T132)
    rc, want = plain(prog, "spawnfa", str(f))
    assert rc == 0 and want == "file actions\nspawnfa exit 0\n"
    js, out = traced(tmp_path, "-e", "syscall", prog, "spawnfa", str(f))
    assert out == want
    parent = next(e["pid"] for e in js if e["event"] == "syscall:clone3")
    c3 = [e for e in calls(js, parent) if e["event"] == "syscall:clone3"]
    assert len(c3) == 1 and c3[0]["returned"] and c3[0]["tid"] == parent, c3
    child = c3[0]["ret"]
    check_child(js, parent, child)
    kid = before_exec(js, child)
    names = [e["event"] for e in kid]
    assert "syscall:dup2" in names and "syscall:close" in names, names
    op = [e for e in kid if e["event"] == "syscall:openat" and e["args"]["path"] == str(f)]
    assert len(op) == 1 and op[0]["ret"] == 3, op
    ex = [e for e in kid if e["event"] == "syscall:execve"]
    assert len(ex) == 1 and not ex[0]["returned"] and ex[0]["args"]["path"] == "/bin/cat" and \
        ex[0]["args"]["argv"] == ["cat"], ex
    (st,) = strace_children(tmp_path, prog, "spawnfa", str(f)).values()
    assert st[-1] == ("execve", None) and ("dup2", 0) in st, st
    assert subsequence(st, mine(kid)), (st, mine(kid))
    # the default set: posix_spawn's own event, the child's calls
    js, out = traced(tmp_path, prog, "spawnfa", str(f))
    assert out == want
    sp = [e for e in js if e["event"] == "posixtrace:posix_spawn"]
    assert len(sp) == 1 and sp[0]["ret"] == 0, sp
    parent, child = sp[0]["pid"], sp[0]["args"]["child"]
    assert [e for e in calls(js, parent) if e["event"] in ("syscall:clone3", "syscall:clone")] == []
    check_child(js, parent, child)
    assert subsequence(st, mine(before_exec(js, child))), (st, mine(before_exec(js, child)))


def test_posix_spawn_fails_in_child(tmp_path):
    """posix_spawn whose file action fails in the child (the file does not
    exist): the child's openat fails with ENOENT and it exits (exit_group
    127), both recorded under its own pid; posix_spawn returns ENOENT in
    the parent, whose clone3 returned the child's pid."""
    prog = program(T132)
    missing = str(tmp_path / "missing")
    rc, want = plain(prog, "spawnfa", missing)
    assert rc == 0 and want == "spawnfa No such file or directory\n"
    js, out = traced(tmp_path, "-e", "syscall", prog, "spawnfa", missing)
    assert out == want
    c3 = [e for e in js if e["event"] == "syscall:clone3"]
    assert len(c3) == 1 and c3[0]["ret"] > 0, c3
    parent, child = c3[0]["pid"], c3[0]["ret"]
    check_child(js, parent, child)
    kid = calls(js, child)
    op = [e for e in kid if e["event"] == "syscall:openat" and e["args"]["path"] == missing]
    assert [(e["ret"], e["errno_name"]) for e in op] == [(-1, "ENOENT")], op
    assert [e["args"]["status"] for e in kid if e["event"] == "syscall:exit_group"] == [127]
    assert not [e for e in kid if e["event"] == "syscall:execve"]


@need_strace
@pytest.mark.parametrize("mode", ["vforkexec", "vforkfail"])
def test_vfork_execve(tmp_path, mode):
    """vfork() then execve: of /bin/echo (succeeds) or of a path that does
    not exist (fails with ENOENT, the child _exit(7)s). With -e syscall the
    parent's vfork is recorded with its result (the child's pid), under the
    parent's pid and thread id; the child's execve with its path and argv
    (recorded before it is made; a failed one again with its error) and its
    exit_group(7), under the child's own pid and thread id, as strace -f
    lists them. With the default set the shim's vfork, exec and _exit events
    (not again as system calls) carry the same identities."""
    prog = program(T132)
    rc, want = plain(prog, mode)
    assert rc == 0 and re.match(r"^(vforked\n)?%s \d+ exit (0|7)\n$" % mode, want), want
    path = "/bin/echo" if mode == "vforkexec" else "/nonexistent/echo"
    js, out = traced(tmp_path, "-e", "syscall", prog, mode)
    assert re.sub(r" \d+ exit", " exit", out) == re.sub(r" \d+ exit", " exit", want)
    vf = [e for e in js if e["event"] == "syscall:vfork"]
    assert len(vf) == 1 and vf[0]["returned"], vf
    parent, child = vf[0]["pid"], vf[0]["ret"]
    assert vf[0]["tid"] == parent and ("%s %d exit" % (mode, child)) in out
    check_child(js, parent, child)
    kid = before_exec(js, child)
    ex = [e for e in kid if e["event"] == "syscall:execve"]
    assert ex and all(e["args"]["path"] == path and e["args"]["argv"] == ["echo", "vforked"]
                      for e in ex), ex
    if mode == "vforkfail":
        assert [(e["returned"], e["ret"], e["errno_name"]) for e in ex] == \
            [(False, None, None), (True, -1, "ENOENT")], ex
        assert [e["args"]["status"] for e in kid if e["event"] == "syscall:exit_group"] == [7]
    (st,) = strace_children(tmp_path, prog, mode).values()
    assert ("execve", None if mode == "vforkexec" else "-1 ENOENT") in st, st
    assert subsequence(st, mine(kid)), (st, mine(kid))
    # nothing of the shim's own (its page probes before the exec) either; in
    # a sanitizer build the runtime's own calls at _exit depend on its options
    assert sanitized() or \
        sorted(set(mine(kid)) - set(st)) == [("execve", None)] * (mode == "vforkfail"), \
        (st, mine(kid))
    # the default set: the shim's own vfork, exec, _exit events
    js, out = traced(tmp_path, prog, mode)
    vf = [e for e in js if e["event"] == "posixtrace:vfork"]
    assert len(vf) == 1 and vf[0]["ret"] > 0 and vf[0]["tid"] == vf[0]["pid"], vf
    parent, child = vf[0]["pid"], vf[0]["ret"]
    assert not [e for e in js if e["event"] == "syscall:vfork"]
    check_child(js, parent, child)
    kid = before_exec(js, child)
    ex = [e for e in kid if e["event"] == "posixtrace:exec"]
    assert ex and ex[0]["args"]["path"] == path and ex[0]["args"]["pid"] == child, ex
    assert not [e for e in kid if e["event"] == "syscall:execve"]  # not recorded twice
    if mode == "vforkfail":
        assert [e["args"]["status"] for e in kid if e["event"] == "posixtrace:exit"] == [7], kid


@need_strace
def test_python_subprocess(tmp_path):
    """Python 3's subprocess.run with close_fds, cwd and a new session (its
    child is a vfork child): the child's calls between the vfork and its
    execve (signal resets, chdir, setsid, the close_fds closes, the execve of
    /bin/echo) appear under its own pid and thread id with the names and
    results strace -f lists; the parent's vfork returns the child's pid;
    output as untraced."""
    d = tmp_path / "wd"
    d.mkdir()
    code = ("import subprocess,sys;p=subprocess.run(['/bin/echo','sub'],close_fds=True,cwd=%r,"
            "start_new_session=True);sys.stdout.flush();print('rc',p.returncode)" % str(d))
    rc, want = plain(PY, "-c", code)
    assert rc == 0 and want == "sub\nrc 0\n"
    js, out = traced(tmp_path, "-e", "syscall", PY, "-c", code)
    assert out == want
    vf = [e for e in js if e["event"] in ("syscall:vfork", "syscall:clone", "syscall:clone3")
          and e["returned"] and e["ret"] > 0]
    assert len(vf) == 1, vf
    parent, child = vf[0]["pid"], vf[0]["ret"]
    check_child(js, parent, child)
    kid = before_exec(js, child)
    names = [e["event"][8:] for e in kid]
    for n in ("chdir", "setsid", "execve"):
        assert n in names, (n, names)
    ex = [e for e in kid if e["event"] == "syscall:execve"]
    assert ex[-1]["args"]["path"] == "/bin/echo" and ex[-1]["args"]["argv"] == ["/bin/echo", "sub"]
    (st,) = strace_children(tmp_path, PY, "-c", code).values()
    assert ("setsid", child) not in st and ("chdir", 0) in st, st
    st = [(n, child if n == "setsid" else v) for n, v in st]  # setsid returns the pid
    assert subsequence(st, mine(kid)), (st, mine(kid))


def test_small_stack(tmp_path):
    """clone(CLONE_VM | CLONE_VFORK) on a stack of 4 KiB with a guard page
    below: untraced, the child's getppid calls fit; traced, the handler runs
    on an alternate stack of the shim's own, so the child still exits 5, and
    its 3 getppid and its exit_group(5) are recorded under its pid."""
    prog = program(T132)
    rc, want = plain(prog, "vforkstack", "4096")
    assert rc == 0 and want == "vforkstack exit 5 sig 0\n"
    js, out = traced(tmp_path, prog, "vforkstack", "4096")
    assert out == want
    cl = [e for e in js if e["event"] == "syscall:clone"]
    assert len(cl) == 1 and cl[0]["ret"] > 0, cl
    child = cl[0]["ret"]
    assert [e["ret"] for e in calls(js, child) if e["event"] == "syscall:getppid"] == \
        [cl[0]["pid"]] * 3
    assert [e["args"]["status"] for e in calls(js, child) if e["event"] == "syscall:exit_group"] \
        == [5]


# make as a user runs it, not with the flags of the make that runs the tests
MAKE = ["env", "-u", "MAKEFLAGS", "-u", "MFLAGS", "-u", "MAKELEVEL", "make", "-s"]
MAKEFILE = """all: a b
\t@echo done
a:
\t@echo a > a.txt
b: a
\t@cat a.txt
"""


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_sh_system_make(tmp_path):
    """sh -c with a pipeline, system() (t130's spawn mode) and make, whose
    recipes are posix_spawn children: outputs, files and statuses as
    untraced; every spawned child's execve is recorded under its own pid,
    before its image starts. The signal masks of a vfork child's image and
    of its parent after it are the untraced ones (the shim blocks signals
    between the call and each side's trap, then puts the mask back)."""
    (tmp_path / "Makefile").write_text(MAKEFILE)
    rc, want = plain(*MAKE, "-C", str(tmp_path))
    assert rc == 0 and want == "a\ndone\n"
    (tmp_path / "a.txt").unlink()
    js, out = traced(tmp_path, *MAKE, "-C", str(tmp_path))
    assert out == want and (tmp_path / "a.txt").read_text() == "a\n"
    spawns = [e for e in js if e["event"] == "posixtrace:posix_spawn"]
    assert len(spawns) == 3 and all(e["ret"] == 0 for e in spawns), spawns
    for sp in spawns:
        kid = before_exec(js, sp["args"]["child"])
        ex = [e for e in kid if e["event"] == "syscall:execve"]
        assert len(ex) == 1 and ex[0]["tid"] == sp["args"]["child"], kid
    # the masks: a vfork child's and its parent's after it, as untraced
    code = ("import subprocess,signal;signal.pthread_sigmask(signal.SIG_BLOCK,[signal.SIGUSR1]);"
            "subprocess.run(['grep','^Sig[BI]','/proc/self/status']);"
            "print([l for l in open('/proc/self/status') if l.startswith('SigBlk')])")
    rc, want = plain(PY, "-c", code)
    js, out = traced(tmp_path, PY, "-c", code)
    assert rc == 0 and out == want and want.count("0000000000000200") == 2, (out, want)
    rc, want = plain("sh", "-c", "echo one | tr a-z A-Z; exit 3")
    js, out = traced(tmp_path, "sh", "-c", "echo one | tr a-z A-Z; exit 3", rc=3)
    assert rc == 3 and out == want == "ONE\n"
    rc, want = plain(program("t130_syscalls"), "spawn")
    js, out = traced(tmp_path, program("t130_syscalls"), "spawn")
    assert rc == 0 and out == want
    c3 = [e for e in js if e["event"] == "syscall:clone3"]  # system()'s
    assert len(c3) == 1 and c3[0]["ret"] > 0, c3
    ex = [e for e in before_exec(js, c3[0]["ret"]) if e["event"] == "syscall:execve"]
    assert len(ex) == 1 and ex[0]["args"]["path"] == "/bin/sh", ex
