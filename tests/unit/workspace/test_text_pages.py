"""Pages cut from a stream of text: the same page whatever the chunking, as a whole-text reference says,
and reading stops early on a huge file."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_ls.core.errors import ToolError
from agent_ls.core.file_views import PageLine, PageRequest, TextPage
from agent_ls.workspace import text_pages
from agent_ls.workspace.text_pages import page_of


def reference(text: str, request: PageRequest) -> TextPage | str:
    """The page computed from the whole text at once, the way read_file always showed lines."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    if not text:
        lines = []
    lines = [line.removesuffix("\r") if i < len(lines) - 1 or text.endswith("\n") else line for i, line in
             enumerate(lines)]  # fmt: skip
    if lines and not text.endswith("\n"):
        lines[-1] = lines[-1].removesuffix("\r")
    if not lines:
        return TextPage((), 0)
    if request.line > len(lines):
        return "past the end"
    first = lines[request.line - 1]
    if request.column > 1 and request.column - 1 >= len(first):
        return "column"
    shown: list[PageLine] = []
    used = 0
    for number in range(request.line, min(len(lines), request.line - 1 + request.max_lines) + 1):
        line = lines[number - 1]
        start = request.column - 1 if number == request.line else 0
        piece = line[start : start + request.max_line_chars]
        cost = len(piece) + request.line_overhead_chars
        if shown and used + cost > request.max_chars:
            break
        shown.append(PageLine(number, start + 1, piece, len(line)))
        used += cost
    return TextPage(tuple(shown), len(lines))


def chunked(text: str, sizes: list[int]) -> Iterator[str]:
    at = 0
    for size in sizes:
        if at >= len(text):
            break
        yield text[at : at + size]
        at += size
    if at < len(text):
        yield text[at:]


TEXT = st.lists(st.sampled_from(["a", "é", "😀", " ", "\n", "\r\n", "\r", "xyz"]), max_size=60).map("".join)
REQUEST = st.builds(
    PageRequest,
    line=st.integers(1, 8),
    column=st.integers(1, 6),
    max_lines=st.integers(1, 6),
    max_line_chars=st.integers(1, 8),
    max_chars=st.integers(1, 40),
    line_overhead_chars=st.integers(0, 8),
)


@settings(max_examples=400, deadline=None)
@given(TEXT, REQUEST, st.lists(st.integers(1, 7), max_size=30))
def test_any_chunking_gives_the_page_of_the_whole_text(
    text: str, request: PageRequest, sizes: list[int]
) -> None:
    expected = reference(text, request)
    for chunks in ([text], list(chunked(text, sizes))):
        try:
            page = page_of(chunks, request, name="f")
        except ToolError as exc:
            assert isinstance(expected, str), (exc, expected)
            assert str(exc).startswith("column") == (expected == "column"), (exc, expected)
            continue
        assert page == expected


def test_reading_stops_early_and_says_what_it_does_not_know(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_pages, "COUNT_MAX_CHARS", 100)
    monkeypatch.setattr(text_pages, "SCAN_MAX_CHARS", 1000)
    served: list[int] = []

    def endless(piece: str) -> Iterator[str]:
        while True:
            served.append(len(piece))
            yield piece

    page = page_of(endless("x" * 50), PageRequest(max_lines=1, max_line_chars=10), name="f")
    assert page == TextPage((PageLine(1, 1, "x" * 10, None),), None)
    assert sum(served) <= 200
    with pytest.raises(ToolError, match="line 5 of f lies beyond the first"):
        page_of(endless("y" * 50), PageRequest(line=5), name="f")
