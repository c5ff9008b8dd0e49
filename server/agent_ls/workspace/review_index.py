"""The shadow copy's reviewable files, kept current from the paths that changed: ``ReviewIndex``.

What a command changed in the copy is the difference between its reviewable files
(``shadow_tree.reviewable_files``) before and after it. Walking the copy twice per command costs a
second on a 50,000-file repository; the index is walked once, then updated from the paths a
``tree_watch.TreeWatch`` reports (those in the directories the index entered, ``dirs``), so a command
costs what it changed:

- a path whose parent is not an entered directory is passed over: it lies in a skipped or ignored
  folder, or in a new folder whose own report walks it;
- a new directory (or one removed and made again: its watch ended with it) is walked whole, and its
  directories are returned so the caller watches them too;
- a removed directory takes its files with it (deleted);
- a ``.gitignore`` that changed may change what is reviewable anywhere below it: ``update`` returns
  None and the caller walks the whole copy (``rebuild``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from agent_ls.workspace import shadow_tree as tree
from agent_ls.workspace.listing import IgnoreFile, is_ignored


@dataclass(frozen=True)
class Delta:
    """What changed among the reviewable files, each sorted by path; ``new_dirs``: directories the
    index entered for the first time (to watch)."""

    changed: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    new_dirs: tuple[str, ...] = ()


@dataclass
class _Pass:
    """One ``update``: the keys the touched files had before it, and the ``.gitignore`` chains read."""

    before: dict[str, tree.Key | None] = field(default_factory=dict)
    ignores: dict[str, list[IgnoreFile]] = field(default_factory=dict)
    new_dirs: set[str] = field(default_factory=set)


class ReviewIndex:
    """The reviewable files of the copy at ``workdir`` (module docstring). Blocks (file system)."""

    def __init__(self, workdir: Path) -> None:
        self._workdir = workdir
        self.files: dict[str, tree.Key] = {}
        self.dirs: set[str] = set()

    def rebuild(self) -> Delta:
        """Walk the whole copy; the difference from what the index held."""
        files, dirs = tree.reviewable_tree(self._workdir)
        old = self.files
        changed = sorted(rel for rel, key in files.items() if old.get(rel) != key)
        deleted = sorted(old.keys() - files.keys())
        self.files, self.dirs = files, dirs
        return Delta(tuple(changed), tuple(deleted), tuple(sorted(dirs)))

    def update(self, rels: Iterable[str], removed: Iterable[str] = ()) -> Delta | None:
        """Look again at the copy-relative paths ``rels``; ``removed``: those reported removed at some
        point (a directory among them lost its watch). None when a ``.gitignore`` changed."""
        todo = sorted(set(rels))
        if any(rel.rpartition("/")[2] == ".gitignore" for rel in todo):
            return None
        gone = set(removed)
        work = _Pass()
        for rel in todo:
            if rel != "." and (rel.rpartition("/")[0] or ".") in self.dirs:
                self._look(rel, rel in gone, work)
        changed = sorted(r for r, old in work.before.items() if self.files.get(r) not in (None, old))
        deleted = sorted(r for r, old in work.before.items() if old is not None and r not in self.files)
        return Delta(tuple(changed), tuple(deleted), tuple(sorted(work.new_dirs)))

    def _look(self, rel: str, removed: bool, work: _Pass) -> None:
        if removed and rel in self.dirs:
            self._drop_dir(rel, work)
        try:
            st = os.lstat(self._workdir / rel)
        except OSError:
            st = None
        parent, _, name = rel.rpartition("/")
        ignores = self._ignores(parent or ".", work)
        if st is not None and stat.S_ISDIR(st.st_mode):
            self._set(rel, None, work)
            if rel in self.dirs or tree.skipped_for_review(name) or is_ignored(ignores, rel, True):
                return
            files, dirs = tree.reviewable_tree(self._workdir, rel, ignores)
            for path, key in files.items():
                self._set(path, key, work)
            self.dirs |= dirs
            work.new_dirs |= dirs
            return
        if rel in self.dirs:
            self._drop_dir(rel, work)
        reviewable = st is not None and stat.S_ISREG(st.st_mode) and not is_ignored(ignores, rel, False)
        self._set(rel, tree.key_of(st) if reviewable and st is not None else None, work)

    def _set(self, rel: str, key: tree.Key | None, work: _Pass) -> None:
        if rel not in work.before:
            work.before[rel] = self.files.get(rel)
        if key is None:
            self.files.pop(rel, None)
        else:
            self.files[rel] = key

    def _drop_dir(self, rel: str, work: _Pass) -> None:
        """Forget the directory ``rel`` and everything the index held under it."""
        prefix = rel + "/"
        self.dirs = {d for d in self.dirs if d != rel and not d.startswith(prefix)}
        work.new_dirs = {d for d in work.new_dirs if d != rel and not d.startswith(prefix)}
        for path in [p for p in self.files if p.startswith(prefix)]:
            self._set(path, None, work)

    def _ignores(self, rel_dir: str, work: _Pass) -> list[IgnoreFile]:
        """The ``.gitignore`` files that apply to the entries of ``rel_dir`` (read once per pass)."""
        if rel_dir not in work.ignores:
            work.ignores[rel_dir] = tree.ignore_chain(self._workdir, rel_dir)
        return work.ignores[rel_dir]
