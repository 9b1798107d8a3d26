"""libposixtrace's own exec wrappers (doc/semantics.md: the library interposes
the exec family to shut a process's streams down before exec and hand the
others to the new image) pass arguments and environment through unchanged.
A program that links libposixtrace reaches them, not libc's, for every call."""
from harness import run


def test_execle_environment():
    """execle: the array after the terminating NULL is the new environment,
    exactly (env prints it, in order)."""
    assert run("t023_exec", "execle") == "PT_EXECLE=1\nPT_SECOND=two words\n"


def test_execl_arguments():
    """execl: the arguments up to the terminating NULL, one of them with a space."""
    assert run("t023_exec", "execl") == "a b c\n"


def test_execlp_arguments():
    """execlp: searched in PATH; an empty argument is kept."""
    assert run("t023_exec", "execlp") == "x  y\n"
