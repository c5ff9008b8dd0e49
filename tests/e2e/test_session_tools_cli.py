"""todo_write, memory and task from ``agent-ls run``: what the terminal shows; notes kept across processes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support import agent_cli
from tests.support.model_server import FakeModelServer

TODOS = [
    {"content": "Read a.txt", "status": "completed", "activeForm": "Reading a.txt"},
    {"content": "Summarize it", "status": "in_progress", "activeForm": "Summarizing it"},
]


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


def _run(root: Path, server: FakeModelServer, task: str) -> str:
    env = agent_cli.user_environment(AGENT_LS_BASE_URL=server.base_url)
    done = agent_cli.run(["run", task, "--model", "openai/test", "--workspace", str(root)], cwd=root, env=env)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_the_terminal_shows_the_todo_list_and_the_subagent_nested(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    steps = [
        _call("c1", "todo_write", {"todos": TODOS}),
        _call("c2", "task", {"description": "read a.txt", "prompt": "What does a.txt say?"}),
        _call("c3", "read_file", {"path": "a.txt"}),  # the subagent's
        {"content": "It says alpha."},
        {"content": "a.txt says alpha."},
    ]
    with FakeModelServer(steps) as server:
        stderr = _run(root, server, "Summarize a.txt")
    assert "  todos:\n    [x] Read a.txt\n    [>] Summarize it\n" in stderr
    assert "⤷ [read a.txt] → read_file" in stderr
    assert "⤷ [read a.txt] ■ run done: the model answered" in stderr


def test_memory_is_kept_across_processes(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    steps = [
        _call("c1", "memory_append", {"text": "The build uses make."}),
        {"content": "Noted."},
        _call("c2", "memory_read", {}),
        {"content": "The build uses make."},
    ]
    with FakeModelServer(steps) as server:
        _run(root, server, "Remember the build")
        _run(root, server, "How is it built?")
        (read,) = [m["content"] for m in server.requests[3]["messages"] if m["role"] == "tool"]
    assert "The build uses make." in read and 'trust="data"' in read


def test_a_continued_session_has_its_todo_list_and_loaded_tools(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    steps = [_call("c1", "todo_write", {"todos": TODOS}), {"content": "Planned."}, {"content": "Going on."}]
    with FakeModelServer(steps) as server:
        _run(root, server, "Plan the summary")
        env = agent_cli.user_environment(AGENT_LS_BASE_URL=server.base_url)
        args = ["run", "--continue", "Go on", "--model", "openai/test", "--workspace", str(root)]
        done = agent_cli.run(args, cwd=root, env=env)
        assert done.returncode == 0, done.stderr
        follow_up = server.requests[2]
    assert "[x] Read a.txt\n[>] Summarize it" in follow_up["messages"][-1]["content"]  # the reminder
    assert "todo_write" in [tool["function"]["name"] for tool in follow_up["tools"]]
