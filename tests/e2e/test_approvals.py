"""Approvals over LSP: "Deny" with feedback the model reads, "Always allow" written to the user config,
and no "Always allow" where an explicit rule asks. A real server, a real client, a real HTTP model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from tests.e2e.conftest import (
    CONFIG_DIR,
    command,
    field,
    model_settings,
    run_ended,
    start,
    tool_messages,
)
from tests.support.model_server import FakeModelServer


def bash(call_id: str, command_text: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "bash", "arguments": {"command": command_text}}]}


def verdicts(client: LanguageClient) -> list[tuple[str, str]]:
    """(verdict, rule) of each ``agent/event`` of kind verdict, and the transcript's permission lines."""
    events = [e for e in client.agent["events"] if field(e, "kind") == "verdict"]  # type: ignore[attr-defined]
    return [(field(e, "verdict"), field(e, "text")) for e in events]


def permission_lines(client: LanguageClient) -> list[str]:
    return [m.message.strip() for m in client.log_messages if m.message.strip().startswith("permission ")]


async def test_deny_feedback_reaches_the_model_and_always_is_written(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    user_config: Callable[[str], None],
) -> None:
    user_config('# my config\nmodel = "openai/test-model"\n')
    model_server.steps.extend(
        [bash("c1", "make lint"), bash("c2", "make test"), bash("c3", "make  test"), {"content": "ok"}]
    )
    client.agent["answers"].extend(  # type: ignore[attr-defined]
        [{"title": "Deny", "feedback": "run make test instead"}, {"title": "Always allow"}]
    )
    await start(client, workspace, model_settings(model_server))
    started = await command(client, "agent.run", {"task": "lint"})
    ended = await run_ended(client, field(started, "sessionId"))
    assert field(ended, "status") == "done", field(ended, "reason")

    prompts = client.agent["prompts"]  # type: ignore[attr-defined]
    assert [p.message.splitlines()[0] for p in prompts] == [
        "agent-ls wants to run bash: make lint",
        "agent-ls wants to run bash: make test",
    ]
    assert [a.title for a in prompts[0].actions] == [
        "Allow once",
        "Allow for this session",
        "Always allow",
        "Deny",
    ]
    assert prompts[1].message.endswith('"Always allow" adds to your user config: bash: make test')
    denied = tool_messages(model_server.requests[1])[0]["content"]
    assert "denied by user: make lint was not run. The user said: run make test instead" in denied
    assert (CONFIG_DIR / "agent-ls.toml").read_text() == (
        '# my config\nmodel = "openai/test-model"\n\n[permissions]\nallow = ["bash: make test"]\n'
    )
    assert verdicts(client) == [
        ("deny", "fallback: no rule matches"),
        ("allow", "fallback: no rule matches"),
        ("allow", "bash: make test (user config)"),
    ]
    assert permission_lines(client) == [
        "permission deny (fallback: no rule matches, user answered deny): make lint",
        "permission allow (fallback: no rule matches, user answered always): make test",
        "permission allow (bash: make test (user config)): make  test",
    ]


async def test_an_explicit_ask_rule_is_never_offered_always(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    user_config: Callable[[str], None],
) -> None:
    user_config('[permissions]\nask = ["Bash(make:*)"]\n')
    model_server.steps.extend([bash("c1", "make lint"), {"content": "ok"}])
    client.agent["answers"].append({"title": "Allow once"})  # type: ignore[attr-defined]
    await start(client, workspace, model_settings(model_server))
    started = await command(client, "agent.run", {"task": "lint"})
    ended = await run_ended(client, field(started, "sessionId"))
    assert field(ended, "status") == "done", field(ended, "reason")

    (prompt,) = client.agent["prompts"]  # type: ignore[attr-defined]
    assert [a.title for a in prompt.actions] == ["Allow once", "Allow for this session", "Deny"]
    assert prompt.message.endswith(
        "No \"Always allow\": an explicit rule asks (bash: make * (user config)), and 'always' never lifts "
        "an ask or deny rule."
    )
    assert verdicts(client) == [("allow", "bash: make * (user config)")]
