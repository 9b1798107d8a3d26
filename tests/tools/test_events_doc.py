"""The event tables of doc/events.md are generated from the one definition of
the events, include/posixtrace/events.def (issue 14: one definition per
event), by tools/gen-events-doc: this test fails when the checked-in doc
differs from what the definition gives, and names the first line that does.
`make events-doc` rewrites the tables (this file with --update).

The library's table (posixtrace_event_descs[], libtrace/api/events_table.c) and
the ids (<posixtrace/events.h>) are expanded from the same file."""
import os
import re
import subprocess
import sys

BLOCK = re.compile(r"^<!-- events\.def: (\w+) .*?-->\n.*?^<!-- end events\.def: \1 -->\n",
                   re.M | re.S)


def generated(gen):
    out = subprocess.run([gen], stdout=subprocess.PIPE, check=True, timeout=30).stdout.decode()
    return {m.group(1): m.group(0) for m in BLOCK.finditer(out)}


def splice(doc, blocks):
    """doc with each generated block replaced by the new one."""
    return BLOCK.sub(lambda m: blocks[m.group(1)], doc)


def generator():
    return os.path.join(os.environ.get("POSIXTRACE_BUILDDIR", "."), "tools", "gen-events-doc")


def doc_path():
    return os.path.join(os.environ.get("POSIXTRACE_SRCDIR", os.path.dirname(__file__) + "/../.."),
                        "doc", "events.md")


def test_doc_tables_are_the_definition():
    """Every category's table in doc/events.md is exactly what
    include/posixtrace/events.def gives; all four categories are there, and
    the table of decoded system calls that include/posixtrace/syscalls.def
    gives."""
    blocks = generated(generator())
    assert sorted(blocks) == ["file", "net", "process", "syscall", "thread"]
    doc = open(doc_path(), encoding="utf-8").read()
    found = {m.group(1): m.group(0) for m in BLOCK.finditer(doc)}
    assert sorted(found) == sorted(blocks), "doc/events.md lacks a generated table"
    for cat, want in blocks.items():
        have = found[cat]
        if have != want:
            for i, (a, b) in enumerate(zip(have.splitlines(), want.splitlines())):
                assert a == b, "doc/events.md, table %s, line %d: run make events-doc" % (cat, i)
            assert have == want, "doc/events.md, table %s: run make events-doc" % cat


def test_every_event_once():
    """Each id and each name appears once across the tables (ids 8..255)."""
    doc = open(doc_path(), encoding="utf-8").read()
    rows = re.findall(r"^\| (\d+) \| `(\w+)` \|", "".join(m.group(0) for m in BLOCK.finditer(doc)),
                      re.M)
    ids = [int(i) for i, _ in rows]
    names = [n for _, n in rows]
    assert len(set(ids)) == len(ids) and len(set(names)) == len(names)
    assert all(8 <= i <= 255 for i in ids)


if __name__ == "__main__":
    # tests/tools/test_events_doc.py --update DOC GENERATOR: rewrite DOC's tables
    if len(sys.argv) != 4 or sys.argv[1] != "--update":
        sys.exit("usage: test_events_doc.py --update doc/events.md tools/gen-events-doc")
    text = open(sys.argv[2], encoding="utf-8").read()
    new = splice(text, generated(sys.argv[3]))
    if new != text:
        open(sys.argv[2], "w", encoding="utf-8").write(new)
