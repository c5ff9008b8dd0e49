"""Edits made on the model's view (CRLF shown as LF) applied to the real text: the view changes exactly as
asked, and every line the edit does not touch keeps its bytes, its line ending included."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_ls.workspace.line_endings import Replaced, replace_in_view, restore_endings

MIXED = "alpha\r\nbeta\r\ngamma\ndelta\r\n"


def view(text: str) -> str:
    return text.replace("\r\n", "\n")


def test_a_two_line_old_string_from_read_file_matches_the_crlf_part_of_a_mixed_file() -> None:
    assert replace_in_view(MIXED, "alpha\nbeta", "ALPHA\nBETA", replace_all=False) == Replaced(
        "ALPHA\r\nBETA\r\ngamma\ndelta\r\n", 1
    )


def test_added_lines_take_the_endings_of_their_region() -> None:
    assert replace_in_view(MIXED, "alpha", "alpha\nnew", replace_all=False).text == (
        "alpha\r\nnew\r\nbeta\r\ngamma\ndelta\r\n"
    )
    assert replace_in_view(MIXED, "gamma", "gamma\nnew", replace_all=False).text == (
        "alpha\r\nbeta\r\ngamma\nnew\ndelta\r\n"
    )
    assert replace_in_view(MIXED, "gamma\ndelta", "GAMMA\ndelta\nepsilon", replace_all=False).text == (
        "alpha\r\nbeta\r\nGAMMA\ndelta\r\nepsilon\r\n"
    )


def test_replace_all_counts_in_the_view_and_a_crlf_in_old_string_is_read_as_lf() -> None:
    assert replace_in_view(MIXED, "a\r\n", "A\n", replace_all=True) == Replaced(
        "alphA\r\nbetA\r\ngammA\ndeltA\r\n", 4
    )
    assert replace_in_view(MIXED, "a\n", "A\n", replace_all=False).count == 4
    assert replace_in_view(MIXED, "zeta", "x", replace_all=False) == Replaced(MIXED, 0)


def test_a_whole_new_text_gets_each_lines_ending_back() -> None:
    assert restore_endings("a\r\nb\nc\r\n", "a\nB\nc\nd\n") == "a\r\nB\nc\r\nd\r\n"
    assert restore_endings("a\nb\n", "a\nb\nc\n") == "a\nb\nc\n"  # LF files are left alone
    assert restore_endings("a\r\nb", "a\nb\nc") == "a\r\nb\r\nc"


PIECES = ["a", "b", "é", "😀", " ", "x\u0301", "\n", "\r\n"]
TEXT = st.lists(st.sampled_from(PIECES), min_size=1, max_size=40).map("".join)


@settings(max_examples=500, deadline=None)
@given(TEXT, st.data(), st.lists(st.sampled_from(["n", "é", "\n", "😀", ""]), max_size=6).map("".join))
def test_the_view_changes_as_asked_and_untouched_lines_keep_their_bytes(
    real: str, data: st.DataObject, new: str
) -> None:
    seen = view(real)
    start = data.draw(st.integers(0, len(seen) - 1))
    old = seen[start : data.draw(st.integers(start + 1, len(seen)))]
    result = replace_in_view(real, old, new, replace_all=False)
    assert result.count == seen.count(old) if old else True
    assert view(result.text) == seen.replace(old, new, 1)
    first = seen.find(old)
    # The lines before the match's first line and after its last line are byte for byte the same.
    before = seen.rfind("\n", 0, first) + 1
    after_nl = seen.find("\n", first + len(old))
    lines_before = seen[:before].count("\n")
    lines_after = seen[after_nl + 1 :].count("\n") if after_nl >= 0 else 0
    real_lines, new_lines = real.split("\n"), result.text.split("\n")
    assert real_lines[:lines_before] == new_lines[:lines_before]
    if after_nl >= 0:
        tail = len(real_lines) - lines_after - 1
        assert real_lines[tail:] == new_lines[len(new_lines) - (len(real_lines) - tail) :]
    # No ending appears that the region did not have (an LF-only file stays LF-only).
    if "\r\n" not in real:
        assert "\r\n" not in result.text
