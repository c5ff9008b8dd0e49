"""A problem at a place in a file: the one shape for the config files, AGENTS.md files and SKILL.md files.

The LSP layer turns it into ``textDocument/publishDiagnostics`` (converting columns to the negotiated
position encoding); the CLI prints it with ``str()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Severity = Literal["error", "warning", "information"]


@dataclass(frozen=True)
class FileDiagnostic:
    """A problem in a file, for an LSP diagnostic or a CLI line.

    Attributes:
        path: the file.
        line: 0-based line.
        character: 0-based start, in code points of the line (Python ``str`` indices; ``lsp/`` converts
            them to the negotiated position encoding).
        end_character: 0-based end (exclusive), on the same line.
        severity: ``error`` (a value, a skill or the whole file was ignored), ``warning`` or
            ``information``.
        message: one line.
    """

    path: Path
    line: int
    character: int
    end_character: int
    severity: Severity
    message: str

    def __str__(self) -> str:
        """``<path>:<line>:<column>: <severity>: <message>``, 1-based as compilers print them."""
        return f"{self.path}:{self.line + 1}:{self.character + 1}: {self.severity}: {self.message}"

    def wire(self) -> dict[str, object]:
        """The camelCase JSON object of ``--json`` outputs and ``agent.*`` command results."""
        return {
            "path": str(self.path),
            "line": self.line,
            "character": self.character,
            "endCharacter": self.end_character,
            "severity": self.severity,
            "message": self.message,
        }
