"""The LD_PRELOAD shim with real, unmodified Debian programs, traced from
their first instruction by a controller (tests/shim/t103_shim_run.c: the launcher
pattern of doc/semantics.md, "Tracing other processes").

Each program's stdout, stderr, exit status and produced files are identical
with and without the shim, and its trace holds the expected events.
"""
import os
import shutil
import subprocess

import pytest

from harness import program
from shimcommon import shim_env, shim_path, parse, of, calls


def clean_env():
    """The test's environment without what an enclosing make passes down."""
    env = dict(os.environ)
    for k in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES"):
        env.pop(k, None)
    return env


def traced(tmp_path, argv, cwd=None, mb=64):
    """Runs argv under the shim through t103_shim_run in cwd; returns
    (status, stdout bytes, stderr bytes, events, other lines)."""
    cwd = cwd or str(tmp_path)
    o, e = os.path.join(str(tmp_path), ".out"), os.path.join(str(tmp_path), ".err")
    env = clean_env()
    se = shim_env(uninstrumented=True)
    env["T103_SHIM"] = se.pop("LD_PRELOAD")
    env.update(se)
    env["T103_STREAM_MB"] = str(mb)
    p = subprocess.run([program("t103_shim_run"), o, e] + argv, cwd=cwd, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=240)
    assert p.returncode == 0, p.stdout.decode(errors="replace")[-3000:] + p.stderr.decode()
    evs, other = parse(p.stdout.decode(errors="replace"))
    assert "overflow" not in other
    status = int(other[0].split("=")[1])
    with open(o, "rb") as f:
        out = f.read()
    with open(e, "rb") as f:
        err = f.read()
    os.unlink(o)
    os.unlink(e)
    return status, out, err, evs, other


def plain(argv, cwd):
    p = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=240, env=clean_env())
    return p.returncode << 8, p.stdout, p.stderr


def same(tmp_path, argv, setup=None, files=()):
    """Runs argv plainly in a.d and traced in b.d (both prepared by setup);
    asserts identical status, stdout, stderr and files; returns the events."""
    dirs = []
    for name in ("a.d", "b.d"):
        d = os.path.join(str(tmp_path), name)
        os.mkdir(d)
        if setup:
            setup(d)
        dirs.append(d)
    st_a, out_a, err_a = plain(argv, dirs[0])
    st_b, out_b, err_b, evs, _ = traced(tmp_path, argv, cwd=dirs[1])
    assert (st_a, out_a.replace(b"a.d", b"X"), err_a.replace(b"a.d", b"X")) == \
        (st_b, out_b.replace(b"b.d", b"X"), err_b.replace(b"b.d", b"X"))
    for f in files:
        with open(os.path.join(dirs[0], f), "rb") as fa, open(os.path.join(dirs[1], f), "rb") as fb:
            assert fa.read() == fb.read(), f
    return evs, dirs[1]


def text_files(d):
    with open(os.path.join(d, "in.txt"), "w") as f:
        f.write("".join("line %d %s\n" % (i, "x" * (i % 7)) for i in range(2000, 0, -1)))


def test_cat(tmp_path):
    """cat in.txt: process_start (exe, argv), the open of in.txt, its reads
    and the writes to stdout carrying the file's first bytes, exit 0."""
    evs, d = same(tmp_path, ["cat", "in.txt"], text_files)
    st = of(evs, "process_start")
    assert len(st) == 1 and st[0]["exe"] == os.path.realpath(shutil.which("cat"))
    assert st[0]["argv"] == "cat|in.txt"
    opens = [e for e in of(evs, "open") if e["path"] == "in.txt"]
    assert len(opens) == 1 and opens[0]["h_ret"] != "-1"
    fd = opens[0]["h_ret"]
    data = open(os.path.join(d, "in.txt"), "rb").read()
    reads = [e for e in of(evs, "read") if e["fd"] == fd]
    if reads:   # cat copies with read/write, or copy_file_range to a file
        assert reads[0]["buf"] == data[:32].hex()
        assert any(e["fd"] == "1" and e["buf"] == data[:32].hex() for e in of(evs, "write"))
    else:
        cfr = [e for e in of(evs, "copy_file_range") if e["fd_in"] == fd]
        assert cfr and cfr[0]["fd_out"] == "1"
        assert sum(int(e["h_ret"]) for e in cfr) == len(data)
    ex = of(evs, "exit")
    assert ex and ex[-1]["status"] == "0"


def test_cp(tmp_path):
    """cp shows the open of the source (read-only) and of the destination
    (O_WRONLY|O_CREAT) and the data transfer (copy_file_range or write)."""
    evs, d = same(tmp_path, ["cp", "in.txt", "out.txt"], text_files, files=["out.txt"])
    src = [e for e in of(evs, "open") if e["path"] == "in.txt" and e["h_ret"] != "-1"]
    dst = [e for e in of(evs, "open") if e["path"] == "out.txt" and e["h_ret"] != "-1"]
    assert len(src) == 1 and int(src[0]["flags"]) & 3 == 0
    assert len(dst) == 1 and int(dst[0]["flags"]) & 0o101 == 0o101
    size = os.path.getsize(os.path.join(d, "in.txt"))
    moved = sum(int(e["h_ret"]) for e in of(evs, "copy_file_range") + of(evs, "write")
                if e.get("fd_out", e.get("fd")) == dst[0]["h_ret"] and int(e["h_ret"]) > 0)
    assert moved == size


def sub(tmp_path, name):
    d = tmp_path / name
    d.mkdir()
    return d


def test_sort_gzip_tar_find(tmp_path):
    """sort, gzip, tar, find: same results; their traces hold their files."""
    evs, _ = same(sub(tmp_path, "s"), ["sort", "-o", "sorted.txt", "in.txt"], text_files,
                  files=["sorted.txt"])
    assert any(e["path"] == "sorted.txt" for e in of(evs, "open") + of(evs, "fopen"))
    evs, _ = same(sub(tmp_path, "g"), ["gzip", "-k", "-n", "in.txt"], text_files,
                  files=["in.txt.gz"])
    assert any(e["path"] == "in.txt.gz" for e in of(evs, "open"))
    evs, _ = same(sub(tmp_path, "t"), ["tar", "--mtime=@0", "--owner=0", "--group=0",
                                       "--numeric-owner", "-cf", "a.tar", "in.txt"],
                  text_files, files=["a.tar"])
    assert any(e["path"] == "a.tar" for e in of(evs, "open"))
    evs, _ = same(sub(tmp_path, "f"), ["find", ".", "-name", "*.txt"], text_files)
    assert of(evs, "process_start")


def test_shell_pipeline(tmp_path):
    """sh -c with a pipeline: each child process (fork of the shell, exec of
    sort and head) records into the inherited stream with its own pid; the
    shell's pipe, forks and waits are there."""
    evs, _ = same(tmp_path, ["sh", "-c", "sort -r in.txt | head -n 3; echo done >&2"],
                  text_files)
    starts = of(evs, "process_start")
    exes = sorted(os.path.basename(e["exe"]) for e in starts)
    assert exes == sorted(["dash", "sort", "head"]), exes
    assert len({e["pid"] for e in starts}) == 3
    assert of(evs, "pipe") and of(evs, "fork") and of(evs, "wait")
    ex = [e for e in of(evs, "exec") if e["h_flags"] == "1"]
    assert {e["argv"] for e in ex} >= {"sort|-r|in.txt", "head|-n|3"}


def test_python(tmp_path):
    """python3 -c: opens and writes of the interpreter, output identical."""
    evs, _ = same(tmp_path, ["python3", "-c",
                             "open('p.txt','w').write('py'*10); print(open('p.txt').read())"],
                  files=["p.txt"])
    assert any(e["path"] == "p.txt" for e in of(evs, "open"))
    assert any(e["buf"] == ("py" * 10).encode().hex() for e in of(evs, "write"))


def test_make(tmp_path):
    """make on a small Makefile: its recipe shells and their commands."""
    def setup(d):
        with open(os.path.join(d, "Makefile"), "w") as f:
            f.write("all: b.txt\nb.txt: a.txt\n\tcp a.txt b.txt\n\techo built\n"
                    "a.txt:\n\techo hi > a.txt\n")
    evs, _ = same(tmp_path, ["make", "-s"], setup, files=["a.txt", "b.txt"])
    exes = {os.path.basename(e["exe"]) for e in of(evs, "process_start")}
    assert {"make", "cp"} <= exes, exes


def test_xz_threads(tmp_path):
    """xz -T2 (multi-threaded): identical output; pthread_create and
    thread_start events from its worker threads."""
    def setup(d):
        with open(os.path.join(d, "big.bin"), "wb") as f:
            f.write(bytes(range(256)) * 40000 + b"x" * 3000000)
    evs, _ = same(tmp_path, ["xz", "-T2", "-k", "--block-size=1MiB", "big.bin"], setup,
                  files=["big.bin.xz"])
    assert len(of(evs, "pthread_create")) >= 2
    assert len(of(evs, "thread_start")) >= 2
    tids = {e["ktid"] for e in calls(evs)}
    assert len(tids) >= 3


def test_no_escapes():
    """What the tested binaries import from the families the shim covers is
    interposed by the shim (a call that silently escapes is a bug)."""
    covered = set(subprocess.run(
        ["nm", "-D", "--defined-only", shim_path()],
        stdout=subprocess.PIPE, universal_newlines=True).stdout.split())
    families = ("open", "openat", "creat", "close", "read", "write", "pread", "pwrite",
                "readv", "writev", "lseek", "dup", "dup2", "dup3", "pipe", "pipe2", "unlink",
                "unlinkat", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir",
                "ftruncate", "fsync", "copy_file_range", "sendfile", "fopen", "fdopen",
                "freopen", "fclose", "fork", "vfork", "posix_spawn", "posix_spawnp",
                "execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle",
                "fexecve", "_exit", "_Exit", "exit", "wait", "waitpid", "waitid", "wait3",
                "wait4", "kill", "killpg", "raise", "pthread_create", "pthread_exit", "pthread_join",
                "socket", "bind", "listen", "accept", "accept4", "connect", "send", "sendto",
                "sendmsg", "recv", "recvfrom", "recvmsg", "shutdown")
    def in_family(sym):
        base = sym.lstrip("_")
        for suffix in ("64", "_2", "64_2", "_chk", "64_chk"):
            if base.endswith(suffix):
                base = base[:-len(suffix)]
        return base in families
    missing = set()
    for b in ("cat", "cp", "sort", "tar", "gzip", "find", "dash", "python3", "make", "xz"):
        path = shutil.which(b)
        out = subprocess.run(["nm", "-D", "--undefined-only", path], stdout=subprocess.PIPE,
                             universal_newlines=True).stdout
        for l in out.splitlines():
            sym = l.split()[-1].split("@")[0]
            if in_family(sym) and sym not in covered:
                missing.add((b, sym))
    assert not missing, sorted(missing)


def test_shim_alone_keeps_programs_working(tmp_path):
    """With only the shim preloaded (libposixtrace then comes after libc in
    the lookup order), programs that exec others behave exactly as without
    it (the shim calls libc's exec directly: preload/README.md)."""
    env = clean_env()
    env.update(shim_env(uninstrumented=True))
    env["LD_PRELOAD"] = " ".join(p for p in env["LD_PRELOAD"].split()
                                 if not p.endswith("libposixtrace.so.0"))
    text_files(str(tmp_path))
    for argv in (["sh", "-c", "sort -r in.txt | head -n 2; ls in.txt"],
                 ["python3", "-c", "import subprocess; print(subprocess.run(['true']).returncode)"]):
        p = subprocess.run(argv, cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        q = subprocess.run(argv, cwd=str(tmp_path), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60, env=clean_env())
        assert (p.returncode, p.stdout, p.stderr) == (q.returncode, q.stdout, q.stderr), argv
