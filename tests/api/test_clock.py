"""The clock of a stream: which one, why, and that its stamps are CLOCK_REALTIME
(program tests/api/t026_clock.c).

Pages: trace.h.0p.txt (posix_timestamp), posix_trace_attr_getclockres.3p.txt.
doc/semantics.md "Timestamps" (implementation-defined): the TSC where the CPU
flags it invariant and the kernel uses it or the CPU says it is reliable
(tsc_reliable, tsc_known_freq), compared between CPUs first when the kernel does
not use it; POSIXTRACE_CLOCK=realtime or =tsc; else CLOCK_REALTIME.
"""
import os
import platform

import pytest

from harness import kv, lines, run

TSC, REALTIME = 1, 2


def cpu_flags():
    with open("/proc/cpuinfo") as f:
        for l in f:
            if l.startswith("flags"):
                return set(l.split(":", 1)[1].split())
    return set()


def clocksource():
    try:
        with open("/sys/devices/system/clocksource/clocksource0/current_clocksource") as f:
            return f.read().strip()
    except OSError:
        return ""


def invariant():
    return platform.machine() in ("x86_64", "i686") and \
        {"constant_tsc", "nonstop_tsc"} <= cpu_flags()


def expected(env):
    """doc/semantics.md's rule, before the comparison between CPUs."""
    if env == "realtime" or not invariant():
        return REALTIME
    if clocksource() == "tsc" or env == "tsc":
        return TSC
    return TSC if cpu_flags() & {"tsc_reliable", "tsc_known_freq"} else REALTIME


def run_clock(tmp_path, env):
    # empty: neither realtime nor tsc, the machine decides (the run merges
    # this into the environment, so a POSIXTRACE_CLOCK of the caller's would stay)
    out = run("t026_clock", tmp_path / "c.ptl", env={"POSIXTRACE_CLOCK": env or ""})
    return {l.split()[0]: kv(l) | {"_": l} for l in lines(out)}


@pytest.mark.parametrize("env", [None, "realtime", "tsc"])
def test_clock_choice_stream_and_log_agree(tmp_path, env):
    r = run_clock(tmp_path, env)
    src = int(r["choice"]["source"])
    want = expected(env)
    # a TSC the kernel does not use may still be refused by the comparison
    # between CPUs, and says so
    if want == TSC and src == REALTIME:
        assert "between CPUs" in r["choice"]["_"], r
    else:
        assert src == want, r
    if env == "realtime":
        assert r["choice"]["_"].endswith("why=POSIXTRACE_CLOCK=realtime"), r
    assert int(r["stream"]["source"]) == src and int(r["log"]["source"]) == src, r
    tpn = float(r["stream"]["tpn"])
    assert float(r["log"]["tpn"]) == pytest.approx(tpn, abs=1e-6)
    if src == REALTIME:
        assert tpn == 1.0
    else:
        assert 0.1 < tpn < 20, r   # ticks per ns of a real CPU
    assert r["event"]["ts_ok"] == "1", r["event"]["_"]
    assert r["einval"]["_"] == "einval ok"


def test_dump_info_names_the_clock(tmp_path):
    """posixtrace-dump --info says which clock a log's stamps came from."""
    from toolscommon import tdump
    r = run_clock(tmp_path, "realtime")
    out = tdump("--info", tmp_path / "c.ptl").out
    assert "clock: realtime (CLOCK_REALTIME read at each event)" in out, out
    if invariant():
        r = run_clock(tmp_path, "tsc")
        out = tdump("--info", tmp_path / "c.ptl").out
        if r["choice"]["source"] == "1":
            assert "clock: tsc (the cycle counter, %s ticks/ns" % r["log"]["tpn"] in out, out


def test_run_info_names_the_clock(tmp_path):
    """posixtrace-run --info says which clock a trace taken now would use and
    why (the same choice as the library's), and exits 0 without a program."""
    from toolscommon import trun
    out = trun("--info", env={"POSIXTRACE_CLOCK": "realtime"}).out
    assert out == "clock: realtime (CLOCK_REALTIME read at each event): " \
                  "POSIXTRACE_CLOCK=realtime\n", out
    r = run_clock(tmp_path, None)
    out = trun("--info", env={"POSIXTRACE_CLOCK": ""}).out
    if r["choice"]["source"] == "1":
        assert out.startswith("clock: tsc (the cycle counter, ") and \
            out.rstrip().endswith(r["choice"]["_"].split("why=", 1)[1]), (out, r)
    else:
        assert out.startswith("clock: realtime (CLOCK_REALTIME read at each event): "), out
