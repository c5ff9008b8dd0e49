"""Recursive file listing of a workspace directory under Git's ignore rules (``Overlay.list_files``).

A walk, per directory entry, in order:

1. skip ``.git`` always, and hidden entries (name starting with ``.``) unless the glob names one;
2. skip symlinks to directories (never followed) and symlinks whose target leaves the workspace;
3. skip what the ``.gitignore`` files from the root down to the entry's directory ignore (the deepest
   file with an opinion decides, as in Git; an ignored directory is not entered);
4. descend into directories, yield files that match the glob.

A directory the caller names explicitly is listed even when it is ignored, as ``rg <dir>`` would.
Patterns are matched with pathspec, which implements Git's wildmatch rules (a pattern without ``/``
matches at any depth, ``**`` spans directories, ``!`` re-includes); fnmatch does not.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from agent_ls.core.errors import ToolError
from agent_ls.workspace.regular_files import open_regular

_ALWAYS_SKIPPED = ".git"


def names_hidden(glob: str) -> bool:
    """True when a ``/``-separated component of ``glob`` starts with ``.`` (``.github/**``, ``src/.*``)."""
    return any(part.startswith(".") and part not in (".", "..") for part in glob.split("/"))


@dataclass(frozen=True)
class Selection:
    """Which files a listing wants: those under ``rel_dir``, hidden ones or not, matching a glob.

    Attributes:
        rel_dir: workspace-relative POSIX directory (``"."`` for the root).
        spec: the compiled glob, or None for every file.
        hidden: hidden entries are wanted (the glob names one).
    """

    rel_dir: str
    spec: pathspec.GitIgnoreSpec | None
    hidden: bool

    @classmethod
    def of(cls, rel_dir: str, pattern: str | None) -> Selection:
        """The selection for ``pattern``, a gitignore-style glob (``*.py``, ``.github/**``) or None.

        Raises:
            ToolError: ``pattern`` is not a glob pathspec can read (the model reads why).
        """
        if not pattern:
            return cls(rel_dir, None, False)
        pattern = pattern.removeprefix("./")
        try:
            spec = pathspec.GitIgnoreSpec.from_lines([pattern])
        except ValueError as exc:  # pathspec's GitIgnorePatternError: a trailing "\\", a bad range
            raise ToolError(f"invalid pattern {pattern!r}: {exc}; use a glob such as **/*.py") from exc
        return cls(rel_dir, spec, names_hidden(pattern))

    def covers(self, rel: str) -> bool:
        """True when ``rel`` is under ``rel_dir``, outside ``.git``, not hidden below it (unless wanted)."""
        if self.rel_dir == ".":
            below = rel
        elif rel.startswith(self.rel_dir + "/"):
            below = rel[len(self.rel_dir) + 1 :]
        else:
            return False
        parts = below.split("/")
        return _ALWAYS_SKIPPED not in parts and (self.hidden or not any(p.startswith(".") for p in parts))

    def wants(self, rel: str) -> bool:
        """True when the glob matches ``rel`` as workspace-relative or as relative to ``rel_dir``."""
        if self.spec is None:
            return True
        local = rel if self.rel_dir == "." else rel[len(self.rel_dir) + 1 :]
        return self.spec.match_file(rel) or (local != rel and self.spec.match_file(local))

    def wanted(self, rels: Iterable[str]) -> list[str]:
        """The paths of ``rels`` that ``wants`` keeps, in order; tens of thousands in a few milliseconds.

        A single including pattern matches as its regular expression does (what pathspec's
        ``match_file`` runs for it), so the whole list is filtered at C speed then.
        """
        if self.spec is None:
            return list(rels)
        patterns = [p for p in self.spec.patterns if p.include is not None]
        regex = getattr(patterns[0], "regex", None) if len(patterns) == 1 and patterns[0].include else None
        if self.rel_dir != "." or not isinstance(regex, re.Pattern):
            return [rel for rel in rels if self.wants(rel)]
        return [rel for rel in rels if regex.search(rel)]


@dataclass(frozen=True)
class IgnoreFile:
    """The patterns of one ``.gitignore``; ``base`` is its directory, workspace-relative.

    Also used by the shadow copy (``shadow.py``), which walks a tree under the same rules.
    """

    base: str
    spec: pathspec.GitIgnoreSpec

    @classmethod
    def load(cls, real_root: Path, base: str) -> IgnoreFile | None:
        """The ``.gitignore`` of ``base``, or None when there is none, or it is not a regular file (a
        FIFO must not block the walk), or it cannot be read."""
        data = read_regular_file(real_root / base / ".gitignore")
        if data is None:
            return None
        lines = data.decode("utf-8", errors="replace").splitlines()
        try:
            return cls(base, pathspec.GitIgnoreSpec.from_lines(lines))
        except ValueError:
            return cls(base, pathspec.GitIgnoreSpec.from_lines(_readable_lines(lines)))

    def verdict(self, rel: str, is_dir: bool) -> bool | None:
        """True (ignored), False (re-included by ``!``) or None (no pattern matched)."""
        local = rel if self.base == "." else rel[len(self.base) + 1 :]
        return self.spec.check_file(local + "/" if is_dir else local).include


def read_regular_file(path: Path) -> bytes | None:
    """The bytes of ``path`` (symlinks followed) when it is a regular file; None otherwise or when it
    cannot be read (``regular_files.open_regular``: a FIFO under the name does not block)."""
    try:
        with open_regular(path) as handle:
            return handle.read()
    except OSError:
        return None


def _readable_lines(lines: list[str]) -> list[str]:
    """The lines of a ``.gitignore`` that pathspec can read; Git too ignores a pattern it cannot use (a
    line ending in an unescaped ``\\``), so one bad line does not break listing the workspace."""
    readable = []
    for line in lines:
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except ValueError:
            continue
        readable.append(line)
    return readable


def is_ignored(ignores: list[IgnoreFile], rel: str, is_dir: bool) -> bool:
    """Whether ``rel`` is ignored by ``ignores`` (root first): the deepest file with an opinion decides."""
    for item in reversed(ignores):
        verdict = item.verdict(rel, is_dir)
        if verdict is not None:
            return verdict
    return False


def walk_files(real_root: Path, selection: Selection, stays_inside: Callable[[str], bool]) -> Iterator[str]:
    """The files on disk under ``selection.rel_dir`` that the selection wants, in no particular order.

    Args:
        real_root: the workspace root with symlinks resolved.
        selection: what to list.
        stays_inside: whether an absolute symlink path resolves inside the workspace.

    Returns:
        Workspace-relative POSIX paths. Unreadable directories are skipped silently.
    """
    rel_dir = selection.rel_dir
    parts = [] if rel_dir == "." else rel_dir.split("/")
    bases = [".", *("/".join(parts[: i + 1]) for i in range(len(parts)))]
    ignores = [item for base in bases if (item := IgnoreFile.load(real_root, base))]
    if rel_dir != "." and is_ignored([i for i in ignores if i.base != rel_dir], rel_dir, True):
        ignores = [item for item in ignores if item.base == rel_dir]
    for rel in _walk_dir(real_root, rel_dir, ignores, selection, stays_inside):
        if selection.wants(rel):
            yield rel


def scan_dir(root: Path, rel_dir: str) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """The entries of ``root/rel_dir`` as (root-relative POSIX path, entry); ``rel_dir`` "." is the root.

    An unreadable directory yields nothing. Shared by every walker of a workspace tree (listing, the
    shadow copy, the changes a command made).
    """
    try:
        with os.scandir(root / rel_dir) as scan:
            entries = list(scan)
    except OSError:
        return
    for entry in entries:
        yield (entry.name if rel_dir == "." else f"{rel_dir}/{entry.name}"), entry


def _walk_dir(
    real_root: Path,
    rel_dir: str,
    ignores: list[IgnoreFile],
    selection: Selection,
    stays_inside: Callable[[str], bool],
) -> Iterator[str]:
    for rel, entry in scan_dir(real_root, rel_dir):
        if entry.name == _ALWAYS_SKIPPED or (entry.name.startswith(".") and not selection.hidden):
            continue
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
            is_link = entry.is_symlink()
            if is_link and (os.path.isdir(entry.path) or not stays_inside(entry.path)):
                continue
            is_file = is_link or entry.is_file(follow_symlinks=False)
        except OSError:
            continue
        if is_ignored(ignores, rel, is_dir):
            continue
        if is_dir:
            nested = IgnoreFile.load(real_root, rel)
            inner = [*ignores, nested] if nested else ignores
            yield from _walk_dir(real_root, rel, inner, selection, stays_inside)
        elif is_file:
            yield rel
