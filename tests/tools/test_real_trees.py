"""Whole process trees of real programs, traced by posixtrace-run into a log
(issue 12: every process and every event, attributed right): a dash script
running external commands, python3 subprocess with close_fds both ways, make
running gcc on a one-file program, git init/add/commit.

For each run: posixtrace-run reports "0 lost"; posixtrace-dump reads the log
back with no damage; every event carries the pid and thread of the
process that made the call (posix_pid is "the process identifier of the traced
process that generates the trace event", trace.h.0p.txt and
posix_trace_getnext_event(3p)); every process but the first was created by an event of its parent that
names it (fork or vfork returning its pid, posix_spawn's child); every exec
is followed by the new image's process_start under the same pid; and every
program the run is known to start was traced.
"""
import json
import os
import re
import shutil

import pytest

from toolscommon import sh, tool
from shimrun import ENV, PY, check_tree, shim_usable

pytestmark = pytest.mark.skipif(shim_usable() is not None, reason=str(shim_usable()))

def trace(tmp_path, argv, cwd=None, extra_env=None):
    log = tmp_path / "t.ptl"
    env = dict(ENV)
    env.update(extra_env or {})
    p = sh([tool("posixtrace-run"), "-o", log, "--"] + argv, env=env, cwd=cwd, timeout=240)
    m = re.search(r"(\d+) events in .*, (\d+) lost", p.err)
    assert m and m.group(2) == "0", p.err
    d = sh([tool("posixtrace-dump"), "-f", "json", log], timeout=120)
    assert "damaged" not in d.err and "invalid" not in d.err, d.err
    evs = [json.loads(l) for l in d.out.splitlines() if l.startswith("{")]
    return [e for e in evs if e["event"].startswith("posixtrace:")]


def exes(tree):
    return sorted(os.path.basename(x) for xs in tree.values() for x in xs)


def test_dash_script(tmp_path):
    """dash runs external commands in sequence, in a pipeline, in a
    subshell and in the background."""
    script = "ls / > /dev/null; echo a | tr a b | cat > out; (cat out); sleep 0 & wait; uname >/dev/null"
    evs = trace(tmp_path, ["/bin/dash", "-c", script], cwd=str(tmp_path))
    assert (tmp_path / "out").read_text() == "b\n"
    names = exes(check_tree(evs))
    for prog in ("ls", "tr", "cat", "sleep", "uname"):
        assert prog in names, names


@pytest.mark.parametrize("close_fds", [True, False])
def test_python_subprocess(tmp_path, close_fds):
    """python3 subprocess.run of two programs, capturing output."""
    script = ("import subprocess\n"
              "for a in (['/bin/echo', 'x'], ['/bin/ls', '/']):\n"
              "    subprocess.run(a, capture_output=True, close_fds=%s, check=True)\n" % close_fds)
    names = exes(check_tree(trace(tmp_path, [PY, "-c", script])))
    assert "echo" in names and "ls" in names, names


def test_make_gcc(tmp_path):
    """make runs gcc, which runs cc1, as, collect2 and ld: each traced."""
    (tmp_path / "hello.c").write_text('#include <stdio.h>\nint main(void){puts("hi");return 0;}\n')
    (tmp_path / "Makefile").write_text("hello: hello.c\n\tgcc -o hello hello.c\n")
    env = {k: "" for k in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    evs = trace(tmp_path, ["make", "-s", "-C", str(tmp_path)], extra_env=env)
    assert os.access(tmp_path / "hello", os.X_OK)
    names = exes(check_tree(evs))
    for prog in ("make", "gcc", "cc1", "as", "collect2", "ld"):
        # Debian names them x86_64-linux-gnu-gcc-12, x86_64-linux-gnu-ld.bfd ...
        assert any(prog in re.split(r"[-.]", n) for n in names), (prog, names)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_init_add_commit(tmp_path):
    """git init, add and commit in one dash script."""
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    (tmp_path / "f").write_text("x\n")
    evs = trace(tmp_path, ["/bin/dash", "-c", "git init -q . && git add f && git commit -qm m"],
                cwd=str(tmp_path), extra_env=env)
    names = exes(check_tree(evs))
    assert names.count("git") >= 3, names
