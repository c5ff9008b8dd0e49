"""Unified diffs and line counts of a FileChange: new files, missing final newline, CRLF."""

from __future__ import annotations

from agent_ls.core.proposal import FileChange
from agent_ls.workspace.diffs import line_counts, unified_diff


def test_modified_file() -> None:
    change = FileChange("src/a.py", False, "one\ntwo\nthree\n", 3, "one\n2\nthree\nfour\n")
    assert unified_diff(change) == (
        "--- a/src/a.py\n+++ b/src/a.py\n@@ -1,3 +1,4 @@\n one\n-two\n+2\n three\n+four\n"
    )
    assert line_counts(change) == (2, 1)


def test_new_file() -> None:
    change = FileChange("pkg/new.py", True, "", None, "a\nb\n")
    assert unified_diff(change) == "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1,2 @@\n+a\n+b\n"
    assert line_counts(change) == (2, 0)


def test_no_newline_at_end_of_file() -> None:
    change = FileChange("a.txt", False, "a\nb", None, "a\nc")
    assert unified_diff(change) == (
        "--- a/a.txt\n"
        "+++ b/a.txt\n"
        "@@ -1,2 +1,2 @@\n"
        " a\n"
        "-b\n"
        "\\ No newline at end of file\n"
        "+c\n"
        "\\ No newline at end of file\n"
    )


def test_adding_the_final_newline() -> None:
    change = FileChange("a.txt", False, "a", None, "a\n")
    assert unified_diff(change) == (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n"
    )
    assert line_counts(change) == (1, 1)


def test_crlf_lines_keep_their_endings() -> None:
    change = FileChange("w.txt", False, "a\r\nb\r\n", None, "a\r\nB\r\n")
    assert unified_diff(change) == "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+B\r\n"


def test_line_ending_change_alone_is_a_changed_line() -> None:
    change = FileChange("w.txt", False, "a\nb\n", None, "a\r\nb\n")
    assert line_counts(change) == (1, 1)


def test_lone_cr_and_form_feed() -> None:
    change = FileChange("m.txt", False, "a\rb\x0cc\r", None, "a\rB\x0cc\r")
    assert unified_diff(change) == "--- a/m.txt\n+++ b/m.txt\n@@ -1,2 +1,2 @@\n a\r\n-b\x0cc\r\n+B\x0cc\r\n"


def test_unchanged_file_has_an_empty_diff() -> None:
    assert unified_diff(FileChange("a", False, "x\n", None, "x\n")) == ""
    assert line_counts(FileChange("a", False, "x\n", None, "x\n")) == (0, 0)
