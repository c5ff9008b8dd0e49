"""Model server faults, end to end: each ends in a retry or a clear stop, and the next run still works.

Editor -> real ``agent-ls serve`` -> fake model server on 127.0.0.1 that fails as scripted. After every
fault, a second ``agent.run`` in the same server must succeed (a fault never poisons the server).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from tests.e2e.conftest import command, field, first_event, run_ended, start
from tests.support.model_server import FakeModelServer
from tests.support.wire_formats import sse

OK = {"content": "All good."}


def config(base_url: str, wire: str = "openai-chat", stream: bool = True) -> str:
    return (
        f'[providers.fake]\nwire_api = "{wire}"\nbase_url = "{base_url}"\n'
        f"stream = {'true' if stream else 'false'}\n\n[retry]\nmax_attempts = 3\n"
    )


def chat_chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    return sse(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


PARTIAL_CHAT = [chat_chunk({"role": "assistant", "content": ""}), chat_chunk({"content": "Half an ans"})]

ANTHROPIC_OVERLOADED = [
    sse(
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "m",
                "usage": {"input_tokens": 5, "output_tokens": 1},
            },
        },
        "message_start",
    ),
    sse(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        "content_block_start",
    ),
    sse(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Half"}},
        "content_block_delta",
    ),
    sse({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "error"),
]

# (name, wire, stream, failing step, whether it is retried, what the reason or retry says)
CASES: list[tuple[str, str, bool, dict[str, Any], bool, str]] = [
    (
        "429-retry-after",
        "openai-chat",
        True,
        {"status": 429, "headers": {"retry-after-ms": "300"}},
        True,
        "HTTP 429",
    ),
    ("503-then-success", "openai-chat", True, {"status": 503}, True, "HTTP 503"),
    (
        "reset-mid-stream",
        "openai-chat",
        True,
        {"chunks": PARTIAL_CHAT, "end": "reset"},
        True,
        "closed the connection",
    ),
    ("truncated-sse", "openai-chat", True, {"chunks": PARTIAL_CHAT, "end": "close"}, True, "ended before"),
    ("in-band-overloaded", "anthropic", True, {"chunks": ANTHROPIC_OVERLOADED}, True, "verloaded"),
    ("invalid-json", "openai-chat", False, {"body": "<html>502 Bad Gateway</html>"}, False, "not JSON"),
    (
        "retry-after-over-cap",
        "openai-chat",
        True,
        {"status": 429, "headers": {"retry-after": "3600"}},
        False,
        "asked to wait 3600 s",
    ),
]


@pytest.mark.parametrize(
    ("wire", "stream", "failure", "retried", "says"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
async def test_a_fault_ends_in_a_retry_or_a_clear_stop_and_the_next_run_works(
    client: LanguageClient,
    workspace: Path,
    model_server: FakeModelServer,
    user_config: Callable[[str], None],
    wire: str,
    stream: bool,
    failure: dict[str, Any],
    retried: bool,
    says: str,
) -> None:
    user_config(config(model_server.base_url, wire, stream))
    model_server.steps.extend([failure, OK] if retried else [failure])
    await start(client, workspace, {"model": "fake/test-model"})

    first = await command(client, "agent.run", {"task": "Say something."})
    ended = await run_ended(client, field(first, "sessionId"))
    events = client.agent["events"]  # type: ignore[attr-defined]
    retries = [e for e in events if field(e, "kind") == "retrying"]
    if retried:
        assert field(ended, "status") == "done", field(ended, "reason")
        assert field(ended, "answer") == "All good."
        assert len(retries) == 1 and says in field(retries[0], "text")
        assert len(model_server.requests) == 2
        assert model_server.requests[1] == model_server.requests[0]  # the same request, resent
        if "chunks" in failure:
            assert field(retries[0], "partial") is True  # the half answer shown so far is void
        if "retry-after-ms" in failure.get("headers", {}):
            waited = model_server.request_times[1] - model_server.request_times[0]
            assert waited >= 0.3
    else:
        assert field(ended, "status") == "error"
        assert says in field(ended, "reason") and "\n" not in field(ended, "reason")
        assert retries == []
        assert len(model_server.requests) == 1

    # The server and its configuration are intact: the next run works.
    model_server.steps.append(OK)
    second = await command(client, "agent.run", {"task": "Again."})
    again = await run_ended(client, field(second, "sessionId"))
    assert field(again, "status") == "done", field(again, "reason")
    assert field(again, "answer") == "All good."
    assert json.dumps(model_server.requests[-1]).count("Again.") == 1


async def test_cancel_aborts_a_stream_held_open(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer, user_config: Callable[[str], None]
) -> None:
    """The server streams a few words, then holds the stream open; agent.cancel ends the run promptly."""
    user_config(config(model_server.base_url))
    model_server.steps.append({"chunks": PARTIAL_CHAT, "end": "hang"})
    await start(client, workspace, {"model": "fake/test-model"})

    result = await command(client, "agent.run", {"task": "Write a long essay."})
    session_id = field(result, "sessionId")
    await first_event(client, "textDelta")
    cancelled = await command(client, "agent.cancel", {"sessionId": session_id})
    assert field(cancelled, "cancelled") is True
    ended = await run_ended(client, session_id, timeout_s=10)
    assert field(ended, "status") == "cancelled"
    assert field(ended, "reason") == "cancelled by the user"
