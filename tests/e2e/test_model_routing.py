"""Model routing end to end (issue 17): a real ``agent-ls serve`` whose user config names a model per role,
one scripted model server recording which model each request names. The run hands a job to a ``task``
subagent, then grows past the compaction threshold: the subagent's turns go to the subagent model, the
summary to the compaction model, the run's own turns to the main one, and ``agent/runEnded`` reports the
usage and cost of each role at its own provider's prices."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from tests.e2e.conftest import command, field, model_settings, run_ended, start
from tests.support.long_session import TASK, LongSession, is_summary_request, write_files
from tests.support.model_server import FakeModelServer

REPORT = "The rows are in data_0.txt to data_4.txt."
MAIN_PRICES = (2.0, 8.0)  # US dollars per million input / output tokens
CHEAP_PRICES = (0.1, 0.4)


def _config(server: FakeModelServer) -> str:
    """The main model on ``openai`` (its base URL and key come from the editor and AGENT_LS_API_KEY), the
    other roles on a provider of their own, with other prices and no key."""
    return f"""\
[providers.openai]
context_window = 4000
max_output_tokens = 200
[providers.openai.prices]
input = {MAIN_PRICES[0]}
output = {MAIN_PRICES[1]}

[providers.cheap]
wire_api = "openai-chat"
base_url = "{server.base_url}"
context_window = 4000
max_output_tokens = 200
[providers.cheap.prices]
input = {CHEAP_PRICES[0]}
output = {CHEAP_PRICES[1]}

[compaction]
threshold = 0.5

[models]
compaction = "cheap/summary-model"
subagent = "cheap/sub-model"
"""


def _is_subagent_request(body: Any) -> bool:
    return str(body["messages"][0].get("content", "")).startswith("You are a subagent of agent-ls")


class _Routed:
    """The run's first turn calls ``task``; the subagent answers with ``REPORT``; the run's later turns and
    every summary request are ``LongSession``'s (which compacts past half of the window)."""

    def __init__(self) -> None:
        self.session = LongSession(turns=6)
        self._lock = threading.Lock()
        self._asked = False

    def __call__(self, body: Any) -> dict[str, Any]:
        if _is_subagent_request(body):
            return {"content": REPORT}
        with self._lock:
            first, self._asked = not self._asked, True
        if first:
            arguments = {"description": "find the rows", "prompt": "Which files hold the data rows?"}
            return {"tool_calls": [{"id": "call_task", "name": "task", "arguments": arguments}]}
        return self.session(body)


def _mapping(value: Any) -> dict[str, Any]:
    """A JSON object as the client decoded it (a dict, or pygls's namedtuple) as a dict, in order."""
    return dict(value) if isinstance(value, dict) else dict(value._asdict())


def _cost(usage: Any, prices: tuple[float, float]) -> float:
    return (field(usage, "inputTokens") * prices[0] + field(usage, "outputTokens") * prices[1]) / 1_000_000


async def test_each_role_goes_to_its_own_model_and_reports_its_own_usage(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    user_config: Callable[[str], None],
) -> None:
    write_files(workspace)
    user_config(_config(model_server))
    script = _Routed()
    model_server.responder = script
    await start(client, workspace, model_settings(model_server, maxTurns=60))
    started = await command(client, "agent.run", {"task": TASK})
    session_id = field(started, "sessionId")
    ended = await run_ended(client, session_id, timeout_s=120)

    assert field(ended, "status") == "done", field(ended, "reason")
    requests, headers = model_server.requests, model_server.request_headers
    summaries = [i for i, r in enumerate(requests) if is_summary_request(r)]
    subagent = [i for i, r in enumerate(requests) if _is_subagent_request(r)]
    main = [i for i in range(len(requests)) if i not in summaries and i not in subagent]
    assert summaries and subagent and len(main) == 7  # the task call, then LongSession's six turns
    assert {requests[i]["model"] for i in summaries} == {"summary-model"}
    assert {requests[i]["model"] for i in subagent} == {"sub-model"}
    assert {requests[i]["model"] for i in main} == {"test-model"}
    # The main endpoint's key goes to the main model only: the other provider has none configured.
    lowered = [{k.lower(): v for k, v in h.items()} for h in headers]
    assert all("authorization" in lowered[i] for i in main)
    assert not any("authorization" in lowered[i] for i in summaries + subagent)

    by_role = _mapping(field(ended, "usageByRole"))
    assert list(by_role) == ["main", "subagent", "compaction"]  # in the order they first made calls
    for role, prices in (("main", MAIN_PRICES), ("subagent", CHEAP_PRICES), ("compaction", CHEAP_PRICES)):
        usage = by_role[role]
        assert field(usage, "inputTokens") > 0 and field(usage, "outputTokens") > 0
        assert field(usage, "costUsd") == pytest.approx(_cost(usage, prices))
    total = field(ended, "usage")
    for name in ("inputTokens", "outputTokens"):
        assert field(total, name) == sum(field(usage, name) for usage in by_role.values())
    assert field(total, "costUsd") == pytest.approx(sum(field(u, "costUsd") for u in by_role.values()))

    # The session file keeps the split: agent.sessionHistory reads it back for the run.
    history = await command(client, "agent.sessionHistory", {"sessionId": session_id})
    (run,) = field(history, "runs")
    stored = {role: _mapping(usage) for role, usage in _mapping(field(run, "usageByRole")).items()}
    assert stored == {role: _mapping(usage) for role, usage in by_role.items()}
