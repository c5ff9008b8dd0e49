"""A user typing in the editor between the agent's read and its write (issue 12.2), through a real server.

The proposal's base is the buffer version the agent read: a write built on an older read is refused
("changed since you read it; read it again"); after reading again the write goes through, and the apply
is a TextDocumentEdit versioned with the version read, so the user's typing is kept.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types as t
from pytest_lsp import LanguageClient

from tests.e2e.conftest import command, field, model_settings, run_ended, start, tool_messages
from tests.support.model_server import FakeModelServer

ORIGINAL = "DEBUG = False\nPORT = 8080\n"
TYPED = "DEBUG = False\nPORT = 9090  # typed by the user\n"
WRITTEN = "DEBUG = False\nPORT = 9090  # typed by the user\nTIMEOUT = 30\n"


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


async def _tool_results(client: LanguageClient, count: int) -> None:
    """Wait until ``count`` tool results were announced (polling the recorded notifications)."""
    events: list[Any] = client.agent["events"]  # type: ignore[attr-defined]
    async with asyncio.timeout(20):
        while sum(field(e, "kind") == "toolResult" for e in events) < count:  # noqa: ASYNC110
            await asyncio.sleep(0.01)


async def test_a_write_on_a_buffer_the_user_changed_since_the_read_is_refused_then_reread(
    client: LanguageClient, tmp_path: Path, model_server: FakeModelServer
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    config = root / "config.py"
    config.write_text(ORIGINAL)
    model_server.steps.extend(
        [
            _call("read_file", path="config.py"),
            {"delay_s": 1.5, **_call("write_file", path="config.py", content=ORIGINAL + "TIMEOUT = 30\n")},
            _call("read_file", path="config.py"),
            _call("write_file", path="config.py", content=WRITTEN),
            {"content": "done"},
        ]
    )
    await start(client, root, model_settings(model_server))
    uri = config.as_uri()
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            t.TextDocumentItem(uri=uri, language_id="python", version=1, text=ORIGINAL)
        )
    )
    client.files.open(uri, ORIGINAL, 1)  # type: ignore[attr-defined]
    started = await command(client, "agent.run", {"task": "add TIMEOUT = 30"})
    session_id = field(started, "sessionId")

    await _tool_results(client, 1)  # the agent has read version 1; the user types
    client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[t.TextDocumentContentChangeWholeDocument(text=TYPED)],
        )
    )
    client.files.open(uri, TYPED, 2)  # type: ignore[attr-defined]
    assert field(await run_ended(client, session_id), "status") == "done"

    results = [m["content"] for m in tool_messages(model_server.requests[-1])]
    assert "config.py changed since you read it; read it again" in results[1]
    assert "PORT = 9090" in results[2]
    assert "Overwrote config.py" in results[3]
    applied = await command(client, "agent.applyProposal", {"sessionId": session_id})
    assert field(applied, "applied") is True, field(applied, "failureReason")
    (edit,) = client.agent["edits"]  # type: ignore[attr-defined]
    (change,) = edit.edit.document_changes
    assert isinstance(change, t.TextDocumentEdit) and change.text_document.version == 2
    assert client.files.text(uri) == WRITTEN  # type: ignore[attr-defined]
    assert config.read_text() == ORIGINAL  # the editor owns the buffer; nothing was written behind it
