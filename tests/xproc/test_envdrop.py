"""Children given an environment without what tracing needs stay traced
(issue 13 item 7; preload/README.md, "Children's environment"): `env -i`,
clearenv() then execv, an explicit envp through every exec variant and
posix_spawn[p], python3 subprocess with env={}, dash after `unset LD_PRELOAD`.

For each: posixtrace-run -o reports "0 lost"; every process of the tree
starts an image that is traced (its exec, then its process_start under the
same pid: test_real_trees.check_tree) with the calls expected of it; and the
program's environment is what it was given, in its order, plus the shim's
additions at the end: LD_PRELOAD naming the shim (appended to the program's
own LD_PRELOAD value), and the POSIXTRACE_* variables the tree was started
with that the new environment lacks.
"""
import json
import os
import re

import pytest

from harness import program
from shimrun import check_tree
from toolscommon import sh, tool
from shimcommon import shim_path
from shimrun import ENV, PY, shim_usable

pytestmark = pytest.mark.skipif(shim_usable() is not None, reason=str(shim_usable()))

KEEP = ("POSIXTRACE_STRSIZE", "POSIXTRACE_STACK", "POSIXTRACE_CLOCK")


def added(strsize=None):
    """The entries the shim puts back into an environment that has none of
    them: LD_PRELOAD, then those of KEEP the tree was started with (this
    test's environment, -s for POSIXTRACE_STRSIZE)."""
    env = dict(os.environ)
    if strsize is not None:
        env["POSIXTRACE_STRSIZE"] = str(strsize)
    return ["LD_PRELOAD=" + shim_path()] + ["%s=%s" % (k, env[k]) for k in KEEP if k in env]


def trace(tmp_path, argv, opts=(), cwd=None):
    """posixtrace-run -o LOG [opts] argv: (the shim's events, stdout)."""
    log = tmp_path / "t.ptl"
    p = sh([tool("posixtrace-run"), "-o", log] + list(opts) + ["--"] + argv, env=ENV,
           cwd=cwd, timeout=120)
    m = re.search(r"(\d+) events in .*, (\d+) lost", p.err)
    assert m and m.group(2) == "0", p.err
    d = sh([tool("posixtrace-dump"), "-f", "json", log], timeout=120)
    assert "damaged" not in d.err and "invalid" not in d.err, d.err
    evs = [json.loads(l) for l in d.out.splitlines() if l.startswith("{")]
    return [e for e in evs if e["event"].startswith("posixtrace:")], p.out


def of(evs, pid, name):
    return [e for e in evs if e["pid"] == pid and e["event"] == "posixtrace:" + name]


def image(evs, pid, exe):
    """pid started exe, traced: its process_start names it."""
    starts = [e["args"]["exe"] for e in of(evs, pid, "process_start")]
    assert exe in starts, (pid, exe, starts)


def env_lines(out):
    return [l for l in out.splitlines() if not re.match(r"^(pid|spawned)=", l)]


def child_pid(out):
    m = re.search(r"^(?:pid|spawned)=(\d+)", out, re.M)
    assert m, out
    return int(m.group(1))


AB = ["A=1", "B=2"]
MODES = {
    "clearenv_execv": AB, "clearenv_execl": AB, "clearenv_execlp": AB, "clearenv_execvp": AB,
    "execve": AB, "execve_null": [], "execle": AB, "execvpe": AB, "fexecve": AB,
    "execveat": AB, "vfork_execve": AB, "spawn": AB, "spawnp": AB, "spawn_null": [],
}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_exec_variants(tmp_path, mode):
    """t107_envdrop MODE runs /usr/bin/env with {A=1, B=2} (or nothing) as
    its whole environment: env is traced (exec or posix_spawn naming it, then
    its process_start) and prints exactly A=1, B=2 and the additions."""
    evs, out = trace(tmp_path, [program("t107_envdrop"), mode])
    assert env_lines(out) == MODES[mode] + added(), out
    pid = child_pid(out)
    tree = check_tree(evs)
    image(evs, pid, "/usr/bin/env")
    assert os.path.basename(tree[evs[0]["pid"]][0]) == "t107_envdrop"
    if mode.startswith("spawn"):
        sp = [e for e in evs if e["event"] == "posixtrace:posix_spawn"]
        assert [e["args"]["child"] for e in sp] == [pid] and sp[0]["ret"] == 0, sp
        return
    ex = of(evs, pid, "exec")
    assert len(ex) == 1, ex
    a = ex[0]["args"]
    assert a["argv"] == ["env"], a
    if mode == "fexecve":
        assert a["fd"] >= 3 and not a["path"], a
    elif mode == "execveat":
        assert a["fd"] >= 3 and a["path"] == "env", a
    else:
        assert a["fd"] is None and a["path"] in ("/usr/bin/env", "env"), a
    assert a["search"] == (1 if mode in ("clearenv_execlp", "clearenv_execvp", "execvpe") else 0)


@pytest.mark.parametrize("mode,want", [
    ("own_preload", ["A=1", "LD_PRELOAD=libm.so.6:" + shim_path(), "B=2"] + added(64)[1:]),
    ("empty_preload", ["A=1", "LD_PRELOAD=" + shim_path(), "B=2"] + added(64)[1:]),
    ("own_strsize", ["A=1", "POSIXTRACE_STRSIZE=7", "B=2"]
     + [x for x in added(64) if not x.startswith("POSIXTRACE_STRSIZE=")]),
])
def test_program_choices(tmp_path, mode, want):
    """The program's own LD_PRELOAD keeps its place and its libraries, the
    shim appended; an empty one gets the shim; a POSIXTRACE_* variable the
    program set is kept (its value, not the tree's)."""
    evs, out = trace(tmp_path, [program("t107_envdrop"), mode], opts=["-s", "64"])
    assert env_lines(out) == want, out
    image(evs, child_pid(out), "/usr/bin/env")


def test_unset_preload_keeps_the_rest(tmp_path):
    """unsetenv("LD_PRELOAD") then execv: the rest of the environment is
    passed in its order, LD_PRELOAD at the end."""
    evs, out = trace(tmp_path, [program("t107_envdrop"), "unset_execv"])
    got = env_lines(out)
    assert got[-1] == "LD_PRELOAD=" + shim_path(), got
    assert got[-3:-1] == AB, got
    assert len([l for l in got if l.startswith("LD_PRELOAD=")]) == 1, got
    image(evs, child_pid(out), "/usr/bin/env")


def test_env_i_sh_cat_ls(tmp_path):
    """env -i /bin/sh -c '...': env, the shell (the same pid), cat and ls are
    all traced; cat's open of the file is recorded in cat's process (ls opens
    its directory through opendir, libc-internal, not seen), and the shell
    and its children see only what env gave plus the additions (in dash's
    order: dash builds its children's environment from its variable table)."""
    f = tmp_path / "f"
    f.write_text("hello\n")
    evs, out = trace(tmp_path, ["env", "-i", "X=y", "/bin/sh", "-c",
                                "cat %s; ls /usr >/dev/null; /usr/bin/env" % f], cwd=str(tmp_path))
    lines = out.splitlines()
    assert lines[0] == "hello", out
    assert sorted(lines[1:]) == sorted(["X=y", "PWD=" + os.path.realpath(tmp_path)] + added()), out
    tree = check_tree(evs)
    root = evs[0]["pid"]
    assert [os.path.basename(x) for x in tree[root]] == ["env", "dash"], tree
    by = {os.path.basename(x): pid for pid, xs in tree.items() for x in xs if pid != root}
    assert sorted(by) == ["cat", "env", "ls"], tree
    opens = [e for e in of(evs, by["cat"], "open") if e["args"]["path"] == str(f)]
    assert len(opens) == 1 and opens[0]["ret"] >= 0, opens
    assert of(evs, by["ls"], "exit"), "ls's exit not recorded"


def test_dash_unset_preload(tmp_path):
    """dash, told to `unset LD_PRELOAD`, builds its children's envp without
    it: the shim puts it back (execve's explicit environment)."""
    evs, out = trace(tmp_path, ["env", "-i", "/bin/dash", "-c", "unset LD_PRELOAD; /usr/bin/env"],
                     cwd=str(tmp_path))
    assert sorted(out.splitlines()) == sorted(["PWD=" + os.path.realpath(tmp_path)] + added()), out
    tree = check_tree(evs)
    assert sorted(os.path.basename(x) for xs in tree.values() for x in xs) == \
        ["dash", "env", "env"], tree


def test_env_i_keeps_strsize(tmp_path):
    """posixtrace-run -s 64: the variable the tree was started with comes
    back after env -i, so the children record 64 bytes of buffers too."""
    evs, out = trace(tmp_path, ["env", "-i", "Z=1", "/usr/bin/env"], opts=["-s", "64"])
    assert out.splitlines() == ["Z=1"] + added(64), out
    check_tree(evs)


def test_python_env_empty(tmp_path):
    """python3 subprocess.run(..., env={}) and env={'A': '1'}: the children
    are traced (cat's open recorded) and env sees A=1 plus the additions."""
    f = tmp_path / "f"
    f.write_text("x\n")
    script = ("import subprocess, sys\n"
              "subprocess.run(['/bin/cat', %r], env={}, check=True)\n"
              "r = subprocess.run(['/usr/bin/env'], env={'A': '1'}, capture_output=True, check=True)\n"
              "sys.stdout.write(r.stdout.decode())\n" % str(f))
    evs, out = trace(tmp_path, [PY, "-c", script])
    assert out.splitlines() == ["x", "A=1"] + added(), out
    tree = check_tree(evs)
    by = {os.path.basename(x): pid for pid, xs in tree.items() for x in xs}
    assert "cat" in by and "env" in by, tree
    opens = [e for e in of(evs, by["cat"], "open") if e["args"]["path"] == str(f)]
    assert len(opens) == 1, opens
