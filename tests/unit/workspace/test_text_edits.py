"""LSP line splitting and minimal line hunks."""

from __future__ import annotations

import pytest

from agent_ls.workspace.text_edits import (
    Hunk,
    LinePosition,
    hunk_span,
    line_boundary,
    line_hunks,
    split_lines,
)


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("", []),
        ("a", ["a"]),
        ("a\n", ["a\n"]),
        ("a\r\nb\rc\nd", ["a\r\n", "b\r", "c\n", "d"]),
        ("\r\n\r\n", ["\r\n", "\r\n"]),
        ("\n\r", ["\n", "\r"]),
        ("a\x0bb\x0cc\x1cd\x1de\x1ef\x85g\u2028h\u2029i", ["a\x0bb\x0cc\x1cd\x1de\x1ef\x85g\u2028h\u2029i"]),
        ("x\x0c\n", ["x\x0c\n"]),
    ],
)
def test_split_lines_uses_only_lsp_terminators(text: str, lines: list[str]) -> None:
    assert split_lines(text) == lines
    assert "".join(lines) == text


def test_hunks_are_minimal_and_ascending() -> None:
    old = "".join(f"line {i}\n" for i in range(10))
    new = old.replace("line 2\n", "two\n").replace("line 7\n", "").replace("line 9\n", "line 9\nten\n")
    assert line_hunks(old, new) == [Hunk(2, 3, "two\n"), Hunk(7, 8, ""), Hunk(10, 10, "ten\n")]


def test_no_hunks_for_equal_texts() -> None:
    assert line_hunks("a\r\nb", "a\r\nb") == []


def test_whole_file_only_when_nothing_is_shared() -> None:
    assert line_hunks("a\nb\n", "c\nd\n") == [Hunk(0, 2, "c\nd\n")]
    assert line_hunks("", "new\n") == [Hunk(0, 0, "new\n")]
    assert line_hunks("old\n", "") == [Hunk(0, 1, "")]


def test_frequent_lines_do_not_blow_up_hunks() -> None:
    # difflib's autojunk would treat "}" and blank lines (>1% of 200+ lines) as junk: one huge hunk.
    old = "}\n\n" * 150 + "middle\n" + "}\n\n" * 150
    new = old.replace("middle\n", "centre\n")
    assert line_hunks(old, new) == [Hunk(300, 301, "centre\n")]


def test_changed_line_ending_is_a_whole_line_hunk() -> None:
    assert line_hunks("debugger;\ndebugger;\n", "debugger;\r\ndebugger;\r\n") == [
        Hunk(0, 2, "debugger;\r\ndebugger;\r\n")
    ]
    assert line_hunks("a\r\nb", "a\rb") == [Hunk(0, 1, "a\r")]


@pytest.mark.parametrize(
    ("text", "index", "position"),
    [
        ("", 0, LinePosition(0, 0)),
        ("a\nb\n", 1, LinePosition(1, 0)),
        ("a\nb\n", 2, LinePosition(2, 0)),
        ("a\r\nb\r\n", 2, LinePosition(2, 0)),
        ("a\nb\r", 2, LinePosition(2, 0)),
        ("a\n🕵️x", 2, LinePosition(1, 3)),
    ],
)
def test_line_boundary_ends_exactly_at_the_document_end(
    text: str, index: int, position: LinePosition
) -> None:
    assert line_boundary(split_lines(text), index) == position


def test_line_boundary_outside_raises() -> None:
    with pytest.raises(IndexError):
        line_boundary(["a\n"], 2)


def test_hunk_span() -> None:
    lines = split_lines("a\nb\nc")
    assert hunk_span(lines, Hunk(1, 3, "B\nC")) == (LinePosition(1, 0), LinePosition(2, 1))
    assert hunk_span(lines, Hunk(0, 1, "")) == (LinePosition(0, 0), LinePosition(1, 0))
