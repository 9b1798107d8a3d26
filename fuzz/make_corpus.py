#!/usr/bin/env python3
"""Writes the seed corpus of fuzz/fuzz_logread: a few small valid trace logs
(doc/log-format.md) covering the format's cases.

    python3 fuzz/make_corpus.py [DIR]      (default: fuzz/corpus next to this file)

The logs are built by tests/lib/logfmt.py (standard library; XXH3 from libxxhash
through ctypes).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lib"))
import logfmt as L  # noqa: E402


def seeds():
    """(file name, Log) pairs."""
    yield "append-tsc", L.typical(clock_mode=1, log_policy=L.APPEND, flushes=2, per_flush=25)
    yield "untilfull-realtime", L.typical(clock_mode=2, log_policy=L.UNTIL_FULL, flushes=2,
                                          per_flush=25, seed=2, stream_policy=L.UNTIL_FULL,
                                          inheritance=L.INHERITED)
    # circular: 8 positions, more blocks written than that (wrapped)
    yield "loop-wrapped", L.typical(clock_mode=1, log_policy=L.LOOP, flushes=5, per_flush=30,
                                    seed=3, log_size=4096 + 8 * 4096, stream_policy=L.LOOP)
    yield "packed-tsc", L.typical(clock_mode=1, log_policy=L.APPEND, flushes=2, per_flush=40,
                                  seed=4, packed=True)
    yield "packed-realtime", L.typical(clock_mode=2, log_policy=L.APPEND, flushes=2,
                                       per_flush=40, seed=5, packed=True)
    yield "header-only", L.Log(name="empty")

    log = L.Log(name="names-status", clock_mode=2)
    log.names({257: "x" * 63, 1280: "last", 3: "renamed-overflow"})
    log.status(stream=L.RUNNING, full=L.FULL, overrun=L.OVERRUN, flush=L.FLUSHING,
               flush_error=5, log_overrun=L.OVERRUN, log_full=L.FULL, lost=99)
    yield "names-status", log

    log = L.Log(name="edge-records", clock_mode=2, max_data_size=0)
    log.events(0, 1, 2, [L.ev(0, 100, 0, bytes(256)), L.ev(256, 100, 1, b""),
                         L.ev(1280, 101, 2, b"", truncated=True), L.ev(7, 102, 3, bytes(512))])
    log.events(L.SLOT_SYS, 1, 0, [L.ev(3, 100, 0, (5).to_bytes(8, "little")), L.ev(4, 100)])
    yield "edge-records", log

    log = L.Log(name="big-block", clock_mode=1, ticks_per_ns=3.0, tick0=5, real0_ns=-10,
                block_size=16384, max_data_size=65536)
    log.events(2, 9, 9, [L.anchor(1000, 10 ** 9), L.ev(300, 2000, 0, bytes(range(256)) * 40),
                         L.anchor(3000, 2 * 10 ** 9), L.ev(301, 3000)])
    log.names({300: "big", 301: "after"})
    yield "big-block", log

    # ticks wrapping around 2^64 between two slots
    log = L.Log(name="tick-wrap", clock_mode=1, ticks_per_ns=1.0, tick0=2 ** 64 - 1000,
                real0_ns=10 ** 18)
    log.events(0, 1, 1, [L.ev(257, 2 ** 64 - 10), L.ev(257, 5)])
    log.events(1, 1, 2, [L.ev(258, 2 ** 64 - 5), L.ev(258, 20)])
    yield "tick-wrap", log

    # two blocks with the same seq (the first in the file wins)
    log = L.Log(name="dup-seq", clock_mode=2)
    log.events(0, 1, 1, [L.ev(257, 10)])
    b = log.events(0, 1, 1, [L.ev(258, 20)])
    b.seq = 1
    yield "dup-seq", log


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus")
    os.makedirs(out, exist_ok=True)
    for name, log in seeds():
        with open(os.path.join(out, "seed-%s.log" % name), "wb") as f:
            f.write(log.to_bytes())
    print("make_corpus: %d seeds in %s" % (len(list(seeds())), out))


if __name__ == "__main__":
    main()
