"""Lone surrogates from the editor and from the model, through a real ``agent-ls serve``.

JSON lets an editor send half of a surrogate pair (``"\\ud83d"``) in a document's text or a command's
argument, and a model send one in tool arguments. The server makes every such string well-formed where it
decodes it (U+FFFD in place of the lone half), so the buffer, the model request, the proposal and the
WorkspaceEdit all work on the replaced text and nothing crashes.
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as t
from pytest_lsp import LanguageClient

from tests.e2e.conftest import command, field, model_settings, run_ended, start, tool_messages
from tests.support.model_server import FakeModelServer

FFFD = "\ufffd"


async def test_lone_surrogates_from_the_editor_and_the_model_become_fffd_in_the_proposal(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("alpha\n", encoding="utf-8")
    model_server.steps.extend(
        [
            {"tool_calls": [{"id": "read", "name": "read_file", "arguments": {"path": "notes.txt"}}]},
            {
                "tool_calls": [
                    {
                        "id": "edit",
                        "name": "edit_file",
                        "raw_arguments": (
                            '{"path": "notes.txt", "old_string": "alpha", "new_string": "ALPHA\\ud83d"}'
                        ),
                    }
                ]
            },
            {"content": "done"},
        ]
    )
    await start(client, workspace, model_settings(model_server))
    uri = notes.as_uri()
    unsaved = "alpha \ud83d unsaved\n"  # the client's JSON encoder sends it as the escape "\ud83d"
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(t.TextDocumentItem(uri=uri, language_id="text", version=1, text=unsaved))
    )
    client.files.open(uri, f"alpha {FFFD} unsaved\n", 1)  # type: ignore[attr-defined]

    started = await command(client, "agent.run", {"task": "shout \udc80 alpha"})
    ended = await run_ended(client, field(started, "sessionId"))
    assert field(ended, "status") == "done", field(ended, "reason")

    task = model_server.requests[0]["messages"][-1]["content"]
    assert f"shout {FFFD} alpha" in task
    (read,) = tool_messages(model_server.requests[1])
    assert f"alpha {FFFD} unsaved" in read["content"]
    proposal = await command(client, "agent.proposal", {"sessionId": field(started, "sessionId")})
    (file,) = field(proposal, "files")
    assert field(file, "proposedText") == f"ALPHA{FFFD} {FFFD} unsaved\n"

    applied = await command(client, "agent.applyProposal", {"sessionId": field(started, "sessionId")})
    assert field(applied, "applied") is True, field(applied, "failureReason")
    assert client.files.text(uri) == f"ALPHA{FFFD} {FFFD} unsaved\n"  # type: ignore[attr-defined]
