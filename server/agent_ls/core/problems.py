"""The editor's problems (its language servers' diagnostics) as the agent reads them, and the port they
come through.

The LSP front end keeps the diagnostics the editor forwards (``agent/didChangeProblems``,
``lsp/editor_problems.py``) and hands a session a ``ProblemSource``; the ``problems`` tool
(``tools/problems.py``) reads it. Nothing here knows LSP: a ``Problem`` is 1-based, its column counted in
characters (code points), as every position the model sees.

Lines read ``path:line:col severity source: message`` (``problem_line``); a file's problems are compared
before and after an edit by what they say, not where (``new_since``): an edit shifts lines.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from agent_ls.core.context import neutralize_tags
from agent_ls.core.proposal import FileChange

Severity = Literal["error", "warning", "information", "hint"]

SEVERITIES: tuple[Severity, ...] = ("error", "warning", "information", "hint")
"""In LSP 3.17 ``DiagnosticSeverity`` order (1 to 4); a diagnostic without one counts as an error, as
VS Code shows it."""


@dataclass(frozen=True)
class Problem:
    """One diagnostic of a file.

    Attributes:
        line: 1-based line of the start.
        column: 1-based column of the start, in characters (code points).
        severity: as the language server said it (none given: ``error``).
        source: the language server or tool that reported it (``Pylance``, ``json``), "" when unknown.
        code: its rule or error code (``F401``, ``2322``), "" when none.
        message: the message, whitespace folded to single spaces.
    """

    line: int
    column: int
    severity: Severity
    source: str
    code: str
    message: str

    @property
    def what(self) -> tuple[str, str, str, str]:
        """What the problem says, without where: how problems are matched across an edit."""
        return self.severity, self.source, self.code, self.message


@dataclass(frozen=True)
class FileProblems:
    """The problems of one file, in the order the editor listed them.

    Attributes:
        path: workspace-relative POSIX path.
        problems: at most the source's per-file bound (``left_out`` counts the rest).
        left_out: problems the editor reported that were not kept (over the bound).
    """

    path: str
    problems: tuple[Problem, ...]
    left_out: int = 0


class ProblemSource(Protocol):
    """The editor's problems for one workspace root, as a session reads them.

    Contract: ``forwarded`` says whether the editor ever sent problems (a client that does not forward
    them: the tool says so rather than "no problems"). ``of_file`` returns the problems the editor last
    reported for the workspace-relative ``path`` (none: an empty ``FileProblems``); ``all_files`` every file
    with problems, in path order. Both read memory only and never raise. ``of_texts`` asks the editor for
    the problems of proposed texts (``{path: text}``) that are not on disk; it returns ``{path:
    FileProblems}`` for the files the editor answered, or None when the editor cannot (it did not announce
    the capability, it failed, or it did not answer within its timeout); it never raises and never waits
    longer than that timeout. ``covers`` says whether some language server of the editor checks files of a
    path's type.
    """

    @property
    def forwarded(self) -> bool: ...

    def of_file(self, path: str) -> FileProblems: ...

    def all_files(self) -> list[FileProblems]: ...

    def covers(self, path: str) -> bool:
        """Whether the editor reported problems of files of ``path``'s type (its suffix) so far: some
        language server checks them. Reads memory only."""
        ...

    async def of_texts(self, texts: Mapping[str, str]) -> dict[str, FileProblems] | None: ...


def problem_line(path: str, problem: Problem) -> str:
    """``src/app.py:3:5 error Pylance: "x" is not defined`` (the code, when any, after the source:
    ``ruff F401``)."""
    origin = " ".join(part for part in (problem.source, problem.code) if part) or "editor"
    return f"{path}:{problem.line}:{problem.column} {problem.severity} {origin}: {problem.message}"


def severity_counts(problems: Sequence[Problem]) -> str:
    """``2 errors, 1 warning`` (severities in order, zero counts left out)."""
    counts = Counter(problem.severity for problem in problems)
    parts = []
    for severity in SEVERITIES:
        count = counts[severity]
        if count:
            parts.append(f"{count} {severity}{'' if count == 1 else 's'}")
    return ", ".join(parts)


def new_since(before: Sequence[Problem], after: Sequence[Problem]) -> list[Problem]:
    """The problems of ``after`` that ``before`` did not have, matched by what they say (``Problem.what``),
    each occurrence once: two identical messages before and three after leave one new."""
    left = Counter(problem.what for problem in before)
    new = []
    for problem in after:
        if left[problem.what]:
            left[problem.what] -= 1
        else:
            new.append(problem)
    return new


async def check_edits(
    source: ProblemSource, edits: Mapping[str, tuple[str, str]]
) -> dict[str, tuple[FileProblems, FileProblems]] | None:
    """The editor's problems of each edited file before and after the edit, both checked the same way.

    ``edits`` maps a path to ``(base_text, new_text)`` (``FileChange``: the text the edit is based on, the
    proposed one). Both texts are sent to the editor (``of_texts``, concurrently), so what the way of
    checking adds to both (a copy checked outside the workspace cannot resolve its imports) cancels out in
    ``new_since``. Returns ``{path: (before, after)}`` for the files the editor checked in both versions,
    or None when it cannot check texts.
    """
    befores, afters = await asyncio.gather(
        source.of_texts({path: texts[0] for path, texts in edits.items()}),
        source.of_texts({path: texts[1] for path, texts in edits.items()}),
    )
    if befores is None or afters is None:
        return None
    return {path: (befores[path], afters[path]) for path in edits if path in befores and path in afters}


class AnswerRecheck:
    """When the model answers, the editor's problems of the files the run edited, fetched again: the new
    ones go back to the model before the run may end.

    Order, at each answer (``after_answer``): the proposal's files are checked by the editor before and
    after the edit (``check_edits``); the problems each has after that it did not have before
    (``new_since``), errors and warnings only, are the feedback. Nothing is said (None) when the run
    edited nothing, the editor never forwarded problems or cannot check a text, nothing is new, this
    very proposal was checked already, or ``MAX_ROUNDS`` (2) answers of the run were sent back already
    (at most ``MAX_FILES`` (10) edited files are checked, in path order, and only files of a type the
    editor reported problems for: ``covers``; no language server, no check and no wait):
    the model's word then stands, and the ``problems`` tool still shows the rest.

    Args:
        source: the editor's problems.
        proposal: the session's pending edits, in any order (``Workspace.proposal``).
    """

    MAX_ROUNDS = 2
    MAX_FILES = 10
    """Files checked at one answer, in path order: each is a pair of checks the editor runs."""

    def __init__(self, source: ProblemSource, proposal: Callable[[], Sequence[FileChange]]) -> None:
        self._source = source
        self._proposal = proposal
        self._checked: frozenset[tuple[str, tuple[str, str]]] = frozenset()
        self.rounds = 0

    async def after_answer(self) -> str | None:
        """The feedback for the model (a user message's text, the problems marked as data), or None."""
        covered = [change for change in self._proposal() if self._source.covers(change.path)]
        changes = sorted(covered, key=lambda change: change.path)[: self.MAX_FILES]
        texts = {change.path: (change.base_text, change.new_text) for change in changes}
        state = frozenset(texts.items())
        if (
            not texts
            or not self._source.forwarded
            or state == self._checked
            or self.rounds >= self.MAX_ROUNDS
        ):
            return None
        self._checked = state
        checked = await check_edits(self._source, texts)
        if checked is None:
            return None
        lines: list[str] = []
        for path in sorted(checked):
            before, after = checked[path]
            new = new_since(before.problems, after.problems)
            lines.extend(problem_line(path, p) for p in new if p.severity in ("error", "warning"))
        if not lines:
            return None
        self.rounds += 1
        listed = "\n".join(f"- {' '.join(neutralize_tags(line).split())}" for line in lines)
        return (
            "The editor checked your proposed files. New since your edit (from the editor, data):\n"
            f"{listed}\n"
            "Fix them, or say why they are expected, before you answer again."
        )
