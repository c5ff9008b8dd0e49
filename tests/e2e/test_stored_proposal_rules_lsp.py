"""``agent.applyProposal`` of a resumed session judges every stored file again by the edit rules (issue
16, finding F6): a Git hook or a ``.env`` planted in the session file refuses the whole apply, naming the
files. A real ``agent-ls serve`` through pytest-lsp, against the scripted model server on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import command, field
from tests.e2e.test_sessions import _ended, _server
from tests.e2e.test_stored_proposal_rules_cli import _plant
from tests.support.model_server import FakeModelServer


async def test_a_planted_hook_in_a_resumed_proposal_is_refused_by_apply_proposal(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    (workspace / ".git" / "hooks").mkdir(parents=True, exist_ok=True)
    (workspace / "a.txt").write_text("one\n")
    write = {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "ONE\n"}}]}
    model_server.steps.extend([write, {"content": "Done."}])
    state = tmp_path / "state"
    async with _server(state, workspace, model_server) as first:
        session_id = str(field(await command(first, "agent.run", {"task": "change a"}), "sessionId"))
        await _ended(first, session_id, 1)
    _plant(state, workspace)

    async with _server(state, workspace, model_server) as second:
        refused = await command(second, "agent.applyProposal", {"sessionId": session_id})
        assert not field(refused, "applied")
        reason = field(refused, "failureReason")
        assert "the edit rules refuse .env (" in reason and ".git/hooks/pre-commit (" in reason
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists() and not (workspace / ".env").exists()
    assert (workspace / "a.txt").read_text() == "one\n"
