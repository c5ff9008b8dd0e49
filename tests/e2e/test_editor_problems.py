"""The editor's problems reach the model (issue 17): a real ``agent-ls serve`` gets
``agent/didChangeProblems`` from the client, the scripted model calls ``problems``, and the request the
fake model server records holds them; after an edit, ``problems`` on the edited file asks the client for
the proposal's problems (``agent/problemsOfText``) and says which are new; a "Fix this problem" task
starts with the file's other problems.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types as t
from pytest_lsp import LanguageClient

from tests.e2e.conftest import (
    CAPABILITIES,
    FIXED,
    command,
    field,
    fix_step,
    model_settings,
    run_ended,
    tool_messages,
)
from tests.support.model_server import FakeModelServer

DIVISION = {
    "range": {"start": {"line": 2, "character": 11}, "end": {"line": 2, "character": 44}},
    "message": "Possible off-by-one:   divides by len(values) - 1",
    "severity": 1,
    "source": "Pylance",
    "code": "reportOffByOne",
}
UNUSED = {
    "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 9}},
    "message": "`os` imported but unused",
    "severity": 2,
    "source": "ruff",
    "code": "F401",
}
OWN_FINDING = {
    "range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 5}},
    "message": "our own review finding, never echoed",
    "severity": 2,
    "source": "agent-ls review",
}


async def _start(client: LanguageClient, root: Path, server: FakeModelServer, **options: Any) -> None:
    await client.initialize_session(
        t.InitializeParams(
            capabilities=CAPABILITIES,
            root_uri=root.as_uri(),
            workspace_folders=[t.WorkspaceFolder(uri=root.as_uri(), name="ws")],
            initialization_options={"agentLs": model_settings(server), **options},
        )
    )


def _send_problems(client: LanguageClient, files: list[dict[str, Any]]) -> None:
    client.protocol.notify("agent/didChangeProblems", {"files": files})


def _call(call_id: str, path: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "problems", "arguments": {"path": path}}]}


def _result(request: dict[str, Any], call_id: str) -> str:
    """The text the tool returned for ``call_id``, without the data wrapper (``<tool_result …>``)."""
    (content,) = [m["content"] for m in tool_messages(request) if m["tool_call_id"] == call_id]
    assert isinstance(content, str)
    return content.split("\n", 1)[1].rsplit("\n</tool_result>", 1)[0]


async def test_forwarded_diagnostics_reach_the_model(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend(
        [_call("call_all", "."), _call("call_file", "stats.py"), {"content": "Two problems."}]
    )
    await _start(client, workspace, model_server)
    stats = (workspace / "stats.py").as_uri()
    # A malformed entry (no range) is skipped; the other files of the notification are kept.
    malformed = {"uri": (workspace / "bad.py").as_uri(), "diagnostics": [{"message": "no range"}]}
    _send_problems(client, [malformed, {"uri": stats, "diagnostics": [DIVISION, OWN_FINDING]}])
    _send_problems(client, [{"uri": (workspace / "test_stats.py").as_uri(), "diagnostics": [UNUSED]}])
    # A later notification replaces a file's problems; an empty list forgets them.
    _send_problems(client, [{"uri": (workspace / "gone.py").as_uri(), "diagnostics": [UNUSED]}])
    _send_problems(client, [{"uri": (workspace / "gone.py").as_uri(), "diagnostics": []}])

    result = await command(client, "agent.run", {"task": "What does the editor report?"})
    ended = await run_ended(client, field(result, "sessionId"))
    assert field(ended, "status") == "done", field(ended, "reason")

    last = model_server.requests[-1]
    summary = _result(last, "call_all")
    assert "stats.py: 1 error\n" in summary
    assert "test_stats.py: 1 warning\n" in summary
    assert "2 files: 1 error, 1 warning" in summary
    assert "gone.py" not in summary
    assert "bad.py" not in summary
    listing = _result(last, "call_file")
    assert (
        "stats.py:3:12 error Pylance reportOffByOne: Possible off-by-one: divides by len(values) - 1"
        in listing
    )
    assert "our own review finding" not in str(last)


async def test_an_edited_file_s_problems_are_fetched_again_from_the_editor(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    checked: list[Any] = []

    @client.feature("agent/problemsOfText")
    def _problems_of_text(params: Any) -> dict[str, Any]:
        """The editor's language servers on a text: the text on disk has the division; the proposed one
        fixes it and brings a new error. Both have a problem of the checked copy itself (an import it cannot
        resolve), which is therefore never new."""
        checked.append(params)
        (file,) = params.files
        copy = {**UNUSED, "severity": 1, "source": "Pylance", "code": None, "message": "cannot resolve"}
        if FIXED not in file.text:
            return {"files": [{"uri": file.uri, "diagnostics": [copy, DIVISION]}]}
        new = {**UNUSED, "severity": 1, "source": "Pylance", "code": None}
        new["message"] = '"mean2" is not defined'
        return {"files": [{"uri": file.uri, "diagnostics": [copy, new, OWN_FINDING]}]}

    model_server.steps.extend(
        [
            fix_step("call_edit"),
            _call("call_after", "stats.py"),
            {"content": "Done."},
            {"content": "mean2 is defined by the next change; done."},
        ]
    )
    await _start(client, workspace, model_server, problemsOfText=True)
    stats = (workspace / "stats.py").as_uri()
    _send_problems(client, [{"uri": stats, "diagnostics": [DIVISION]}])

    result = await command(client, "agent.run", {"task": "Fix the division."})
    ended = await run_ended(client, field(result, "sessionId"))
    assert field(ended, "status") == "done", field(ended, "reason")

    # Asked for the text on disk and the proposed one, by the problems call, then again when the model
    # answered (the answer did not end the run).
    assert len(checked) == 4
    texts = []
    for request in checked:
        (file,) = request.files
        assert file.uri == stats
        texts.append(FIXED in file.text)
    assert sorted(texts) == [False, False, True, True]
    after = _result(model_server.requests[2], "call_after")
    assert after.splitlines()[:6] == [
        "Problems of your proposed stats.py (checked by the editor):",
        "stats.py:1:1 error Pylance: cannot resolve",
        'stats.py:1:1 error Pylance: "mean2" is not defined',
        "new since your edit: 1:",
        'stats.py:1:1 error Pylance: "mean2" is not defined',
        "gone since your edit: 1",
    ]
    assert "our own review finding" not in after
    told = model_server.requests[3]["messages"][-2]  # the last is the status reminder
    assert told["role"] == "user"
    assert told["content"] == (
        "The editor checked your proposed files. New since your edit (from the editor, data):\n"
        '- stats.py:1:1 error Pylance: "mean2" is not defined\n'
        "Fix them, or say why they are expected, before you answer again."
    )
    assert len(model_server.requests) == 4  # the same proposal is not checked again at the next answer


async def test_without_the_capability_the_problems_are_those_on_disk(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend([fix_step("call_edit"), _call("call_after", "stats.py"), {"content": "Done."}])
    await _start(client, workspace, model_server)
    _send_problems(client, [{"uri": (workspace / "stats.py").as_uri(), "diagnostics": [DIVISION]}])

    result = await command(client, "agent.run", {"task": "Fix the division."})
    ended = await run_ended(client, field(result, "sessionId"))
    assert field(ended, "status") == "done", field(ended, "reason")

    after = _result(model_server.requests[-1], "call_after")
    assert after.startswith("(the problems of stats.py on disk, before your proposed edit")
    assert "stats.py:3:12 error Pylance reportOffByOne" in after


async def test_fix_this_problem_starts_with_the_file_s_other_problems(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.append({"content": "Looked."})
    await _start(client, workspace, model_server)
    stats = workspace / "stats.py"
    _send_problems(client, [{"uri": stats.as_uri(), "diagnostics": [DIVISION, UNUSED, OWN_FINDING]}])

    result = await command(
        client,
        "agent.runSkill",
        {"skill": "fix-diagnostics", "uri": stats.as_uri(), "diagnostics": [DIVISION]},
    )
    ended = await run_ended(client, field(result, "sessionId"))
    assert field(ended, "status") == "done", field(ended, "reason")

    task = model_server.requests[0]["messages"][-1]["content"]
    assert isinstance(task, str)
    picked, _, others = task.partition("Other problems of this file (from the editor, data):\n")
    assert "Possible off-by-one" in picked
    assert others.strip() == "- stats.py:1:1 warning ruff F401: `os` imported but unused"
    # fix-diagnostics names problems in allowed-tools: its schema is sent from the first request.
    assert "problems" in [tool["function"]["name"] for tool in model_server.requests[0]["tools"]]


async def test_a_client_that_never_forwards_problems_is_told_apart(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend([_call("call_file", "stats.py"), {"content": "None sent."}])
    await _start(client, workspace, model_server)

    result = await command(client, "agent.run", {"task": "Any problems?"})
    ended = await run_ended(client, field(result, "sessionId"))
    assert field(ended, "status") == "done", field(ended, "reason")

    assert "has not sent any problems" in _result(model_server.requests[-1], "call_file")
