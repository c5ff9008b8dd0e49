"""Path rules: which paths the model may name, and how they map to workspace-relative paths.

``PathPolicy.resolve`` runs these steps, in order:

1. join a relative path to the root (an absolute path is taken as is; ``~`` is not expanded);
2. refuse a secret by its lexical path (``config/.env.prod``), before touching the disk;
3. resolve ``..`` and symlinks (``os.path.realpath``) and refuse anything outside the real root;
4. refuse a secret by its real path (a symlink ``notes.txt -> .env`` is still ``.env``).

The secret set follows the issue: ``.env``, ``.env.*`` except ``.env.example``, ``*.pem``, ``id_rsa*``,
``id_ed25519*``, ``id_ecdsa*``, ``.git/config`` (also a submodule's, under ``.git/modules/``) and
``~/.ssh/**``. The last one is written ``**/.ssh/**``: a home directory outside the workspace is
already refused by step 3, and one inside it shows up as a ``.ssh`` component, so no ``HOME`` lookup
is needed. Other hidden paths (``.github/``, ``.gitignore``, ``.agents/``) are readable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pathspec

from agent_ls.core.errors import PathRefused, ToolError


@dataclass(frozen=True)
class _SecretKind:
    """One family of secret files and what the model should do instead of reading them."""

    spec: pathspec.GitIgnoreSpec
    advice: str


def _secret_kind(patterns: list[str], advice: str) -> _SecretKind:
    # pathspec implements Git's wildmatch rules (a pattern without "/" matches any path component,
    # "**" spans directories, "!" re-includes), which fnmatch and PurePath.match do not.
    return _SecretKind(pathspec.GitIgnoreSpec.from_lines(patterns), advice)


_SECRET_KINDS = (
    _secret_kind(
        [".env", ".env.*", "!.env.example"],
        "may hold secrets; ask the user for the values you need, or read .env.example",
    ),
    _secret_kind(
        ["*.pem", "id_rsa*", "id_ed25519*", "id_ecdsa*"],
        "may be a private key; never read keys, ask the user about it instead",
    ),
    _secret_kind(
        ["**/.git/**/config"],
        "may hold credentials (remote URLs with tokens); ask the user for the setting you need",
    ),
    _secret_kind(["**/.ssh/**"], "is SSH material; never read it, ask the user instead"),
)


def _secret_advice(rel: str) -> str | None:
    if rel in ("", "."):
        return None
    # Case-folded: on case-insensitive file systems (macOS, Windows) `.ENV` opens `.env`.
    folded = rel.casefold()
    for kind in _SECRET_KINDS:
        if kind.spec.match_file(folded):
            return kind.advice
    return None


def is_secret(rel: str) -> bool:
    """True when the workspace-relative POSIX path ``rel`` names a secret file (see module docstring).

    Matching is on any path component (``config/.env.prod``, ``keys/server.pem``), and a file under a
    secret directory is secret too (``.ssh/known_hosts``).
    """
    return _secret_advice(rel) is not None


class PathPolicy:
    """Maps model-given paths to workspace-relative POSIX paths and refuses the forbidden ones.

    Args:
        root: the workspace root. It is made absolute but its symlinks are kept in ``root`` (editor URIs
            are built from it); containment is checked against its real path.
    """

    def __init__(self, root: Path) -> None:
        self._root = Path(os.path.abspath(root))
        self._real_root = Path(os.path.realpath(root))

    @property
    def root(self) -> Path:
        """The absolute workspace root as given (symlinks not resolved)."""
        return self._root

    @property
    def real_root(self) -> Path:
        """The workspace root with symlinks resolved; workspace-relative paths are relative to it."""
        return self._real_root

    def resolve(self, path: str) -> str:
        """Map ``path`` (relative to the root, or absolute) to a workspace-relative POSIX path.

        Args:
            path: what the model wrote: ``src/app.py``, ``./src/../src/app.py``, ``/abs/ws/src/app.py``.
                An empty path means the root.

        Returns:
            The path relative to the real root, with ``/`` separators, ``..`` and symlinks resolved;
            ``"."`` for the root itself.

        Raises:
            PathRefused: the path leaves the workspace (``..``, an absolute path elsewhere, a symlink
                whose target is outside), or names a secret file; the message says what to do instead.
            ToolError: the path contains a NUL character.
        """
        if "\0" in path:
            raise ToolError(f"path {path!r} contains a NUL character; pass a plain file path")
        candidate = Path(path) if os.path.isabs(path) else self._root / path
        lexical = self._relative_to(Path(os.path.normpath(candidate)), self._root)
        if lexical is not None:
            self._refuse_secret(lexical)
        rel = self._relative_to(Path(os.path.realpath(candidate)), self._real_root)
        if rel is None:
            raise PathRefused(f"path {path!r} is outside the workspace {self._root}; use a path inside it")
        self._refuse_secret(rel)
        return rel

    @staticmethod
    def _relative_to(path: Path, root: Path) -> str | None:
        if path == root:
            return "."
        if not path.is_relative_to(root):
            return None
        return PurePosixPath(*path.relative_to(root).parts).as_posix()

    @staticmethod
    def _refuse_secret(rel: str) -> None:
        advice = _secret_advice(rel)
        if advice is not None:
            raise PathRefused(f"refused: {rel!r} {advice}")
