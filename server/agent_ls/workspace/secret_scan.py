"""The secret paths inside a folder of the workspace, found by walking it: ``SecretScan``.

The shadow copy links heavy folders (``node_modules``, gitignored ``certs/``) instead of copying them,
and in ``shell.mode = "workspace"`` commands see the whole real tree; either way a command like
``grep -R`` reads every file of such a folder. ``SecretScan`` finds the secrets there so the shadow
copy can link around them and the sandbox can mask them (``shadow_tree``, ``workspace.sandbox``).

The scan remembers each directory's listing by the directory's ``lstat`` (inode, times, size): a file
cannot appear, vanish or be renamed without changing its directory's time stamps, so a later sync of
an unchanged ``node_modules`` costs one ``lstat`` per directory instead of one secret-pattern match
per file (the path policy's: about 50 microseconds each, five seconds for 100,000 files). A listing
taken less than ``SETTLE_NS`` after its directory last changed is not remembered, as git treats
"racily clean" index entries (Documentation/technical/racy-git.txt), since a coarse clock may not
show a change made in the same tick.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agent_ls.workspace.hard_links import HardLinks
from agent_ls.workspace.listing import scan_dir

SCAN_MAX_ENTRIES = 200_000
"""The most entries the secret scan of one folder looks at (a few seconds the first time); a larger
folder is left out of the copy (``unchecked``)."""
SCAN_MAX_SECRETS = 1_000
"""The most secrets a folder to link may hold; each is a mount in the sandbox, and bwrap's command
line is bounded (``ARG_MAX``). A folder with more is left out (``unchecked``)."""
SETTLE_NS = 2_000_000_000
"""A directory changed less than this before its listing was taken is listed again next time (ns):
FAT's clock ticks every 2 s, ext4's at the kernel's timer tick."""
_GIT_BULK = frozenset({"objects", "lfs"})
"""Directories of a git directory that the secret scan skips: objects named by their hash."""


def points_to_secret(real_root: Path, link: Path, is_secret: Callable[[str], bool]) -> bool:
    """True when the symlink ``link`` resolves to a secret path inside ``real_root`` (the workspace)."""
    target = Path(os.path.realpath(link))
    if target == real_root or not target.is_relative_to(real_root):
        return False
    return is_secret(target.relative_to(real_root).as_posix())


@dataclass(frozen=True)
class _Listing:
    """What the secret scan keeps of one directory: its key, its secret and entered entries' names."""

    key: tuple[int, int, int, int]
    secrets: tuple[str, ...]
    subdirs: tuple[str, ...]
    size: int


class SecretScan:
    """Finds the secret paths inside folders of one workspace, remembering listings (module docstring).

    Args:
        real_root: the workspace's real path.
        is_secret: whether a workspace-relative POSIX path is secret (the path policy's).
        max_entries: the most entries one ``secrets_under`` call looks at.
        max_secrets: the most secrets one ``secrets_under`` call returns.
        settle_ns: a listing is remembered only when its directory had not changed for this long
            (nanoseconds) when it was taken.
    """

    def __init__(
        self,
        real_root: Path,
        is_secret: Callable[[str], bool],
        *,
        max_entries: int = SCAN_MAX_ENTRIES,
        max_secrets: int = SCAN_MAX_SECRETS,
        settle_ns: int = SETTLE_NS,
    ) -> None:
        self._root = real_root
        self._is_secret = is_secret
        self._max_entries = max_entries
        self._max_secrets = max_secrets
        self._settle_ns = settle_ns
        self._listings: dict[str, _Listing] = {}
        self._used: set[str] = set()
        self._taken: dict[str, tuple[int, int, int, int]] = {}
        self._links = HardLinks(real_root)

    def secrets_under(self, rel: str) -> list[str] | None:
        """The secret paths under the directory ``rel`` (workspace-relative POSIX), sorted.

        A secret is an entry the policy calls secret (a secret directory is listed, not entered), a
        symlink resolving to one, or a regular file with more than one name outside the dependency
        folders (``hard_links``; files of a folder outside them cost one ``lstat`` each). A listing
        remembered by its directory's ``lstat`` does not see a file gain a name elsewhere later.
        Symlinks are not followed, and the ``objects`` and ``lfs`` directories of a git directory are
        not entered. A directory that cannot be read counts as
        empty: commands run as the same user cannot read it either. Blocks.

        Returns:
            The paths, or None when the folder holds more than ``max_entries`` entries or
            ``max_secrets`` secrets.
        """
        found: list[str] = []
        entries = 0
        pending = [rel]
        while pending:
            directory = pending.pop()
            listing = self._listing(directory)
            if listing is None:
                continue
            entries += listing.size
            found += (_join(directory, name) for name in listing.secrets)
            if entries > self._max_entries or len(found) > self._max_secrets:
                return None
            pending += (_join(directory, name) for name in listing.subdirs)
        return sorted(found)

    def forget_unused(self) -> None:
        """Drop the listings that no ``secrets_under`` call used since the last ``forget_unused``."""
        self._listings = {rel: self._listings[rel] for rel in self._used if rel in self._listings}
        self._used = set()
        self._taken = {}

    def used(self) -> tuple[str, ...]:
        """The directories listed (or found unchanged) since the last ``forget_unused``."""
        return tuple(self._used)

    def moved(self) -> bool:
        """Whether a directory used since the last ``forget_unused`` changed after it was looked at
        (an entry made, removed or renamed there since). Blocks: one ``lstat`` per directory."""
        for rel, key in self._taken.items():
            try:
                st = os.lstat(self._root / rel)
            except OSError:
                return True
            if (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size) != key:
                return True
        return False

    def _listing(self, rel: str) -> _Listing | None:
        self._used.add(rel)
        try:
            st = os.lstat(self._root / rel)
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode):
            return None
        key = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)
        self._taken[rel] = key
        known = self._listings.get(rel)
        if known is not None and known.key == key:
            return known
        listed_at = time.time_ns()
        secrets: list[str] = []
        subdirs: list[str] = []
        size = 0
        in_git = ".git" in rel.split("/")
        # Inside a dependency folder (node_modules: most of what is scanned) no file is stat-ed.
        linked_files_refused = not self._links.in_dependency_folder(rel)
        for child, entry in scan_dir(self._root, rel):
            size += 1
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_link = entry.is_symlink()
                second_name = (
                    linked_files_refused
                    and entry.is_file(follow_symlinks=False)
                    and self._links.refused(child, entry.stat(follow_symlinks=False))
                )
            except OSError:
                continue
            if (
                second_name
                or self._is_secret(child)
                or (is_link and points_to_secret(self._root, Path(entry.path), self._is_secret))
            ):
                secrets.append(entry.name)
            elif is_dir and not (in_git and entry.name in _GIT_BULK):
                subdirs.append(entry.name)
        listing = _Listing(key, tuple(secrets), tuple(subdirs), size)
        if listed_at - max(st.st_mtime_ns, st.st_ctime_ns) > self._settle_ns:
            self._listings[rel] = listing
        else:
            self._listings.pop(rel, None)
        return listing


def _join(directory: str, name: str) -> str:
    return name if directory == "." else f"{directory}/{name}"
