"""Accept what you want, keep the rest (issue 16): ``files`` subsets of ``agent.applyProposal`` and
``agent.discardProposal``, a preview whose user unticked a change (the client answers applied=true but its
documents hold only some of the edits), and the per-file question of editors without a preview. A real
``agent-ls serve`` driven by pytest-lsp, its session store in the test's folder, against the scripted model
server on 127.0.0.1."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.conftest import (
    BUGGY,
    CAPABILITIES,
    FIXED,
    SERVER_ENV,
    command,
    field,
    fix_step,
    model_settings,
    prepare_client,
    run_ended,
    start,
)
from tests.support.model_server import FakeModelServer

SPREAD_DOC = '    """Largest value minus smallest value."""'
SPREAD_NEW = '    """The range: the largest value minus the smallest."""'
NOTES = "# Notes\n\nmean() divides by len(values).\n"
TODO = "- check spread()\n"


def _edit(old: str, new: str) -> dict[str, Any]:
    return {
        "tool_calls": [
            {"name": "edit_file", "arguments": {"path": "stats.py", "old_string": old, "new_string": new}}
        ]
    }


def _write(path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


@asynccontextmanager
async def _server(
    state: Path, root: Path, model: FakeModelServer, capabilities: t.ClientCapabilities = CAPABILITIES
) -> AsyncIterator[LanguageClient]:
    """A real ``agent-ls serve`` with its session store in ``state``, initialized on ``root``."""
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "agent_ls", "serve"],
        server_env=SERVER_ENV | {"AGENT_LS_STATE_DIR": str(state)},
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    prepare_client(client)
    try:
        await start(client, root, model_settings(model), capabilities)
        yield client
    finally:
        if client._server is not None and client._server.returncode is None:
            await client.shutdown_session()
        await client.stop()


async def _run(client: LanguageClient, task: str) -> str:
    session_id = str(field(await command(client, "agent.run", {"task": task}), "sessionId"))
    assert field(await run_ended(client, session_id), "status") == "done"
    return session_id


async def _pending(client: LanguageClient, session_id: str) -> list[Any]:
    return list(field(await command(client, "agent.proposal", {"sessionId": session_id}), "files"))


async def test_a_change_unticked_in_the_preview_stays_pending_on_the_new_text(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend(
        [fix_step(), _edit(SPREAD_DOC, SPREAD_NEW), _write("NOTES.md", NOTES), {"content": "ok"}]
    )
    stats = workspace / "stats.py"
    text = stats.read_text()
    proposed = text.replace(BUGGY, FIXED).replace(SPREAD_DOC, SPREAD_NEW)
    async with _server(tmp_path / "state", workspace, model_server) as client:
        uri = stats.as_uri()  # open in the editor, as VS Code opens the files of a refactor preview
        client.text_document_did_open(
            t.DidOpenTextDocumentParams(
                t.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            )
        )
        client.files.open(uri, text, 1)  # type: ignore[attr-defined]
        session_id = await _run(client, "Fix mean, reword spread, write notes")

        # The user unticks the docstring change of stats.py; the fix and NOTES.md are applied.
        def untick(change: dict[str, Any]) -> list[dict[str, Any]]:
            return [e for e in change["edits"] if "The range" not in e["newText"]]

        client.agent["untick"] = untick  # type: ignore[attr-defined]
        applied = await command(client, "agent.applyProposal", {"sessionId": session_id})
        assert applied == {
            "applied": True,
            "failureReason": None,
            "message": "applied 2 of 3 changes in 2 files; 1 change kept",
            "changesApplied": 2,
            "changesKept": 1,
            "keptFiles": [uri],
        }
        edit = client.agent["edits"][0].edit  # type: ignore[attr-defined]
        assert all(a.needs_confirmation for a in edit.change_annotations.values())
        landed = text.replace(BUGGY, FIXED)
        assert client.files.text(uri) == landed  # type: ignore[attr-defined]
        assert (workspace / "NOTES.md").read_text() == NOTES

        # Nothing unticked is lost: the docstring change is pending, on top of the buffer's new text.
        (kept,) = await _pending(client, session_id)
        assert (field(kept, "path"), field(kept, "baseVersion")) == ("stats.py", 2)
        assert field(kept, "originalText") == landed and field(kept, "proposedText") == proposed
        assert (field(kept, "added"), field(kept, "removed")) == (1, 1)
        assert any(
            m.message == f"■ apply: applied in part: {applied['message']}" for m in client.log_messages
        )

        client.agent["untick"] = None  # type: ignore[attr-defined]
        again = await command(client, "agent.applyProposal", {"sessionId": session_id})
        assert (field(again, "message"), field(again, "keptFiles")) == ("applied 1 of 1 change in 1 file", [])
        assert client.files.text(uri) == proposed  # type: ignore[attr-defined]
        assert await _pending(client, session_id) == []


async def test_files_subsets_apply_and_discard_and_survive_a_restart(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend([fix_step(), _write("NOTES.md", NOTES), {"content": "ok"}])
    state, stats, notes = tmp_path / "state", workspace / "stats.py", workspace / "NOTES.md"
    before = stats.read_text()
    async with _server(state, workspace, model_server) as first:
        session_id = await _run(first, "Fix mean and write notes")
        with pytest.raises(JsonRpcException, match=r"README\.md is not a file of the proposal; its files: "):
            await command(
                first,
                "agent.applyProposal",
                {"sessionId": session_id, "files": [(workspace / "README.md").as_uri()]},
            )
        applied = await command(
            first, "agent.applyProposal", {"sessionId": session_id, "files": [notes.as_uri()]}
        )
        assert field(applied, "message") == "applied 1 of 1 change in 1 file; 1 other file still pending"
        assert field(applied, "keptFiles") == [stats.as_uri()]
        assert notes.read_text() == NOTES and stats.read_text() == before
        assert [field(f, "path") for f in await _pending(first, session_id)] == ["stats.py"]

    async with _server(state, workspace, model_server) as second:  # the stored session, in a new process
        (listed,) = field(await command(second, "agent.listSessions", {}), "sessions")
        assert listed["pendingFiles"] == ["stats.py"]
        discarded = await command(
            second, "agent.discardProposal", {"sessionId": session_id, "files": [stats.as_uri()]}
        )
        assert discarded == {"discarded": True, "keptFiles": []}
        assert await _pending(second, session_id) == []
        (listed,) = field(await command(second, "agent.listSessions", {}), "sessions")
        assert listed["pendingFiles"] == []
    assert stats.read_text() == before


def _no_preview() -> t.ClientCapabilities:
    """An editor with prompts and file creation but no change annotations (Neovim, Emacs)."""
    return t.ClientCapabilities(
        workspace=t.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=t.WorkspaceEditClientCapabilities(
                document_changes=True, resource_operations=[t.ResourceOperationKind.Create]
            ),
        ),
        window=t.WindowClientCapabilities(show_message=t.ShowMessageRequestClientCapabilities()),
    )


async def test_an_editor_without_a_preview_is_asked_file_by_file(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend(
        [fix_step(), _write("NOTES.md", NOTES), _write("TODO.md", TODO), {"content": "ok"}]
    )
    stats, notes, todo = workspace / "stats.py", workspace / "NOTES.md", workspace / "TODO.md"
    async with _server(tmp_path / "state", workspace, model_server, _no_preview()) as client:
        session_id = await _run(client, "Fix mean, write notes and a todo")
        answers, prompts = client.agent["answers"], client.agent["prompts"]  # type: ignore[attr-defined]

        answers.append("Cancel")  # nothing applied, nothing dropped
        cancelled = await command(client, "agent.applyProposal", {"sessionId": session_id})
        assert (
            field(cancelled, "failureReason") == "not applied: the prompt was dismissed; the proposal is kept"
        )
        assert len(await _pending(client, session_id)) == 3 and client.agent["edits"] == []  # type: ignore[attr-defined]

        answers.extend(["Apply", "Discard", "Skip"])  # NOTES.md, TODO.md, stats.py (the proposal's order)
        applied = await command(client, "agent.applyProposal", {"sessionId": session_id})
        assert [(p.message, [a.title for a in p.actions]) for p in prompts[1:]] == [
            (
                f"Apply changes to {name} ({counts})? (file {n} of 3)",
                ["Apply", "Skip", "Discard", "Apply all", "Cancel"],
            )
            for n, (name, counts) in enumerate(
                [("NOTES.md", "+3 −0"), ("TODO.md", "+1 −0"), ("stats.py", "+1 −1")], 1
            )
        ]
        assert field(applied, "message") == "applied 1 of 1 change in 1 file; 1 other file still pending"
        assert notes.read_text() == NOTES and not todo.exists() and BUGGY in stats.read_text()
        assert [field(f, "path") for f in await _pending(client, session_id)] == ["stats.py"]

        answers.append("Apply")  # one file left: the one question agent-ls always asked
        last = await command(client, "agent.applyProposal", {"sessionId": session_id})
        assert prompts[-1].message == "Apply 1 file(s) (+1 −1)?"
        assert field(last, "message") == "applied 1 of 1 change in 1 file"
        assert FIXED in stats.read_text() and await _pending(client, session_id) == []


async def test_apply_all_takes_the_file_asked_about_and_every_one_after_it(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend(
        [fix_step(), _write("NOTES.md", NOTES), _write("TODO.md", TODO), {"content": "ok"}]
    )
    async with _server(tmp_path / "state", workspace, model_server, _no_preview()) as client:
        session_id = await _run(client, "Fix mean, write notes and a todo")
        client.agent["answers"].extend(["Discard", "Apply all"])  # type: ignore[attr-defined]
        applied = await command(client, "agent.applyProposal", {"sessionId": session_id})
        assert len(client.agent["prompts"]) == 2  # type: ignore[attr-defined]  # stats.py was not asked about
        assert field(applied, "message") == "applied 2 of 2 changes in 2 files"
        assert (workspace / "TODO.md").read_text() == TODO and FIXED in (workspace / "stats.py").read_text()
        assert not (workspace / "NOTES.md").exists() and await _pending(client, session_id) == []


async def test_a_did_change_that_comes_after_the_apply_answer_is_waited_for(
    tmp_path: Path, workspace: Path, model_server: FakeModelServer
) -> None:
    """VS Code sometimes answers workspace/applyEdit before its didChange of the applied text arrives: the
    reconcile waits for it instead of finding the old text and keeping every change pending."""
    model_server.steps.extend([fix_step(), _edit(SPREAD_DOC, SPREAD_NEW), {"content": "ok"}])
    stats = workspace / "stats.py"
    text = stats.read_text()
    async with _server(tmp_path / "state", workspace, model_server) as client:
        uri = stats.as_uri()
        client.text_document_did_open(
            t.DidOpenTextDocumentParams(
                t.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            )
        )
        client.files.open(uri, text, 1)  # type: ignore[attr-defined]
        session_id = await _run(client, "Fix mean, reword spread")
        client.agent["untick"] = lambda change: [
            e for e in change["edits"] if "The range" not in e["newText"]
        ]  # type: ignore[attr-defined]
        client.agent["did_change_after_s"] = 0.3  # type: ignore[attr-defined]
        applied = await command(client, "agent.applyProposal", {"sessionId": session_id})
        assert field(applied, "message") == "applied 1 of 2 changes in 1 file; 1 change kept"
        (kept,) = await _pending(client, session_id)
        assert field(kept, "originalText") == text.replace(BUGGY, FIXED)
