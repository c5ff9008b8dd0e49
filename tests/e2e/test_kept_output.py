"""Long tool output is kept whole in the session store and read again with ``read_output`` (issue 15,
Context): through a real ``agent-ls serve`` (pytest-lsp) and the scripted model server, in the run that
cut it, after a server restart in a continued session whose history a compaction pruned, and after a
forced ``agent.compact`` (docs/context.md, "Long tool output"; docs/sessions.md, "Kept outputs")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.e2e.conftest import SECRET_KEY, command, field
from tests.e2e.test_sessions import _ended, _run, _server
from tests.support.model_server import FakeModelServer

# 2,000 numbered lines, a planted key, 3,400 more: 5,401 lines, the key in the part the model does not see.
COMMAND = f"seq -w 1 2000; echo {SECRET_KEY}; seq -w 2001 5400"
WINDOW = "[providers.openai]\ncontext_window = 6000\nmax_output_tokens = 200\n"


def read_output(call_id: str, offset: int, limit: int) -> dict[str, Any]:
    arguments = {"call_id": call_id, "offset": offset, "limit": limit}
    return {"tool_calls": [{"id": f"r{offset}", "name": "read_output", "arguments": arguments}]}


def tool_results(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def page(first: int, last: int, lines: str) -> str:
    span = f"line {first:,}" if first == last else f"lines {first:,}–{last:,}"
    return f"[{span} of 5,401 of the output of call c1]\n{lines}"


async def test_a_cut_output_is_read_again_in_the_run_after_a_restart_and_after_compactions(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer, user_config: Callable[[str], None]
) -> None:
    state = tmp_path / "state"
    model_server.steps.extend(
        [
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": COMMAND}}]},
            read_output("c1", 2_500, 3),  # in the omitted middle
            {"content": "Line 2,500 holds 2499."},
        ]
    )
    async with _server(state, workspace, model_server) as client:
        client.agent["answers"].append("Allow once")  # type: ignore[attr-defined]
        session_id = await _run(client, "Count to 5400")
        assert field(await _ended(client, session_id, 1), "status") == "done"
    (cut,) = tool_results(model_server.requests[1])
    assert "characters omitted: lines 1,601–" in cut and "of 5,401 ...]" in cut
    assert cut.endswith(
        '[the whole output (5,401 lines) is kept: read_output {"call_id": "c1", "offset": 1601} reads on '
        "from line 1,601]\n</tool_result>"
    )
    assert page(2_500, 2_502, "2499\n2500\n2501\n") in tool_results(model_server.requests[2])[-1]
    (kept,) = state.glob(f"sessions/*/{session_id}.outputs/c1.txt")
    assert SECRET_KEY not in kept.read_text()
    assert kept.read_text().splitlines()[2_000] == "[redacted]"

    # A new server process with a small window: the follow-up's first request is pruned, and the
    # placeholder says how to get the output back.
    user_config(WINDOW)
    sent = len(model_server.requests)
    model_server.steps.extend(
        [read_output("c1", 1_999, 3), {"content": "Read."}, {"content": "SUMMARY of the session"}]
    )
    model_server.steps.extend([read_output("c1", 5_401, 1), {"content": "The last line is 5400."}])
    async with _server(state, workspace, model_server) as client:
        assert await _run(client, "What is around line 2,000?", session_id) == session_id
        assert field(await _ended(client, session_id, 1), "status") == "done"
        follow_up = model_server.requests[sent]
        shown = COMMAND.replace(SECRET_KEY, "[redacted]")  # the call as stored
        placeholder = (
            f"[output of bash `{shown}` at turn 1 pruned to save context; "
            'read_output {"call_id": "c1"} gets it back]'
        )
        assert any(placeholder in text for text in tool_results(follow_up))
        assert (
            page(1_999, 2_001, "1999\n2000\n[redacted]\n")
            in tool_results(model_server.requests[sent + 1])[-1]
        )

        done = await command(client, "agent.compact", {"sessionId": session_id})
        assert field(done, "how") == "summarized"
        summarized = "\n".join(str(m["content"]) for m in model_server.requests[-1]["messages"])
        assert '<conversation trust="data">' in summarized and placeholder in summarized

        assert await _run(client, "And the last line?", session_id) == session_id
        assert field(await _ended(client, session_id, 2), "status") == "done"
        assert page(5_401, 5_401, "5400") in tool_results(model_server.requests[-1])[-1]
