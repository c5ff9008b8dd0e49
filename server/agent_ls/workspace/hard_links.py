"""Hard links: a regular file with more than one name may be a second name of a secret file.

``ln .env notes.txt`` gives the secret a name that no secret pattern matches, and a symlink check
cannot see it: both names are the same inode, neither points to the other. Finding the other names
would mean walking the whole file system, so the rule is on the count alone, and it is the one rule
every reader of workspace contents follows (read_file and the edit tools through ``PathPolicy``, grep's
hits, imported instruction files, the shadow copy's copying and linking, workspace-mode masks):

- a regular file whose ``st_nlink`` is above 1 is treated as a secret (refused, left out, masked);
- except inside a dependency folder (``dependency_folders.dependency_folder``: ``node_modules``,
  ``.venv``, ``.git``, ...), where package managers hard-link on purpose (pnpm links ``node_modules``
  into its store, uv and conda link environments, ``git clone --local`` links objects).

Directories always have several links and are never concerned.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

from agent_ls.workspace.dependency_folders import dependency_folder

ADVICE = (
    "a hard link can give a secret file a second name, so agent-ls does not read hard-linked files "
    "outside dependency folders"
)


def has_other_names(st: os.stat_result) -> bool:
    """Whether ``st`` (from ``lstat`` or ``fstat``) is a regular file with more than one name."""
    return stat.S_ISREG(st.st_mode) and st.st_nlink > 1


def advice(st: os.stat_result) -> str:
    """The refusal's text for a hard-linked file: ``is a hard link (N names); ...``."""
    return f"is a hard link ({st.st_nlink} names); {ADVICE}"


class HardLinks:
    """The rule (module docstring) for the files under one base folder, remembering each folder's verdict.

    Args:
        base: the folder the relative paths start from (the workspace's real root, an extra directory);
            its own name is not looked at: opening a dependency as the workspace makes it the project.
    """

    def __init__(self, base: Path) -> None:
        self._base = base
        self._dependency: dict[str, bool] = {".": False}

    def refused(self, rel: str, st: os.stat_result) -> bool:
        """Whether the file ``rel`` (POSIX, relative to ``base``), whose ``lstat``/``fstat`` is ``st``,
        is refused as a possible second name of a secret. Blocks: a few ``stat`` calls per folder above
        a hard-linked file, the first time only; none for a file with one name."""
        return has_other_names(st) and not self.in_dependency_folder(str(PurePosixPath(rel).parent))

    def in_dependency_folder(self, rel_dir: str) -> bool:
        """Whether the folder ``rel_dir`` (POSIX, relative to ``base``; ``"."`` for it) is or lies in a
        dependency folder."""
        known = self._dependency.get(rel_dir)
        if known is None:
            parent = str(PurePosixPath(rel_dir).parent)
            known = self.in_dependency_folder(parent) or (
                dependency_folder(self._base / rel_dir, self._base) is not None
            )
            self._dependency[rel_dir] = known
        return known


def refusal(base: Path, rel: str, st: os.stat_result) -> str | None:
    """``advice(st)`` when the rule refuses the file ``rel`` under ``base`` (``HardLinks.refused``), else
    None; for one-off checks (a walk keeps one ``HardLinks``)."""
    if not has_other_names(st) or HardLinks(base).in_dependency_folder(str(PurePosixPath(rel).parent)):
        return None
    return advice(st)
