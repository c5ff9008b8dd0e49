"""A file URI that names no usable path (``%00``: no file system allows NUL) in any ``agent.*`` command's
argument is InvalidParams (-32602) naming the field, never an internal error, through a real
``agent-ls serve`` (new-user trial F12; ``lsp/file_uris.py``). The server goes on serving."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.e2e.conftest import command, field, model_settings, start
from tests.support.model_server import FakeModelServer

INVALID_PARAMS = -32602


async def test_a_nul_in_a_file_uri_is_invalid_params_for_every_command(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    await start(client, workspace, model_settings(model_server))
    bad = (workspace / "stats.py").as_uri() + "%00.py"
    for name, argument, where in (
        ("agent.listSessions", {"uri": bad}, "uri"),
        ("agent.status", {"uri": bad}, "uri"),
        ("agent.run", {"task": "x", "uri": bad}, "uri"),
        ("agent.applyProposal", {"files": [bad]}, "files.0"),
    ):
        with pytest.raises(JsonRpcException) as raised:
            await command(client, name, argument)
        assert raised.value.code == INVALID_PARAMS, (name, raised.value.message)
        assert f"{where}: " in raised.value.message and "not a usable file URI" in raised.value.message
    assert model_server.requests == []  # nothing ran
    listed = await command(client, "agent.listSessions", {"uri": (workspace / "stats.py").as_uri()})
    assert field(listed, "sessions") == []


async def test_a_document_with_a_nul_uri_is_not_a_file(client: LanguageClient, workspace: Path) -> None:
    await start(client, workspace)
    bad = (workspace / "x").as_uri() + "%00.py"
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(t.TextDocumentItem(uri=bad, language_id="python", version=1, text="a\n"))
    )
    actions = await client.text_document_code_action_async(
        t.CodeActionParams(
            text_document=t.TextDocumentIdentifier(uri=bad),
            range=t.Range(t.Position(0, 0), t.Position(0, 1)),
            context=t.CodeActionContext(diagnostics=[]),
        )
    )
    assert not actions  # no action offered on a path that cannot exist; the server still answers
    status = await command(client, "agent.status", {})
    assert status is not None
