"""Where ripgrep runs on the real workspace, and with which paths, so its ignore rules are ``listing.py``'s.

grep (``Overlay.search``) and list_files (``ripgrep_files``) run ripgrep on the user's tree, not on a
copy. The files they see must be the ones the listing rules give (``listing.walk_files``): the
``.gitignore`` files from the workspace root down, whether or not the tree is a git repository, and
nothing from outside it (a ``~/.gitignore`` holding ``*``, as dotfile repositories do, a parent
checkout's rules, ``.git/info/exclude``, git's global excludes file). ripgrep reads the ignore files of
every directory above the path it is given, up to ``/``, unless told ``--no-ignore-parent``, which
then also drops the workspace root's own rules for a subdirectory given as the path. So the scope of a
search of ``rel`` is, in order:

1. ``rel`` is the root, or a file (ripgrep searches a file named on its command line whatever the
   ignore rules say): ripgrep runs in the root with ``--no-ignore-parent``;
2. ``rel`` is a directory the rules ignore (``build``), named explicitly: it is searched as if it were
   the root (its own ``.gitignore`` and those below it apply, not its ancestors', as ``walk_files``
   does): ripgrep runs in it with ``--no-ignore-parent``, its paths prefixed with ``rel``;
3. no directory above the workspace root holds an ignore file: ripgrep runs in the root, given
   ``rel``, reading the rules of the root and of the directories down to ``rel`` as parents;
4. else ripgrep runs in the root with ``--no-ignore-parent`` over the whole tree, and only the paths
   under ``rel`` are kept (``under``): correct, and as costly as searching the root.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from agent_ls.workspace.listing import IgnoreFile, is_ignored

IGNORE_FLAGS = ("--no-require-git", "--no-ignore-exclude", "--no-ignore-global")
"""Every ripgrep run on the workspace: ``.gitignore`` files apply without a ``.git`` (a plain folder, as
``walk_files`` reads them), and neither ``.git/info/exclude`` nor git's global excludes file does."""

_IGNORE_NAMES = (".gitignore", ".ignore", ".rgignore")


@dataclass(frozen=True)
class RipgrepScope:
    """How to run ripgrep over ``rel`` of the workspace (module docstring).

    Attributes:
        cwd: the directory ripgrep runs in (the workspace's real root, or an ignored directory in it).
        args: the ignore flags and the path arguments, to append to ripgrep's other options.
        prefix: prepended to ripgrep's paths to make them workspace-relative (``""`` or ``"build/"``).
        under: when not None, only the paths starting with it (``"src/"``) belong to the search.
    """

    cwd: Path
    args: tuple[str, ...]
    prefix: str = ""
    under: str | None = None

    def wants(self, path: str) -> bool:
        """True when the workspace-relative ``path`` belongs to the search."""
        return self.under is None or path.startswith(self.under)


def scope_of(real_root: Path, rel: str) -> RipgrepScope:
    """The scope of a search of ``rel`` (workspace-relative POSIX, ``.`` for the root) under ``real_root``.

    Reads at most the ``.gitignore`` files from the root down to ``rel`` and looks for ignore files in the
    directories above the root; blocks for those few reads.
    """
    if rel == ".":
        return RipgrepScope(real_root, (*IGNORE_FLAGS, "--no-ignore-parent"))
    if not os.path.isdir(real_root / rel):
        return RipgrepScope(real_root, (*IGNORE_FLAGS, "--no-ignore-parent", "--", rel))
    if _ignored_dir(real_root, rel):
        return RipgrepScope(real_root / rel, (*IGNORE_FLAGS, "--no-ignore-parent"), prefix=rel + "/")
    if not _ignore_files_above(real_root):
        return RipgrepScope(real_root, (*IGNORE_FLAGS, "--", rel))
    return RipgrepScope(real_root, (*IGNORE_FLAGS, "--no-ignore-parent"), under=rel + "/")


def _ignored_dir(real_root: Path, rel: str) -> bool:
    """Whether the ``.gitignore`` files above ``rel`` ignore it or one of its ancestors (``walk_files``)."""
    parts = rel.split("/")
    ignores: list[IgnoreFile] = []
    for depth in range(len(parts)):
        base = "/".join(parts[:depth]) or "."
        found = IgnoreFile.load(real_root, base)
        if found is not None:
            ignores.append(found)
        if is_ignored(ignores, "/".join(parts[: depth + 1]), True):
            return True
    return False


def _ignore_files_above(real_root: Path) -> bool:
    return any(os.path.lexists(parent / name) for parent in real_root.parents for name in _IGNORE_NAMES)
