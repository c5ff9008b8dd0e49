"""A review finding: a problem the agent found at lines of a file (the ``review_findings`` tool).

The tool validates each finding against the file as the agent sees it (pending edits over unsaved
buffers over disk) and emits the accepted ones in ``events.FindingsReported``; front ends show them (the
LSP server as diagnostics with source ``agent-ls review``, the CLI as ``path:line: severity: message``
lines, the form compilers print and editors' problem matchers read).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FindingSeverity = Literal["error", "warning", "info", "hint"]
"""The four LSP 3.17 ``DiagnosticSeverity`` levels, named as the model writes them."""


@dataclass(frozen=True)
class ReviewFinding:
    """One accepted finding.

    Attributes:
        path: workspace-relative POSIX path of the file.
        line: first line, 1-based (as ``read_file`` numbers it).
        end_line: last line, 1-based and inclusive; equal to ``line`` for a one-line finding.
        severity: how bad it is.
        message: what is wrong, one line (line breaks are turned into spaces by the tool).
    """

    path: str
    line: int
    end_line: int
    severity: FindingSeverity
    message: str

    def __str__(self) -> str:
        """``path:line: severity: message`` (1-based), the line the answer and the CLI show."""
        return f"{self.path}:{self.line}: {self.severity}: {self.message}"

    def wire(self) -> dict[str, object]:
        """The camelCase JSON object of the session store and of a diagnostic's ``data.finding``."""
        return {
            "path": self.path,
            "line": self.line,
            "endLine": self.end_line,
            "severity": self.severity,
            "message": self.message,
        }


class ShownFindings:
    """The findings a session shows now, per file: each review replaces the findings of the files it
    covers and leaves the others (what the editor shows, and what the CLI prints after the answer)."""

    def __init__(self) -> None:
        self.by_file: dict[str, list[ReviewFinding]] = {}

    def replace(self, findings: tuple[ReviewFinding, ...], files: tuple[str, ...]) -> None:
        """A review of ``files`` found ``findings`` (each on one of ``files``)."""
        for path in files:
            self.by_file[path] = []
        for finding in findings:
            self.by_file.setdefault(finding.path, []).append(finding)

    def lines_missing_from(self, answer: str) -> list[str]:
        """The ``path:line: severity: message`` line of each finding that ``answer`` does not hold, in file
        order, then finding order."""
        return [str(f) for path in sorted(self.by_file) for f in self.by_file[path] if str(f) not in answer]
