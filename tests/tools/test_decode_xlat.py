"""The decoding of calls by posixtrace-run (issue 14): values named from the
tables generated from the system headers (tools/xlat/*.in), zero-valued and
multi-bit flags, the function of a family actually called, and fields a
call does not take or a failed call did not fill shown as absent (text: left
out; JSON: null).  Programs: tests/tools/t201_decode_calls.c (the calls, under the
shim), tests/tools/t202_xlat.c (the tables against the headers and glibc's names).
Pages: open.3p.txt (O_CLOEXEC), pipe.3p.txt, dup.3p.txt (dup2), accept.3p.txt,
wait.3p.txt (WNOHANG, ECHILD), write.3p.txt (EBADF) in /work/shared/spec/.
"""
import json
import re

import pytest

from harness import program
from toolscommon import sh, tool
from shimrun import ENV, shim_usable

EVENTS = "open,pipe,dup,accept,wait,waitid,write"


def calls(*opts):
    """t201 traced with the shim: the event lines/objects of its own calls,
    from its open of /dev/null on."""
    p = sh([tool("posixtrace-run"), "--time=none", "-e", EVENTS] + list(opts) +
           [program("t201_decode_calls")], env=ENV)
    return p.err.splitlines()


def text_calls():
    ls = [l.split(" ", 1)[1] for l in calls() if re.match(r"^\d+/\d+ ", l)]
    start = [i for i, l in enumerate(ls) if '"/dev/null"' in l]
    assert start, ls
    # durations and pids vary
    return [re.sub(r"\b\d{3,}\b", "P", re.sub(r" <\d+\.\d{6}>$", "", l))
            for l in ls[start[0]:]]


@pytest.mark.skipif(shim_usable() is not None, reason=str(shim_usable()))
def test_text():
    """Exactly: O_RDONLY|O_CLOEXEC without O_LARGEFILE (0 on 64-bit); pipe
    without flags (with its inode), pipe2's O_CLOEXEC and 0 without an access mode; dup2 and dup3
    named, dup2 and dup without the arguments they do not take; an unknown flag
    bit in hex beside O_CLOEXEC; accept4's SOCK_CLOEXEC alone; waitpid's
    WNOHANG; a failed waitpid without a status; the failed write without a
    buffer (not read: absent, not "")."""
    assert text_calls() == [
        'posixtrace:open(flags=O_RDONLY|O_CLOEXEC, path="/dev/null") = 3',
        'posixtrace:pipe(rfd=4, wfd=5, ino=P) = 0',
        'posixtrace:pipe2(flags=O_CLOEXEC, rfd=6, wfd=7, ino=P) = 0',
        'posixtrace:pipe2(flags=0, rfd=8, wfd=9, ino=P) = 0',
        'posixtrace:dup2(oldfd=3, newfd=10) = 10',
        'posixtrace:dup3(oldfd=3, newfd=11, flags=O_CLOEXEC) = 11',
        'posixtrace:dup3(oldfd=3, newfd=12, flags=O_CLOEXEC|0x4) = -1 EINVAL (Invalid argument)',
        'posixtrace:dup(oldfd=3) = 12',
        'posixtrace:accept4(fd=13, flags=SOCK_CLOEXEC) = 15',
        'posixtrace:waitpid(pid=-1, options=WNOHANG) = -1 ECHILD (No child processes)',
        'posixtrace:waitid(idtype=1, id=P, options=WEXITED|WNOWAIT, si_pid=P, si_code=1, '
        'si_status=3) = 0',
        'posixtrace:waitpid(pid=P, options=WNOHANG, status=exit(3)) = P',
        'posixtrace:write(fd=99, count=1) = -1 EBADF (Bad file descriptor)',
    ], "\n".join(text_calls())


@pytest.mark.skipif(shim_usable() is not None, reason=str(shim_usable()))
def test_json():
    """The same calls in JSON: "event" is the event type, "fn" the function
    called; the same symbolic values; absent fields are null."""
    js = [json.loads(l) for l in calls("--format=json") if l.startswith("{")]
    js = [j for j in js if j["kind"] == "call"]
    start = [i for i, j in enumerate(js) if j["args"].get("path") == "/dev/null"]
    assert start, js
    got = [(j["event"], j["fn"], j["args"], j["ret"], j["errno_name"]) for j in js[start[0]:]]
    # each pipe's inode (issue 18, for -y's pipe:[INODE]): three pipes, three inodes
    inos = [g[2].pop("ino") for g in got if g[0] == "posixtrace:pipe"]
    assert len(set(inos)) == 3 and all(isinstance(i, int) and i > 0 for i in inos), inos
    pid = got[10][2]["id"]
    assert got == [
        ("posixtrace:open", "open", {"dirfd": None, "flags": "O_RDONLY|O_CLOEXEC", "mode": None,
                                     "path": "/dev/null"}, 3, None),
        ("posixtrace:pipe", "pipe", {"flags": None, "rfd": 4, "wfd": 5}, 0, None),
        ("posixtrace:pipe", "pipe2", {"flags": "O_CLOEXEC", "rfd": 6, "wfd": 7}, 0, None),
        ("posixtrace:pipe", "pipe2", {"flags": "0", "rfd": 8, "wfd": 9}, 0, None),
        ("posixtrace:dup", "dup2", {"oldfd": 3, "newfd": 10, "flags": None}, 10, None),
        ("posixtrace:dup", "dup3", {"oldfd": 3, "newfd": 11, "flags": "O_CLOEXEC"}, 11, None),
        ("posixtrace:dup", "dup3", {"oldfd": 3, "newfd": 12, "flags": "O_CLOEXEC|0x4"}, -1,
         "EINVAL"),
        ("posixtrace:dup", "dup", {"oldfd": 3, "newfd": None, "flags": None}, 12, None),
        ("posixtrace:accept", "accept4", {"fd": 13, "flags": "SOCK_CLOEXEC", "addr": None}, 15,
         None),
        ("posixtrace:wait", "waitpid", {"pid": -1, "options": "WNOHANG", "status": None}, -1,
         "ECHILD"),
        ("posixtrace:waitid", None, {"idtype": 1, "id": pid, "options": "WEXITED|WNOWAIT",
                                     "si_pid": pid, "si_code": 1, "si_status": 3}, 0, None),
        ("posixtrace:wait", "waitpid", {"pid": pid, "options": "WNOHANG", "status": "exit(3)"},
         pid, None),
        ("posixtrace:write", None, {"fd": 99, "count": 1, "buf": None}, -1, "EBADF"),
    ]


def test_tables_against_headers():
    """tests/tools/t202_xlat.c, compiled with the system headers: the generated
    tables name every errno as glibc's strerrorname_np does and signals 1..31
    as sigabbrev_np; O_LARGEFILE (0 on 64-bit) never shows; multi-bit O_SYNC
    and O_TMPFILE are named whole; 0 is "0"; unknown bits in hex."""
    p = sh([program("t202_xlat")])
    lines = p.out.splitlines()
    assert all(l.endswith(": ok") for l in lines) and len(lines) == 19, p.out
