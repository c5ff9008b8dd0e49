"""The editor's problems: the diagnostics its language servers show, forwarded to the agent.

1. ``agent/didChangeProblems {files: [{uri, diagnostics}]}`` (``did_change_problems``): each listed
   ``file:`` URI's diagnostics replace the ones kept for it; an empty list forgets the file. Diagnostics of
   our own sources (``agent-ls``, ``agent-ls review``: config lint, review findings) are dropped, so the
   agent never reads its own findings back as the editor's problems. At most ``MAX_PER_FILE`` (100) per
   file are kept, the most severe first (the rest counted), and at most ``MAX_FILES`` (500) files, the
   least recently updated forgotten first.
2. A session gets a ``WorkspaceProblems`` (``core.problems.ProblemSource``) for its root: the kept problems
   of the files under it, 1-based, the column converted from the negotiated position encoding to
   characters with pygls's ``PositionCodec`` on the open document's text (a file not open in the editor
   keeps the editor's column, which differs only after a character outside the BMP).
3. ``of_texts`` asks a client whose ``initializationOptions`` say ``problemsOfText: true`` for the problems of
   proposed texts (``agent/problemsOfText``), waiting at most ``TEXT_TIMEOUT_S`` (5 s); any other client,
   a failure or the timeout gives None (the tool then says it shows the problems on disk).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types as t
from pydantic import ValidationError
from pygls.workspace.position_codec import PositionCodec

from agent_ls.core.problems import SEVERITIES, FileProblems, Problem, problem_line
from agent_ls.lsp import protocol as p
from agent_ls.lsp.problem_store import KeptProblems, kind_of, own_source
from agent_ls.lsp.state import AgentLanguageServer

log = logging.getLogger(__name__)

TEXT_TIMEOUT_S = 5.0


def initialize(ls: AgentLanguageServer, params: t.InitializeParams) -> None:
    """Read ``initializationOptions.problemsOfText`` (true: the client answers ``agent/problemsOfText``)."""
    options = params.initialization_options
    ls.state.problems.checks_texts = isinstance(options, Mapping) and options.get("problemsOfText") is True


def did_change_problems(ls: AgentLanguageServer, params: Any) -> None:
    """``agent/didChangeProblems``: replace the listed files' problems (module docstring). A file whose
    entry is malformed is logged and skipped, the others are kept (a notification has no error reply)."""
    raw = _plain(params)
    files = raw.get("files") if isinstance(raw, dict) else None
    if not isinstance(files, list):
        log.warning("agent/didChangeProblems ignored: no files list")
        return
    store = ls.state.problems
    store.forwarded = True
    for file in files:
        if isinstance(file, dict) and file.get("diagnostics") == {}:
            file["diagnostics"] = []  # Lua's empty table: Neovim's JSON writes it as an object
        try:
            parsed = p.FileDiagnostics.model_validate(file)
        except ValidationError as exc:
            log.warning("agent/didChangeProblems: a file ignored: %s", " ".join(str(exc).split())[:300])
            continue
        store.replace(parsed.uri, parsed.diagnostics)


def _plain(value: Any) -> Any:
    """pygls's params of a custom method (namedtuples, ``_asdict``) back as JSON-like dicts and lists."""
    if hasattr(value, "_asdict"):
        return {key: _plain(item) for key, item in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def problem(diagnostic: p.WireDiagnostic, lines: Sequence[str] | None, codec: PositionCodec) -> Problem:
    """``diagnostic`` as the agent reads it: 1-based, the column in characters when ``lines`` (the text
    its positions refer to) is given, else the editor's column."""
    start = diagnostic.range.start
    column = start.character
    if lines is not None and start.line < len(lines):
        position = t.Position(line=start.line, character=start.character)
        column = codec.position_from_client_units(lines, position).character
    severity = diagnostic.severity if diagnostic.severity in (1, 2, 3, 4) else 1
    code = "" if diagnostic.code in (None, "") else str(diagnostic.code)
    return Problem(
        line=start.line + 1,
        column=column + 1,
        severity=SEVERITIES[severity - 1],
        source=" ".join((diagnostic.source or "").split()),
        code=" ".join(code.split()),
        message=" ".join(diagnostic.message.split()),
    )


class WorkspaceProblems:
    """The editor's problems under one workspace root (``core.problems.ProblemSource``)."""

    def __init__(self, ls: AgentLanguageServer, root: Path) -> None:
        self._ls = ls
        self._root = root

    @property
    def forwarded(self) -> bool:
        return self._ls.state.problems.forwarded

    def _codec(self) -> PositionCodec:
        return PositionCodec(self._ls.workspace.position_encoding or t.PositionEncodingKind.Utf16)

    def _file(self, rel: str, kept: KeptProblems | None) -> FileProblems:
        if kept is None:
            return FileProblems(rel, ())
        document = self._ls.workspace.text_documents.get(kept.uri)
        lines = document.lines if document is not None else None
        codec = self._codec()
        return FileProblems(rel, tuple(problem(d, lines, codec) for d in kept.diagnostics), kept.left_out)

    def of_file(self, path: str) -> FileProblems:
        return self._file(path, self._ls.state.problems.get((self._root / path).resolve()))

    def all_files(self) -> list[FileProblems]:
        return [self._file(rel, kept) for rel, kept in self._ls.state.problems.under(self._root)]

    def covers(self, path: str) -> bool:
        return kind_of(Path(path)) in self._ls.state.problems.kinds

    async def of_texts(self, texts: Mapping[str, str]) -> dict[str, FileProblems] | None:
        if not self._ls.state.problems.checks_texts or not texts:
            return None
        uris = {(self._root / path).as_uri(): path for path in texts}
        files = [p.TextOfFile(uri=uri, text=texts[path]) for uri, path in uris.items()]
        request = self._ls.protocol.send_request_async(
            p.AGENT_PROBLEMS_OF_TEXT, p.ProblemsOfTextParams(files=files).wire()
        )
        try:
            answer = await asyncio.wait_for(request, TEXT_TIMEOUT_S)
            result = p.ProblemsOfTextResult.model_validate(_plain(answer))
        except TimeoutError:
            log.warning("agent/problemsOfText: no answer within %s s", TEXT_TIMEOUT_S)
            return None
        except Exception as exc:  # the editor's failure: the tool falls back to the problems on disk
            log.warning("agent/problemsOfText failed: %s", " ".join(str(exc).split())[:300])
            return None
        codec = self._codec()
        found: dict[str, FileProblems] = {}
        for file in result.files:
            path = uris.get(file.uri)
            if path is None:
                continue
            lines = texts[path].splitlines(keepends=True)
            kept = [d for d in file.diagnostics if not own_source(d.source)]
            found[path] = FileProblems(path, tuple(problem(d, lines, codec) for d in kept))
        return found


def focus_problems(
    ls: AgentLanguageServer, root: Path, path: str, given: Sequence[p.WireDiagnostic]
) -> list[str]:
    """The kept problems of ``path`` (workspace-relative) that ``given`` (the diagnostics a "Fix this
    problem" task carries) does not hold, one ``problem_line`` each: the file's other problems, for the
    task message."""
    picked = {(d.range.start.line, d.message) for d in given}
    found = WorkspaceProblems(ls, root).of_file(path)
    return [
        problem_line(path, one)
        for one, raw in zip(found.problems, _kept_diagnostics(ls, root, path), strict=True)
        if (raw.range.start.line, raw.message) not in picked
    ]


def _kept_diagnostics(ls: AgentLanguageServer, root: Path, path: str) -> tuple[p.WireDiagnostic, ...]:
    kept = ls.state.problems.get((root / path).resolve())
    return kept.diagnostics if kept is not None else ()
