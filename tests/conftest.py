"""pytest's configuration of the posixtrace test suite (tests/<area>/test_*.py).

The helpers every area uses are plain modules of tests/lib/ (harness: run(),
program(), kv() ...; logfmt, logcommon, shimcommon, shimrun, toolscommon,
xproccommon), put on sys.path here, before any test module is imported.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: long-running test (about a minute); still run by default")
