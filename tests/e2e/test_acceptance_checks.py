"""Acceptance checks ("definition of done", issue 17) through a real ``agent-ls serve``: the harness runs the
task's checks in the shadow copy with the proposal when the scripted model says it is done, reports them in
``agent/runEnded``, sends failures back to the model once, and stops a run whose model claims done while a
check still fails. What the model was sent is read from the FakeModelServer's recorded requests."""

from __future__ import annotations

import atexit
import json
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.conftest import SERVER_ENV, command, field, model_settings, prepare_client, run_ended, start
from tests.support.model_server import FakeModelServer

PRICE = "def price(amount):\n    return amount * 2\n"
GUARDED = PRICE.replace(
    "    return", "    if amount < 0:\n        raise ValueError('negative amount')\n    return"
)
# Passes only when price.py guards negative amounts: the proposal has it, the disk does not.
CHECK = "grep -q negative price.py"
GUARD = {
    "name": "edit_file",
    "arguments": {"path": "price.py", "old_string": PRICE, "new_string": GUARDED},
}


STATE_DIR = Path(tempfile.mkdtemp(prefix="agent-ls-e2e-checks-state-"))
atexit.register(shutil.rmtree, STATE_DIR, True)


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "agent_ls", "serve"],
        server_env=SERVER_ENV | {"AGENT_LS_STATE_DIR": str(STATE_DIR)},
    )
)
async def client(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    """The e2e client, with the server's session store in ``STATE_DIR`` (read back by the tests)."""
    prepare_client(lsp_client)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    (root / "price.py").write_text(PRICE)
    return root


def _user_texts(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def _checks(ended: Any) -> list[dict[str, Any]]:
    """``checks`` of an ``agent/runEnded`` as plain dicts (pygls gives attribute objects)."""
    return [c if isinstance(c, dict) else dict(c._asdict()) for c in field(ended, "checks")]


def _session_records(session_id: str, kind: str) -> list[dict[str, Any]]:
    sessions = STATE_DIR / "sessions"
    text = next(sessions.glob(f"*/{session_id}.jsonl")).read_text()
    return [record for line in text.splitlines() if (record := json.loads(line))["kind"] == kind]


async def _run(client: LanguageClient, root: Path, server: FakeModelServer, **argument: Any) -> Any:
    await start(client, root, model_settings(server))
    started = await command(client, "agent.run", {"task": "Refuse negative amounts in price()", **argument})
    return await run_ended(client, field(started, "sessionId"))


async def test_checks_run_in_the_shadow_copy_with_the_proposal(
    client: LanguageClient, shop: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend([{"tool_calls": [GUARD]}, {"content": "price() now refuses negative amounts."}])
    ended = await _run(client, shop, model_server, checks=[CHECK])

    assert field(ended, "status") == "done", field(ended, "reason")
    assert field(ended, "reason") == "the model answered; acceptance checks: 1 passed"
    assert _checks(ended) == [{"command": CHECK, "passed": True, "exitCode": 0, "outputTail": ""}]
    assert field(ended, "notVerified") == []
    assert (shop / "price.py").read_text() == PRICE  # the check saw the proposal; the disk is untouched
    # The model was told the checks in the task message, not in the cached system prompt.
    first = model_server.requests[0]
    assert "Acceptance checks: when you answer, agent-ls runs these in your proposal" in _user_texts(first)[0]
    assert CHECK in _user_texts(first)[0]
    assert CHECK not in first["messages"][0]["content"]
    assert len(model_server.requests) == 2
    (record,) = _session_records(field(ended, "sessionId"), "checks")
    assert record["round"] == 1
    assert record["results"] == [
        {"command": CHECK, "passed": True, "exitCode": 0, "outputTail": "", "notRun": None}
    ]


async def test_a_false_done_goes_back_once_then_stops_the_run(
    client: LanguageClient, shop: Path, model_server: FakeModelServer
) -> None:
    failing = "python3 -c \"import sys; print('price() accepts -1'); sys.exit(3)\""
    model_server.steps.extend([{"content": "Done, it is fixed."}, {"content": "It really is done."}])
    ended = await _run(client, shop, model_server, checks=[failing])

    assert field(ended, "status") == "stopped"
    assert field(ended, "reason").startswith("claims done, checks fail: ")
    assert field(ended, "reason").endswith(f"{failing} (exit code 3)")
    assert _checks(ended) == [
        {"command": failing, "passed": False, "exitCode": 3, "outputTail": "price() accepts -1"}
    ]
    # "ask" (no rule matches), but the user gave the check themselves: it ran without a question.
    assert client.agent["prompts"] == []  # type: ignore[attr-defined]
    # The failure went back to the model once, naming the command, its exit code and its output.
    assert len(model_server.requests) == 2
    feedback = _user_texts(model_server.requests[1])
    sent = next(text for text in feedback if text.startswith("The acceptance checks failed"))
    assert f"- {failing}: exit code 3" in sent and "price() accepts -1" in sent
    assert all("acceptance checks failed" not in text for text in _user_texts(model_server.requests[0]))
    rounds = [record["round"] for record in _session_records(field(ended, "sessionId"), "checks")]
    assert rounds == [1, 2]


async def test_a_denied_check_is_reported_as_not_verified(
    client: LanguageClient, shop: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend([{"tool_calls": [GUARD]}, {"content": "Done."}])
    ended = await _run(client, shop, model_server, checks=["rm -rf build", CHECK])

    assert field(ended, "status") == "done", field(ended, "reason")
    assert field(ended, "reason") == "the model answered; acceptance checks: 1 passed, 1 not run"
    denied, passed = _checks(ended)
    assert (denied["command"], denied["passed"], denied["exitCode"]) == ("rm -rf build", False, None)
    assert denied["outputTail"].startswith("Blocked by policy (bash: rm * (built-in))")
    assert passed == {"command": CHECK, "passed": True, "exitCode": 0, "outputTail": ""}
    (line,) = field(ended, "notVerified")
    assert line.startswith("rm -rf build: not run: Blocked by policy (bash: rm * (built-in))")
    assert len(model_server.requests) == 2  # nothing failed: no feedback round
    # A resumed session shows the same (agent.sessionHistory reads the session file's records).
    stored = await command(client, "agent.sessionHistory", {"sessionId": field(ended, "sessionId")})
    (run,) = field(stored, "runs")
    assert [c if isinstance(c, dict) else dict(c._asdict()) for c in field(run, "checks")] == _checks(ended)
    assert field(run, "notVerified") == [line]


async def test_a_run_that_stops_first_lists_every_check_as_not_verified(
    client: LanguageClient, shop: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend([{"tool_calls": [GUARD]}])
    await start(client, shop, model_settings(model_server))
    argument = {"task": "Refuse negative amounts", "checks": [CHECK], "maxTokens": 1}
    session_id = field(await command(client, "agent.run", argument), "sessionId")
    ended = await run_ended(client, session_id)

    assert field(ended, "status") == "stopped"
    assert _checks(ended) == []
    assert field(ended, "notVerified") == [
        f"{CHECK}: not run: the run ended (stopped) before the model said it was done"
    ]


SKILL = """---
name: price-guard
description: Guard prices against negative amounts. Use when asked to guard prices.
metadata:
  checks: |
    grep -q negative price.py
    cat price.py
---
Make price() refuse negative amounts.
"""


async def test_a_skills_metadata_checks_join_the_runs(
    client: LanguageClient, shop: Path, model_server: FakeModelServer
) -> None:
    folder = shop / ".agents" / "skills" / "price-guard"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL)
    model_server.steps.extend([{"tool_calls": [GUARD]}, {"content": "Guarded."}])
    await start(client, shop, model_settings(model_server))
    argument = {"skill": "price-guard", "checks": ["grep -q def price.py", CHECK]}
    session_id = field(await command(client, "agent.runSkill", argument), "sessionId")
    ended = await run_ended(client, session_id)

    assert field(ended, "status") == "done", field(ended, "reason")
    # The run's checks first, then the skill's (a command given twice runs once).
    assert [(c["command"], c["passed"]) for c in _checks(ended)] == [
        ("grep -q def price.py", True),
        (CHECK, True),
        ("cat price.py", True),
    ]
    assert "if amount < 0:" in _checks(ended)[2]["outputTail"]  # the proposal's text, not the disk's
    task = _user_texts(model_server.requests[0])[0]
    assert "Make price() refuse negative amounts." in task
    assert "- grep -q def price.py\n- grep -q negative price.py\n- cat price.py" in task
