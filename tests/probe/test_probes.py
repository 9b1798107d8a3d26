"""Run-time probes (issue 16): posixtrace-run --probe/--probes adds
libposixtrace-audit.so with LD_AUDIT; each binding of a probed function goes
to a libffi closure that records the call (arguments, result, errno,
duration) as event probe:OBJECT:FUNCTION (ids 1281..). Checked over real
programs: a C program calling libm through its PLT, lazily and -z now (every
call recorded, the first included), a library opened with dlopen, python3's
math and zlib modules, the sqlite3 shell; the programs' output and exit
status are the same with and without probes; posixtrace-dump decodes a log
by itself (posixtrace:probe_def) in every format and in -c.

Docs: doc/tools.md "Probes", doc/events.md "Run-time probes".
"""
import json
import os
import shutil
import subprocess

import pytest

from harness import builddir, program, srcdir
from shimrun import ENV, PY, shim_usable
from toolscommon import events, json_lines, sh, tdump, tool

pytestmark = pytest.mark.skipif(shim_usable() is not None, reason=str(shim_usable()))

AUDIT = os.path.join(builddir(), "audit", ".libs", "libposixtrace-audit.so")
PENV = dict(ENV, POSIXTRACE_AUDIT=AUDIT)
COS = "libm.so.6:cos(double x)->double"
SIN = "libm.so.6:sin(double x)->double"


def prun(*args, rc=0):
    return sh([tool("posixtrace-run")] + list(args), rc=rc, env=PENV)


def plain(*argv):
    """argv without tracing: (stdout, exit status)."""
    p = subprocess.run([str(a) for a in argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       stdin=subprocess.DEVNULL, timeout=60)
    return p.stdout.decode(), p.returncode


def probe_events(err, name):
    return [e for e in events(err) if e[0] == name]


@pytest.mark.parametrize("prog", ["t310_probe_math", "t311_probe_now"])
def test_every_call_recorded_first_included(prog):
    """Lazy binding and -z now: n calls of cos give exactly n events, the
    first included, with the argument and the result decoded; sin too; the
    output and exit status are the program's own."""
    for n in (1, 3):
        p = prun("-e", "probe", "--probe", COS, "--probe", SIN, program(prog), str(n))
        assert (p.out, 0) == plain(program(prog), str(n))
        cos = probe_events(p.err, "probe:libm.so.6:cos")
        assert [e[1] for e in cos] == ["x=%s" % v for v in ("0.5", "1.5", "2.5")[:n]], p.err
        assert [e[2].split(" <")[0] for e in cos] == [" = 0.877583", " = 0.0707372",
                                                        " = -0.801144"][:n], p.err
        sin = probe_events(p.err, "probe:libm.so.6:sin")
        assert [e[1] + e[2].split(" <")[0] for e in sin] == ["x=0.5 = 0.479426"] * n, p.err
    p = prun("--probe", COS, program(prog), "7", rc=3)
    assert (p.out, 3) == plain(program(prog), "7")
    assert len(probe_events(p.err, "probe:libm.so.6:cos")) == 7


def test_program_recording_user_events():
    """A program that records user events itself holds the want table (a
    copy relocation: <trace.h>'s posix_trace_event reads it inline): the
    probes read that copy, so its 3 calls of cos are recorded, between its 3
    user events."""
    prog = program("t315_probe_user")
    p = prun("--probe", COS, prog, "3")
    assert (p.out, 0) == plain(prog, "3")
    names = [e[0] for e in events(p.err) if e[0] in ("probe/mark", "probe:libm.so.6:cos")]
    assert names == ["probe/mark", "probe:libm.so.6:cos"] * 3, p.err


def test_invalid_str_pointer_never_crashes():
    """abs(-3000009) probed as taking a str: the 'pointer' is not readable;
    the field is empty and the program runs as without probes."""
    p = prun("-e", "probe", "--probe", "*:abs(str s)->int", program("t310_probe_math"))
    assert (p.out, 0) == plain(program("t310_probe_math"))
    ab = probe_events(p.err, "probe:*:abs")
    assert len(ab) == 1 and ab[0][1] == 's=""' and ab[0][2].startswith(" = 3000009 <"), p.err


def test_dlopened_library(tmp_path):
    """A library opened with dlopen: its function (reached with dlsym) and
    the cos it calls through its own PLT are both recorded."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not found")
    lib = tmp_path / "libt312.so"
    sh(["gcc", "-shared", "-fPIC", "-O2", "-o", lib,
        os.path.join(srcdir(), "tests", "probe", "t312_probe_plugin.c"), "-lm"])
    p = prun("-e", "probe", "--probe", COS, "--probe", "libt312.so:t312_scale(double x, int k)->double",
             program("t313_probe_dlopen"), lib)
    assert (p.out, 0) == plain(program("t313_probe_dlopen"), lib) and p.out == "2.906737\n"
    assert [e[1] + e[2].split(" <")[0] for e in probe_events(p.err, "probe:libm.so.6:cos")] == \
        ["x=0.25 = 0.968912"], p.err
    sc = probe_events(p.err, "probe:libt312.so:t312_scale")
    assert [e[1] + e[2].split(" <")[0] for e in sc] == ["x=0.25, k=3 = 2.90674"], p.err


T314 = [
    ("t314_mix(int a, double x, uchar b, double y, long c, short d)->long",
     "a=-7, x=1.5, b=200, y=2.25, c=123456789012, d=-3", "= 123451790734"),
    ("t314_dbl(double a, int b, double c, double e, double f, double g, double h)->double",
     "a=1, b=2, c=3, e=5, f=6, g=7, h=8", "= 130"),
    ("t314_seven(int a, int b, int c, int d, int e, int f, int g)->int",
     "a=1, b=2, c=3, d=4, e=5, f=6, g=7", "= 140"),
    ("t314_float(float x, int k)->float", "x=1.25, k=3", "= 3.75"),
    ("t314_neg(int x)->char", "x=100", "= -100"),
    ("t314_u16(ushort x)->ushort", "x=65534", "= 65535"),
    ("t314_str(str s, int skip)->str", 's="probe forwarding", skip=6', '= "forwarding"'),
]


def test_prototypes_forwarded_exactly(tmp_path):
    """Each probed function gets its arguments and gives its result as the
    program passes and expects them (audit/forward.c calls integer and
    double prototypes directly, floats and stack arguments through
    ffi_call): integers of each width between doubles, six doubles around
    an integer, a seventh integer, floats, small signed and unsigned results, a string."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not found")
    src = os.path.join(srcdir(), "tests", "probe")
    sh(["gcc", "-shared", "-fPIC", "-O2", "-o", tmp_path / "libt314.so",
        os.path.join(src, "t314_abi_lib.c")])
    prog = tmp_path / "t314"
    sh(["gcc", "-O2", "-o", prog, os.path.join(src, "t314_probe_abi.c"), "-L", tmp_path, "-lt314",
        "-Wl,-rpath," + str(tmp_path)])
    args = ["-e", "probe"]
    for spec, _, _ in T314:
        args += ["--probe", "libt314.so:" + spec]
    p = prun(*args, prog)
    assert (p.out, 0) == plain(prog)
    assert p.out.split() == ["123451790734", "130.0000", "140", "3.7500", "-100", "65535",
                             "forwarding"], p.out
    for spec, want_args, want_ret in T314:
        ev = probe_events(p.err, "probe:libt314.so:" + spec.split("(")[0])
        assert [(e[1], e[2].split(" <")[0].strip()) for e in ev] == [(want_args, want_ret)], p.err


def test_python_math_and_zlib():
    """python3: math.cos through the math module's binding, zlib's deflate
    through the zlib module's; output identical."""
    code = "import math, zlib; print(math.cos(0.25)); print(len(zlib.compress(b'x' * 1000)))"
    p = prun("-e", "probe", "--probe", COS, "--probe", "libz.so.1:deflate(ptr strm, int flush)->int",
             PY, "-c", code)
    assert (p.out, 0) == plain(PY, "-c", code)
    cos = probe_events(p.err, "probe:libm.so.6:cos")
    assert [e[1] + e[2].split(" <")[0] for e in cos] == ["x=0.25 = 0.968912"], p.err
    de = probe_events(p.err, "probe:libz.so.1:deflate")
    # Z_FINISH (4) returns Z_STREAM_END (1)
    assert [e[1].split(", ")[1] + e[2].split(" <")[0] for e in de] == ["flush=4 = 1"], p.err


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="the sqlite3 shell is not installed")
def test_sqlite3_shell():
    sql = "create table t(a); insert into t values (41); select a + 1 from t;"
    p = prun("-e", "probe", "--probe",
             "libsqlite3.so.0:sqlite3_prepare_v2(ptr db, str sql, int n, ptr stmt, ptr tail)->int",
             "sqlite3", ":memory:", sql)
    assert (p.out, 0) == plain("sqlite3", ":memory:", sql) and p.out == "42\n"
    pr = probe_events(p.err, "probe:libsqlite3.so.0:sqlite3_prepare_v2")
    sqls = [e[1].split("sql=")[1].split(", n=")[0] for e in pr]
    assert '"create table t(a); insert into t"' in sqls, p.err  # -s: 32 bytes
    assert '"select a + 1 from t;"' in sqls, p.err
    assert all(e[2].startswith(" = 0 <") for e in pr), p.err


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="the sqlite3 shell is not installed")
def test_sqlite3_exec_in_shell():
    """The shell's .dump runs its statements with sqlite3_exec: each call is
    recorded with its SQL (cut at -s 32), its callback, and the result."""
    sql = "create table t(a); insert into t values (41);"
    spec = "libsqlite3.so.0:sqlite3_exec(ptr db, str sql, ptr cb, ptr arg, ptr errmsg)->int"
    p = prun("-e", "probe", "--probe", spec, "sqlite3", ":memory:", sql, ".dump")
    assert (p.out, 0) == plain("sqlite3", ":memory:", sql, ".dump")
    assert "INSERT INTO t VALUES(41);" in p.out
    ex = probe_events(p.err, "probe:libsqlite3.so.0:sqlite3_exec")
    calls = [(e[1].split("sql=")[1].split(", cb=")[0], e[1].split("cb=")[1].split(",")[0],
              e[2].split(" <")[0]) for e in ex]
    assert ('"SAVEPOINT dump; PRAGMA writable_"', "0", " = 0") in calls, p.err
    assert ('"PRAGMA writable_schema=OFF;"', "0", " = 0") in calls, p.err
    assert calls[-1] == ('"RELEASE dump;"', "0", " = 0"), p.err
    assert all(e[1].startswith("db=0x") for e in ex), p.err


def test_dump_decodes_log_by_itself(tmp_path):
    """-o LOG: posixtrace-dump learns the probes from posixtrace:probe_def
    and shows them in text, JSON, Chrome and -c."""
    log = tmp_path / "t.ptl"
    prun("-o", log, "--probe", COS, program("t310_probe_math"), "2")
    txt = [e for e in events(tdump(log).out) if e[0] == "probe:libm.so.6:cos"]
    assert [e[1] + e[2].split(" <")[0] for e in txt] == ["x=0.5 = 0.877583", "x=1.5 = 0.0707372"]
    js = [e for e in json_lines(tdump("-f", "json", log).out) if e["event"] == "probe:libm.so.6:cos"]
    assert [(e["args"]["x"], e["ret"]) for e in js] == [("0.5", 0.87758256189037276),
                                                         ("1.5", 0.070737201667702906)]
    ch = json.loads(tdump("-f", "chrome", log).out)
    sl = [e for e in ch["traceEvents"] if e.get("name") == "probe:libm.so.6:cos"]
    assert [e["args"]["ret"] for e in sl] == [0.87758256189037276, 0.070737201667702906]
    summ = tdump("-c", log).out
    assert any(l.split()[-1] == "probe:libm.so.6:cos" and l.split()[-2] == "2"
               for l in summ.splitlines()), summ


@pytest.mark.parametrize("mode", ["live", "log"])
def test_probes_file_and_never_bound(tmp_path, mode):
    """--probes FILE: [object] groups of FUNCTION=(types)->type; a probe whose
    function is never bound is said at the end, of a live run and of a run
    writing a log (-o: counted from the log read back)."""
    f = tmp_path / "p.ini"
    f.write_text("[libm.so.6]\ncos=(double x)->double\ntan=(double x)->double\n")
    log = tmp_path / "t.ptl"
    out = ["-o", log] if mode == "log" else []
    p = prun(*out, "-e", "probe", "--probes", f, program("t310_probe_math"), "1")
    shown = tdump(log).out if mode == "log" else p.err
    assert len(probe_events(shown, "probe:libm.so.6:cos")) == 1
    assert "probe libm.so.6:tan(double x)->double: no call recorded" in p.err
    assert "probe libm.so.6:cos" not in p.err.split("no call recorded")[0].splitlines()[-1]


LTRACE_CONF = """; ltrace.conf(5) syntax
typedef in_addr = struct(hex(uint));
hex(uint) inet_addr(string);
double cos(double);\t\t; a comment after the declaration
double sin(in_addr);
int printf(format);
"""


def test_prototype_from_ltrace_conf(tmp_path):
    """--probe OBJECT:FUNCTION with no prototype takes ltrace's (the files of
    $POSIXTRACE_LTRACE_CONF here; ~/.ltrace.conf, /usr/share/ltrace,
    /etc/ltrace.conf by default): cos(double) recorded as arg1; a type
    probes cannot take (format, a typedef) and a function in no file are
    errors naming why."""
    conf = tmp_path / "ltrace.conf"
    conf.write_text(LTRACE_CONF)
    env = dict(PENV, POSIXTRACE_LTRACE_CONF=str(tmp_path / "none.conf") + ":" + str(conf))
    p = sh([tool("posixtrace-run"), "-e", "probe", "--probe", "libm.so.6:cos",
            program("t310_probe_math"), "1"], env=env)
    assert (p.out, 0) == plain(program("t310_probe_math"), "1")
    cos = probe_events(p.err, "probe:libm.so.6:cos")
    assert [e[1] + e[2].split(" <")[0] for e in cos] == ["arg1=0.5 = 0.877583"], p.err
    for fn, why in (("printf", 'prototype "int printf(format)" has a type probes cannot record: '
                     "format"),
                    ("sin", "cannot record: in_addr"),
                    ("tan", "no prototype given and none in ltrace's files")):
        p = sh([tool("posixtrace-run"), "--probe", "libm.so.6:" + fn, "true"], rc=125, env=env)
        assert why in p.err, p.err


@pytest.mark.parametrize("spec,at,msg", [
    ("libm.so.6:cos(double x", 23, "',' or ')' expected"),
    ("cos(double)", 12, "':' expected"),
    ("libm.so.6:cos(doubel x)->double", 15, "unknown type"),
    ("libc.so.6:read(int fd, buf(arg9) b, size_t n)->ssize_t", 28, "buf length"),
    ("libc.so.6:read(int fd, buf(arg1) b, size_t n)->ssize_t", None, None),
    ("libm.so.6:cos(double x)->double junk", 33, "unexpected text"),
])
def test_bad_specs_say_where(spec, at, msg):
    p = prun("--probe", spec, "true", rc=None if msg is None else 125)
    if msg is None:
        assert p.returncode == 0, p.err
        return
    assert "at byte %d: %s" % (at, msg) in p.err, p.err
    assert "\n    " + " " * (at - 1) + "^" in p.err, p.err


@pytest.mark.parametrize("path", ["examples/probes.ini", "audit/probes/common.ini"])
def test_shipped_probe_files(path):
    """The example and the shipped probes file parse, and probe a real program
    without changing it (malloc/free in libc: many calls, output identical)."""
    f = os.path.join(srcdir(), path)
    p = prun("-c", "--probes", f, PY, "-c", "import math; print(math.cos(1))")
    assert (p.out, 0) == plain(PY, "-c", "import math; print(math.cos(1))")
    assert "probe:libm.so.6:cos" in p.err, p.err


def test_select_one_probe_by_name():
    """-e probe:OBJECT:FUNCTION keeps that probe only (the stream's filter:
    cos is not recorded at all); -e 'probe:libm*' both."""
    p = prun("-e", "probe:libm.so.6:sin", "--probe", COS, "--probe", SIN,
             program("t310_probe_math"), "2")
    assert [e[0] for e in events(p.err)] == ["probe:libm.so.6:sin"] * 2, p.err
    p = prun("-e", "probe:libm*", "--probe", COS, "--probe", SIN, program("t310_probe_math"), "1")
    assert sorted(e[0] for e in events(p.err)) == ["probe:libm.so.6:cos", "probe:libm.so.6:sin"]
