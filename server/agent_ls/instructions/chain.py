"""The data of AGENTS.md instructions: settings, one loaded file, a chain of them (``agents_md.py``
loads and renders them; ``discovery.py`` finds and reads them; ``nested.py`` adds files on touch)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agent_ls.core.file_diagnostics import FileDiagnostic
from agent_ls.instructions.imports import ImportRecord

InstructionKind = Literal["global", "project", "nested"]


@dataclass(frozen=True)
class InstructionSettings:
    """The ``[instructions]`` table of ``agent-ls.toml`` (docs/instructions.md).

    Attributes:
        project_root_markers: names whose presence makes a directory the project root (``.git`` may be a
            directory or a file). Empty: the project root is the workspace root.
        fallback_filenames: tried after ``AGENTS.override.md`` and ``AGENTS.md`` in each directory, in
            order; relative paths such as ``.claude/CLAUDE.md`` are allowed (absolute ones and ``..``
            are ignored). Files found under these names may ``@import``.
        max_file_bytes: the most bytes one file may keep (its imports included).
        max_total_bytes: the most bytes of a whole chain, and of a session's nested files; 0 disables
            instructions (nothing is read).
    """

    project_root_markers: tuple[str, ...] = (".git",)
    fallback_filenames: tuple[str, ...] = ("CLAUDE.md",)
    max_file_bytes: int = 32 * 1024
    max_total_bytes: int = 32 * 1024


@dataclass(frozen=True)
class InstructionFile:
    """One instruction file as the prompt gets it.

    Attributes:
        path: where it was found (symlinks kept), e.g. ``<root>/CLAUDE.md``.
        real_path: the same with symlinks resolved.
        label: workspace-relative POSIX (``pkg/AGENTS.md``); the global file's absolute path.
        scope: ``**`` for the workspace root directory, ``pkg/**`` for ``pkg/``, ``global``.
        kind: ``global``, ``project`` (in the chain) or ``nested`` (loaded on touch).
        text: the prompt text: BOM stripped, LF line endings, imports inlined; when cut, the kept head
            (at a UTF-8 boundary) then ``\\n[truncated: N of M bytes]``.
        size_bytes: M, the bytes it brings: the file on disk (BOM excluded, CRLF counting 2) plus the
            text inlined from its imports and their ``[imported from …]`` frames.
        kept_bytes: N, the part of those bytes in ``text``.
        imports: every ``@path`` import met, nested ones included, in order.
        diagnostics: truncation, imports not inlined, invalid UTF-8 (imports in imported files carry
            the imported file's path).
    """

    path: Path
    real_path: Path
    label: str
    scope: str
    kind: InstructionKind
    text: str
    size_bytes: int
    kept_bytes: int
    imports: tuple[ImportRecord, ...]
    diagnostics: tuple[FileDiagnostic, ...]

    @property
    def truncated(self) -> bool:
        """Whether some of its bytes were cut (or all: dropped)."""
        return self.kept_bytes < self.size_bytes

    def wire(self, order: int) -> dict[str, object]:
        """The camelCase JSON object of one file; ``order`` is its 1-based place in the prompt."""
        return {
            "order": order,
            "path": str(self.path),
            "realPath": str(self.real_path),
            "label": self.label,
            "scope": self.scope,
            "kind": self.kind,
            "bytes": self.size_bytes,
            "keptBytes": self.kept_bytes,
            "truncated": self.truncated,
            "imports": [record.wire() for record in self.imports],
        }


@dataclass(frozen=True)
class InstructionChain:
    """The instruction files that apply to one focus in one workspace root.

    Attributes:
        workspace_root: the root as given (labels are relative to it).
        project_root: the directory the chain starts at (module docstring, step 2).
        focus_dir: the directory it ends at.
        files: global first, then project root → focus directory (the deepest last).
        notices: files not loaded (symlink leaving the workspace, secret, unreadable, empty, loaded
            already) and a focus outside the workspace: meant to be shown, never only logged.
        budget_bytes: ``max_total_bytes`` in force.
    """

    workspace_root: Path
    project_root: Path
    focus_dir: Path
    files: tuple[InstructionFile, ...]
    notices: tuple[FileDiagnostic, ...]
    budget_bytes: int

    @property
    def total_bytes(self) -> int:
        """Bytes in the prompt: the sum of ``kept_bytes``."""
        return sum(file.kept_bytes for file in self.files)

    @property
    def diagnostics(self) -> tuple[FileDiagnostic, ...]:
        """Every file's diagnostics, in file order, then the notices."""
        return (*(d for file in self.files for d in file.diagnostics), *self.notices)

    def wire(self) -> dict[str, object]:
        """The result of ``agent.instructions`` and ``agent-ls instructions --json``.

        Shape: ``{workspaceRoot, projectRoot, focusDir, budgetBytes, totalBytes, files: [{order, path,
        realPath, label, scope, kind, bytes, keptBytes, truncated, imports: [{spec, line, status, path,
        message, importer}]}], notices: [FileDiagnostic.wire()], diagnostics: [FileDiagnostic.wire()]}``.
        """
        return {
            "workspaceRoot": str(self.workspace_root),
            "projectRoot": str(self.project_root),
            "focusDir": str(self.focus_dir),
            "budgetBytes": self.budget_bytes,
            "totalBytes": self.total_bytes,
            "files": [file.wire(order) for order, file in enumerate(self.files, start=1)],
            "notices": [notice.wire() for notice in self.notices],
            "diagnostics": [diagnostic.wire() for diagnostic in self.diagnostics],
        }
