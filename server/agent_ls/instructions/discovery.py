"""Finding, reading and budgeting instruction files for one workspace root (``agents_md.py`` has the
steps in order; ``nested.py`` reuses them for files loaded on touch).

Paths are handled lexically (symlinks kept) so that labels and scopes are the workspace-relative paths
the user sees; only the policy checks use real paths: a workspace file is followed only when its real
path is inside the real workspace root, and is loaded once per real path.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from agent_ls.core.file_diagnostics import FileDiagnostic, Severity
from agent_ls.instructions.budget import allocate, cut_point, truncation_marker, truncation_message
from agent_ls.instructions.chain import InstructionFile, InstructionKind, InstructionSettings
from agent_ls.instructions.imports import Importer, ImportRecord
from agent_ls.instructions.reading import normalize_newlines, read_head, split_lines, strip_ending
from agent_ls.workspace.dependency_folders import first_party

OVERRIDE_NAME = "AGENTS.override.md"
AGENTS_NAME = "AGENTS.md"


@dataclass(frozen=True)
class Found:
    """A candidate that passed the symlink and secret policy (not read yet)."""

    path: Path
    real_path: Path
    label: str
    scope: str
    kind: InstructionKind
    imports_on: bool


@dataclass(frozen=True)
class Draft:
    """A file read and expanded, before the budget: ``pieces`` as in ``imports.Expansion``."""

    found: Found
    pieces: list[tuple[str, int]]
    lines: list[str]
    size_bytes: int
    imports: tuple[ImportRecord, ...]
    diagnostics: list[FileDiagnostic]


class Loader:
    """Discovery and loading in one workspace root; collects notices; remembers what it loaded.

    Args:
        workspace_root: absolute; kept as given (symlinks not resolved) for labels.
        settings: names, markers, caps.
        is_secret: whether a path relative to the real root (POSIX) names a secret file.

    Raises:
        ValueError: ``workspace_root`` is relative.
    """

    def __init__(
        self, workspace_root: Path, settings: InstructionSettings, is_secret: Callable[[str], bool]
    ) -> None:
        if not workspace_root.is_absolute():
            raise ValueError(f"the workspace root must be absolute, not {workspace_root}")
        self.root = Path(os.path.normpath(workspace_root))
        self.real_root = _real(self.root) or self.root
        self.settings = settings
        self.notices: list[FileDiagnostic] = []
        self.loaded: set[Path] = set()
        self._is_secret = is_secret
        self._markers = tuple(m for m in settings.project_root_markers if _plain_relative(m))
        self._names = (
            OVERRIDE_NAME,
            AGENTS_NAME,
            *(name for name in settings.fallback_filenames if _plain_relative(name)),
        )
        self._first_label: dict[Path, str] = {}
        self._project_roots: dict[Path, Path] = {}

    # -- paths ---------------------------------------------------------------------------------------

    def label(self, path: Path) -> str:
        """Workspace-relative POSIX when inside the root (lexically or really), else absolute POSIX."""
        inside = self._inside(path)
        return path.as_posix() if inside is None else inside.as_posix()

    def scope(self, directory: Path) -> str:
        """``**`` for the workspace root, ``pkg/**`` for ``<root>/pkg``."""
        rel = directory.relative_to(self.root).as_posix()
        return "**" if rel == "." else f"{rel}/**"

    def scope_dir(self, scope: str) -> Path:
        """The directory of a project ``scope`` (the inverse of ``scope``)."""
        return self.root if scope == "**" else self.root / scope.removesuffix("/**")

    def dir_of(self, rel: str, *, is_dir: bool) -> Path | None:
        """The directory of a workspace-relative (or absolute) path, inside the root; None outside."""
        written = PurePosixPath(rel)
        path = Path(os.path.normpath(written if written.is_absolute() else self.root / written))
        inside = self._inside(path)
        if inside is None:
            return None
        path = self.root / inside
        directory = path if is_dir or path == self.root else path.parent
        return first_party(self.root, directory)

    def focus_dir(self, focus: Path | None) -> Path:
        """The focus directory (``agents_md`` step 1); a focus outside the root gives a notice."""
        if focus is None:
            return self.root
        path = Path(os.path.normpath(focus if focus.is_absolute() else self.root / focus))
        inside = self._inside(path)
        if inside is None:
            message = f"the focus is outside the workspace root {self.root}; its chain is the root's"
            self._notice(path, "information", message)
            return self.root
        path = self.root / inside
        directory = path if path == self.root or path.is_dir() else path.parent
        kept = first_party(self.root, directory)
        if kept != directory:
            folder = directory.relative_to(self.root).parts[len(kept.relative_to(self.root).parts)]
            above = kept.relative_to(self.root).as_posix()
            message = (
                f"the focus is inside {folder}/, a dependency folder: instruction files and skills there "
                f"are never loaded; the chain is that of {'the workspace root' if above == '.' else above}"
            )
            self._notice(path, "information", message)
        return kept

    def project_root(self, directory: Path) -> Path:
        """The nearest ancestor-or-self of ``directory`` with a marker, up to the root; else the root."""
        cached = self._project_roots.get(directory)
        if cached is not None:
            return cached
        current = directory
        while not any(os.path.lexists(current / marker) for marker in self._markers):
            if current == self.root or current.parent == current:
                current = self.root
                break
            current = current.parent
        self._project_roots[directory] = current
        return current

    def dirs(self, top: Path, bottom: Path) -> list[Path]:
        """``top``, then each directory down to ``bottom`` (inclusive); ``[bottom]`` if not below ``top``."""
        if not bottom.is_relative_to(top):
            return [bottom]
        steps = [top]
        for part in bottom.relative_to(top).parts:
            steps.append(steps[-1] / part)
        return steps

    def _inside(self, path: Path) -> Path | None:
        if path.is_relative_to(self.root):
            return path.relative_to(self.root)
        real = _real(path)
        if real is not None and real.is_relative_to(self.real_root):
            return real.relative_to(self.real_root)
        return None

    # -- discovery -----------------------------------------------------------------------------------

    def _candidate(self, directory: Path, names: Iterable[str]) -> Path | None:
        for name in names:
            path = directory / name
            if os.path.lexists(path) and not path.is_dir():
                return path
        return None

    def find(self, directory: Path, kind: InstructionKind = "project") -> Found | None:
        """The instruction file of ``directory`` (one per directory), or None (with a notice if skipped)."""
        path = self._candidate(directory, self._names)
        if path is None:
            return None
        label = self.label(path)
        real = _real(path)
        if real is None:
            self._notice(path, "warning", f"symlinked {label} not followed: its symlinks cannot be resolved")
            return None
        if not real.is_relative_to(self.real_root):
            message = f"symlinked {label} not followed: its real path {real} is outside the workspace"
            self._notice(path, "warning", message)
            return None
        if not real.exists():
            self._notice(path, "warning", f"symlinked {label} not followed: its target {real} does not exist")
            return None
        rel = real.relative_to(self.real_root).as_posix()
        if self._is_secret(rel):
            self._notice(path, "warning", f"{label} not loaded: it is the secret file {rel}")
            return None
        imports_on = path.name not in (OVERRIDE_NAME, AGENTS_NAME) or path.parent != directory
        return Found(path, real, label, self.scope(directory), kind, imports_on)

    def find_global(self, global_dir: Path) -> Found | None:
        """The global file: ``AGENTS.override.md`` else ``AGENTS.md`` in ``global_dir``; symlinks followed."""
        path = self._candidate(global_dir, (OVERRIDE_NAME, AGENTS_NAME))
        if path is None:
            return None
        real = _real(path)
        if real is None or not real.exists():
            self._notice(path, "warning", f"{path} not loaded: its symlink target does not exist")
            return None
        return Found(path, real, path.as_posix(), "global", "global", imports_on=False)

    def governing_label(self, directory: Path) -> str | None:
        """The label of ``directory``'s instruction file by ``stat`` alone (no read, no notice)."""
        path = self._candidate(directory, self._names)
        real = None if path is None else _real(path)
        if path is None or real is None or not real.is_relative_to(self.real_root):
            return None
        try:
            if real.stat().st_size == 0 or self._is_secret(real.relative_to(self.real_root).as_posix()):
                return None
        except OSError:
            return None
        return self.label(path)

    def seed(self, files: Iterable[InstructionFile]) -> None:
        """Count ``files`` (and what they imported) as loaded already: nothing of it loads twice."""
        for file in files:
            self._first_label.setdefault(file.real_path, file.label)
            self.loaded.add(file.real_path)
            for record in file.imports:
                real = None if record.path is None or record.status != "resolved" else _real(record.path)
                if real is not None:
                    self.loaded.add(real)

    def dedupe(self, found: Iterable[Found]) -> list[Found]:
        """``found`` without the files whose real path came before (each with an information notice)."""
        kept: list[Found] = []
        for candidate in found:
            first = self._first_label.get(candidate.real_path)
            if first is not None:
                message = f"{candidate.label} is the same file as {first}; loaded once"
                self._notice(candidate.path, "information", message)
                continue
            self._first_label[candidate.real_path] = candidate.label
            kept.append(candidate)
        return kept

    # -- reading and budget --------------------------------------------------------------------------

    def drafts(self, found: list[Found]) -> list[Draft]:
        """Read each file once, skip empty or unreadable ones, then inline imports, in order."""
        limit = self.settings.max_file_bytes
        readable = []
        for candidate in found:
            base = None if candidate.kind == "global" else self.real_root
            readout = read_head(candidate.real_path, limit, hard_links_base=base)
            if isinstance(readout, str):
                self._notice(candidate.path, "warning", f"{candidate.label} not loaded: {readout}")
            elif readout.complete and not readout.text.strip():
                self._notice(candidate.path, "information", f"{candidate.label} is empty; skipped")
            elif "\0" in readout.text:  # Markdown never holds NUL: a binary file under the name
                self._notice(
                    candidate.path, "warning", f"{candidate.label} not loaded: it is binary (NUL bytes)"
                )
            else:
                readable.append((candidate, readout))
        self.loaded.update(candidate.real_path for candidate, _ in readable)
        importer = Importer(
            workspace_root=self.root,
            real_root=self.real_root,
            loaded=self.loaded,
            read_limit=limit,
            is_secret=self._is_secret,
            label=self.label,
        )
        drafts = []
        for candidate, readout in readable:
            lines = split_lines(readout.text)
            diagnostics: list[FileDiagnostic] = []
            if readout.invalid_utf8:
                message = "not valid UTF-8: the invalid bytes were replaced with U+FFFD"
                diagnostics.append(FileDiagnostic(candidate.path, 0, 0, 0, "warning", message))
            pieces = [(line, index) for index, line in enumerate(lines)]
            imports: tuple[ImportRecord, ...] = ()
            unread = 0
            if candidate.imports_on:
                expansion = importer.expand(readout.text, path=candidate.path, real_path=candidate.real_path)
                pieces, imports, unread = expansion.pieces, tuple(expansion.imports), expansion.unread_bytes
                diagnostics += expansion.diagnostics
            inlined = sum(len(text.encode("utf-8")) for text, _ in pieces) - len(readout.text.encode("utf-8"))
            size = readout.size_bytes + inlined + unread
            bare = [strip_ending(line) for line in lines]
            drafts.append(Draft(candidate, pieces, bare, size, imports, diagnostics))
        return drafts

    def finish(self, drafts: list[Draft], *, budget: int, nested: bool) -> list[InstructionFile]:
        """Apply the budget nearest-first (``budget.allocate``) and build the files, in order."""
        settings = self.settings
        allowances = allocate(
            [draft.size_bytes for draft in drafts],
            max_file_bytes=settings.max_file_bytes,
            max_total_bytes=budget,
        )
        files = []
        for draft, allowance in zip(drafts, allowances, strict=True):
            found = draft.found
            data = "".join(text for text, _ in draft.pieces).encode("utf-8")
            diagnostics = list(draft.diagnostics)
            if draft.size_bytes <= allowance:
                text, kept = normalize_newlines(data.decode("utf-8")), draft.size_bytes
            else:
                kept = cut_point(data, allowance)
                head = normalize_newlines(data[:kept].decode("utf-8"))
                marker = truncation_marker(kept, draft.size_bytes)
                text = f"{head}\n{marker}" if head else marker
                line = _line_at(draft.pieces, kept)
                width = len(draft.lines[line]) if line < len(draft.lines) else 0
                message = truncation_message(
                    kept,
                    draft.size_bytes,
                    allowance,
                    max_file_bytes=settings.max_file_bytes,
                    max_total_bytes=settings.max_total_bytes,
                    nested=nested,
                )
                diagnostics.append(FileDiagnostic(found.path, line, 0, width, "warning", message))
            files.append(
                InstructionFile(
                    path=found.path,
                    real_path=found.real_path,
                    label=found.label,
                    scope=found.scope,
                    kind=found.kind,
                    text=text,
                    size_bytes=draft.size_bytes,
                    kept_bytes=kept,
                    imports=draft.imports,
                    diagnostics=tuple(diagnostics),
                )
            )
        return files

    def _notice(self, path: Path, severity: Severity, message: str) -> None:
        self.notices.append(FileDiagnostic(path, 0, 0, 0, severity, message))


def _line_at(pieces: list[tuple[str, int]], offset: int) -> int:
    """The file line of the piece holding byte ``offset`` of the joined pieces (the first cut byte)."""
    position = 0
    for text, line in pieces:
        position += len(text.encode("utf-8"))
        if position > offset:
            return line
    return pieces[-1][1] if pieces else 0


def _real(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python < 3.13)
        return None


def _plain_relative(name: str) -> bool:
    """A non-empty relative path without ``..``: what a marker or fallback name may be."""
    pure = PurePosixPath(name)
    return bool(name.strip()) and not pure.is_absolute() and ".." not in pure.parts and pure.parts != ()
