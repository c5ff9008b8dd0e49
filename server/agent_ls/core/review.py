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


class RunFindings:
    """The findings of one run, which may report them in several ``review_findings`` calls (a rejected
    finding sent again, say): they add up, and an identical finding counts once. What a front end shows
    for the run's files is all of them; the next run that reports on a file replaces them there.

    Attributes:
        findings: every finding, in the order reported.
        files: the workspace-relative paths the run's reviews covered.
    """

    def __init__(self) -> None:
        self.findings: list[ReviewFinding] = []
        self.files: set[str] = set()

    def add(self, findings: tuple[ReviewFinding, ...], files: tuple[str, ...]) -> None:
        """A ``review_findings`` call covered ``files`` and found ``findings``."""
        self.files.update(files)
        self.findings.extend(f for f in dict.fromkeys(findings) if f not in self.findings)

    def lines_missing_from(self, answer: str) -> list[str]:
        """The ``path:line: severity: message`` line of each finding that ``answer`` does not hold, in the
        order reported."""
        return [str(f) for f in self.findings if str(f) not in answer]
