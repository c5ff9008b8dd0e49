"""The slice end to end: editor command → agent loop → real HTTP model → tools → versioned WorkspaceEdit."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types as t
from pytest_lsp import LanguageClient

from tests.e2e.conftest import (
    BUGGY,
    FIXED,
    SECRET_KEY,
    command,
    field,
    fix_step,
    model_settings,
    run_ended,
    start,
    tool_messages,
)
from tests.support.model_server import FakeModelServer

MARKER = "# unsaved edit in the editor\n"


def _pytest(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )


async def test_task_to_applied_fix(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    stats = workspace / "stats.py"
    disk_before = stats.read_bytes()
    model_server.steps.extend(
        [
            {"tool_calls": [{"id": "call_read", "name": "read_file", "arguments": {"path": "stats.py"}}]},
            {"tool_calls": [{"id": "call_ask", "name": "bash", "arguments": {"command": "make lint"}}]},
            fix_step("call_edit"),
            {
                "tool_calls": [
                    {
                        "id": "call_test",
                        "name": "bash",
                        "arguments": {"command": "pytest -q -p no:cacheprovider"},
                    }
                ]
            },
            {"content": "Fixed mean()."},
        ]
    )
    await start(client, workspace, model_settings(model_server))
    uri = stats.as_uri()
    text = stats.read_text()
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(t.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
    )
    client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                t.TextDocumentContentChangePartial(
                    range=t.Range(start=t.Position(line=0, character=0), end=t.Position(line=0, character=0)),
                    text=MARKER,
                )
            ],
        )
    )
    client.files.open(uri, MARKER + text, 2)  # type: ignore[attr-defined]
    client.agent["answers"].append("Deny")  # type: ignore[attr-defined]

    started = await command(client, "agent.run", {"task": "Fix the failing test", "uri": uri})
    session_id, token = field(started, "sessionId"), field(started, "progressToken")
    ended = await run_ended(client, session_id)
    assert field(ended, "status") == "done", field(ended, "reason")
    assert field(ended, "answer") == "Fixed mean()."

    requests = model_server.requests
    assert len(requests) == 5
    first_user = next(m for m in requests[0]["messages"] if m["role"] == "user")["content"]
    assert "Fix the failing test" in first_user and "stats.py" in first_user
    assert {tool["function"]["name"] for tool in requests[0]["tools"]} == {
        "skill",  # the bundled skills
        "read_file",
        "list_files",
        "grep",
        "edit_file",
        "bash",
        "load_tools",  # write_file, todo_write, memory and task, listed by name (sent once loaded)
    }
    # Every tool call got exactly one result with its id; read_file saw the unsaved buffer.
    read_result = tool_messages(requests[1])
    assert [m["tool_call_id"] for m in read_result] == ["call_read"]
    assert "unsaved edit in the editor" in read_result[0]["content"]
    assert [m["tool_call_id"] for m in tool_messages(requests[4])] == [
        "call_read",
        "call_ask",
        "call_edit",
        "call_test",
    ]
    # The "ask" command produced a prompt; the test denied it and the model saw the denial.
    prompts = client.agent["prompts"]  # type: ignore[attr-defined]
    assert len(prompts) == 1 and "make lint" in prompts[0].message
    assert "denied by user" in tool_messages(requests[2])[1]["content"]
    # pytest ran in the shadow copy with the proposal, and passed there; the disk is unchanged.
    test_result = tool_messages(requests[4])[3]["content"]
    assert "4 passed" in test_result, test_result
    assert stats.read_bytes() == disk_before

    # Progress: begin, reports, end.
    reports = client.progress_reports[token]
    assert isinstance(reports[0], t.WorkDoneProgressBegin)
    assert any(isinstance(r, t.WorkDoneProgressReport) for r in reports)
    assert isinstance(reports[-1], t.WorkDoneProgressEnd) and "done" in (reports[-1].message or "")
    # Transcript lines and structured events, without the API key anywhere.
    kinds = [field(e, "kind") for e in client.agent["events"]]  # type: ignore[attr-defined]
    assert {"runStarted", "turnStarted", "toolCall", "verdict", "toolResult", "usage"} <= set(kinds)
    assert any("permission deny" in m.message for m in client.log_messages)
    assert not any(SECRET_KEY in m.message for m in client.log_messages)
    assert SECRET_KEY not in test_result

    proposal = await command(client, "agent.proposal", {"sessionId": session_id})
    (file,) = field(proposal, "files")
    assert field(file, "path") == "stats.py" and field(file, "baseVersion") == 2
    assert (field(file, "added"), field(file, "removed")) == (1, 1)
    assert field(file, "originalText") == MARKER + text
    assert field(file, "proposedText") == MARKER + text.replace(BUGGY, FIXED)

    applied = await command(client, "agent.applyProposal", {"sessionId": session_id})
    assert field(applied, "applied") is True, field(applied, "failureReason")
    (edit,) = client.agent["edits"]  # type: ignore[attr-defined]
    (change,) = edit.edit.document_changes
    assert isinstance(change, t.TextDocumentEdit)
    assert change.text_document.version == 2
    assert all(isinstance(e, t.AnnotatedTextEdit) for e in change.edits) and len(change.edits) == 1
    annotation = edit.edit.change_annotations[change.edits[0].annotation_id]
    assert annotation.needs_confirmation is True
    assert client.files.text(uri) == MARKER + text.replace(BUGGY, FIXED)  # type: ignore[attr-defined]
    client.files.save(uri)  # type: ignore[attr-defined]
    assert _pytest(workspace).returncode == 0


async def _fixed_then_typed(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer, typed: Callable[[str], str]
) -> tuple[str, str, str]:
    """The agent fixes stats.py in an open buffer; then the user types (``typed`` of the text): version 2.
    Returns (uri, session id, the text the agent read)."""
    stats = workspace / "stats.py"
    model_server.steps.extend([fix_step(), {"content": "done"}])
    await start(client, workspace, model_settings(model_server))
    uri, text = stats.as_uri(), stats.read_text()
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(t.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
    )
    client.files.open(uri, text, 1)  # type: ignore[attr-defined]
    started = await command(client, "agent.run", {"task": "fix it"})
    session_id = field(started, "sessionId")
    assert field(await run_ended(client, session_id), "status") == "done"
    client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[t.TextDocumentContentChangeWholeDocument(text=typed(text))],
        )
    )
    client.files.open(uri, typed(text), 2)  # type: ignore[attr-defined]
    return uri, session_id, text


async def test_a_document_typed_in_after_the_read_is_rebased_then_applied(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    """Issue 12, edit races: the user's line is never lost, and the agent's fix is not either."""
    uri, session_id, text = await _fixed_then_typed(
        client, workspace, model_server, lambda t_: "# mine\n" + t_
    )
    refused = await command(client, "agent.applyProposal", {"sessionId": session_id})
    assert field(refused, "applied") is False
    assert field(refused, "failureReason") == (
        "stats.py changed since the agent read it: the proposal was re-based onto the current text "
        "(a three-way merge kept your change and the agent's); review it and apply again"
    )
    assert client.agent["edits"] == []  # type: ignore[attr-defined]
    (file,) = field(await command(client, "agent.proposal", {"sessionId": session_id}), "files")
    assert field(file, "originalText") == "# mine\n" + text
    assert field(file, "proposedText") == "# mine\n" + text.replace(BUGGY, FIXED)
    assert field(file, "baseVersion") == 2
    applied = await command(client, "agent.applyProposal", {"sessionId": session_id})
    assert field(applied, "applied") is True, field(applied, "failureReason")
    assert client.files.text(uri) == "# mine\n" + text.replace(BUGGY, FIXED)  # type: ignore[attr-defined]


async def test_a_user_change_overlapping_the_agents_is_refused_and_nothing_is_guessed(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    mine = "    return sum(values) / max(1, len(values) - 1)"
    uri, session_id, text = await _fixed_then_typed(
        client, workspace, model_server, lambda t_: t_.replace(BUGGY, mine)
    )
    applied = await command(client, "agent.applyProposal", {"sessionId": session_id})
    assert field(applied, "applied") is False
    line = text.splitlines().index(BUGGY) + 1
    assert field(applied, "failureReason") == (
        f"stats.py changed in the editor since the agent read it, and your change to stats.py overlaps the "
        f"agent's at line(s) {line}; the proposal is kept as it was: run the task again, or discard it"
    )
    assert client.agent["edits"] == []  # type: ignore[attr-defined]
    assert client.files.text(uri) == text.replace(BUGGY, mine)  # type: ignore[attr-defined]
    (file,) = field(await command(client, "agent.proposal", {"sessionId": session_id}), "files")
    assert field(file, "originalText") == text  # kept as it was


async def test_rejected_apply_keeps_the_proposal(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend(
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": "notes/new.md", "content": "hi\r\n"}}
                ]
            },
            {"content": "done"},
        ]
    )
    await start(client, workspace, model_settings(model_server))
    started = await command(client, "agent.run", {"task": "write a note"})
    session_id = field(started, "sessionId")
    assert field(await run_ended(client, session_id), "status") == "done"
    client.agent["apply"] = False  # type: ignore[attr-defined]
    applied = await command(client, "agent.applyProposal", {"sessionId": session_id})
    assert field(applied, "applied") is False
    assert "the user cancelled the refactoring" in field(applied, "failureReason")
    (edit,) = client.agent["edits"]  # type: ignore[attr-defined]
    create, text_edit = edit.edit.document_changes
    assert isinstance(create, t.CreateFile) and create.uri.endswith("/notes/new.md")
    assert isinstance(text_edit, t.TextDocumentEdit) and text_edit.text_document.version is None
    assert not (workspace / "notes").exists()
    # Nothing lost: apply again, accepted this time; the CRLF is kept byte for byte.
    client.agent["apply"] = True  # type: ignore[attr-defined]
    applied = await command(client, "agent.applyProposal", {"sessionId": session_id})
    assert field(applied, "applied") is True, field(applied, "failureReason")
    assert (workspace / "notes" / "new.md").read_bytes() == b"hi\r\n"


async def test_selection_and_file_in_focus_reach_the_model(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.append({"content": "It averages."})
    await start(client, workspace, model_settings(model_server))
    stats = workspace / "stats.py"
    uri = stats.as_uri()
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            t.TextDocumentItem(uri=uri, language_id="python", version=1, text=stats.read_text())
        )
    )
    selection = {"start": {"line": 3, "character": 0}, "end": {"line": 4, "character": 0}}
    started = await command(client, "agent.run", {"task": "Explain this", "uri": uri, "range": selection})
    ended = await run_ended(client, field(started, "sessionId"))
    assert field(ended, "status") == "done"
    proposal = field(ended, "proposal")
    assert (field(proposal, "files"), field(proposal, "added"), field(proposal, "removed")) == ([], 0, 0)
    user = next(m for m in model_server.requests[0]["messages"] if m["role"] == "user")["content"]
    assert user == (
        "Explain this\n\nFile in focus: stats.py (line 4 selected)\n\n"
        "Selected text (file content, data):\n```\ndef mean(values: list[float]) -> float:\n\n```"
    )


async def test_empty_configuration_keeps_settings_and_commands_default_to_the_latest_session(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    """eglot sends ``didChangeConfiguration {settings: {}}`` on connect; Helix never sees session ids."""
    model_server.steps.extend(
        [
            fix_step(),
            {"content": "done"},
        ]
    )
    await start(client, workspace, model_settings(model_server))
    client.workspace_did_change_configuration(t.DidChangeConfigurationParams(settings={}))
    started = await command(client, "agent.run", {"task": "fix"})
    ended = await run_ended(client, field(started, "sessionId"))
    assert field(ended, "status") == "done", field(ended, "reason")
    assert any(f"(session {field(started, 'sessionId')})" in m.message for m in client.log_messages)
    (file,) = field(await command(client, "agent.proposal", {}), "files")
    assert field(file, "path") == "stats.py"
    applied = await command(client, "agent.applyProposal", {})
    assert field(applied, "applied") is True, field(applied, "failureReason")
    assert FIXED in (workspace / "stats.py").read_text()


async def test_a_buffer_typed_in_and_undone_is_not_stale(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    stats = workspace / "stats.py"
    model_server.steps.extend([fix_step(), {"content": "done"}])
    await start(client, workspace, model_settings(model_server))
    uri, text = stats.as_uri(), stats.read_text()
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(t.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
    )
    session_id = field(await command(client, "agent.run", {"task": "fix it"}), "sessionId")
    assert field(await run_ended(client, session_id), "status") == "done"
    for version, new_text in ((2, "x" + text), (3, text)):  # type a character, then undo it
        client.text_document_did_change(
            t.DidChangeTextDocumentParams(
                text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[t.TextDocumentContentChangeWholeDocument(text=new_text)],
            )
        )
    client.files.open(uri, text, 3)  # type: ignore[attr-defined]
    applied = await command(client, "agent.applyProposal", {"sessionId": session_id})
    assert field(applied, "applied") is True, field(applied, "failureReason")
    (edit,) = client.agent["edits"]  # type: ignore[attr-defined]
    assert edit.edit.document_changes[0].text_document.version == 3
    assert client.files.text(uri) == text.replace(BUGGY, FIXED)  # type: ignore[attr-defined]
    assert any(m.message == "■ apply: applied" for m in client.log_messages)
