"""The editor's problems as the server keeps them: per file, bounded, without our own diagnostics.

``agent/didChangeProblems`` (``lsp/editor_problems.py``) replaces a file's set; an empty set forgets the
file. Diagnostics of our own sources (``agent-ls``, ``agent-ls review``: config lint, review findings) are
dropped, so the agent never reads its own findings back as the editor's. At most ``MAX_PER_FILE`` (100)
per file are kept, the most severe first (the others counted), and at most ``MAX_FILES`` (500) files, the
least recently updated forgotten first. Kept apart from the handlers so that ``lsp/state.py`` can hold
the store without importing them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent_ls.lsp import protocol as p
from agent_ls.lsp.file_uris import to_fs_path

MAX_FILES = 500
MAX_PER_FILE = 100
OWN_SOURCE_PREFIX = "agent-ls"


def own_source(source: str | None) -> bool:
    """True for the sources of agent-ls's own diagnostics (``agent-ls``, ``agent-ls review``)."""
    return bool(source) and (source or "").split(" ", 1)[0] == OWN_SOURCE_PREFIX


@dataclass
class KeptProblems:
    """A file's problems as the editor sent them (``uri`` as it wrote it), and how many were not kept."""

    uri: str
    diagnostics: tuple[p.WireDiagnostic, ...]
    left_out: int


@dataclass
class ProblemStore:
    """The problems the editor reported, per file (absolute, resolved path), bounded (module docstring).

    Attributes:
        forwarded: the editor sent ``agent/didChangeProblems`` at least once.
        checks_texts: the client answers ``agent/problemsOfText`` (``initializationOptions.problemsOfText``).
    """

    forwarded: bool = False
    checks_texts: bool = False
    kinds: set[str] = field(default_factory=set)
    """The file types (``Path.suffix``, else the name) the editor reported problems for so far."""
    _files: OrderedDict[Path, KeptProblems] = field(default_factory=OrderedDict)

    def replace(self, uri: str, diagnostics: Sequence[p.WireDiagnostic]) -> None:
        """Keep ``diagnostics`` as ``uri``'s problems (none: forget the file); a URI that is not a
        ``file:`` one is ignored."""
        path = _path_of(uri)
        if path is None:
            return
        foreign = [d for d in diagnostics if not own_source(d.source)]
        self._files.pop(path, None)
        if not foreign:
            return
        ranked = sorted(foreign, key=lambda d: d.severity or 1)[:MAX_PER_FILE]
        ranked.sort(key=lambda d: (d.range.start.line, d.range.start.character))
        self._files[path] = KeptProblems(uri, tuple(ranked), len(foreign) - len(ranked))
        self.kinds.add(kind_of(path))
        while len(self._files) > MAX_FILES:
            self._files.popitem(last=False)

    def under(self, root: Path) -> list[tuple[str, KeptProblems]]:
        """The kept files under ``root``, as (workspace-relative POSIX path, problems), in path order."""
        found = [
            (path.relative_to(root).as_posix(), kept)
            for path, kept in self._files.items()
            if path.is_relative_to(root)
        ]
        return sorted(found, key=lambda item: item[0])

    def get(self, path: Path) -> KeptProblems | None:
        return self._files.get(path)


def _path_of(uri: str) -> Path | None:
    if not uri.startswith("file:"):
        return None
    fs = to_fs_path(uri)
    return Path(fs).resolve() if fs else None


def kind_of(path: Path) -> str:
    """A file's type for ``ProblemStore.kinds``: its suffix (``.py``), else its name (``Makefile``)."""
    return path.suffix.lower() or path.name
