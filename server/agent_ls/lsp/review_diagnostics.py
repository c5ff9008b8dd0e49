"""Review findings as LSP diagnostics (source ``agent-ls review``), and clearing them.

Order, per ``FindingsReported`` event of a session:

1. each file the review covers gets a new set of review diagnostics, its findings (possibly none): a
   later review of a file replaces the earlier one's, whichever session made it; files the review does
   not cover keep theirs;
2. each finding's range runs from the start of ``line`` to the end of ``endLine`` (the line's length in
   the negotiated position encoding, read from the editor's buffer, else the disk, in a worker thread;
   a line the editor's text does not have ends at character 0 of the line after the last one it has);
3. the diagnostics go out merged with the other sources' (``diagnostic_sets``), one publication per file,
   in the order the events came (each publication waits for the one before).

A finding's ``data`` is ``protocol.FindingData`` (the session and the finding), which the quick fix
"Agent: Fix this finding" (``handlers/code_actions.py``) reads back. Findings stay until the next review
of their file or ``agent.clearFindings``; editors move them with the user's edits meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from lsprotocol import types as t
from pygls.workspace.position_codec import PositionCodec

from agent_ls.core.events import FindingsReported
from agent_ls.core.review import FindingSeverity, ReviewFinding
from agent_ls.lsp import protocol as p
from agent_ls.lsp.file_uris import to_fs_path
from agent_ls.lsp.state import AgentLanguageServer

log = logging.getLogger(__name__)

SEVERITY: dict[FindingSeverity, t.DiagnosticSeverity] = {
    "error": t.DiagnosticSeverity.Error,
    "warning": t.DiagnosticSeverity.Warning,
    "info": t.DiagnosticSeverity.Information,
    "hint": t.DiagnosticSeverity.Hint,
}


def show_findings(ls: AgentLanguageServer, session_id: str, root: Path, event: FindingsReported) -> None:
    """Publish ``event``'s findings for the files it covers (module docstring), soon, in event order.
    Needs a running event loop; never raises."""
    uris = {path: (root / path).as_uri() for path in event.files}
    # The editor's text now, on the event loop; a file it has not opened is read in the worker thread.
    opened = {path: _open_lines(ls, uri) for path, uri in uris.items()}
    previous = ls.state.review_publishing
    codec = ls.workspace.position_codec
    ls.state.review_publishing = asyncio.get_running_loop().create_task(
        _publish(ls, session_id, root, event, uris, opened, codec, previous)
    )


async def _publish(
    ls: AgentLanguageServer,
    session_id: str,
    root: Path,
    event: FindingsReported,
    uris: dict[str, str],
    opened: dict[str, list[str] | None],
    codec: PositionCodec,
    previous: asyncio.Task[None] | None,
) -> None:
    if previous is not None:
        await asyncio.wait([previous])  # its outcome is its own; only the order matters here
    try:
        by_file = await asyncio.to_thread(_diagnostics, session_id, root, event, opened, codec)
    except Exception:  # a finding we cannot show must not break the run that reported it
        log.exception("publishing review findings failed")
        return
    for path, diagnostics in by_file.items():
        ls.state.diagnostics.publish(ls, uris[path], "review", diagnostics)


def _diagnostics(
    session_id: str,
    root: Path,
    event: FindingsReported,
    opened: dict[str, list[str] | None],
    codec: PositionCodec,
) -> dict[str, list[t.Diagnostic]]:
    """Blocking: the diagnostics of each covered file (workspace-relative path), in finding order."""
    by_file: dict[str, list[t.Diagnostic]] = {path: [] for path in event.files}
    lines_of: dict[str, list[str]] = {}
    for finding in event.findings:
        if finding.path not in lines_of:
            known = opened.get(finding.path)
            lines_of[finding.path] = known if known is not None else _disk_lines(root / finding.path)
        diagnostic = finding_diagnostic(session_id, finding, lines_of[finding.path], codec)
        by_file.setdefault(finding.path, []).append(diagnostic)
    return by_file


def finding_diagnostic(
    session_id: str, finding: ReviewFinding, lines: list[str], codec: PositionCodec
) -> t.Diagnostic:
    """``finding`` as a diagnostic on a document of ``lines`` (without line endings): from the start of
    ``line`` to the end of ``endLine`` in ``codec``'s encoding (0-based positions, LSP 3.17)."""
    last = finding.end_line - 1
    if last < len(lines):
        end = t.Position(last, codec.client_num_units(lines[last]))
    else:  # the editor's text is shorter than the agent's view (pending edits): end after its last line
        end = t.Position(len(lines), 0)
    start = t.Position(min(finding.line - 1, end.line), 0)
    data = p.FindingData(
        session_id=session_id,
        finding=p.ReviewFindingWire(
            path=finding.path,
            line=finding.line,
            end_line=finding.end_line,
            severity=finding.severity,
            message=finding.message,
        ),
    )
    return t.Diagnostic(
        range=t.Range(start=start, end=end),
        message=finding.message,
        severity=SEVERITY[finding.severity],
        source=p.REVIEW_SOURCE,
        data=data.wire(),
    )


def _open_lines(ls: AgentLanguageServer, uri: str) -> list[str] | None:
    document = ls.workspace.text_documents.get(uri)
    return _split(document.source) if document is not None else None


def _disk_lines(path: Path) -> list[str]:
    try:
        return _split(path.read_text(encoding="utf-8-sig", errors="replace"))
    except OSError:
        return []


def _split(text: str) -> list[str]:
    """The lines as an editor counts them: split at ``\\r\\n``, ``\\r`` and ``\\n`` (LSP 3.17)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def clear_findings(ls: AgentLanguageServer, session_id: str | None, uris: list[str] | None) -> int:
    """Remove the review findings of ``session_id`` (None: of every session) on ``uris`` (None: every file)
    and publish what is left; returns how many were removed."""
    wanted = None if uris is None else {_normal(uri) for uri in uris}
    removed = 0
    for uri in ls.state.diagnostics.uris("review"):
        if wanted is not None and _normal(uri) not in wanted:
            continue
        shown = ls.state.diagnostics.get(uri, "review")
        kept = [d for d in shown if session_id is not None and _session_of(d) != session_id]
        removed += len(shown) - len(kept)
        if len(kept) != len(shown):
            ls.state.diagnostics.publish(ls, uri, "review", kept)
    return removed


def _session_of(diagnostic: t.Diagnostic) -> str | None:
    data = diagnostic.data
    return data.get("sessionId") if isinstance(data, dict) else None


def _normal(uri: str) -> str:
    """A ``file:`` URI compared by its path (clients quote ``:`` and case differently); others as given."""
    fs = to_fs_path(uri) if uri.startswith("file:") else None
    return fs if fs else uri
