"""read_file through the registry: numbering, paging, long lines, line endings, refusals."""

from __future__ import annotations

from agent_ls.core.messages import ToolResultMessage
from agent_ls.tools import read_file
from tests.unit.tools.harness import make_harness


def _numbered(first: int, lines: list[str]) -> str:
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, first))


async def test_lines_are_numbered_from_1_like_cat_n() -> None:
    h = make_harness({"src/app.py": "import os\n\ndef main():\n    pass\n"})
    assert await h.text("read_file", {"path": "src/app.py"}) == (
        "     1\timport os\n     2\t\n     3\tdef main():\n     4\t    pass"
    )


async def test_last_line_without_newline_is_shown() -> None:
    h = make_harness({"a.txt": "one\ntwo"})
    assert await h.text("read_file", {"path": "a.txt"}) == _numbered(1, ["one", "two"])


async def test_offset_is_1_indexed_and_limit_counts_lines_with_a_footer() -> None:
    h = make_harness({"a.txt": "".join(f"line {n}\n" for n in range(1, 11))})
    text = await h.text("read_file", {"path": "a.txt", "offset": 3, "limit": 4})
    assert text == _numbered(3, ["line 3", "line 4", "line 5", "line 6"]) + (
        "\n… 4 more lines; call again with offset=7"
    )
    assert await h.text("read_file", {"path": "a.txt", "offset": 10}) == _numbered(10, ["line 10"])


async def test_default_limit_is_2000_lines() -> None:
    h = make_harness({"big.txt": "x\n" * 3234})
    lines = (await h.text("read_file", {"path": "big.txt"})).split("\n")
    assert len(lines) == 2001
    assert lines[-2] == "  2000\tx"
    assert lines[-1] == "… 1,234 more lines; call again with offset=2001"


async def test_one_more_line_is_singular() -> None:
    h = make_harness({"a.txt": "a\nb\n"})
    text = await h.text("read_file", {"path": "a.txt", "limit": 1})
    assert text == "     1\ta\n… 1 more line; call again with offset=2"


async def test_long_lines_are_cut_with_a_note() -> None:
    h = make_harness({"min.js": "a" * 2500 + "\nok\n"})
    text = await h.text("read_file", {"path": "min.js"})
    assert text == (
        f"     1\t{'a' * 2000} [line truncated: 2,500 chars; more with offset=1, column=2001]\n     2\tok"
    )


async def test_column_reads_on_inside_a_long_line() -> None:
    h = make_harness({"min.js": "a" * 2000 + "b" * 2000 + "c" * 500 + "\nok\n"})
    text = await h.text("read_file", {"path": "min.js", "column": 2001, "limit": 1})
    assert text == (
        f"     1\t{'b' * 2000} [columns 2,001-4,000 of 4,500; more with offset=1, column=4001]\n"
        "… 1 more line; call again with offset=2"
    )
    text = await h.text("read_file", {"path": "min.js", "column": 4001})
    assert text == f"     1\t{'c' * 500} [columns 4,001-4,500 of 4,500]\n     2\tok"


async def test_a_column_past_the_end_of_the_line_is_an_error() -> None:
    h = make_harness({"a.txt": "short\n"})
    result = await h.call("read_file", {"path": "a.txt", "column": 7})
    assert result.content == "Error: column 7 is past the end of line 1 of a.txt, which has 5 characters."


async def test_a_page_stops_before_the_character_budget_and_says_where_to_continue() -> None:
    line = "y" * 1000
    h = make_harness({"wide.txt": f"{line}\n" * 100})
    text = await h.text("read_file", {"path": "wide.txt"})
    assert len(text) <= read_file.MAX_CHARS + 100
    shown = read_file.MAX_CHARS // (len(line) + 8)
    assert text.split("\n")[-1] == f"… {100 - shown} more lines; call again with offset={shown + 1}"


async def test_crlf_is_displayed_without_carriage_returns() -> None:
    h = make_harness({"win.txt": "a\r\nb\r\n"})
    assert await h.text("read_file", {"path": "win.txt"}) == _numbered(1, ["a", "b"])


async def test_empty_file() -> None:
    h = make_harness({"empty.txt": ""})
    assert await h.text("read_file", {"path": "empty.txt"}) == "(empty file)"


async def test_pending_edits_are_what_is_read() -> None:
    h = make_harness({"a.txt": "old\n"})
    h.workspace.pending["a.txt"] = "new\n"
    assert await h.text("read_file", {"path": "a.txt"}) == "     1\tnew"


async def test_a_directory_points_to_list_files() -> None:
    h = make_harness({"src/app.py": "x\n"})
    result = await h.call("read_file", {"path": "src"})
    assert result == ToolResultMessage(
        "c1", "read_file", "Error: src is a directory; use list_files to see what it contains.", is_error=True
    )
    root = await h.call("read_file", {"path": "."})
    assert root.content == "Error: the workspace root is a directory; use list_files to see what it contains."


async def test_offset_past_the_end_is_an_error() -> None:
    h = make_harness({"a.txt": "a\nb\n"})
    result = await h.call("read_file", {"path": "a.txt", "offset": 5})
    assert result.content == "Error: offset 5 is past the end of a.txt, which has 2 lines."
    assert result.is_error


async def test_missing_file_error_comes_from_the_workspace() -> None:
    h = make_harness()
    result = await h.call("read_file", {"path": "nope.py"})
    assert (result.content, result.is_error) == ("Error: file not found: 'nope.py'", True)


async def test_secret_file_is_refused() -> None:
    h = make_harness({".env": "KEY=1\n"})
    result = await h.call("read_file", {"path": ".env"})
    assert result.content == "Error: '.env' is a secret file; it cannot be read or written"
