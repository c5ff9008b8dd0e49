"""Run budgets (tokens, US dollars) stop a run cleanly with their reason: ``agent.run`` fields, the editor's
settings, ``agent-ls.toml``'s ``[budget]`` and the command line's flags, through real processes."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from tests.e2e.conftest import command, field, model_settings, run_ended, start
from tests.support.agent_cli import run, user_environment
from tests.support.model_server import FakeModelServer

READ = {"tool_calls": [{"name": "read_file", "arguments": {"path": "stats.py"}}]}
PRICED = """
[providers.openai.prices]
input = 1000.0
output = 1000.0
"""


def _looping(server: FakeModelServer, turns: int = 6) -> None:
    server.steps.extend([READ] * turns + [{"content": "done"}])


async def _run(client: LanguageClient, task: dict[str, Any]) -> Any:
    started = await command(client, "agent.run", task)
    return await run_ended(client, field(started, "sessionId"))


async def test_a_token_budget_from_agent_run_stops_the_run(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    _looping(model_server)
    await start(client, workspace, model_settings(model_server))
    ended = await _run(client, {"task": "Read it", "maxTokens": 2000})
    assert field(ended, "status") == "stopped"
    # The first request alone is ~1,400 tokens: the budget is spent after the second turn.
    assert field(ended, "reason").startswith("token budget of 2,000 spent (")
    assert len(model_server.requests) == 2
    # The last turn's tool result is in place: the history stays valid for a follow-up.
    assert all(m["role"] != "tool" or m["content"] for m in model_server.requests[-1]["messages"])


async def test_a_token_budget_from_the_settings_stops_the_run(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    _looping(model_server)
    await start(client, workspace, model_settings(model_server, maxTokens=100))
    ended = await _run(client, {"task": "Read it"})
    assert field(ended, "status") == "stopped"
    assert field(ended, "reason").startswith("token budget of 100 spent (")
    assert len(model_server.requests) == 1


async def test_a_cost_budget_stops_the_run_with_its_reason(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    user_config: Callable[[str], None],
) -> None:
    user_config(PRICED)
    _looping(model_server)
    await start(client, workspace, model_settings(model_server))
    ended = await _run(client, {"task": "Read it", "maxCostUsd": 0.5})
    assert field(ended, "status") == "stopped"
    assert field(ended, "reason").startswith("cost budget of $0.5 spent ($")
    assert len(model_server.requests) == 1


async def test_a_budget_in_agent_ls_toml_applies_and_an_unspent_one_changes_nothing(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    user_config: Callable[[str], None],
) -> None:
    user_config(PRICED + "\n[budget]\nmax_tokens = 3000\nmax_cost_usd = 100.0\n")
    _looping(model_server, turns=1)
    await start(client, workspace, model_settings(model_server))
    ended = await _run(client, {"task": "Read it"})
    assert field(ended, "status") == "done", field(ended, "reason")
    _looping(model_server)
    ended = await _run(client, {"task": "Read it again"})
    assert field(ended, "reason").startswith("token budget of 3,000 spent (")


def _cli(root: Path, base_url: str, *flags: str) -> subprocess.CompletedProcess[str]:
    # The session's empty user config: no prices, no budget.
    env = user_environment(AGENT_LS_API_KEY="sk-test", AGENT_LS_BASE_URL=base_url)
    args = ["run", "Read it", "--model", "openai/test-model", "--workspace", str(root), *flags]
    return run(args, cwd=root.parent, env=env, timeout=60)


def test_cli_budgets_stop_with_exit_1_and_their_reason(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "stats.py").write_text("x = 1\n")
    with FakeModelServer([READ] * 4 + [{"content": "done"}]) as server:
        result = _cli(root, server.base_url, "--max-tokens", "100")
        assert len(server.requests) == 1, result.stderr
    assert result.returncode == 1, result.stderr
    assert "token budget of 100 spent (" in result.stderr
    with FakeModelServer([READ] * 4 + [{"content": "done"}]) as server:
        result = _cli(root, server.base_url, "--max-cost", "0.25")
        assert len(server.requests) == 1
    assert result.returncode == 1, result.stderr
    assert "cost budget of $0.25 cannot be checked: model openai/test-model has no prices" in result.stderr
    with FakeModelServer([]) as server:
        result = _cli(root, server.base_url, "--max-tokens", "0")
        assert server.requests == []
    assert result.returncode == 2
    assert "--max-tokens must be above 0" in result.stderr
