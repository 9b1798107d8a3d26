"""Processes of the traced tree that were not traced are reported by
posixtrace-run (issue 13 items 4 and 8; doc/tools.md, "Processes not
traced"): one line "pid N (PROGRAM): not traced: REASON" each, and
", K not traced" on the summary line. A set-user-ID program never joins the
trace of a less privileged controller (libtrace/xproc/discover.c), and joins a
root controller's.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from harness import program
from toolscommon import sh, tool
from shimrun import ENV, shim_usable
from xproccommon import others_can_run

pytestmark = pytest.mark.skipif(shim_usable() is not None, reason=str(shim_usable()))

NOMEM = ("its new image could not map its stream: Cannot allocate memory (ENOMEM); a memory "
         "limit (ulimit -v)? a smaller --stream-size needs less")
GENERIC = ("its new image did not join the trace (it could not map its stream, e.g. under a "
           "memory limit, or it does not load the shim)")
STATIC = "statically linked: the shim cannot be preloaded"
SETID = ("set-user-ID or set-group-ID program: it does not join the trace of a less privileged "
         "controller")
NOT_TRACED = re.compile(r"^posixtrace-run: pid (\d+) \((.*)\): not traced: (.*)$", re.M)


def run(log, argv, rc, prefix=()):
    p = sh(list(prefix) + [tool("posixtrace-run"), "-o", log, "--"] + argv, env=ENV, rc=rc,
           timeout=120)
    return p, [(int(m.group(1)), m.group(2), m.group(3)) for m in NOT_TRACED.finditer(p.err)]


def dump(log):
    d = sh([tool("posixtrace-dump"), "-f", "json", log], timeout=60)
    return [json.loads(l) for l in d.out.splitlines() if l.startswith("{")]


def exec_pid(evs, path):
    pids = [e["pid"] for e in evs if e["event"] == "posixtrace:exec" and e["args"]["path"] == path]
    assert len(pids) == 1, pids
    return pids[0]


def test_memory_limit(tmp_path):
    """sh -c 'ulimit -v 9000; exec cat F': cat runs (its output is right)
    but cannot map its stream; the process that exec'd it is named, with
    the program and the reason it noted in the stream (ENOMEM:
    posixtrace_stream_refusals, <posixtrace/control.h>), and counted."""
    f = tmp_path / "f"
    f.write_text("content\n")
    log = tmp_path / "t.ptl"
    p, nt = run(log, ["/bin/sh", "-c", "ulimit -v 9000; exec /bin/cat %s" % f], 0)
    assert p.out == "content\n"
    pid = exec_pid(dump(log), "/bin/cat")
    assert nt == [(pid, "/bin/cat", NOMEM)], p.err
    assert re.search(r"^posixtrace-run: \d+ events in .*, 0 lost, 1 not traced$", p.err, re.M), p.err


def test_traced_tree_reports_nothing(tmp_path):
    """The same without the limit: nothing reported, the summary line as
    always."""
    f = tmp_path / "f"
    f.write_text("content\n")
    p, nt = run(tmp_path / "t.ptl", ["/bin/sh", "-c", "exec /bin/cat %s" % f], 0)
    assert nt == [] and re.search(r", 0 lost$", p.err, re.M), p.err


def static_program(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    out = tmp_path / "t109_static"
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "t109_static.c")
    r = subprocess.run([cc, "-static", "-o", str(out), src], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    if r.returncode != 0:
        pytest.skip("cannot link statically (libc.a missing?): %s" % r.stderr.decode()[-200:])
    return str(out)


def test_static_program(tmp_path):
    """A statically linked program run by dash: it runs (exit status 5), and
    is reported as such, by the pid that exec'd it."""
    prog = static_program(tmp_path)
    log = tmp_path / "t.ptl"
    p, nt = run(log, ["/bin/sh", "-c", "%s; exit $?" % prog], 5)
    assert p.out == "static\n"
    assert nt == [(exec_pid(dump(log), prog), prog, STATIC)], p.err


def test_static_program_launched(tmp_path):
    """posixtrace-run's own program, static: reported under the pid
    posixtrace-run started (the one its stream was created for)."""
    prog = static_program(tmp_path)
    log = tmp_path / "t.ptl"
    p, nt = run(log, [prog], 5)
    starts = [e["pid"] for e in dump(log) if e["event"] == "posix_trace_start"]
    assert len(starts) == 1 and nt == [(starts[0], prog, STATIC)], (p.err, starts)


SECRET = "TOPSECRET-%d" % os.getpid()


@pytest.fixture
def setuid_prog():
    """t108_setuid copied root-owned, mode 4755, into a directory uid 65534
    can reach and write its log into, with a root-only 0600 file."""
    if os.geteuid() != 0:
        pytest.skip("needs root: chown root, chmod 4755, and running as uid 65534")
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    why = others_can_run("t108_setuid")
    if why is not None:
        pytest.skip(why)
    d = tempfile.mkdtemp(prefix="pt-setuid-")
    try:
        os.chmod(d, 0o777)
        prog = os.path.join(d, "prog")
        shutil.copy(program("t108_setuid"), prog)
        os.chown(prog, 0, 0)
        os.chmod(prog, 0o4755)
        secret = os.path.join(d, "secret")
        with open(secret, "w") as f:
            f.write(SECRET + "\n")
        os.chmod(secret, 0o600)
        yield d, prog, secret
    finally:
        shutil.rmtree(d)


AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def test_setuid_not_joined(setuid_prog):
    """uid 65534 traces a set-user-ID root program that reads a root-only
    file and records it: the program runs normally (its output, exit status
    7), the content is nowhere in the log or the output, and posixtrace-run
    names the program as not traced, and why."""
    d, prog, secret = setuid_prog
    log = os.path.join(d, "l.ptl")
    p, nt = run(log, [prog, secret], 7, prefix=AS_NOBODY)
    assert p.out == "read=%d\n" % (len(SECRET) + 1)
    with open(log, "rb") as f:
        assert SECRET.encode() not in f.read()
    assert SECRET not in p.err
    evs = dump(log)
    assert not [e for e in evs if e["event"] == "t108/secret"], evs
    starts = [e["pid"] for e in evs if e["event"] == "posix_trace_start"]
    assert len(starts) == 1 and nt == [(starts[0], prog, SETID)], (p.err, starts)


def test_setuid_root_controller_joins(setuid_prog):
    """Root traces the same program run by uid 65534 (setpriv, then the
    set-user-ID exec: a secure image under a root controller): it joins and
    its event, the file's content, is in the log; nothing is reported."""
    d, prog, secret = setuid_prog
    log = os.path.join(d, "r.ptl")
    p, nt = run(log, AS_NOBODY + [prog, secret], 7)
    assert p.out == "read=%d\n" % (len(SECRET) + 1) and nt == [], p.err
    ev = [e for e in dump(log) if e["event"] == "t108/secret"]
    assert len(ev) == 1 and bytes.fromhex(ev[0]["data"]) == (SECRET + "\n").encode(), ev
