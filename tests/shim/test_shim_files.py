"""The LD_PRELOAD shim: files and descriptors (program tests/shim/t100_shim_files.c).

Each interposed call is one system trace event (doc/events.md) whose payload
carries the arguments, the return value, errno and the duration; its
posix_prog_address is the call site (the calling function, named by dladdr);
pid and kernel thread id are the caller's. Pages: posix_trace_getnext_event.3p.txt
(posix_trace_event_info: posix_pid, posix_prog_address),
posix_trace_set_filter.3p.txt (filtered-out events are not recorded).
"""
import errno
import os

from harness import run
from shimcommon import run_shim, of, calls, hexs, sanitized

O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_TRUNC = 1, 2, 0o100, 0o200, 0o1000
O_NONBLOCK, O_CLOEXEC = 0o4000, 0o2000000
AT_FDCWD = -100


def common(e, caller):
    assert e["self"] == "1" and e["ktid"] == e["epid"], e["_"]
    assert e["caller"] == caller, e["_"]
    assert e["h_ver"] == "1" and e["h_size"] == "32" and e["h_dur_ok"] == "1", e["_"]
    assert e["trunc"] == "0" and e["rest"] == "0", e["_"]


def seq(evs):
    return [(e["name"], e["h_ret"]) for e in calls(evs)]


def test_files(tmp_path):
    """open/open64/openat/creat, write/pwrite/pwrite64, read/pread/pread64,
    readv/writev, lseek/lseek64, ftruncate, fsync, close: each call once, in
    order, with its arguments, result and the first bytes transferred."""
    d = str(tmp_path)
    evs, _ = run_shim("t100_shim_files", "files", d)
    for e in calls(evs):
        common(e, "sc_files")
    assert seq(evs) == [
        ("open", "4"), ("write", "12"), ("pwrite", "2"), ("lseek", "12"),
        ("ftruncate", "0"), ("fsync", "0"), ("close", "0"),
        ("open", "4"), ("read", "20"), ("pread", "5"), ("lseek", "3"), ("readv", "5"),
        ("close", "0"),
        ("open", "4"), ("writev", "5"), ("pwrite", "1"), ("pread", "5"), ("close", "0"),
        ("open", "4"), ("close", "0")]
    ev = calls(evs)
    o = ev[0]
    assert (o["dirfd"], o["flags"], o["mode"], o["path"]) == (
        str(AT_FDCWD), str(O_CREAT | O_WRONLY | O_TRUNC), "0640", d + "/a")
    assert ev[1]["fd"] == "4" and ev[1]["count"] == "12" and ev[1]["buf"] == hexs("hello, world")
    assert ev[2]["offset"] == "0" and ev[2]["buf"] == hexs("HE")
    assert (ev[3]["offset"], ev[3]["whence"]) == ("0", "2")
    assert ev[4]["length"] == "20"
    assert (ev[7]["flags"], ev[7]["path"]) == ("0", d + "/a")
    # read returns 20 bytes: the file as written, grown to 20 with zeros
    assert ev[8]["count"] == "64" and ev[8]["buf"] == hexs("HEllo, world") + "00" * 8
    assert (ev[9]["count"], ev[9]["offset"], ev[9]["buf"]) == ("5", "7", hexs("world"))
    assert (ev[11]["iovcnt"], ev[11]["buf"]) == ("2", hexs("lo, w"))
    assert ev[13]["flags"] == str(O_RDWR | O_CREAT | O_EXCL) and ev[13]["mode"] == "0600"
    assert ev[14]["buf"] == hexs("abcde")
    assert ev[16]["buf"] == hexs("abcdZ")
    # creat is open(path, O_CREAT|O_WRONLY|O_TRUNC, mode)
    assert (ev[18]["flags"], ev[18]["mode"], ev[18]["path"]) == (
        str(O_CREAT | O_WRONLY | O_TRUNC), "0644", d + "/c")
    assert all(e["h_err"] == "0" and e["h_flags"] == "0" for e in ev)


def test_fdops(tmp_path):
    """dup/dup2/dup3, pipe/pipe2 (the two descriptors), copy_file_range and
    sendfile (offsets as passed in, -1 for NULL)."""
    evs, _ = run_shim("t100_shim_files", "fdops", str(tmp_path))
    ev = calls(evs)
    for e in ev:
        common(e, "sc_fdops")
    names = [e["name"] for e in ev]
    assert names == ["open", "write", "dup", "dup", "dup", "pipe", "pipe", "open",
                     "copy_file_range", "sendfile"] + ["close"] * 9
    d1, d2, d3 = ev[2:5]
    assert (d1["oldfd"], d1["newfd"], d1["flags"], d1["h_ret"]) == ("4", "-1", "0", "5")
    assert (d2["oldfd"], d2["newfd"], d2["h_ret"]) == ("4", "40", "40")
    assert (d3["newfd"], d3["flags"], d3["h_ret"]) == ("41", str(O_CLOEXEC), "41")
    p, q = ev[5:7]
    assert (p["flags"], p["rfd"], p["wfd"], p["h_ret"]) == ("0", "6", "7", "0")
    assert (q["flags"], q["rfd"], q["wfd"]) == (str(O_CLOEXEC | O_NONBLOCK), "8", "9")
    c = ev[8]
    assert (c["fd_in"], c["off_in"], c["fd_out"], c["off_out"], c["len"], c["h_ret"]) == (
        "4", "2", "10", "-1", "3", "3")
    s = ev[9]
    assert (s["out_fd"], s["in_fd"], s["offset"], s["count"], s["h_ret"]) == (
        "10", "4", "5", "4", "4")
    assert [e["fd"] for e in ev[10:]] == ["10", "8", "9", "6", "7", "41", "40", "5", "4"]
    assert open(os.path.join(str(tmp_path), "b")).read() == "2345678"


def test_paths(tmp_path):
    """mkdir/mkdirat, rename/renameat/renameat2 (flags), unlink, rmdir,
    unlinkat(AT_REMOVEDIR)."""
    d = str(tmp_path)
    evs, _ = run_shim("t100_shim_files", "paths", d)
    ev = calls(evs)
    for e in ev:
        common(e, "sc_paths")
        assert e["h_ret"] in ("0", "4"), e["_"]
    assert [e["name"] for e in ev] == ["mkdir", "mkdir", "open", "close", "rename", "rename",
                                       "rename", "unlink", "rmdir", "unlink"]
    assert (ev[0]["dirfd"], ev[0]["mode"], ev[0]["path"]) == ("-100", "0755", d + "/d1")
    assert (ev[1]["mode"], ev[1]["path"]) == ("0700", d + "/d2")
    assert (ev[4]["oldpath"], ev[4]["newpath"], ev[4]["flags"]) == (d + "/f1", d + "/f2", "0")
    assert (ev[5]["olddirfd"], ev[5]["newdirfd"]) == ("-100", "-100")
    assert (ev[6]["newpath"], ev[6]["flags"]) == (d + "/f4", "1")    # RENAME_NOREPLACE
    assert (ev[7]["path"], ev[7]["flags"]) == (d + "/f4", "0")
    assert ev[8]["path"] == d + "/d1"
    assert (ev[9]["path"], ev[9]["flags"]) == (d + "/d2", "512")       # AT_REMOVEDIR


def test_errors(tmp_path):
    """Failed calls: return value -1 and errno in the event; a path the call
    faulted on (EFAULT) is not read (empty, flag NODATA = 8)."""
    d = str(tmp_path)
    evs, _ = run_shim("t100_shim_files", "errors", d)
    ev = calls(evs)
    got = [(e["name"], e["h_ret"], e["h_err"]) for e in ev]
    assert got == [("open", "-1", "errno2"), ("close", "-1", "EBADF"),
                   ("read", "-1", "EBADF"), ("write", "-1", "EBADF"),
                   ("unlink", "-1", "errno2"), ("rmdir", "-1", "errno2"),
                   ("open", "-1", "errno14")]
    assert ev[0]["path"] == d + "/missing/x"
    assert ev[2]["buf"] == "-" and ev[2]["h_flags"] == "8"   # nothing read from buf
    assert ev[6]["path"] == '' and ev[6]["h_flags"] == "8"


def test_errno_preserved(tmp_path):
    """errno after an intercepted call is what libc left: untouched by a
    successful write (1234 stays), EBADF after a failed one."""
    evs, other = run_shim("t100_shim_files", "errno", str(tmp_path))
    assert other[:3] == ["after-success n=1 errno=1234", "after-failure n=-1 errno=EBADF",
                         "after-close errno=4321"]
    assert [e["name"] for e in calls(evs)] == ["open", "write", "write", "close"]


def test_stdio(tmp_path):
    """fopen, freopen, fdopen, fclose: libc opens stream files internally; the
    shim records the stdio calls with the stream's descriptor (ret = FILE *)."""
    d = str(tmp_path)
    evs, _ = run_shim("t100_shim_files", "stdio", d)
    ev = calls(evs)
    for e in ev:
        common(e, "sc_stdio")
    assert [e["name"] for e in ev] == ["fopen", "freopen", "fclose", "open", "fdopen",
                                       "fclose", "fopen"]
    f = ev[0]
    assert (f["fd"], f["mode"], f["path"], f["h_err"]) == ("4", "w", d + "/s", "0")
    assert int(f["h_ret"]) != 0
    r = ev[1]
    assert (r["mode"], r["path"], r["fd"]) == ("r", d + "/s", "4")
    assert int(r["stream"], 16) == int(f["h_ret"]) and r["h_ret"] == f["h_ret"]
    assert (ev[2]["fd"], ev[2]["h_ret"]) == ("4", "0")
    assert (ev[4]["fd"], ev[4]["mode"]) == ("4", "r")
    assert ev[6]["h_ret"] == "0" and ev[6]["fd"] == "-1" and ev[6]["h_err"] == "errno2"


def test_filter(tmp_path):
    """posix_trace_set_filter.3p.txt: an event type in the filter is not
    recorded: with posixtrace:write filtered out, open and close are, write not."""
    evs, _ = run_shim("t100_shim_files", "filter", str(tmp_path))
    assert [e["name"] for e in calls(evs)] == ["open", "close"]


def test_strsize(tmp_path):
    """POSIXTRACE_STRSIZE (default 32) bytes of a buffer are recorded; a cut
    buffer sets POSIXTRACE_CALL_DATA_CUT (2); at most 1024 payload bytes."""
    d = str(tmp_path)
    evs, _ = run_shim("t100_shim_files", "strsize", d)
    w = of(evs, "write")
    assert w[0]["buf"] == hexs("q" * 32) and w[0]["h_flags"] == "2" and w[0]["count"] == "3000"
    assert w[1]["buf"] == hexs("abc") and w[1]["h_flags"] == "0"
    evs, _ = run_shim("t100_shim_files", "strsize", d, env={"POSIXTRACE_STRSIZE": "4"})
    w = of(evs, "write")
    assert w[0]["buf"] == hexs("qqqq") and w[0]["h_flags"] == "2"
    assert w[1]["buf"] == hexs("abc") and w[1]["h_flags"] == "0"
    evs, _ = run_shim("t100_shim_files", "strsize", d, env={"POSIXTRACE_STRSIZE": "5000"})
    w = of(evs, "write")
    n = len(w[0]["buf"]) // 2
    assert 900 < n < 1024 and w[0]["h_flags"] == "2"   # cut to fit 1024 bytes


def test_module_map(tmp_path):
    """The address map: one module event per loaded object (executable,
    libc, the shim...) with load base, size, GNU build id (as readelf -n shows
    it) and path, recorded at the first recorded call of the stream."""
    import subprocess
    evs, _ = run_shim("t100_shim_files", "errors", str(tmp_path))
    mods = {e["path"]: e for e in of(evs, "module")}
    exe = [p for p in mods if p.endswith("/tests/shim/t100_shim_files")]
    assert len(exe) == 1, mods.keys()
    libc = [p for p in mods if os.path.basename(p) == "libc.so.6"]
    assert len(libc) == 1
    out = subprocess.run(["readelf", "-n", libc[0]], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    bid = [l.split()[-1] for l in out.splitlines() if "Build ID" in l][0]
    assert mods[libc[0]]["build_id"] == bid
    assert any(p.endswith("libposixtrace-preload.so") for p in mods)
    for m in mods.values():
        assert int(m["size"], 16) > 0


def test_durations(tmp_path):
    """duration_ns (doc/events.md) runs from the call's entry to the event's
    timestamp: a read that waits 200 ms for another thread's write lasts at
    least that long, and its interval [ts - duration, ts] contains the start
    of that write; a close lasts more than 0 and well under a second."""
    evs, _ = run_shim("t100_shim_files", "durations", str(tmp_path))
    ev = calls(evs)
    rd = of(ev, "read")
    wr = of(ev, "write")
    assert len(rd) == 1 and len(wr) == 1, [e["_"] for e in ev]
    rd, wr = rd[0], wr[0]
    assert rd["h_ret"] == "1" and wr["h_ret"] == "1"
    assert wr["ktid"] != rd["ktid"]
    r_end, r_dur = int(rd["ts"]), int(rd["h_dur"])
    w_end, w_dur = int(wr["ts"]), int(wr["h_dur"])
    assert 150_000_000 <= r_dur < 5_000_000_000, rd["_"]
    assert 0 < w_dur < r_dur, wr["_"]
    assert r_end - r_dur < w_end - w_dur < r_end, (rd["_"], wr["_"])
    closes = of(ev, "close")
    assert len(closes) == 2
    for c in closes:
        assert 0 < int(c["h_dur"]) < 1_000_000_000, c["_"]


def _results(out):
    return [l for l in out.splitlines() if l.startswith("r ") or l.startswith("offsets ")]


def _errno(e, n):
    """h_err as tests/shim/decode.c prints it (tc_errname: a name or errnoN)."""
    return e["h_err"] in (errno.errorcode[n], "errno%d" % n)


def test_efault(tmp_path):
    """Invalid pointers (preload/README.md, "How a wrapper works"): the
    program gets what it gets without the shim and does not crash, and the
    shim reads no pointer that the call may not have read. sendfile.2,
    copy_file_range.2: EFAULT for a bad offset pointer; the offsets recorded
    are the values passed in (derived after a successful call: *off - ret),
    -2 with flag NODATA (8) when the call failed (doc/events.md). unlinkat.2,
    renameat2, open.2 (O_TMPFILE needs O_WRONLY/O_RDWR) fail with EINVAL
    before reading the path, fopen.3 with EINVAL on a bad mode: the path is
    not read (empty, NODATA). mkdir, freopen, pipe, readv, read: EFAULT.
    (An ASan build's fopen/freopen interceptors read the path themselves:
    those two calls are left out there.)"""
    asan = sanitized()
    d = str(tmp_path)
    plain = _results(run("t100_shim_files", "efault", d))
    evs, other = run_shim("t100_shim_files", "efault", d)
    assert _results("\n".join(other)) == plain
    EFAULT, EINVAL, EBADF = errno.EFAULT, errno.EINVAL, errno.EBADF
    stdio = [] if asan else ["r fopen-mode -1 %d" % EINVAL, "r freopen -1 %d" % EFAULT]
    assert plain == [
        "r sendfile -1 %d" % EFAULT, "r sendfile64 -1 %d" % EFAULT,
        "r cfr-in -1 %d" % EFAULT, "r cfr-out -1 %d" % EFAULT, "r cfr-badfd -1 %d" % EBADF,
        "r cfr-ok 3 0", "offsets 5 4",
        "r unlinkat-flags -1 %d" % EINVAL, "r renameat2-flags -1 %d" % EINVAL,
        "r open-tmpfile -1 %d" % EINVAL, "r mkdir -1 %d" % EFAULT] + stdio + [
        "r pipe -1 %d" % EFAULT, "r readv -1 %d" % EFAULT, "r read -1 %d" % EFAULT]
    ev = [e for e in calls(evs) if e["name"] not in ("open", "write", "close", "lseek")
          or e["h_ret"] == "-1"]
    for e in ev:
        common(e, "sc_efault")
    assert [e["name"] for e in ev] == [
        "sendfile", "sendfile", "copy_file_range", "copy_file_range", "copy_file_range",
        "copy_file_range", "unlink", "rename", "open", "mkdir"] + (
        [] if asan else ["fopen", "fopen", "freopen"]) + ["pipe", "readv", "read"]
    s1, s2, c1, c2, c3, c4 = ev[:6]
    for e in (s1, s2):
        assert (e["h_ret"], e["offset"], e["count"], e["h_flags"]) == ("-1", "-2", "4", "8")
        assert _errno(e, EFAULT)
    assert (c1["off_in"], c1["off_out"], c1["h_flags"]) == ("-2", "-1", "8")
    assert (c2["off_in"], c2["off_out"], c2["h_flags"]) == ("-1", "-2", "8")
    assert _errno(c1, EFAULT) and _errno(c2, EFAULT)
    assert (c3["off_in"], c3["h_flags"], c3["h_err"]) == ("-2", "8", "EBADF")
    assert (c4["h_ret"], c4["off_in"], c4["off_out"], c4["h_flags"]) == ("3", "2", "1", "0")
    for e in ev[6:10]:
        assert e["h_ret"] == "-1" and e["h_flags"] == "8", e["_"]
    assert ev[6]["path"] == "" and _errno(ev[6], EINVAL)
    assert (ev[7]["oldpath"], ev[7]["newpath"]) == ("", "") and _errno(ev[7], EINVAL)
    assert ev[8]["path"] == "" and _errno(ev[8], EINVAL)
    assert ev[9]["path"] == "" and _errno(ev[9], EFAULT)
    if not asan:
        f = ev[10]
        assert (f["h_ret"], f["mode"], f["path"], f["h_flags"]) == ("0", "z", "", "8")
        assert _errno(f, EINVAL)
        r = ev[12]
        assert (r["h_ret"], r["mode"], r["path"], r["h_flags"]) == ("0", "r", "", "8")
        assert int(r["stream"], 16) == int(ev[11]["h_ret"]) and _errno(r, EFAULT)
    p, v, rd = ev[-3:]
    assert (p["h_ret"], p["rfd"], p["wfd"]) == ("-1", "-1", "-1") and _errno(p, EFAULT)
    assert (v["h_ret"], v["buf"], v["h_flags"]) == ("-1", "-", "8") and _errno(v, EFAULT)
    assert (rd["h_ret"], rd["buf"], rd["h_flags"]) == ("-1", "-", "8") and _errno(rd, EFAULT)
