"""A target that writes garbage over the stream it records into (issue 4: "The
reader treats the shared ring as untrusted (a buggy or hostile target writes into
it): every length and index it reads is checked; a corrupt stream gives an error,
never a crash in the controller").  Program: tests/xproc/t055_xproc_hostile.c.

The controller (R) must survive: its reads end (no endless stream of events from
a stream nobody records into any more), and posix_trace_get_status,
posix_trace_stop and posix_trace_shutdown return.  What it reads, and the codes
these return, are not checked (any error is acceptable; doc/semantics.md:
POSIX_TRACE_ERROR with EBADMSG for a corrupt record).  The target itself may
crash or hang.
"""
import pytest

from harness import run, kv, lines, srcdir

CASES = [("sparse", s) for s in (1, 2, 3, 4)] + [("words", s) for s in (1, 2, 5)] + \
    [("used", s) for s in (1, 2, 3)] + [("all", 1)]


@pytest.mark.parametrize("region,seed", CASES)
def test_controller_survives_corrupt_stream(region, seed):
    """R reads (timedgetnext, 3 s at most, 10^6 events at most) after T overwrote
    part of the stream (region, PRNG seed: see t055_xproc_hostile.c), then calls
    get_status, stop and shutdown: each returns, R exits 0 (no crash, no hang),
    and it read fewer than 10^6 events."""
    out = run("t055_xproc_hostile", region, seed, timeout=60)
    ls = lines(out)
    assert "T rec1=1" in ls and "T corrupt=1" in ls, out
    assert "R exit=0" in ls, out
    for call in ("get_status", "stop", "shutdown"):
        assert any(l.startswith("R %s rc=" % call) for l in ls), (call, out)
    n = kv([l for l in ls if l.startswith("R read n=")][0])
    assert int(n["n"]) < 1000000, ("the reader reports events without end", out)


# ---- fuzzing the live reader ---------------------------------------------------------
def test_fuzz_reader_short(tmp_path):
    """A short libFuzzer run of fuzz/fuzz_reader.c (1,500 inputs or 20 s): a stream that
    a forked child recorded into is scribbled over past the creator's private first
    page, as a hostile writer can (doc/design.md, "Untrusted stream memory"), then read
    by its controller: trygetnext returns 0 with sane events until nothing is left,
    get_status, get_attr, the event type list, get_name (0 or EINVAL) and shutdown
    return 0 -- never a crash, an out-of-bounds access, a leak or a hang
    (posix_trace_getnext_event.3p.txt, posix_trace_get_status.3p.txt,
    posix_trace_eventid_open.3p.txt).  Skipped without clang or its libFuzzer runtime."""
    import glob
    import os
    import shutil
    import subprocess
    clang = os.environ.get("CLANG", "clang")
    if shutil.which(clang) is None:
        pytest.skip("clang not found (needed for the libFuzzer target)")
    src = srcdir()
    exe = os.path.join(str(tmp_path), "fuzz_reader")
    srcs = [os.path.join(src, "fuzz", "fuzz_reader.c")]
    srcs += sorted(glob.glob(os.path.join(src, "libtrace", "*", "*.c")))
    cmd = [clang, "-g", "-O1", "-fsanitize=fuzzer,address,undefined",
           "-fno-sanitize-recover=undefined", "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra",
           "-Werror", "-I" + os.path.join(src, "include"), "-I" + os.path.join(src, "libtrace"),
           # the generated syscall_names.h (libtrace/gen-syscall-names.sh)
           "-I" + os.path.join(os.environ.get("POSIXTRACE_BUILDDIR", "."), "libtrace"),
           "-o", exe] + srcs + ["-lpthread"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    if p.returncode != 0 and b"clang_rt.fuzzer" in p.stdout:
        pytest.skip("clang has no libFuzzer runtime")
    assert p.returncode == 0, p.stdout.decode(errors="replace")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "loop").write_bytes(b"\x01\x10")
    (corpus / "until-full").write_bytes(b"\x00\x40")
    env = {k: v for k, v in os.environ.items() if k not in ("ASAN_OPTIONS", "UBSAN_OPTIONS")}
    p = subprocess.run([exe, "-runs=1500", "-max_total_time=20", "-max_len=4096",
                        "-artifact_prefix=%s/" % tmp_path, str(corpus)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=180, env=env)
    out = p.stdout.decode(errors="replace")
    assert p.returncode == 0 and "Done" in out, out[-4000:]
