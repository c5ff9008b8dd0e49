"""agent.sessionHistory (issue 16): a session stored by one server is read back by another, run by run, as the
VS Code Agent view shows a resumed session: tasks, answers, tool calls with verdicts and results, status and
usage, and the todo list. A real ``agent-ls serve`` through pytest-lsp, the scripted model on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import command, field, fix_step
from tests.e2e.test_sessions import _ended, _run, _server
from tests.support.model_server import FakeModelServer

TODOS = {"todos": [{"content": "Fix mean", "status": "completed", "activeForm": "Fixing mean"}]}


async def test_a_stored_session_is_read_back_run_by_run(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend(
        [
            {"content": "Let me fix it.", "tool_calls": [{"name": "todo_write", "arguments": TODOS}]},
            fix_step("call_fix"),
            {"content": "Fixed **mean()**."},
            {"content": "It divides by len(values) now."},
        ]
    )
    state = tmp_path / "state"
    async with _server(state, workspace, model_server) as first:
        session_id = await _run(first, "Fix mean in stats.py")
        await _ended(first, session_id, 1)
        await _run(first, "What changed?", session_id)
        await _ended(first, session_id, 2)

    async with _server(state, workspace, model_server) as second:
        result = await command(second, "agent.sessionHistory", {"sessionId": session_id})
        assert field(result, "sessionId") == session_id
        first_run, second_run = field(result, "runs")
        assert field(first_run, "task") == "Fix mean in stats.py"
        assert (field(first_run, "status"), field(first_run, "reason")) == ("done", "the model answered")
        items = field(first_run, "items")
        assert [(field(i, "kind"), field(i, "text") or field(i, "toolName")) for i in items] == [
            ("text", "Let me fix it."),
            ("tool", "todo_write"),
            ("tool", "edit_file"),
            ("text", "Fixed **mean()**."),
        ]
        edit = items[2]
        assert field(edit, "verdict") == "allow" and field(edit, "rule")
        assert '"path": "stats.py"' in field(edit, "arguments") and "stats.py" in field(edit, "result")
        assert field(edit, "isError") is False
        assert field(field(first_run, "usage"), "inputTokens") > 0
        assert field(second_run, "task") == "What changed?"
        assert [field(i, "text") for i in field(second_run, "items")] == ["It divides by len(values) now."]
        (todo,) = field(result, "todos")
        assert (field(todo, "content"), field(todo, "status")) == ("Fix mean", "completed")

        with pytest.raises(JsonRpcException, match="no session 0123456789ab is stored"):
            await command(second, "agent.sessionHistory", {"sessionId": "0123456789ab"})
