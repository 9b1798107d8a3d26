"""The LD_PRELOAD shim: processes, threads, signals, stacks, sockets
(tests/shim/t102_shim_proc.c, tests/shim/t101_shim_fortify.c).

The test process traces itself with a POSIX_TRACE_INHERITED stream, so forked
children record into it with their own pid (posix_trace_attr_getinherited.3p.txt);
exec'd images and posix_spawn children record through the preloaded shim
(process_start). Events and payloads: doc/events.md.
"""
import errno as _errno_mod
import os
import subprocess

import pytest

from harness import program, run as _run
from shimcommon import run_shim, of, calls, hexs, shim_env, sanitized

WEXITED = 4


def trimmed(evs):
    return [e for e in calls(evs)]


def children(other):
    return [o.split("=")[1] for o in other if o.startswith("child=")]


def test_fork_and_exit(tmp_path):
    """fork is recorded in the parent (ret = child pid) and in the child (ret
    0, its own pid and thread); the child's _exit(3) (flag NORETURN = 1, how
    1) and the parent's waitpid (status 3 << 8)."""
    evs, other = run_shim("t102_shim_proc", "fork")
    child = children(other)[0]
    ev = trimmed(evs)
    assert [(e["name"], e["epid"] == child) for e in ev] == [
        ("fork", False), ("fork", True), ("exit", True), ("wait", False)]
    assert ev[0]["h_ret"] == child and ev[1]["h_ret"] == "0"
    assert ev[1]["ktid"] == child
    x = ev[2]
    assert (x["status"], x["how"], x["pid"], x["h_flags"]) == ("3", "1", child, "1")
    w = ev[3]
    assert (w["pid"], w["status"], w["h_ret"]) == (child, str(3 << 8), child)
    assert all(e["caller"] == "sc_fork" for e in ev)


def test_vfork(tmp_path):
    """vfork is recorded in the parent when it returns there (ret = the
    child's pid, no flag), so after the child's events; the vfork child,
    which shares its parent's memory, records its _exit as itself: its own
    pid (posix_pid, posix_trace_getnext_event.3p.txt) and thread id."""
    evs, other = run_shim("t102_shim_proc", "vfork")
    child = children(other)[0]
    ev = trimmed(evs)
    assert [(e["name"], e["epid"] == child) for e in ev] == [
        ("exit", True), ("vfork", False), ("wait", False)]
    assert (ev[0]["pid"], ev[0]["ktid"], ev[0]["status"]) == (child, child, "5")
    assert ev[0]["caller"] == "sc_vfork"
    assert (ev[1]["h_flags"], ev[1]["h_ret"], ev[1]["h_err"]) == ("0", child, "0")
    assert ev[1]["caller"] == "sc_vfork" and ev[1]["ktid"] != child
    assert ev[2]["status"] == str(5 << 8)


def test_main_return():
    """Returning from main is an exit event with main's return value (how 2)."""
    evs, other = run_shim("t102_shim_proc", "mainret")
    child = children(other)[0]
    x = [e for e in of(evs, "exit") if e["pid"] == child]
    assert len(x) == 1 and (x[0]["status"], x[0]["how"]) == ("9", "2")
    assert x[0]["caller"] == "main"


def test_spawn(tmp_path):
    """posix_spawn and posix_spawnp: path, argv, the child's pid, and the
    error number (returned, not in errno); each child image records its
    process_start (exe, argv, ppid) and its exit."""
    evs, other = run_shim("t102_shim_proc", "spawn")
    c1, c2 = children(other)
    sp = of(evs, "posix_spawn")
    assert [(e["child"], e["search"], e["path"], e["argv"], e["h_ret"]) for e in sp] == [
        (c1, "0", "/bin/true", "true|x", "0"), (c2, "1", "false", "false", "0"),
        ("-1", "0", "/nonexistent/x", "true|x", "2")]
    assert sp[2]["h_err"] == "errno2"
    starts = {e["pid"]: e for e in of(evs, "process_start")}
    assert starts[c1]["exe"] == os.path.realpath("/bin/true") and starts[c1]["argv"] == "true|x"
    assert starts[c2]["exe"] == os.path.realpath("/bin/false")
    me = sp[0]["epid"]
    assert starts[c1]["ppid"] == me and starts[c2]["ppid"] == me
    exits = {e["pid"]: e["status"] for e in of(evs, "exit")}
    assert exits[c1] == "0" and exits[c2] == "1"


def test_exec(tmp_path):
    """The exec family: recorded before the call (NORETURN) with path and argv
    (execl's variadic arguments); a failed exec adds an event with -1 and
    errno; the new image records process_start with the same pid."""
    evs, other = run_shim("t102_shim_proc", "exec")
    child = children(other)[0]
    ex = of(evs, "exec")
    assert [(e["path"], e["argv"], e["search"], e["h_ret"], e["h_err"], e["h_flags"])
            for e in ex] == [
        ("/nonexistent/x", "x|a", "0", "0", "0", "1"),
        ("/nonexistent/x", "x|a", "0", "-1", "errno2", "0"),
        ("true", "true|b", "1", "0", "0", "1")]
    assert all(e["pid"] == child and e["caller"] == "sc_exec" for e in ex)
    st = of(evs, "process_start")
    assert len(st) == 1 and st[0]["pid"] == child and st[0]["argv"] == "true|b"


def test_env_keeps_preload(tmp_path):
    """An explicit environment without LD_PRELOAD gets the shim's LD_PRELOAD
    appended (children stay traced), unless POSIXTRACE_KEEP_PRELOAD=0."""
    # env(1) is not instrumented: in a sanitizer build ASan's runtime goes first
    pre = " ".join(p for p in shim_env(uninstrumented=True)["LD_PRELOAD"].split()
                   if not p.endswith("libposixtrace.so.0"))
    evs, other = run_shim("t102_shim_proc", "env", env={"LD_PRELOAD": pre})
    assert "A=1" in other
    assert [o for o in other if o.startswith("LD_PRELOAD=")] == ["LD_PRELOAD=" + pre]
    assert len(of(evs, "process_start")) == 1
    evs, other = run_shim("t102_shim_proc", "env",
                          env={"LD_PRELOAD": pre, "POSIXTRACE_KEEP_PRELOAD": "0"})
    assert "A=1" in other and not any(o.startswith("LD_PRELOAD=") for o in other)
    assert of(evs, "process_start") == []


def test_waits_and_kill(tmp_path):
    """waitid (siginfo fields), kill (signal, ESRCH), wait4 of a killed child
    (status = SIGTERM), exit(6) in a child (how 0), wait3, waitpid WNOHANG
    failing with ECHILD."""
    evs, other = run_shim("t102_shim_proc", "waits")
    c1, c2, c3 = children(other)
    wi = of(evs, "waitid")[0]
    assert (wi["idtype"], wi["id"], wi["options"], wi["si_pid"], wi["si_code"],
            wi["si_status"]) == ("1", c1, "0x4", c1, "1", "4")
    k = of(evs, "kill")
    assert [(e["pid"], e["sig"], e["h_ret"], e["h_err"]) for e in k] == [
        (c2, "15", "0", "0"), (c3, "0", "-1", "ESRCH")]
    w = [e for e in of(evs, "wait") if e["self"] == "1"]
    assert [(e["pid"], e["status"], e["h_ret"], e["options"]) for e in w] == [
        (c2, "15", c2, "0x0"), ("-1", str(6 << 8), c3, "0x0"), ("-1", "0", "-1", "0x1")]
    assert w[2]["h_err"] == "errno10"
    x = [e for e in of(evs, "exit") if e["pid"] == c3]
    assert (x[0]["status"], x[0]["how"]) == ("6", "0")


def test_self_signals():
    """A signal the caller sends to itself may end it inside the call: kill of
    its own pid, of 0 or -(its group), killpg of 0 or its group, and raise are
    recorded before the call (NORETURN = 1, ret 0, duration 0), and when the
    call returns (the signal was handled, or the call failed: signal 999,
    EINVAL) a second event has the result; kill(own pid, 0) sends nothing and
    is recorded once, after.  raise(SIGTERM) and kill(0, SIGKILL)
    end their process inside the call: the event is in the stream, and the
    parent's wait status shows the signal (kill(2): "If pid is 0, sig shall be
    sent to all processes ... whose process group ID is equal to the process
    group ID of the sender"; raise(3p)).  A kill of another process stays one
    event after the call (test_waits_and_kill)."""
    evs, other = run_shim("t102_shim_proc", "selfkill")
    c1, c2 = children(other)
    assert [o for o in other if o.startswith("status=")] == ["status=15", "status=9"]
    sig = [e for e in evs if e["name"] in ("kill", "raise")]
    def of_pid(c):  # each child's events in its own order
        return [(e["name"], e.get("pid"), e["sig"], e["h_flags"], e["h_ret"], e["h_err"])
                for e in sig if e["epid"] == c]
    assert of_pid(c1) == [
        ("raise", None, "10", "1", "0", "0"), ("raise", None, "10", "0", "0", "0"),
        ("kill", c1, "10", "1", "0", "0"), ("kill", c1, "10", "0", "0", "0"),
        ("kill", "0", "10", "1", "0", "0"), ("kill", "0", "10", "0", "0", "0"),
        ("kill", "-" + c1, "10", "1", "0", "0"), ("kill", "-" + c1, "10", "0", "0", "0"),
        ("kill", "-" + c1, "10", "1", "0", "0"), ("kill", "-" + c1, "10", "0", "0", "0"),
        ("kill", c1, "0", "0", "0", "0"),
        ("kill", c1, "999", "1", "0", "0"), ("kill", c1, "999", "0", "-1", "EINVAL"),
        ("raise", None, "15", "1", "0", "0")], sig
    assert of_pid(c2) == [("kill", "0", "9", "1", "0", "0")], sig
    assert len(sig) == 15
    assert all(e["caller"] == "sc_selfkill" and e["ktid"] == e["epid"] for e in sig)
    assert all(e["h_dur"] == "0" for e in sig if e["h_flags"] == "1")
    # nothing of either child after its fatal call
    for c in (c1, c2):
        mine = [e for e in calls(evs) if e["epid"] == c]
        assert mine[-1]["h_flags"] == "1" and mine[-1]["name"] in ("kill", "raise"), mine


def test_threads(tmp_path):
    """pthread_create (thread, start routine, arg) in the creator;
    thread_start in the new thread (its own kernel tid, creator's tid);
    pthread_exit explicit or by returning (retval); pthread_join (retval)."""
    evs, other = run_shim("t102_shim_proc", "threads")
    ev = trimmed(evs)
    # An event is stamped when its call returns: the new thread's thread_start
    # may come before the creator's pthread_create, so each thread's events are
    # checked in its own order (the second thread starts after the first join).
    main = next(e["ktid"] for e in ev if e["name"] == "pthread_create")
    mine = [e for e in ev if e["ktid"] == main]
    assert [e["name"] for e in mine] == [
        "pthread_create", "pthread_join", "pthread_create", "pthread_join"], ev
    first = ev[:ev.index(mine[1]) + 1]
    t1 = [e for e in first if e["ktid"] != main]
    t2 = [e for e in ev[ev.index(mine[1]) + 1:] if e["ktid"] != main]
    assert [e["name"] for e in t1] == ["thread_start", "write", "pthread_exit"], ev
    assert [e["name"] for e in t2] == ["thread_start", "pthread_exit"], ev
    assert len(ev) == 9
    c, j = mine[0], mine[1]
    s, w, x = t1
    assert c["caller"] == "sc_threads" and c["arg"] == "0x1234" and c["h_ret"] == "0"
    assert s["ktid"] != main and s["creator_tid"] == main and s["caller"] == "thr_ret"
    assert s["start"] == c["start"] and s["arg"] == "0x1234"
    assert w["ktid"] == s["ktid"] and w["caller"] == "thr_ret"
    assert x["retval"] == "0x55" and x["ktid"] == s["ktid"] and x["h_flags"] == "1"
    assert j["retval"] == "0x55" and j["thread"] == c["thread"] and j["ktid"] == main
    assert t2[1]["retval"] == "0x66" and t2[1]["caller"] == "thr_exit"
    assert t2[0]["ktid"] == t2[1]["ktid"] != s["ktid"] and t2[0]["creator_tid"] == main
    assert mine[3]["retval"] == "0x66"
    assert len({e["epid"] for e in ev}) == 1


def test_signal_during_call(tmp_path):
    """A signal handler runs while its thread is blocked in an intercepted
    read; the handler's write is recorded (caller on_usr1, same thread), then
    the read (which returns the byte the handler wrote)."""
    evs, other = run_shim("t102_shim_proc", "signal")
    ev = [e for e in trimmed(evs) if e["name"] in ("read", "write")]
    assert [(e["name"], e["caller"], e["buf"]) for e in ev] == [
        ("write", "on_usr1", hexs("s")), ("read", "sc_signal", hexs("s"))]
    assert ev[0]["ktid"] == ev[1]["ktid"]


def test_stack(tmp_path):
    """posixtrace_shim_set_stack(3) (or POSIXTRACE_STACK=3): each call is
    followed by a stack event of 3 return addresses naming the callers,
    innermost first, frame 0 = the event's prog address."""
    for env in (None, {"POSIXTRACE_STACK": "3"}):
        evs, _ = run_shim("t102_shim_proc", "stack", env=env)
        ev = trimmed(evs)
        assert [e["name"] for e in ev] == ["close", "stack"]
        assert ev[0]["caller"] == "st_inner" and ev[1]["caller"] == "st_inner"
        assert ev[1]["frames"] == "st_inner<st_outer<sc_stack"
        assert ev[1]["ktid"] == ev[0]["ktid"]


def sockaddr_in(port):
    return "0200" + "%04x" % port + "7f000001" + "00" * 8


def test_net(tmp_path):
    """socket, bind, listen, connect, accept/accept4 (peer address), send,
    recv, shutdown, sendto/recvfrom, sendmsg/recvmsg: socket addresses as the
    struct sockaddr bytes (AF_INET: family, port, 127.0.0.1; AF_UNIX
    abstract name), data's first bytes."""
    evs, other = run_shim("t102_shim_proc", "net")
    port = int([o for o in other if o.startswith("port=")][0].split("=")[1])
    cport = int([o for o in other if o.startswith("cliport=")][0].split("=")[1])
    ev = trimmed(evs)
    names = [e["name"] for e in ev]
    assert names == ["socket", "bind", "listen", "socket", "connect", "accept", "send",
                     "recv", "shutdown", "socket", "connect", "accept", "socket", "socket",
                     "bind", "send", "recv", "sendmsg", "recvmsg"] + ["close"] * 7
    assert all(e["caller"] == "sc_net" and e["h_err"] == "0" for e in ev)
    assert (ev[0]["domain"], ev[0]["type"], ev[0]["protocol"]) == ("2", "1", "0")
    assert ev[1]["addr"] == sockaddr_in(0)
    assert ev[2]["backlog"] == "4"
    assert ev[3]["type"] == str(1 | 0o2000000)        # SOCK_STREAM|SOCK_CLOEXEC
    assert ev[4]["addr"] == sockaddr_in(port)
    # accept returns a new descriptor: its number depends on what the test
    # runner left open, so only its range is checked
    assert ev[5]["addr"] == sockaddr_in(cport) and int(ev[5]["h_ret"]) >= 3
    assert (ev[6]["buf"], ev[6]["count"], ev[6]["addr"]) == (hexs("ping"), "4", "-")
    assert (ev[7]["buf"], ev[7]["count"], ev[7]["h_ret"]) == (hexs("ping"), "16", "4")
    assert ev[8]["how"] == "1"
    assert ev[11]["flags"] == "2048" and ev[11]["addr"] == "-"   # accept4 SOCK_NONBLOCK
    unix_abstract = "0100" + "00" + hexs("ptshim")
    assert ev[14]["addr"] == unix_abstract
    assert (ev[15]["addr"], ev[15]["buf"]) == (unix_abstract, hexs("dgram"))
    assert ev[16]["buf"] == hexs("dgram")
    assert (ev[17]["addr"], ev[17]["iovlen"], ev[17]["buf"]) == (unix_abstract, "2",
                                                                 hexs("msg!"))
    assert ev[18]["buf"] == hexs("msg!")
    assert all(e["h_flags"] == "0" for e in ev)


def test_fortified_entry_points(tmp_path):
    """A -D_FORTIFY_SOURCE=2 build calls __open_2, __openat_2, __read_chk,
    __pread_chk, __recv_chk, __recvfrom_chk: each recorded as its plain
    function's event, nothing escapes (its socketpair too)."""
    out = subprocess.run(["nm", "-D", "--undefined-only", program("t101_shim_fortify")],
                         stdout=subprocess.PIPE, universal_newlines=True).stdout
    imported = {l.split()[-1].split("@")[0] for l in out.splitlines()}
    for f in ("__open_2", "__openat_2", "__read_chk", "__pread_chk", "__recv_chk",
              "__recvfrom_chk"):
        assert f in imported, f
    d = str(tmp_path)
    evs, _ = run_shim("t101_shim_fortify", d)
    ev = trimmed(evs)
    assert [(e["name"], e["h_ret"]) for e in ev] == [
        ("open", "4"), ("write", "9"), ("close", "0"), ("open", "4"), ("read", "3"),
        ("pread", "3"), ("close", "0"), ("open", "4"), ("close", "0"), ("socketpair", "0"),
        ("write", "3"), ("recv", "3"), ("write", "3"), ("recv", "3"), ("close", "0"),
        ("close", "0")]
    assert all(e["caller"] == "sc_fortify" for e in ev)
    assert ev[0]["flags"] == str(0o1101) and ev[0]["mode"] == "0600"
    assert ev[4]["buf"] == hexs("for") and ev[5]["buf"] == hexs("ifi")
    assert ev[7]["dirfd"] == "-100"
    assert ev[11]["buf"] == hexs("abc") and ev[13]["buf"] == hexs("def")


# ---- invalid pointers (preload/README.md, "How a wrapper works") ----
# Each efault_* scenario prints "r <what> <result> <errno>" per call: the
# same lines are expected with and without the shim, and the program must not
# crash; the events carry ret, err and, for a pointer the shim did not read,
# flag NODATA (8) with an empty field (doc/events.md).
EFAULT, EINVAL, EBADF, ENOENT, ECHILD = (_errno_mod.EFAULT, _errno_mod.EINVAL,
                                          _errno_mod.EBADF, _errno_mod.ENOENT,
                                          _errno_mod.ECHILD)


def _results(lines_):
    return [l for l in lines_ if l.startswith("r ")]


def _efault_run(scenario):
    plain = _results(_run("t102_shim_proc", scenario).splitlines())
    evs, other = run_shim("t102_shim_proc", scenario)
    assert _results(other) == plain
    return plain, evs, other


def _err(e, n):
    """h_err as tests/shim/decode.c prints it (tc_errname: a name or errnoN)."""
    return e["h_err"] in (_errno_mod.errorcode[n], "errno%d" % n)


def test_efault_exec(tmp_path):
    """execve.2: EFAULT when path, argv or envp (or a string in them) points
    outside the accessible address space. The exec event is recorded before
    the call: the shim reads path and argv over probed pages only, so a bad
    one is an empty field with flag NODATA (8) and the exec fails with EFAULT
    as it would (then the second event: ret -1, err EFAULT). A string whose
    NUL is the last byte before an inaccessible page is read whole (ENOENT);
    one that runs into it is not. envp is not recorded, but the shim reads it
    (LD_PRELOAD kept for children): a bad one is left to the exec. Covers
    execve, execv, execl, execle, execvp, fexecve (the execl family's argv is
    built on the stack)."""
    plain, evs, other = _efault_run("efault_exec")
    names = ["execve-path", "execve-argv", "execv-string", "execv-unterminated",
             "execve-path-unterminated", "execve-edge", "execve-envp", "execve-envstring",
             "execl-string", "execle-envp", "execvp-argv", "fexecve-argv"]
    assert plain == ["r %s -1 %d" % (n, ENOENT if n == "execve-edge" else EFAULT)
                     for n in names]
    ex = of(evs, "exec")
    assert len(ex) == 2 * len(names)
    NODATA, NORETURN = 8, 1
    want = {  # name: (path, argv, NODATA)
        "execve-path": ("", "true", True),
        "execve-argv": ("/bin/true", "", True),
        "execv-string": ("/bin/true", "", True),
        "execv-unterminated": ("/bin/true", "", True),
        "execve-path-unterminated": ("", "true", True),
        "execve-edge": ("/nonexistent/x", "/nonexistent/x|y", False),
        "execve-envp": ("/bin/true", "true", False),
        "execve-envstring": ("/bin/true", "true", False),
        "execl-string": ("/bin/true", "", True),
        "execle-envp": ("/bin/true", "true", False),
        "execvp-argv": ("true", "", True),
        "fexecve-argv": ("", "", True),
    }
    for i, n in enumerate(names):
        before, after = ex[2 * i], ex[2 * i + 1]
        path, argv, nodata = want[n]
        for e in (before, after):
            assert (e["path"], e["argv"]) == (path, argv), (n, e["_"])
            assert e["caller"] == "sc_efault_exec", e["_"]
        flags = NODATA if nodata else 0
        assert (before["h_ret"], before["h_flags"]) == ("0", str(NORETURN | flags)), (n, before["_"])
        assert (after["h_ret"], after["h_flags"]) == ("-1", str(flags)), (n, after["_"])
        assert _err(after, ENOENT if n == "execve-edge" else EFAULT), (n, after["_"])
    assert ex[-1]["fd"] != "-1" and ex[-3]["search"] == "1"
    assert of(evs, "process_start") == []


def test_efault_spawn(tmp_path):
    """posix_spawn.3p: the error number is returned; glibc reports the child's
    exec failure, EFAULT for a bad path, a bad string in argv or a bad envp
    (a bad argv array itself crashes glibc in the parent, with or without
    the shim: not tested). path and argv are read after the call over probed
    pages only: empty with NODATA when not readable."""
    if sanitized():
        pytest.skip("ASan's posix_spawn interceptor reads path and argv itself")
    plain, evs, other = _efault_run("efault_spawn")
    assert plain == ["r %s %d 0" % (n, EFAULT) for n in (
        "spawn-path", "spawn-string", "spawnp-string", "spawn-envp", "spawn-envstring")]
    sp = of(evs, "posix_spawn")
    assert [(e["path"], e["argv"], e["search"], e["child"], e["h_ret"], e["h_flags"])
            for e in sp] == [
        ("", "true", "0", "-1", str(EFAULT), "8"),
        ("/bin/true", "", "0", "-1", str(EFAULT), "8"),
        ("true", "", "1", "-1", str(EFAULT), "8"),
        ("/bin/true", "true", "0", "-1", str(EFAULT), "0"),
        ("/bin/true", "true", "0", "-1", str(EFAULT), "0")]
    assert all(_err(e, EFAULT) and e["caller"] == "sc_efault_spawn" for e in sp)


def test_efault_wait(tmp_path):
    """wait4.2/waitid.2: EFAULT for a bad status or siginfo pointer, after the
    child was reaped (a second waitpid: ECHILD). The shim passes the caller's
    status word to the call (not one of its own that it would copy out), so
    the call fails as without the shim; the status is not read: 0, NODATA."""
    plain, evs, other = _efault_run("efault_wait")
    assert plain == ["r waitpid -1 %d" % EFAULT, "r waitpid-again -1 %d" % ECHILD,
                     "r wait4 -1 %d" % EFAULT, "r waitid -1 %d" % EFAULT]
    w = of(evs, "wait")
    assert [(e["h_ret"], e["status"], e["h_flags"]) for e in w] == [
        ("-1", "0", "8"), ("-1", "0", "0"), ("-1", "0", "8")]
    assert _err(w[0], EFAULT) and _err(w[1], ECHILD) and _err(w[2], EFAULT)
    wi = of(evs, "waitid")
    assert len(wi) == 1 and (wi[0]["h_ret"], wi[0]["si_pid"], wi[0]["h_flags"]) == (
        "-1", "0", "8") and _err(wi[0], EFAULT)


def test_efault_net(tmp_path):
    """accept.2, recvfrom.2: EFAULT for a bad address length (the length is
    read, and ignored, only with an address: accept(fd, NULL, bad) succeeds);
    sendmsg.2/recvmsg.2: EFAULT for a bad msghdr; bind/connect: EBADF, EINVAL
    (length > 128) before reading the address; recv.2 MSG_TRUNC: a stream
    socket discards the data without touching the buffer, a datagram socket
    returns the datagram's length (more than the buffer): the buffer is not
    read (NODATA). The room of a returned address is read before the call
    (directly on the shim's stack page, else after a probe: the static length
    and msghdr here), the returned address after it. (An ASan build's accept
    and recvfrom interceptors read the length themselves: the bad-length calls
    are left out there, and accept without an address gets a NULL length.)"""
    asan = sanitized()
    plain, evs, other = _efault_run("efault_net")
    assert plain == ([] if asan else [
        "r accept-len -1 %d" % EFAULT, "r accept4-len -1 %d" % EFAULT]) + [
        "r accept-noaddr 0 0", "r accept-static 0 0", "r recv-trunc-stream 4 0"] + (
        [] if asan else ["r recvfrom-len -1 %d" % EFAULT]) + [
        "r recvfrom-noaddr 5 0", "r recvfrom-static 5 0",
        "r recv-trunc-dgram 5 0", "r sendmsg -1 %d" % EFAULT, "r recvmsg -1 %d" % EFAULT,
        "r recvmsg-static 5 0", "r sendto-addr -1 %d" % EFAULT, "r bind-badfd -1 %d" % EBADF,
        "r connect-len -1 %d" % EINVAL, "r connect-badfd -1 %d" % EBADF]
    ev = [e for e in calls(evs) if e["name"] not in ("socket", "close")]
    assert all(e["caller"] == "sc_efault_net" for e in ev)
    cport = int([o for o in other if o.startswith("cliport=")][0].split("=")[1])
    acc = of(ev, "accept")
    bad_len = [] if asan else [(True, "0", "-", "8"), (True, str(0o2000000), "-", "8")]
    ok2 = [(False, "0", "-", "0")] * 2 if asan else []   # the same connections, accepted
    assert [(e["h_ret"] == "-1", e["flags"], e["addr"], e["h_flags"]) for e in acc] == \
        bad_len + ok2 + [(False, "0", "-", "0"), (False, "0", acc[-1]["addr"], "0")]
    if not asan:
        assert _err(acc[0], EFAULT) and _err(acc[1], EFAULT)
    assert acc[-1]["addr"] == sockaddr_in(cport)   # static length: probed, read
    rv = of(ev, "recv")
    own = "0100" + "00" + hexs("ptshim1")
    assert [(e["h_ret"], e["flags"], e["addr"], e["buf"], e["h_flags"]) for e in rv] == [
        ("4", "32", "-", "-", "8")] + (             # MSG_TRUNC, stream: not read
        [] if asan else [("-1", "0", "-", "-", "8")]) + [   # bad length
        ("5", "0", "-", hexs("dgram"), "0"),        # no address: the length is not used
        ("5", "0", own, hexs("dgram"), "0"),        # static length: probed, read
        ("5", "32", "-", "-", "8")]                 # MSG_TRUNC, datagram longer than buf
    if not asan:
        assert _err(rv[1], EFAULT)
    sm, rm, rm2 = of(ev, "sendmsg") + of(ev, "recvmsg")
    for e in (sm, rm):
        assert (e["h_ret"], e["iovlen"], e["addr"], e["buf"], e["h_flags"]) == (
            "-1", "0", "-", "-", "8") and _err(e, EFAULT)
    assert (rm2["h_ret"], rm2["addr"], rm2["buf"], rm2["h_flags"]) == (
        "5", own, hexs("dgram"), "0")
    st = [e for e in of(ev, "send") if e["h_ret"] == "-1"]
    assert len(st) == 1 and (st[0]["addr"], st[0]["h_flags"]) == ("-", "8")
    assert _err(st[0], EFAULT)
    b = [e for e in of(ev, "bind") if e["h_ret"] == "-1"]
    assert len(b) == 1 and (b[0]["addr"], b[0]["h_flags"]) == ("-", "8") and _err(b[0], EBADF)
    c = [e for e in of(ev, "connect") if e["h_ret"] == "-1"]
    assert [(e["fd"] == "-1", e["addr"] == "-", e["h_flags"]) for e in c] == [
        (False, True, "8"), (True, False, "0")]
    assert _err(c[0], EINVAL) and _err(c[1], EBADF)
    assert c[1]["addr"] == of(ev, "connect")[0]["addr"]   # readable: recorded
