"""The session's own tools at the registry: todo_write, the memory tools, and their deferral (load_tools).

Each test drives the real ``ToolRegistry`` (harness.py) with the real tools on fakes of the ports; the
memory notes are a real file under ``tmp_path``.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

from agent_ls.core.events import TodosChanged, VerdictGiven
from agent_ls.core.messages import AssistantMessage, ToolCall, UserMessage
from agent_ls.core.todos import TodoItem, TodoList
from agent_ls.tools import sent_tools
from agent_ls.tools.memory import MAX_BYTES, READ_HEADER, MemoryNotes
from agent_ls.tools.registry import SESSION_RULE
from agent_ls.tools.session_tools import deferred_tools, origin_of
from tests.unit.tools.harness import Harness, make_harness

SNAPSHOT = Path(__file__).parent / "snapshots" / "deferred_tool_specs.json"
SECRET = "sk-proj-" + "a1B2" * 8


def _redact(text: str) -> str:
    return text.replace(SECRET, "[redacted]")


def _harness(tmp_path: Path, todos: TodoList | None = None) -> Harness:
    harness = make_harness(tools=sent_tools())
    notes = MemoryNotes(tmp_path / "memory" / "ws-0123456789ab" / "notes.md", _redact)
    harness.registry.set_extra_tools(
        [], deferred_tools(todos or TodoList(), notes, lambda: "session s1 turn 2")
    )
    return harness


def _names(harness: Harness) -> list[str]:
    return [spec.name for spec in harness.registry.specs()]


def test_deferred_tools_are_sent_as_names_until_loaded(tmp_path: Path) -> None:
    harness = _harness(tmp_path)
    assert _names(harness)[-1] == "load_tools"
    assert "todo_write" not in _names(harness)
    loader = harness.registry.specs()[-1]
    assert loader.description == (
        "Load more tools: write_file (create a file), todo_write (a task list the user sees), memory_read, "
        "memory_append, memory_rewrite (your workspace notes, kept across sessions)."
    )


async def test_load_tools_sends_their_schemas_from_then_on(tmp_path: Path) -> None:
    harness = _harness(tmp_path)
    text = await harness.text("load_tools", {"names": ["todo_write", "memory_read"]})
    assert text == "Loaded todo_write, memory_read; call them now."
    assert _names(harness)[-3:] == ["load_tools", "todo_write", "memory_read"]
    again = await harness.call("load_tools", {"names": ["todo_write"]})  # no longer a choice
    assert again.content == (
        "Error: no tool to load named 'todo_write'; choose from: write_file, memory_append, memory_rewrite"
    )


async def test_load_tools_names_the_choices_on_a_bad_name(tmp_path: Path) -> None:
    harness = _harness(tmp_path)
    result = await harness.call("load_tools", {"names": ["todo_read"]})
    assert result.is_error
    assert "choose from: write_file, todo_write, memory_read, memory_append, memory_rewrite" in result.content
    empty = await harness.call("load_tools", {"names": []})
    assert empty.content == (
        "Error: name the tools to load, from: "
        "write_file, todo_write, memory_read, memory_append, memory_rewrite"
    )


async def test_a_deferred_tool_called_by_name_runs_and_is_loaded(tmp_path: Path) -> None:
    harness = _harness(tmp_path)
    await harness.text("memory_read", {})
    assert "memory_read" in _names(harness)
    assert "todo_write" not in _names(harness)


async def test_loading_them_all_drops_load_tools(tmp_path: Path) -> None:
    harness = _harness(tmp_path)
    names = ["write_file", "todo_write", "memory_read", "memory_append", "memory_rewrite"]
    await harness.text("load_tools", {"names": names})
    assert _names(harness)[-5:] == names
    assert "load_tools" not in _names(harness)


async def test_todo_write_replaces_the_whole_list_and_says_so(tmp_path: Path) -> None:
    todos = TodoList()
    harness = _harness(tmp_path, todos)
    first = [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
    ]
    assert (
        await harness.text("todo_write", {"todos": first}) == "Todo list saved: 1 of 3 done, 1 in progress."
    )
    items = (
        TodoItem("Read the code", "completed", "Reading the code"),
        TodoItem("Fix the bug", "in_progress", "Fixing the bug"),
        TodoItem("Run the tests", "pending", "Running the tests"),
    )
    assert todos.items == items
    assert todos.render() == "[x] Read the code\n[>] Fix the bug\n[ ] Run the tests"
    assert TodosChanged(items) in harness.events
    verdict = next(e for e in harness.events if isinstance(e, VerdictGiven))
    assert verdict == VerdictGiven("c1", "todo_write", "allow", SESSION_RULE, "todo_write")

    second = [{"content": "Ship it", "status": "pending", "activeForm": "Shipping it"}]
    await harness.text("todo_write", {"todos": second})
    assert todos.items == (TodoItem("Ship it", "pending", "Shipping it"),)
    assert await harness.text("todo_write", {"todos": []}) == "Todo list cleared."
    assert todos.items == ()


async def test_todo_write_errors_tell_the_model_what_to_fix(tmp_path: Path) -> None:
    todos = TodoList()
    harness = _harness(tmp_path, todos)
    two = [
        {"content": "A", "status": "in_progress", "activeForm": "Doing A"},
        {"content": "B", "status": "in_progress", "activeForm": "Doing B"},
    ]
    result = await harness.call("todo_write", {"todos": two})
    assert result.is_error
    assert "2 items are in_progress; keep one in_progress, the others pending" in result.content
    bad = [{"content": "A", "status": "done", "activeForm": "Doing A"}]
    result = await harness.call("todo_write", {"todos": bad})
    assert "- todos.0.status: Input should be 'pending', 'in_progress' or 'completed'" in result.content
    missing = [{"content": "A", "status": "pending"}]
    result = await harness.call("todo_write", {"todos": missing})
    assert "- todos.0.activeForm: Field required" in result.content
    assert todos.items == ()
    assert not any(isinstance(e, TodosChanged) for e in harness.events)


async def test_memory_entries_record_their_origin_and_are_redacted(tmp_path: Path) -> None:
    harness = _harness(tmp_path)
    assert await harness.text("memory_read", {}) == "No notes yet for this workspace."
    added = await harness.text("memory_append", {"text": f"The API key is {SECRET}; tests run with tox."})
    assert added.startswith("Note added (")
    path = tmp_path / "memory" / "ws-0123456789ab" / "notes.md"
    stored = path.read_text()
    assert SECRET not in stored
    heading, body, _, _ = stored.split("\n")
    assert heading.startswith("## 20") and heading.endswith("Z session s1 turn 2")
    assert body == "The API key is [redacted]; tests run with tox."
    assert os.stat(path).st_mode & 0o777 == 0o600
    read = await harness.text("memory_read", {})
    assert read == f"{READ_HEADER}\n\n{stored.strip()}"


async def test_memory_rewrite_replaces_everything(tmp_path: Path) -> None:
    harness = _harness(tmp_path)
    await harness.text("memory_append", {"text": "old note"})
    await harness.text("memory_rewrite", {"text": "condensed"})
    stored = (tmp_path / "memory" / "ws-0123456789ab" / "notes.md").read_text()
    assert "old note" not in stored
    assert stored.split("\n")[0].endswith("Z rewritten by session s1 turn 2")
    assert stored.split("\n")[1] == "condensed"


async def test_memory_is_bounded(tmp_path: Path) -> None:
    harness = _harness(tmp_path)
    await harness.text("memory_rewrite", {"text": "x" * (MAX_BYTES - 200)})
    result = await harness.call("memory_append", {"text": "y" * 300})
    assert result.is_error
    assert "over the 16,000-byte limit; condense them with memory_rewrite first" in result.content


async def test_memory_persists_for_the_next_session(tmp_path: Path) -> None:
    await _harness(tmp_path).text("memory_append", {"text": "use uv, not pip"})
    later = _harness(tmp_path)  # another session of the same workspace
    assert "use uv, not pip" in await later.text("memory_read", {})


def test_origin_counts_the_turns_since_the_task() -> None:
    reply = AssistantMessage(text="", tool_calls=(ToolCall("c", "read_file", "{}"),))
    history = [UserMessage("first"), reply, UserMessage("second"), reply, reply]
    assert origin_of("abc", history) == "session abc turn 2"


def test_deferred_specs_match_the_snapshot(tmp_path: Path) -> None:
    tools = deferred_tools(TodoList(), MemoryNotes(tmp_path / "n.md", _redact), lambda: "")
    harness = make_harness(tools=[])
    harness.registry.set_extra_tools([], tools)
    specs = [asdict(spec) for spec in harness.registry.specs()]
    specs += [asdict(tool.spec()) for tool in tools]
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(json.dumps(specs, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert specs == json.loads(SNAPSHOT.read_text(encoding="utf-8"))
