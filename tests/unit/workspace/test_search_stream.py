"""ripgrep's JSON stream read into bounded hits: windows with code-point columns, whatever the chunking."""

from __future__ import annotations

import base64
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_ls.core.file_views import SearchHit
from agent_ls.workspace import search
from agent_ls.workspace.search import RipgrepStream


def _match(path: str, number: int, line: bytes, *needles: bytes) -> bytes:
    """One ``match`` message as ripgrep 14 writes it (``lines.text`` when UTF-8, else ``lines.bytes``)."""
    submatches = []
    at = 0
    for needle in needles:
        at = line.index(needle, at)
        submatches.append({"match": {"text": needle.decode("latin-1")}, "start": at, "end": at + len(needle)})
        at += len(needle)
    try:
        lines: dict[str, Any] = {"text": line.decode("utf-8")}
    except UnicodeDecodeError:
        lines = {"bytes": base64.b64encode(line).decode()}
    data = {"path": {"text": path}, "lines": lines, "line_number": number, "submatches": submatches}
    return json.dumps({"type": "match", "data": data}).encode() + b"\n"


def _stream() -> RipgrepStream:
    return RipgrepStream(max_line_chars=20, window=5, decode_line=lambda _path, raw: raw.decode("cp1252"))


LONG = "é" * 30 + "needle" + "😀" * 30 + "needle" + "x" * 3 + "needle" + "y" * 40 + "\r\n"
OUTPUT = (
    json.dumps({"type": "begin", "data": {"path": {"text": "a.js"}}}).encode()
    + b"\n"
    + _match("./a.js", 3, LONG.encode(), b"needle", b"needle", b"needle")
    + _match("b.py", 1, b"def needle():\r\n", b"needle")
    + _match("c.txt", 2, "caf\u00e9 needle\n".encode("cp1252"), b"needle")
    + b"rg: some/dir: Permission denied\n"
)
EXPECTED = (
    SearchHit("a.js", 3, 31, "ééééé" + "needle" + "😀" * 5, 26, len(LONG) - 2),
    SearchHit("a.js", 3, 67, "😀" * 5 + "needle" + "xxxneedleyyyyy", 62, len(LONG) - 2),
    SearchHit("b.py", 1, 5, "def needle():", 1, 13),
    SearchHit("c.txt", 2, 6, "café needle", 1, 11),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 64), max_size=40))
def test_hits_are_the_same_whatever_the_chunks(sizes: list[int]) -> None:
    stream = _stream()
    at = 0
    for size in sizes:
        stream.feed(OUTPUT[at : at + size])
        at += size
    stream.feed(OUTPUT[at:])
    found = stream.result()
    assert found.hits == EXPECTED
    assert found.counts == {"a.js": 2, "b.py": 1, "c.txt": 1}
    assert "Permission denied" in stream.errors


def test_a_file_keeps_few_hits_and_a_huge_line_is_named_not_held(monkeypatch: Any) -> None:
    monkeypatch.setattr(search, "MAX_HITS_PER_FILE", 2)
    monkeypatch.setattr(search, "MAX_JSON_LINE_BYTES", 1000)
    stream = _stream()
    for number in range(1, 6):
        stream.feed(_match("many.txt", number, b"hit\n", b"hit"))
    stream.feed(_match("huge.min.js", 1, b"x" * 5000 + b"hit\n", b"hit"))
    found = stream.result()
    assert [hit.line for hit in found.hits] == [1, 2]
    assert found.counts == {"many.txt": 5, "huge.min.js": 1}
    assert found.unreadable == (
        "huge.min.js:1: a matching line over 0 MiB; read it in pieces with read_file (column)",
    )


@settings(max_examples=30, deadline=None)
@given(st.permutations(range(120)))
def test_the_hits_kept_do_not_depend_on_the_order_files_arrive_in(order: list[int]) -> None:
    """ripgrep searches on several threads, so files come in any order; the first ``MAX_HITS`` hits by
    path are kept all the same (each file's first ``MAX_HITS_PER_FILE``), and every hit is counted."""
    stream = _stream()
    for index in order:
        stream.feed(b"".join(_match(f"f{index:03d}.py", n, b"a needle\n", b"needle") for n in range(1, 61)))
    found = stream.result()
    kept = [(f"f{index:03d}.py", n) for index in range(120) for n in range(1, search.MAX_HITS_PER_FILE + 1)]
    assert [(hit.path, hit.line) for hit in found.hits] == kept[: search.MAX_HITS]
    assert found.counts == {f"f{index:03d}.py": 60 for index in range(120)}


@settings(max_examples=8, deadline=None)
@given(st.permutations(range(150)), st.integers(64, 4096))
def test_lines_only_counted_give_what_parsing_them_gives(order: list[int], chunk: int) -> None:
    """ripgrep's compact JSON lets a line that cannot be kept be counted unparsed; spaced JSON (which the
    shortcut does not read) gives the same result, for short lines, long ones and escaped paths."""
    lines = {
        f'{"q" if index % 7 == 0 else ""}"d{index:02d}"/f.py': [
            b"x needle y\n" if n % 5 else b"needle " * 20 + b"\n" for n in range(1, 1 + 7 * (index % 13))
        ]
        for index in range(150)
    }
    names = sorted(lines)
    results = []
    for compact in (True, False):
        stream = RipgrepStream(
            max_line_chars=40, window=5, decode_line=lambda _p, raw: raw.decode(), keep=lambda p: "q" not in p
        )
        for index in order:
            name = names[index]
            for number, line in enumerate(lines[name], 1):
                message = _match(name, number, line, *([b"needle"] * line.count(b"needle")))
                if compact:
                    message = json.dumps(json.loads(message), separators=(",", ":")).encode() + b"\n"
                for at in range(0, len(message), chunk):
                    stream.feed(message[at : at + chunk])
        results.append(stream.result())
    assert results[0] == results[1]
    assert sum(results[0].counts.values()) > 2 * search.MAX_HITS  # past the point where hits are dropped
