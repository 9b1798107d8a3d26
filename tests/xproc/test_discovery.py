"""A traced process tree stays traced whatever its processes do to their
descriptors (issue 12, item 4; doc/design.md, "Finding the inherited
streams"): a child that closes every descriptor before exec (Python's
close_fds, closefrom, close_range, a loop of close), dup2s over them, or does
so with raw system calls, and a daemon whose parent is gone, has its exec'd
image traced under its own pid, with the Trace Inherit option's meaning
(posix_trace_attr_getinherited(3p): "the trace stream shall be inherited"
by child processes).

Each scenario runs under posixtrace-run -o LOG, then reads LOG back with
posixtrace-dump -f json: no damage, and the exec'd program's process_start,
open of its input file and write of its contents, all with the pid of the
process that exec'd it.
"""
import json
import os
import re
import shutil
import subprocess

import pytest

from harness import program
from toolscommon import TIMEOUT, sh, tool
from shimcommon import lib_path
from shimrun import ENV, PY, shim_usable

pytestmark = pytest.mark.skipif(shim_usable() is not None, reason=str(shim_usable()))


def trace(tmp_path, argv):
    """posixtrace-run -o LOG -- argv; returns (its stdout, the events)."""
    log = tmp_path / "t.ptl"
    p = sh([tool("posixtrace-run"), "-o", log, "--"] + argv, env=ENV)
    assert re.search(r"\d+ events in .*, 0 lost", p.err), p.err
    d = sh([tool("posixtrace-dump"), "-f", "json", log])
    assert "damaged" not in d.err, d.err
    return p.out, [json.loads(l) for l in d.out.splitlines() if l.startswith("{")]


def of(evs, pid, name):
    return [e for e in evs if e["pid"] == pid and e["event"] == "posixtrace:" + name]


def check_cat(evs, pid, path, text):
    """The exec'd /bin/cat PATH ran traced as `pid`."""
    starts = of(evs, pid, "process_start")
    assert [e["args"]["exe"] for e in starts][-1:] == ["/usr/bin/cat"], starts
    evs = evs[evs.index(starts[-1]):]  # cat's own, not the image before it
    opens = [e for e in of(evs, pid, "open") if e["args"].get("path") == str(path)]
    assert len(opens) == 1 and opens[0]["ret"] >= 0 and opens[0]["tid"] == pid, opens
    writes = [e for e in of(evs, pid, "write") if e["args"]["fd"] == 1]
    assert writes and writes[0]["ret"] == len(text), writes


MODES = ["close_range", "closefrom", "close_loop", "dup2_all", "raw", "raw_dup2", "raw_exec", "daemon",
         "raw_daemon", "raw_daemon_dup2", "raw_daemon_spawn", "raw_daemon_system"]


@pytest.mark.parametrize("mode", MODES)
def test_child_closing_descriptors(tmp_path, mode):
    """t106_closefds MODE: the child closes (or replaces) every descriptor
    from 3 up, then execs cat. Through libc, the shim keeps the inbox open
    (inbox_kept=1: close_range/closefrom leave it out, close and dup2 move it
    first); through raw system calls it is gone (inbox_kept=0): the exec'd
    image finds the streams through its parent, or, where no ancestor holds
    them (raw_daemon*: the parent is gone, the process reparented), in the
    new descriptor the library gives the inbox before exec, posix_spawn and
    system (posixtrace_reserved_fd_repair). raw_exec execs by the system
    call too, past that repair: only its parent's descriptors lead the new
    image to the streams. A daemon (its parent gone,
    reparented) relies on the kept descriptor."""
    f = tmp_path / "in.txt"
    f.write_text("discovery %s\n" % mode)
    out, evs = trace(tmp_path, [program("t106_closefds"), mode, "/bin/cat", f])
    assert ("discovery %s\n" % mode) in out, out
    m = re.search(r"^child=(\d+)$", out, re.M)
    assert m, out
    child = int(m.group(1))
    kept = "inbox_kept=%d" % (0 if mode.startswith("raw") else 1)
    assert kept in out.splitlines(), out
    check_cat(evs, child, f, "discovery %s\n" % mode)


@pytest.mark.parametrize("close_fds", [True, False])
def test_python_subprocess_close_fds(tmp_path, close_fds):
    """python3's subprocess.run with close_fds (its default) and without:
    the child is traced either way, under its own pid (the one Popen gives
    back, printed by the script)."""
    f = tmp_path / "in.txt"
    f.write_text("from python\n")
    script = ("import subprocess, sys\n"
              "p = subprocess.Popen(['/bin/cat', sys.argv[1]], close_fds=%s)\n"
              "print('child=%%d' %% p.pid, flush=True)\n"
              "sys.exit(p.wait())\n" % close_fds)
    out, evs = trace(tmp_path, [PY, "-c", script, f])
    child = int(re.search(r"child=(\d+)", out).group(1))
    check_cat(evs, child, f, "from python\n")


def test_shell_closing_inbox_number(tmp_path):
    """bash closes descriptors 1000-1003 (where the inbox lives) and runs a
    command: the command is still traced."""
    f = tmp_path / "in.txt"
    f.write_text("from bash\n")
    out, evs = trace(tmp_path, ["/bin/bash", "-c",
                                "exec 1000>&- 1001>&- 1002>&- 1003>&-; /bin/cat %s; echo child=$!" % f])
    cats = [e["pid"] for e in evs if e["event"] == "posixtrace:process_start"
            and e["args"]["exe"] == "/usr/bin/cat"]
    assert len(cats) == 1, cats
    check_cat(evs, cats[0], f, "from bash\n")


def test_inbox_above_its_range(tmp_path):
    """bash puts files on descriptors 1000-1015 (the shim moves its inbox out
    of their way each time: preload/fdkeep.c), so its inbox ends above them;
    then t106_closefds raw_exec runs in its place and its child closes every
    descriptor and execs by raw system calls: the exec'd cat finds the
    streams among its parent's descriptors above the range (discover.c,
    scan_fds)."""
    f = tmp_path / "in.txt"
    f.write_text("above the range\n")
    opens = " ".join("%d</dev/null" % n for n in range(1000, 1016))
    out, evs = trace(tmp_path, ["/bin/bash", "-c", "exec %s; exec %s raw_exec /bin/cat %s"
                                % (opens, program("t106_closefds"), f)])
    assert "above the range\n" in out, out
    assert "inbox_kept=0" in out.splitlines(), out
    child = int(re.search(r"^child=(\d+)$", out, re.M).group(1))
    check_cat(evs, child, f, "above the range\n")


def test_untraced_walk_reads_few_descriptors(tmp_path):
    """Untraced, the library looks for inherited streams among its
    ancestors' descriptors at start-up; an ancestor holding 300 descriptors
    (below 1000, where the library never puts an inbox unless its
    descriptor limit is that low) has only its 16 highest looked at, one
    readlink each (doc/design.md, "Finding the inherited streams"), not
    all 300. strace -f counts them; the program still runs as untraced."""
    if shutil.which("strace") is None:
        pytest.skip("no strace")
    out = tmp_path / "st.txt"
    script = ("import os, subprocess, sys\n"
              "fds = [os.open('/dev/null', os.O_RDONLY) for _ in range(300)]\n"
              "print('parent=%%d top=%%d' %% (os.getpid(), max(fds)), flush=True)\n"
              "r = subprocess.run(['strace', '-f', '-qq', '-e', 'trace=readlink', '-o', sys.argv[1],"
              " '/bin/sh', '-c', 'LD_PRELOAD=%s /bin/echo untraced'], timeout=60)\n"
              "sys.exit(r.returncode)\n" % lib_path())
    p = subprocess.run([PY, "-c", script, str(out)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "untraced" in p.stdout, p.stdout
    m = re.search(r"parent=(\d+) top=(\d+)", p.stdout)
    parent, top = int(m.group(1)), int(m.group(2))
    looks = [l for l in out.read_text().splitlines() if "/proc/%d/fd/" % parent in l]
    assert 1 <= len(looks) <= 16, looks
    nums = [int(re.search(r"/fd/(\d+)", l).group(1)) for l in looks]
    # its highest ones (the spawn's own pipe may sit just above the 300)
    assert all(top - 20 < n < top + 5 for n in nums), (top, nums)
