"""list_files, grep, write_file and bash through the registry."""

from __future__ import annotations

from agent_ls.core.events import ProposalChanged, ToolCallFinished
from agent_ls.core.file_views import SearchHit, SearchResult
from agent_ls.core.messages import ToolResultMessage
from agent_ls.core.ports import CommandResult
from tests.unit.tools.harness import make_harness

# list_files


async def test_list_files_one_path_per_line() -> None:
    h = make_harness({"src/b.py": "", "src/a.py": "", "README.md": ""})
    assert await h.text("list_files", {}) == "README.md\nsrc/a.py\nsrc/b.py"
    assert await h.text("list_files", {"path": "src", "pattern": "*a.py"}) == "src/a.py"


async def test_list_files_says_when_it_stops_at_100() -> None:
    h = make_harness({f"gen/f{n:04}.txt": "" for n in range(2340)})
    lines = (await h.text("list_files", {"path": "gen"})).split("\n")
    assert len(lines) == 101
    assert lines[:2] == ["gen/f0000.txt", "gen/f0001.txt"]
    assert lines[-1] == "(first 100 of 2,340 entries; narrow with path or pattern)"


async def test_list_files_empty_and_file_paths() -> None:
    h = make_harness({"a.py": ""})
    assert await h.text("list_files", {"pattern": "*.rs"}) == "no files match"
    result = await h.call("list_files", {"path": "a.py"})
    assert result.content == "Error: a.py is a file, not a directory; use read_file to read it."


# grep


async def test_grep_returns_path_line_text() -> None:
    h = make_harness({"a.py": "import os\nx = 1\n", "b.txt": "import this\n"})
    assert await h.text("grep", {"pattern": "^import", "glob": "*.py"}) == "a.py:1:1:import os"
    assert h.workspace.searches == [("^import", ".", "*.py")]


async def test_grep_no_matches() -> None:
    h = make_harness({"a.py": "x\n"})
    assert await h.text("grep", {"pattern": "nothing"}) == "no matches"


async def test_grep_caps_at_200_lines_with_a_note() -> None:
    h = make_harness({"a.txt": "hit\n" * 250})
    lines = (await h.text("grep", {"pattern": "hit"})).split("\n")
    assert len(lines) == 201
    assert lines[-1] == "(showing 200 of 250 matches; narrow with path, glob or pattern)"


async def test_grep_files_take_turns_so_one_cannot_hide_the_others() -> None:
    h = make_harness({"a.txt": "hit\n" * 300, "b.txt": "x\nhit\n", "c.txt": "hit\n"})
    lines = (await h.text("grep", {"pattern": "hit"})).split("\n")
    assert lines[:3] == ["a.txt:1:1:hit", "a.txt:2:1:hit", "a.txt:3:1:hit"]
    assert "b.txt:2:1:hit" in lines and "c.txt:1:1:hit" in lines
    assert lines[-1] == "(showing 200 of 302 matches; narrow with path, glob or pattern)"


async def test_grep_shows_windows_of_long_lines_with_their_columns() -> None:
    h = make_harness()
    window = SearchHit("dist/app.js", 1, 20_001, "x" * 150 + "needle" + "y" * 150, 19_851, 800_000)
    h.workspace.search_result = SearchResult((window,), {"dist/app.js": 1})
    text = await h.text("grep", {"pattern": "needle"})
    assert text == f"dist/app.js:1:20001:…{'x' * 150}needle{'y' * 150}…"


# write_file


async def test_write_file_creates_then_overwrites() -> None:
    h = make_harness()
    created = await h.call("write_file", {"path": "notes/new.md", "content": "hi\n"})
    assert created == ToolResultMessage(
        "c1", "write_file", "Created notes/new.md. The change is a proposal the user reviews."
    )
    assert h.events[-1] == ProposalChanged(("notes/new.md",))
    again = await h.text("write_file", {"path": "notes/new.md", "content": "hello\n"})
    assert again == "Overwrote notes/new.md. The change is a proposal the user reviews."
    assert h.workspace.pending == {"notes/new.md": "hello\n"}
    assert h.workspace.files == {}


async def test_write_file_keeps_crlf_line_endings_of_an_existing_file() -> None:
    h = make_harness({"win.txt": "a\r\nb\r\n"})
    await h.text("write_file", {"path": "win.txt", "content": "a\nc\n"})
    assert h.workspace.pending == {"win.txt": "a\r\nc\r\n"}


async def test_write_file_refuses_a_directory() -> None:
    h = make_harness({"src/a.py": ""})
    result = await h.call("write_file", {"path": "src", "content": ""})
    assert (result.content, result.is_error) == ("Error: src is a directory; give a file path.", True)


# bash


async def test_bash_reports_exit_code_and_output() -> None:
    h = make_harness(results=[CommandResult(exit_code=1, output="1 failed\n")])
    result = await h.call("bash", {"command": "pytest -q"})
    assert result == ToolResultMessage("c1", "bash", "exit code 1\n1 failed\n")
    assert h.runner.calls == [("pytest -q", 50.0)]


async def test_bash_changes_brought_into_the_proposal_emit_proposal_changed() -> None:
    output = "[agent-ls: brought into the proposal: app.py]\n"
    h = make_harness(results=[CommandResult(exit_code=0, output=output, changed_paths=("app.py",))])
    await h.call("bash", {"command": "ls"})  # allowed by the built-in rules: no question
    assert any(isinstance(e, ProposalChanged) for e in h.events)


async def test_bash_without_changes_emits_no_proposal_changed() -> None:
    h = make_harness(results=[CommandResult(exit_code=0, output="ok\n")])
    await h.call("bash", {"command": "pytest -q"})
    assert not any(isinstance(e, ProposalChanged) for e in h.events)


async def test_bash_without_output() -> None:
    h = make_harness(results=[CommandResult(exit_code=0, output="")])
    assert await h.text("bash", {"command": "ls empty"}) == "exit code 0\n(no output)"


async def test_bash_timeout_says_so() -> None:
    h = make_harness(results=[CommandResult(exit_code=None, output="collecting ...", timed_out=True)])
    result = await h.call("bash", {"command": "pytest"})
    text = "timed out after 50 s; the command was stopped. Output so far:\ncollecting ..."
    assert result == ToolResultMessage("c1", "bash", text, is_error=True)
    assert h.events[-1] == ToolCallFinished("c1", "bash", True, text)
