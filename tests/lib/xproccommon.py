"""Parsing the output of the cross-process test programs (tests/xproc/t05N_*.c, whose
collector is in tests/common/xproc.h).  No tests here.

A collector prints, with a prefix naming the stream (S, S1, C1, L, ...):
  "<pfx> sys name=posix_trace_start pid=T n=1"       per (system event, pid)
  "<pfx> user role=T thr=0 name=xp/ev id=257 pid=T rawpid=123 tid=... n=1000
   seq=0..999 gaps=0 disorder=0 bad=0 namebad=0"       per (role, thr, name, id, pid)
  "<pfx> lost=N foreign=N end"
and, when it fails, "<pfx> collect TIMEOUT ndone=N total=N" or "<pfx> timedgetnext
rc=E" (and the helpers of tests/common/xproc.h print "xp_get ...", "TIMEOUT ...", ...): Col
fails the test on any of those lines, whatever their prefix.  The other lines of the
prefix (the program's own, e.g. "S create(sleep) rc=0") are in Col.other.
role/thr/name come from the event's data (what the recording process says it
is); id and pid from the posix_trace_event_info; bad counts events whose
posix_pid, posix_thread_id or data differ from what the recorder wrote, namebad
those whose posix_trace_eventid_get_name differs from the recorder's name.
"""
import os
import re
import stat

from harness import builddir, kv, program


# Lines printed by the collector or the helpers of tests/common/xproc.h when something
# went wrong: never expected in any output.
ERROR_LINES = re.compile(
    r"^(\S+ collect TIMEOUT|\S+ timedgetnext rc=|collector: too many keys|xp_get|xp_put failed"
    r"|TIMEOUT |waitpid |pipe2: )", re.M)


def check_no_errors(out):
    """No error line of the collector or of the xproc.h helpers in out."""
    bad = [m.group(0) for m in ERROR_LINES.finditer(out)]
    assert bad == [], "collector/helper errors %s in:\n%s" % (bad, out)


class Col:
    """The collector's lines of one prefix."""

    def __init__(self, out, pfx):
        check_no_errors(out)
        self.pfx = pfx
        self.users = []
        self.sys = {}
        self.lost = None
        self.foreign = None
        self.other = []
        for l in out.splitlines():
            w = l.split()
            if not w or w[0] != pfx:
                continue
            if len(w) > 1 and w[1] == "user":
                self.users.append(kv(l))
            elif len(w) > 1 and w[1] == "sys":
                d = kv(l)
                self.sys[(d["name"], d["pid"])] = int(d["n"])
            elif l.endswith(" end") and "lost=" in l:
                d = kv(l)
                self.lost = int(d["lost"])
                self.foreign = int(d["foreign"])
            else:
                self.other.append(l)
        assert self.lost is not None, "no '%s ... end' line in:\n%s" % (pfx, out)

    def keys(self):
        """{(role, thr, name): dict} (asserts each is unique)"""
        d = {}
        for u in self.users:
            k = (u["role"], int(u["thr"]), u["name"])
            assert k not in d, "events of %s under two ids or pids:\n%s\n%s" % (k, d[k], u)
            d[k] = u
        return d

    def key(self, role, thr, name):
        ks = [u for u in self.users
              if u["role"] == role and int(u["thr"]) == thr and u["name"] == name]
        assert len(ks) == 1, "%s %s thr=%d %s: %d lines\n%s" % (
            self.pfx, role, thr, name, len(ks), "\n".join(map(str, self.users)))
        return ks[0]

    def roles(self):
        return sorted(set(u["role"] for u in self.users))


def check_run(u, n, first=0, last=None):
    """Every event of u intact: n events, sequence first..last without gaps,
    reordering, damaged data or wrong names."""
    if last is None:
        last = first + n - 1
    assert int(u["n"]) == n and u["seq"] == "%d..%d" % (first, last), u
    assert u["gaps"] == "0" and u["disorder"] == "0", u
    assert u["bad"] == "0", u
    assert u["namebad"] == "0", u


def check_intact(u):
    """No damaged data, wrong names or reordering (gaps allowed)."""
    assert u["disorder"] == "0" and u["bad"] == "0" and u["namebad"] == "0", u


def start_stop(sys_pid):
    """The system events of a stream started once and stopped once."""
    return {("posix_trace_start", sys_pid): 1, ("posix_trace_stop", sys_pid): 1}


def others_can_run(prog):
    """None if a process of another uid can exec the test program prog and load the
    library beside it (every directory searchable, the files readable by
    others), else the reason why not."""
    path = os.path.realpath(program(prog))
    libdir = os.path.join(builddir(), "libtrace", ".libs")
    for p in (path, libdir):
        d = p
        while True:
            st = os.stat(d)
            need = stat.S_IXOTH if stat.S_ISDIR(st.st_mode) else stat.S_IROTH
            if not st.st_mode & need:
                return "%s is not accessible to other users" % d
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
    return None
