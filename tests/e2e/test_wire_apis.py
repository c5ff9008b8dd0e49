"""Each wire API end to end: editor -> real ``agent-ls serve`` -> fake model server on 127.0.0.1, streamed
and not streamed, with the outgoing requests compared to snapshots.

The provider is configured the way a user does it: a ``[providers.fake]`` entry in the user config
(``agent-ls.toml``) naming the wire API, the base URL, ``stream`` and prices. The script is two turns:
a ``read_file`` tool call (with reasoning), then the answer.

Snapshots live in ``tests/e2e/snapshots/``; to accept a deliberate change of the requests, run with
``UPDATE_SNAPSHOTS=1`` and review the diff.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from tests.e2e.conftest import SECRET_KEY, command, field, run_ended, start
from tests.support.model_server import FakeModelServer

SNAPSHOTS = Path(__file__).parent / "snapshots"

ANSWER = "mean() divides by len(values) - 1; it should divide by len(values)."
SCRIPT: list[dict[str, Any]] = [
    {
        "content": "Let me read stats.py first.",
        "reasoning": "The bug is probably in stats.py.",
        "tool_calls": [{"id": "call_read_1", "name": "read_file", "arguments": {"path": "stats.py"}}],
    },
    {"content": ANSWER},
]

WIRES = ["openai-chat", "anthropic", "openai-responses"]


def provider_config(wire: str, base_url: str, stream: bool) -> str:
    return f"""
[providers.fake]
wire_api = "{wire}"
base_url = "{base_url}"
api_key_env = "FAKE_PROVIDER_KEY"
stream = {"true" if stream else "false"}
max_output_tokens = 1024

[providers.fake.prices]
input = 2.0
output = 8.0
cached_input = 0.5
"""


def normalized(requests: list[Any], workspace: Path) -> list[Any]:
    """The recorded request bodies with the per-test workspace path replaced by ``<workspace>``."""
    text = json.dumps(requests, indent=1, ensure_ascii=False, sort_keys=True)
    return json.loads(text.replace(str(workspace), "<workspace>"))


def check_snapshot(name: str, actual: Any) -> None:
    path = SNAPSHOTS / f"{name}.json"
    rendered = json.dumps(actual, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(rendered, encoding="utf-8")
    assert path.exists(), f"no snapshot {path}; run with UPDATE_SNAPSHOTS=1 to create it"
    assert json.loads(path.read_text(encoding="utf-8")) == actual, f"requests differ from {path}"


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "not-streamed"])
@pytest.mark.parametrize("wire", WIRES)
async def test_two_turn_run_over_each_wire_api(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    user_config: Callable[[str], None],
    wire: str,
    stream: bool,
) -> None:
    model_server.steps.extend(SCRIPT)
    user_config(provider_config(wire, model_server.base_url, stream))
    await start(client, workspace, {"model": "fake/test-model"})

    result = await command(client, "agent.run", {"task": "Why does test_mean fail?"})
    ended = await run_ended(client, field(result, "sessionId"))

    assert field(ended, "status") == "done", field(ended, "reason")
    assert field(ended, "answer") == ANSWER
    assert len(model_server.requests) == 2

    # Streaming reaches the editor as deltas: several per answer when streamed, one when not.
    events = client.agent["events"]  # type: ignore[attr-defined]
    text_deltas = [field(e, "text") for e in events if field(e, "kind") == "textDelta"]
    reasoning = [field(e, "text") for e in events if field(e, "kind") == "reasoningDelta"]
    assert "".join(text_deltas) == "Let me read stats.py first." + ANSWER
    assert len(text_deltas) > 2 if stream else len(text_deltas) == 2
    assert "".join(reasoning) == "The bug is probably in stats.py."
    assert all(not field(e, "text").startswith("model:") for e in events if field(e, "kind") == "textDelta")

    # Usage and cost per call, per run and per session.
    usage = field(ended, "usage")
    assert field(usage, "inputTokens") > 0 and field(usage, "outputTokens") > 0
    assert field(usage, "costUsd") is not None and field(usage, "costUsd") > 0
    assert field(ended, "sessionUsage") == usage
    usage_events = [e for e in events if field(e, "kind") == "usage"]
    assert len(usage_events) == 2
    assert field(usage_events[0], "callUsage") is not None

    # The key went in the wire's own header, and nowhere else in the request.
    headers = model_server.request_headers[0]
    if wire == "anthropic":
        assert headers["x-api-key"] == SECRET_KEY
        assert "authorization" not in headers
    else:
        assert headers["authorization"] == f"Bearer {SECRET_KEY}"
    assert SECRET_KEY not in json.dumps(model_server.requests)

    check_snapshot(
        f"{wire}-{'streamed' if stream else 'not-streamed'}", normalized(model_server.requests, workspace)
    )
