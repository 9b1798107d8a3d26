"""The LD_PRELOAD shim under load (tests/shim/t104_shim_stress.c), a reader thread
draining the stream meanwhile: no crash, no deadlock (every blocking step is
bounded by the program's watchdog), and no event lost when the stream is
large enough (posix_trace_attr_getstreamfullpolicy.3p.txt, UNTIL_FULL: a
loss would show as POSIX_TRACE_OVERFLOW).
"""
from harness import kv
from shimcommon import run_shim


def stress(*args):
    evs, other = run_shim("t104_shim_stress", *args, timeout=300)
    return {k: int(v) for k, v in kv(other[0]).items()}


def test_threads_and_signals(tmp_path):
    """8 threads each open/write/close 100 000 times while SIGUSR1 arrives
    every millisecond in all of them (the handler writes to /dev/null): each of
    the 8 threads handles at least one signal (it waits for one after its loop),
    every call is recorded, each handler's write too (as a write to /dev/null),
    nothing lost."""
    n = 100000
    c = stress("threads", str(tmp_path), 8, n, 400)
    assert c["overflow"] == 0
    assert c["threads_handled"] == 8 and c["handled"] >= 8, c
    assert c["open"] == 8 * n and c["close"] == 8 * n
    assert c["write"] == 8 * n + c["handled"]
    assert c["sigwrites"] == c["handled"]


def test_fork_bomb(tmp_path):
    """200 short children, forked back to back, each open/close and _exit,
    recording into the inherited stream: fork twice per child (parent and
    child), open, close and exit once each."""
    c = stress("forks", str(tmp_path), 200)
    assert c["overflow"] == 0
    assert (c["fork"], c["open"], c["close"], c["exit"]) == (400, 200, 200, 200)
