"""Review findings end to end: a real ``agent-ls serve``, an LSP client, a scripted model on 127.0.0.1.

``/code-review`` (``agent.runSkill``) loads ``review_findings`` with the skill; the model's findings are
checked (a line past the end goes back to the model, rejected) and arrive as diagnostics with source
``agent-ls review``; a second review of a file replaces its findings and leaves other files' alone;
``agent.clearFindings`` clears them; "Agent: Fix this finding" continues the session that reported it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from lsprotocol import types as t
from pytest_lsp import LanguageClient

from tests.e2e.conftest import HOME_DIR, command, field, model_settings, run_ended, start, tool_messages
from tests.e2e.test_agent_files_lint import BIG_AGENTS_MD, SMALL_AGENTS_MD
from tests.e2e.test_code_actions import code_actions
from tests.support.model_server import FakeModelServer

ANSWER = "stats.py:8: warning: divides by n-1\nstats.py:11: info: spread([]) raises ValueError"


def review_call(
    call_id: str, findings: list[dict[str, Any]], files: list[str] | None = None
) -> dict[str, Any]:
    arguments: dict[str, Any] = {"findings": findings, **({"files": files} if files is not None else {})}
    return {"tool_calls": [{"id": call_id, "name": "review_findings", "arguments": arguments}]}


def finding(path: str, line: int, severity: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"path": path, "line": line, "severity": severity, "message": message, **extra}


async def published(
    client: LanguageClient, path: Path, predicate: Any, timeout_s: float = 15.0
) -> list[t.Diagnostic]:
    """The diagnostics of ``path`` once a publication satisfies ``predicate``."""
    uri = path.as_uri()
    async with asyncio.timeout(timeout_s):
        while not predicate(client.diagnostics.get(uri, [])):
            await client.wait_for_notification(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[uri])


def shown(diagnostics: list[t.Diagnostic]) -> list[tuple[int, int, int | None, str, str | None]]:
    return [(d.range.start.line, d.range.end.line, d.severity, d.message, d.source) for d in diagnostics]


async def review(client: LanguageClient, workspace: Path, file: str = "stats.py") -> Any:
    result = await command(
        client, "agent.runSkill", {"skill": "code-review", "uri": (workspace / file).as_uri()}
    )
    return await run_ended(client, field(result, "sessionId"))


async def test_code_review_findings_become_diagnostics_and_a_bad_line_goes_back_to_the_model(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend(
        [
            review_call(
                "c1",
                [
                    finding("stats.py", 8, "warning", "divides by n-1"),
                    finding("stats.py", 99, "error", "a line that is not there"),
                ],
            ),
            review_call("c2", [finding("stats.py", 11, "info", "spread([]) raises ValueError", endLine=13)]),
            {"content": ANSWER},
        ]
    )
    await start(client, workspace, model_settings(model_server))
    ended = await review(client, workspace)
    assert field(ended, "status") == "done"
    sid = field(ended, "sessionId")

    first, second, _ = model_server.requests
    tools = {spec["function"]["name"]: spec["function"] for spec in first["tools"]}
    assert "review_findings" in tools  # the skill's allowed-tools loaded it with /code-review
    assert "review_findings" not in tools["load_tools"]["description"]
    rejected = tool_messages(second)[-1]["content"]
    assert "Accepted 1 of 2 findings. Fix these and call review_findings again with them:" in rejected
    assert "#2 stats.py:99: rejected: stats.py has 13 lines, so line 99 does not exist" in rejected

    stats = workspace / "stats.py"
    diagnostics = await published(client, stats, lambda found: len(found) == 2)
    assert shown(diagnostics) == [
        (7, 7, t.DiagnosticSeverity.Warning, "divides by n-1", "agent-ls review"),
        (10, 12, t.DiagnosticSeverity.Information, "spread([]) raises ValueError", "agent-ls review"),
    ]
    assert diagnostics[0].range == t.Range(t.Position(7, 0), t.Position(7, 42))  # the whole line
    assert diagnostics[0].data == {
        "sessionId": sid,
        "finding": {
            "path": "stats.py",
            "line": 8,
            "endLine": 8,
            "severity": "warning",
            "message": "divides by n-1",
        },
    }
    events = [e for e in client.agent["events"] if field(e, "kind") == "findings"]  # type: ignore[attr-defined]
    assert [field(e, "text") for e in events] == [
        "stats.py:8: warning: divides by n-1",
        "stats.py:11: info: spread([]) raises ValueError",
    ]
    (stored,) = HOME_DIR.rglob(f"{sid}.jsonl")  # the session store keeps them
    records = [json.loads(line) for line in stored.read_text(encoding="utf-8").splitlines()]
    assert [r["findings"] for r in records if r.get("kind") == "findings"] == [
        [{"path": "stats.py", "line": 8, "endLine": 8, "severity": "warning", "message": "divides by n-1"}],
        [
            {
                "path": "stats.py",
                "line": 11,
                "endLine": 13,
                "severity": "info",
                "message": "spread([]) raises ValueError",
            }
        ],
    ]


async def test_a_second_review_replaces_its_files_findings_and_clear_findings_clears(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend(
        [
            review_call(
                "c1",
                [
                    finding("stats.py", 8, "warning", "divides by n-1"),
                    finding("test_stats.py", 1, "hint", "no doc"),
                ],
            ),
            {"content": "two findings"},
            review_call("c2", [finding("stats.py", 4, "error", "mean of one value")]),
            {"content": "one finding"},
            review_call("c3", [], files=["stats.py"]),  # a review that finds nothing clears the file
            {"content": "No findings."},
        ]
    )
    await start(client, workspace, model_settings(model_server))
    stats, tests = workspace / "stats.py", workspace / "test_stats.py"
    await review(client, workspace)
    await published(client, stats, lambda found: len(found) == 1)
    await published(client, tests, lambda found: len(found) == 1)

    await review(client, workspace)  # a new session reviews stats.py only
    replaced = await published(
        client, stats, lambda found: [d.message for d in found] == ["mean of one value"]
    )
    assert shown(replaced) == [(3, 3, t.DiagnosticSeverity.Error, "mean of one value", "agent-ls review")]
    assert [d.message for d in client.diagnostics[tests.as_uri()]] == ["no doc"]  # not covered: kept

    await review(client, workspace)
    assert await published(client, stats, lambda found: not found) == []
    cleared = await command(client, "agent.clearFindings", {})
    assert field(cleared, "cleared") == 1
    assert await published(client, tests, lambda found: not found) == []
    assert field(await command(client, "agent.clearFindings", {}), "cleared") == 0


async def test_fix_this_finding_continues_the_session_that_reported_it(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    model_server.steps.extend(
        [
            review_call("c1", [finding("stats.py", 8, "warning", "divides by n-1")]),
            {"content": "stats.py:8: warning: divides by n-1"},
            {"content": "Fixed."},
        ]
    )
    await start(client, workspace, model_settings(model_server))
    sid = field(await review(client, workspace), "sessionId")
    stats = workspace / "stats.py"
    (diagnostic,) = await published(client, stats, lambda found: len(found) == 1)

    selection = t.Range(t.Position(7, 4), t.Position(7, 4))
    actions = await code_actions(client, stats.as_uri(), selection, [diagnostic])  # as the editor echoes it
    fix = next(
        a for a in actions or [] if isinstance(a, t.CodeAction) and a.title == "Agent: Fix this finding"
    )
    assert fix.kind == t.CodeActionKind.QuickFix and fix.command is not None
    assert fix.command.command == "agent.run"
    (argument,) = fix.command.arguments or []
    assert field(argument, "sessionId") == sid
    result = await client.workspace_execute_command_async(
        t.ExecuteCommandParams(command=fix.command.command, arguments=fix.command.arguments)
    )
    assert field(result, "sessionId") == sid  # the same session goes on
    assert field(await run_ended_after(client, sid, 2), "answer") == "Fixed."

    follow_up = model_server.requests[-1]
    history = json.dumps(follow_up["messages"])
    assert "review_findings" in history and "divides by n-1" in history  # the earlier run is there
    task = follow_up["messages"][-1]["content"]
    assert "Fix this finding of your review: stats.py line 8 (warning): divides by n-1" in task


async def run_ended_after(
    client: LanguageClient, session_id: str, count: int, timeout_s: float = 30.0
) -> Any:
    """The ``count``-th ``agent/runEnded`` of ``session_id``."""
    async with asyncio.timeout(timeout_s):
        while True:
            ended = [e for e in client.agent["ended"] if field(e, "sessionId") == session_id]  # type: ignore[attr-defined]
            if len(ended) >= count:
                return ended[count - 1]
            await asyncio.sleep(0.02)


async def test_review_findings_and_the_agent_file_lint_on_one_file_keep_each_other(
    client: LanguageClient, workspace: Path, model_server: FakeModelServer
) -> None:
    """Both are publishDiagnostics on the same URI, which replaces everything shown there: each source's
    set is kept apart and the file gets both, whichever changes."""
    agents = workspace / "AGENTS.md"
    agents.write_text(BIG_AGENTS_MD, encoding="utf-8")  # truncated: the lint warns on it
    model_server.steps.extend(
        [
            review_call("c1", [finding("AGENTS.md", 2, "warning", "a rule nobody can check")]),
            {"content": "ok"},
        ]
    )
    await start(client, workspace, model_settings(model_server))
    (lint,) = await published(client, agents, lambda found: len(found) == 1)
    assert lint.source == "agent-ls" and lint.message.startswith("truncated:")

    await review(client, workspace, "AGENTS.md")
    both = await published(client, agents, lambda found: len(found) == 2)
    assert [(d.source, d.range.start.line) for d in both] == [
        ("agent-ls", lint.range.start.line),
        ("agent-ls review", 1),
    ]

    agents.write_text(SMALL_AGENTS_MD, encoding="utf-8")  # the lint is fixed and saved: the review stays
    client.text_document_did_save(
        t.DidSaveTextDocumentParams(text_document=t.TextDocumentIdentifier(uri=agents.as_uri()))
    )
    kept = await published(
        client, agents, lambda found: len(found) == 1 and found[0].source == "agent-ls review"
    )
    assert [d.message for d in kept] == ["a rule nobody can check"]
