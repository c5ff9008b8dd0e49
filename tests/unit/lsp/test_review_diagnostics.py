"""Review findings in the editor: their diagnostics, each source's set kept apart, the quick fix.

The e2e (tests/e2e/test_review_findings.py) runs them through a real server; these pin the shapes.
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as t
from pygls.workspace.position_codec import PositionCodec

from agent_ls.core.review import ReviewFinding
from agent_ls.lsp import protocol as p
from agent_ls.lsp.diagnostic_sets import DiagnosticSets
from agent_ls.lsp.handlers.code_actions import FIX_FINDING_TITLE, FIX_TITLE, actions_for, finding_task
from agent_ls.lsp.review_diagnostics import finding_diagnostic

URI = "file:///ws/src/app.py"


class Published:
    def __init__(self) -> None:
        self.sent: list[t.PublishDiagnosticsParams] = []

    def text_document_publish_diagnostics(self, params: t.PublishDiagnosticsParams) -> None:
        self.sent.append(params)


def diagnostic(message: str, source: str) -> t.Diagnostic:
    return t.Diagnostic(range=t.Range(t.Position(0, 0), t.Position(0, 1)), message=message, source=source)


def test_each_source_replaces_only_its_own_set_and_the_uri_gets_them_merged() -> None:
    sets, client = DiagnosticSets(), Published()
    lint = diagnostic("lint", "agent-ls")
    first, second = diagnostic("first review", p.REVIEW_SOURCE), diagnostic("second review", p.REVIEW_SOURCE)
    sets.publish(client, URI, "agent-files", [lint])
    sets.publish(client, URI, "review", [first])
    sets.publish(client, URI, "review", [second])  # a new review replaces the old one, not the lint
    sets.publish(client, URI, "agent-files", [])  # the lint is fixed: the review stays
    sets.publish(client, URI, "agent-files", [])  # nothing before, nothing now: not published
    assert [[d.message for d in sent.diagnostics] for sent in client.sent] == [
        ["lint"],
        ["lint", "first review"],
        ["lint", "second review"],
        ["second review"],
    ]
    assert sets.uris("review") == [URI] and sets.uris("agent-files") == []


def test_a_finding_spans_its_lines_in_the_negotiated_encoding_and_carries_its_session() -> None:
    lines = ["x = 1", "s = '😀é'", "z = 3"]
    finding = ReviewFinding("src/app.py", 1, 2, "warning", "emoji")
    utf16 = finding_diagnostic("s1", finding, lines, PositionCodec(t.PositionEncodingKind.Utf16))
    assert utf16 == t.Diagnostic(
        range=t.Range(t.Position(0, 0), t.Position(1, 9)),  # the emoji is 2 UTF-16 units
        message="emoji",
        severity=t.DiagnosticSeverity.Warning,
        source="agent-ls review",
        data={
            "sessionId": "s1",
            "finding": {
                "path": "src/app.py",
                "line": 1,
                "endLine": 2,
                "severity": "warning",
                "message": "emoji",
            },
        },
    )
    utf8 = finding_diagnostic("s1", finding, lines, PositionCodec(t.PositionEncodingKind.Utf8))
    assert utf8.range.end == t.Position(1, 12)
    past = finding_diagnostic("s1", ReviewFinding("a", 5, 6, "hint", "m"), lines, PositionCodec())
    assert (past.range.start, past.range.end, past.severity) == (
        t.Position(3, 0),
        t.Position(3, 0),
        t.DiagnosticSeverity.Hint,
    )


def test_a_review_diagnostic_gets_fix_this_finding_which_continues_its_session() -> None:
    finding = ReviewFinding("src/app.py", 3, 4, "error", "leaks the handle")
    review = finding_diagnostic("s1", finding, ["a", "b", "c", "d"], PositionCodec())
    forged = diagnostic("data lost on the way", p.REVIEW_SOURCE)  # a client that drops ``data``
    params = t.CodeActionParams(
        text_document=t.TextDocumentIdentifier(uri=URI),
        range=t.Range(t.Position(2, 0), t.Position(2, 0)),
        context=t.CodeActionContext(diagnostics=[review]),
    )
    actions = actions_for(params, [Path("/ws")]) or []
    fix = actions[0]
    assert (fix.title, fix.kind, fix.diagnostics) == (FIX_FINDING_TITLE, t.CodeActionKind.QuickFix, [review])
    assert fix.command is not None
    assert (fix.command.command, fix.command.arguments) == (
        "agent.run",
        [
            {
                "sessionId": "s1",
                "task": finding_task(p.ReviewFindingWire.model_validate(finding.wire())),
                "uri": URI,
            }
        ],
    )
    assert finding_task(p.ReviewFindingWire.model_validate(finding.wire())) == (
        "Fix this finding of your review: src/app.py lines 3-4 (error): leaks the handle\n"
        "Read those lines again first (the file may have changed), then propose the smallest edit that fixes "
        "it, and run the relevant tests if there are any."
    )
    forged.range = review.range
    params.context.diagnostics = [forged]
    assert (actions_for(params, [Path("/ws")]) or [])[0].title == FIX_TITLE
