"""edit_file through the registry: exact replacement, refusals that change nothing, CRLF files."""

from __future__ import annotations

from agent_ls.core.events import ProposalChanged
from agent_ls.core.messages import ToolResultMessage
from tests.unit.tools.harness import make_harness

SOURCE = "def mean(values):\n    return sum(values) / (len(values) - 1)\n"


async def test_replaces_one_occurrence_as_a_proposal() -> None:
    h = make_harness({"stats.py": SOURCE})
    result = await h.call(
        "edit_file", {"path": "stats.py", "old_string": "(len(values) - 1)", "new_string": "len(values)"}
    )
    assert result == ToolResultMessage(
        "c1", "edit_file", "Edited stats.py (1 replacement). The change is a proposal the user reviews."
    )
    assert h.workspace.pending == {"stats.py": "def mean(values):\n    return sum(values) / len(values)\n"}
    assert h.workspace.files["stats.py"] == SOURCE
    assert h.events[-1] == ProposalChanged(("stats.py",))


async def test_missing_old_string_says_to_read_again() -> None:
    h = make_harness({"stats.py": SOURCE})
    result = await h.call("edit_file", {"path": "stats.py", "old_string": "len(values)-1", "new_string": "x"})
    assert result == ToolResultMessage(
        "c1",
        "edit_file",
        "Error: old_string not found in stats.py; read the file again and copy the exact text, "
        "including whitespace.",
        is_error=True,
    )
    assert h.workspace.pending == {}


async def test_ambiguous_old_string_says_how_many_and_what_to_do() -> None:
    h = make_harness({"a.py": "x = 1\nx = 1\nx = 1\n"})
    result = await h.call("edit_file", {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"})
    assert result.content == (
        "Error: old_string occurs 3 times in a.py; add surrounding lines to make it unique, "
        "or set replace_all to true to replace every occurrence."
    )
    assert result.is_error and h.workspace.pending == {}


async def test_replace_all_replaces_every_occurrence() -> None:
    h = make_harness({"a.py": "x = 1\nx = 1\nx = 1\n"})
    text = await h.text(
        "edit_file", {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2", "replace_all": True}
    )
    assert text == "Edited a.py (3 replacements). The change is a proposal the user reviews."
    assert h.workspace.pending == {"a.py": "x = 2\nx = 2\nx = 2\n"}


async def test_an_edit_never_empties_a_file() -> None:
    h = make_harness({"a.py": "x = 1\n"})
    result = await h.call("edit_file", {"path": "a.py", "old_string": "x = 1\n", "new_string": ""})
    assert result.content == "Error: this edit would empty the file; use write_file if that is intended."
    assert result.is_error and h.workspace.pending == {}


async def test_identical_strings_are_refused() -> None:
    h = make_harness({"a.py": "x = 1\n"})
    result = await h.call("edit_file", {"path": "a.py", "old_string": "x", "new_string": "x"})
    assert result.content == "Error: old_string and new_string are identical; there is nothing to change."


async def test_empty_old_string_is_an_argument_error() -> None:
    h = make_harness({"a.py": "x = 1\n"})
    result = await h.call("edit_file", {"path": "a.py", "old_string": "", "new_string": "y"})
    assert result.is_error
    assert "- old_string: String should have at least 1 character\n" in result.content


async def test_crlf_file_matches_lf_old_string_and_keeps_its_bytes() -> None:
    crlf = "a\r\nb\r\nc\r\nlast line\r\n"
    h = make_harness({"win.txt": crlf})
    text = await h.text("edit_file", {"path": "win.txt", "old_string": "b\nc\n", "new_string": "B\nC\nD\n"})
    assert text == "Edited win.txt (1 replacement). The change is a proposal the user reviews."
    assert h.workspace.pending == {"win.txt": "a\r\nB\r\nC\r\nD\r\nlast line\r\n"}


async def test_single_line_edit_in_a_crlf_file_touches_nothing_else() -> None:
    h = make_harness({"win.txt": "keep\r\nold\r\nkeep\n"})
    await h.text("edit_file", {"path": "win.txt", "old_string": "old", "new_string": "new"})
    assert h.workspace.pending == {"win.txt": "keep\r\nnew\r\nkeep\n"}


async def test_single_line_old_string_with_multi_line_new_string_keeps_crlf() -> None:
    h = make_harness({"f.py": "def f():\r\n    return 1\r\n"})
    await h.text(
        "edit_file", {"path": "f.py", "old_string": "    return 1", "new_string": "    x = 1\n    return x"}
    )
    assert h.workspace.pending == {"f.py": "def f():\r\n    x = 1\r\n    return x\r\n"}


async def test_edits_build_on_pending_edits() -> None:
    h = make_harness({"a.py": "one\n"})
    await h.text("edit_file", {"path": "a.py", "old_string": "one", "new_string": "two"})
    await h.text("edit_file", {"path": "a.py", "old_string": "two", "new_string": "three"})
    assert h.workspace.pending == {"a.py": "three\n"}


async def test_missing_file() -> None:
    h = make_harness()
    result = await h.call("edit_file", {"path": "nope.py", "old_string": "a", "new_string": "b"})
    assert (result.content, result.is_error) == ("Error: file not found: 'nope.py'", True)
