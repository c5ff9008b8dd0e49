"""Clients with fewer capabilities: no change annotations, no resource operations, no prompts."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as t
from pytest_lsp import LanguageClient

from tests.e2e.conftest import command, field, model_settings, run_ended, start, tool_messages
from tests.support.model_server import FakeModelServer

FIX = {"path": "stats.py", "old_string": "(len(values) - 1)", "new_string": "len(values)"}


def _caps(*, annotations: bool, create: bool, prompts: bool) -> t.ClientCapabilities:
    return t.ClientCapabilities(
        workspace=t.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=t.WorkspaceEditClientCapabilities(
                document_changes=True,
                resource_operations=[t.ResourceOperationKind.Create] if create else [],
                change_annotation_support=t.ChangeAnnotationsSupportOptions() if annotations else None,
            ),
        ),
        window=t.WindowClientCapabilities(
            work_done_progress=False,
            show_message=t.ShowMessageRequestClientCapabilities() if prompts else None,
        ),
    )


@pytest.mark.parametrize("answer", ["Discard", "Apply"])
async def test_without_annotations_the_server_asks_and_applies_only_on_apply(
    answer: str, client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend([{"tool_calls": [{"name": "edit_file", "arguments": FIX}]}, {"content": "ok"}])
    await start(
        client, workspace, model_settings(model_server), _caps(annotations=False, create=True, prompts=True)
    )
    session_id = field(await command(client, "agent.run", {"task": "fix"}), "sessionId")
    assert field(await run_ended(client, session_id), "status") == "done"

    client.agent["answers"].append(answer)  # type: ignore[attr-defined]
    applied = await command(client, "agent.applyProposal", {"sessionId": session_id})
    assert client.agent["prompts"][-1].message == "Apply 1 file(s) (+1 −1)?"  # type: ignore[attr-defined]
    remaining = field(await command(client, "agent.proposal", {"sessionId": session_id}), "files")
    if answer == "Discard":
        assert field(applied, "applied") is False and "discarded" in field(applied, "failureReason")
        assert client.agent["edits"] == []  # type: ignore[attr-defined]
        assert "(len(values) - 1)" in (workspace / "stats.py").read_text()
    else:
        assert field(applied, "applied") is True
        (edit,) = client.agent["edits"]  # type: ignore[attr-defined]
        assert edit.edit.change_annotations is None
        assert all(type(e) is t.TextEdit for e in edit.edit.document_changes[0].edits)
        assert "len(values)\n" in (workspace / "stats.py").read_text()
    assert remaining == []


async def test_new_file_without_resource_operations_is_refused_clearly(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend(
        [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "NEW.md", "content": "x\n"}}]},
            {"content": "ok"},
        ]
    )
    await start(
        client, workspace, model_settings(model_server), _caps(annotations=True, create=False, prompts=True)
    )
    session_id = field(await command(client, "agent.run", {"task": "new file"}), "sessionId")
    await run_ended(client, session_id)
    applied = await command(client, "agent.applyProposal", {"sessionId": session_id})
    assert field(applied, "applied") is False
    assert "cannot create files" in field(applied, "failureReason")
    assert len(field(await command(client, "agent.proposal", {"sessionId": session_id}), "files")) == 1


@pytest.mark.parametrize("headless", [None, "allow"])
async def test_ask_without_prompt_support_takes_the_headless_default_and_logs_it(
    headless: str | None, client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend(
        [
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": "echo built"}}]},
            {"content": "ok"},
        ]
    )
    settings = model_settings(model_server)
    if headless:
        settings["permissions"] = {"headless": headless}
    await start(client, workspace, settings, _caps(annotations=True, create=True, prompts=False))
    session_id = field(await command(client, "agent.run", {"task": "build"}), "sessionId")
    assert field(await run_ended(client, session_id), "status") == "done"
    assert client.agent["prompts"] == []  # type: ignore[attr-defined]
    result = tool_messages(model_server.requests[1])[0]["content"]
    if headless == "allow":
        assert "exit code 0" in result and "built" in result
        assert any("headless default is allow" in m.message for m in client.log_messages)
    else:
        assert "denied" in result
        assert any("headless default is deny" in m.message for m in client.log_messages)


async def test_without_document_changes_the_edit_is_a_plain_changes_map(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend([{"tool_calls": [{"name": "edit_file", "arguments": FIX}]}, {"content": "ok"}])
    basic = t.ClientCapabilities(
        workspace=t.WorkspaceClientCapabilities(apply_edit=True),
        window=t.WindowClientCapabilities(show_message=t.ShowMessageRequestClientCapabilities()),
    )
    await start(client, workspace, model_settings(model_server), basic)
    session_id = field(await command(client, "agent.run", {"task": "fix"}), "sessionId")
    await run_ended(client, session_id)
    client.agent["answers"].append("Apply")  # type: ignore[attr-defined]
    applied = await command(client, "agent.applyProposal", {"sessionId": session_id})
    assert field(applied, "applied") is True, field(applied, "failureReason")
    (edit,) = client.agent["edits"]  # type: ignore[attr-defined]
    assert edit.edit.document_changes is None
    assert list(edit.edit.changes) == [(workspace / "stats.py").as_uri()]
    assert "return sum(values) / len(values)\n" in (workspace / "stats.py").read_text()
