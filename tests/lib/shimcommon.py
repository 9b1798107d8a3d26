"""Helpers of the LD_PRELOAD shim tests (tests/shim/test_shim_*.py); no tests here.

The shim is $POSIXTRACE_BUILDDIR/preload/.libs/libposixtrace-preload.so. Test
programs (tests/shim/t10N_*.c) trace themselves and print one "ev ..." line per
shim event (tests/shim/decode.c describes the format); events and payloads:
doc/events.md, include/posixtrace/events.h.
"""
import os
import re
import subprocess

from harness import builddir, run, kv, lines


def shim_path():
    return os.path.join(builddir(), "preload", ".libs", "libposixtrace-preload.so")


def _needed(path):
    out = subprocess.run(["readelf", "-d", path], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def sanitized():
    """True when the shim was built with --enable-sanitizers (it needs libasan)."""
    return any(n.startswith("libasan") for n in _needed(shim_path()))


def _asan_runtime():
    out = subprocess.run(["gcc", "-print-file-name=libasan.so"], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout.strip()
    return os.path.realpath(out)


def lib_path():
    return os.path.join(builddir(), "libtrace", ".libs", "libposixtrace.so.0")


def shim_env(extra=None, uninstrumented=False):
    """The environment that loads the shim (alone: it brings libposixtrace in,
    as for posixtrace-run). A program that is not ours (a Debian binary) gets,
    in a sanitizer build, ASan's runtime first; an instrumented test program
    accepts ASan after the shim. Leak checks are off for programs that are
    not ours."""
    env = {"LD_PRELOAD": shim_path()}
    if sanitized():
        asan = os.environ.get("ASAN_OPTIONS", "")
        asan += ":verify_asan_link_order=0"
        if uninstrumented:
            env["LD_PRELOAD"] = _asan_runtime() + " " + env["LD_PRELOAD"]
            asan += ":detect_leaks=0:strict_string_checks=0"  # checks of their code, not ours
        env["ASAN_OPTIONS"] = asan.lstrip(":")
    if extra:
        env.update(extra)
    return env


def run_shim(prog, *args, env=None, rc=0, timeout=60):
    """Runs the test program prog under the shim; returns its "ev" lines as dicts (with
    the raw line under "_"), and the other lines under key None."""
    out = run(prog, *args, env=shim_env(env), rc=rc, timeout=timeout)
    return parse(out)


def parse(out):
    evs, other = [], []
    for l in lines(out):
        if l.startswith("ev "):
            d = kv(l)
            d["_"] = l
            evs.append(d)
        else:
            other.append(l)
    assert other and other[-1] == "end", out
    return evs, other


def of(evs, name):
    return [e for e in evs if e["name"] == name]


def calls(evs):
    """The events other than the address map."""
    return [e for e in evs if e["name"] != "module"]


def hexs(s):
    return s.encode().hex()
