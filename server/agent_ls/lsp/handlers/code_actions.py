"""``textDocument/codeAction``: the agent's actions on a file, each a Command running ``agent.runSkill``.

Offered, in order, for a ``file:`` document inside a workspace root:

1. "Agent: Fix this problem", one per diagnostic of ``context.diagnostics`` that overlaps the range
   (kind ``quickfix``, carrying that diagnostic); for a review finding (source ``agent-ls review``, its
   ``data`` a ``protocol.FindingData``) "Agent: Fix this finding" instead, whose command continues the
   session that reported it (``agent.run {sessionId, task, uri}``, the task naming the finding's file,
   lines, severity and message);
2. "Agent: Review this file (/code-review)" (kind ``source``);
3. "Agent: Explain selection", only when the range is not empty (kind ``""``, ``CodeActionKind.Empty``);
4. "Agent: Write tests for this" (kind ``source``).

Kinds follow LSP 3.17 ``CodeActionKind``: ``quickfix`` is the fix of a reported problem; ``refactor``
means restructuring the code in range without changing what it does, which neither reviewing,
explaining nor writing tests is; ``source`` is an action on the whole file, and is where servers put
code generation that lands elsewhere (jdtls's ``source.generate.*``); explaining changes no code, so it
has the empty kind, which clients show in the general menu and drop when ``context.only`` asks for a
specific kind. VS Code lists ``source`` actions under "Source Action…", not in the light bulb.

``context.only`` is honoured with the hierarchical rule of the spec (``source`` covers ``source.x``).
Nothing here reads the disk: clients ask on every cursor move.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import converters
from lsprotocol import types as t
from pydantic import ValidationError

from agent_ls.lsp import protocol
from agent_ls.lsp.file_uris import to_fs_path
from agent_ls.lsp.state import AgentLanguageServer

FIX_TITLE = "Agent: Fix this problem"
FIX_FINDING_TITLE = "Agent: Fix this finding"
REVIEW_TITLE = "Agent: Review this file (/code-review)"
EXPLAIN_TITLE = "Agent: Explain selection"
TESTS_TITLE = "Agent: Write tests for this"

KIND_FIX = t.CodeActionKind.QuickFix
KIND_REVIEW = t.CodeActionKind.Source
KIND_EXPLAIN = t.CodeActionKind.Empty
KIND_TESTS = t.CodeActionKind.Source

OPTIONS = t.CodeActionOptions(code_action_kinds=[KIND_FIX, KIND_EXPLAIN, KIND_REVIEW])
"""What the server declares as ``codeActionProvider`` (the distinct kinds above)."""

# lsprotocol's own converter gives the wire JSON (camelCase, unset fields left out) of a Range or a
# Diagnostic, exactly as the client sent it.
_CONVERTER = converters.get_converter()


def code_action(ls: AgentLanguageServer, params: t.CodeActionParams) -> list[t.CodeAction] | None:
    """The actions for ``params`` (see the module docstring), or None for a document they do not fit."""
    return actions_for(params, ls.state.roots)


def actions_for(params: t.CodeActionParams, roots: list[Path]) -> list[t.CodeAction] | None:
    """The actions for a request on a document under one of ``roots`` (absolute, resolved paths).

    Returns:
        The actions in the module docstring's order, filtered by ``params.context.only``; None when the
        document is not a ``file:`` URI or lies outside every root.
    """
    uri = params.text_document.uri
    if not _inside(uri, roots):
        return None
    selection = params.range
    actions: list[t.CodeAction] = []
    for diagnostic in params.context.diagnostics:
        finding = _finding(diagnostic)
        if finding is not None and _overlaps(diagnostic.range, selection):
            task = finding_task(finding.finding)
            follow_up = {"sessionId": finding.session_id, "task": task, "uri": uri}
            command = t.Command(title=FIX_FINDING_TITLE, command=protocol.CMD_RUN, arguments=[follow_up])
            actions.append(
                t.CodeAction(
                    title=FIX_FINDING_TITLE, kind=KIND_FIX, diagnostics=[diagnostic], command=command
                )
            )
        elif _overlaps(diagnostic.range, selection):
            arguments = {
                "skill": "fix-diagnostics",
                "uri": uri,
                "range": _wire(diagnostic.range),
                # The message only as a diagnostic (listed in the task), never as the skill's arguments:
                # $ARGUMENTS lands in the trusted skill block, and messages quote the file's text.
                "diagnostics": [_wire(diagnostic)],
            }
            actions.append(_action(FIX_TITLE, KIND_FIX, arguments, diagnostics=[diagnostic]))
    actions.append(_action(REVIEW_TITLE, KIND_REVIEW, {"skill": "code-review", "uri": uri}))
    if selection.start != selection.end:
        actions.append(
            _action(EXPLAIN_TITLE, KIND_EXPLAIN, {"skill": "explain", "uri": uri, "range": _wire(selection)})
        )
    actions.append(
        _action(TESTS_TITLE, KIND_TESTS, {"skill": "write-tests", "uri": uri, "range": _wire(selection)})
    )
    only = params.context.only
    if only is not None:
        actions = [a for a in actions if a.kind is not None and any(_of_kind(a.kind, k) for k in only)]
    return actions


def finding_task(finding: protocol.ReviewFindingWire) -> str:
    """The follow-up task that fixes ``finding`` (lines 1-based, as the review cited them)."""
    one = finding.end_line == finding.line
    lines = f"line {finding.line}" if one else f"lines {finding.line}-{finding.end_line}"
    message = " ".join(finding.message.split())
    return (
        f"Fix this finding of your review: {finding.path} {lines} ({finding.severity}): {message}\n"
        "Read those lines again first (the file may have changed), then propose the smallest edit that "
        "fixes it, and run the relevant tests if there are any."
    )


def _finding(diagnostic: t.Diagnostic) -> protocol.FindingData | None:
    """The finding a review diagnostic carries, or None for any other diagnostic (or a ``data`` the client
    did not send back whole)."""
    if diagnostic.source != protocol.REVIEW_SOURCE or diagnostic.data is None:
        return None
    try:
        return protocol.FindingData.model_validate(diagnostic.data)
    except ValidationError:
        return None


def _action(
    title: str,
    kind: t.CodeActionKind,
    arguments: dict[str, Any],
    diagnostics: list[t.Diagnostic] | None = None,
) -> t.CodeAction:
    return t.CodeAction(
        title=title,
        kind=kind,
        diagnostics=diagnostics,
        command=t.Command(title=title, command=protocol.CMD_RUN_SKILL, arguments=[arguments]),
    )


def _inside(uri: str, roots: list[Path]) -> bool:
    """True for a ``file:`` URI under one of ``roots``; the path is compared as written, then resolved
    (roots are resolved at ``initialize``, a client may send a path through a symlink)."""
    if not uri.startswith("file:"):
        return False
    fs = to_fs_path(uri)
    if not fs:
        return False
    path = Path(fs)
    if any(path.is_relative_to(root) for root in roots):
        return True
    resolved = path.resolve()
    return any(resolved.is_relative_to(root) for root in roots)


def _overlaps(a: t.Range, b: t.Range) -> bool:
    """Ranges touching or sharing a position overlap: a cursor at either end of a diagnostic is on it."""
    return _key(a.start) <= _key(b.end) and _key(b.start) <= _key(a.end)


def _key(position: t.Position) -> tuple[int, int]:
    return position.line, position.character


def _of_kind(kind: str, wanted: str) -> bool:
    """LSP 3.17: kinds are hierarchical, ``wanted`` covers itself and ``wanted.*``; ``""`` covers all."""
    return not wanted or kind == wanted or kind.startswith(wanted + ".")


def _wire(value: t.Range | t.Diagnostic) -> Any:
    return _CONVERTER.unstructure(value)
