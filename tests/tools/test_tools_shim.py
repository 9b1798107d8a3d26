"""posixtrace-run and posixtrace-dump over unmodified programs, with the
interposition shim preloaded (issue 6 end to end): shell pipelines, a
forking server, python3, make.  Skipped when the shim is not built, or is
built with sanitizers (an ASan shim cannot be preloaded into programs built
without ASan).

Pages: posix_trace_create.3p.txt (a stream for the child), the Inherit
option (posix_trace_attr_setinherited.3p.txt: children followed).  Formats:
doc/tools.md, doc/json-schema.md; events: doc/events.md.
"""
import json
import re
import signal

import pytest

from shimrun import PY, shim_usable, trace_log, trun
from toolscommon import check_chrome, check_summary_counts, events, json_lines, sh, tdump

pytestmark = pytest.mark.skipif(shim_usable() is not None, reason=str(shim_usable()))


def test_shell_pipeline(tmp_path):
    """sh -c 'a | b > file': the shell, both sides of the pipe and the exec'd
    tr are traced with their own pids; the output file is what it is without
    tracing; the shim's calls are decoded (write's buffer, open's path)."""
    out = tmp_path / "out"
    cmd = "echo hello | tr a-z A-Z > %s" % out
    p = trun("sh", "-c", cmd)
    assert out.read_text() == "HELLO\n"
    evs = events(p.err)
    names = [e[0] for e in evs]
    assert "posixtrace:process_start" in names
    assert len({e[3] for e in evs}) >= 3, p.err  # sh, and the two sides of the pipe
    assert any(e[0] == "posixtrace:write" and 'buf="hello\\n"' in e[1] for e in evs), p.err
    assert any(e[0].startswith("posixtrace:exec") and '"/usr/bin/tr"' in e[1] for e in evs), p.err


def test_python3_errno():
    """python3: a failed open shows = -1 ENOENT (No such file or directory)
    with its duration; the exit status is the program's."""
    p = trun(PY, "-c", "import sys\ntry: open('/nonexistent/x')\nexcept OSError: sys.exit(5)",
             rc=5)
    lines = [l for l in p.err.splitlines() if "posixtrace:open(" in l and "/nonexistent/x" in l]
    assert lines, p.err
    assert re.search(r"\) = -1 ENOENT \(No such file or directory\) <\d+\.\d{6}>$", lines[0]), lines[0]


def test_make(tmp_path):
    """make runs a recipe through the shell: every process is followed."""
    (tmp_path / "Makefile").write_text("all:\n\tcat Makefile > copy\n")
    p = trun("make", "-s", "-C", str(tmp_path))
    assert (tmp_path / "copy").read_text() == (tmp_path / "Makefile").read_text()
    evs = events(p.err)
    execs = [e for e in evs if e[0].startswith("posixtrace:exec")]
    assert any('"cat"' in e[1] for e in execs), p.err


SERVER = r"""
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
port = s.getsockname()[1]
for i in range(3):
    if os.fork() == 0:           # a client
        c = socket.create_connection(("127.0.0.1", port))
        c.sendall(b"ping %d" % i)
        c.recv(16)
        os._exit(0)
for i in range(3):               # the server: a child per connection
    conn, _ = s.accept()
    if os.fork() == 0:
        conn.sendall(conn.recv(16).upper())
        os._exit(0)
    conn.close()
for i in range(6):
    os.wait()
print("served")
"""


def test_forking_server(tmp_path):
    """A forking server: the server, its clients and its per-connection
    children are traced (7 pids); a -o log read back with posixtrace-dump
    gives the same in JSON (parsed, keys per doc/json-schema.md) and Chrome
    trace form, and -c counts match the events."""
    log = tmp_path / "srv.ptl"
    script = tmp_path / "srv.py"
    script.write_text(SERVER)
    js, p = trace_log(log, PY, str(script))
    assert p.out == "served\n"
    assert len({e["pid"] for e in js}) == 7
    calls = [e for e in js if e["kind"] == "call"]
    assert calls and all(isinstance(e["args"], dict) for e in calls)
    doc = json.loads(tdump("-f", "chrome", str(log)).out)
    check_chrome(doc)
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert len(slices) == sum(1 for e in calls if e["duration_ns"] is not None)
    out = tdump("-c", str(log)).out
    check_summary_counts(out, js)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_shell_kills_itself(tmp_path, sig):
    """sh -c 'kill -TERM $$' (and -KILL): the shell dies inside kill(2), so its
    kill event is recorded before the call (returned false, ret null: doc/events.md)
    and is in the log with the shell's own pid and the signal; posixtrace-run
    dies of the same signal, and the log is complete (0 lost)."""
    log = tmp_path / "k.ptl"
    name = signal.Signals(sig).name
    p = trun("-o", str(log), "sh", "-c", "kill -%s $$" % name[3:], rc=-int(sig))
    m = re.search(r"^posixtrace-run: (\d+) events in .*, 0 lost$", p.err, re.M)
    assert m, p.err
    js = json_lines(tdump("-f", "json", str(log)).out)
    assert len(js) == int(m.group(1))
    sh_pid = [e["pid"] for e in js if e["event"] == "posixtrace:process_start"]
    assert len(sh_pid) == 1, js
    kills = [e for e in js if e["event"] == "posixtrace:kill"]
    assert [(e["pid"], e["tid"], e["args"], e["returned"], e["ret"], e["duration_ns"])
            for e in kills] == [(sh_pid[0], sh_pid[0], {"pid": sh_pid[0], "sig": name},
                                 False, None, None)], kills
    mine = [e for e in js if e["pid"] == sh_pid[0] and e["kind"] == "call"]
    # nothing after the fatal call but the end posixtrace-run recorded for it
    assert mine[-2] is kills[0] and mine[-1]["event"] == "posixtrace:process_end", mine[-2:]
    assert mine[-1]["args"] == {"pid": sh_pid[0], "status": name}
    assert kills[0]["addr"] is not None


def test_output_identical(tmp_path):
    """cat of a binary file: the same bytes on a pipe and in a file, traced
    or not."""
    src = tmp_path / "src"
    src.write_bytes(bytes(range(256)) * 1000)
    direct = sh(["cat", str(src)]).stdout
    traced = trun("-q", "cat", str(src)).stdout
    assert traced == direct == src.read_bytes()
    dst = tmp_path / "dst"
    with open(dst, "wb") as fp:
        trun("-q", "cat", str(src), stdout=fp)
    assert dst.read_bytes() == direct


def test_filter_classes():
    """-e file: only file calls; -e '!file': none of them."""
    p = trun("-e", "file", "cat", "/etc/hostname")
    names = {e[0] for e in events(p.err)}
    assert names and all(re.match(r"posixtrace:(open|close|read|write|fopen|fclose|fdopen|"
                                  r"copy_file_range|sendfile|lseek|dup|pipe)", n) or
                         n.startswith("posix_trace_") for n in names), names
    p = trun("-e", "!file", "cat", "/etc/hostname")
    names = {e[0] for e in events(p.err)}
    assert "posixtrace:open" not in names and "posixtrace:process_start" in names
