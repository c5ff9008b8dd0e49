"""The session's shadow copy of the workspace.

``ShadowCopy`` is a per-session copy of the workspace in a temporary directory, so that search and
shell commands see the agent's pending edits and the editor's unsaved text while the user's files
stay untouched. Its life, in order:

1. created on first use (the first search or command), empty;
2. before each search or command (``sync``), brought up to date incrementally:
   a. the workspace is walked (``shadow_tree.walk_workspace``: ``.git``, secrets, caches and special
      files skipped; dependency trees and large gitignored trees linked, not copied, after a scan
      for the secrets inside them: a folder holding some is linked entry by entry around them, one
      too large to scan is left out) and only the entries whose ``lstat`` changed since the last
      sync are copied; entries gone from the workspace are removed; entries a command deleted or
      changed beyond review are copied again. The walk happens at the first sync; after it a file
      watch (``tree_watch``) of the directories it entered says which entries changed, and only
      those are looked at, so a sync costs what changed, not what the workspace holds. What the watch
      cannot answer exactly walks again: a directory made, removed or renamed in the workspace, a
      ``.gitignore`` (or a ``pyvenv.cfg``, ...) changed, a change inside a linked folder, a folder
      left out, a watch that may have missed events (``TreeWatch.collect``) or none at all;
   b. every pending edit and open buffer is written, byte for byte (in its file's encoding, line
      endings kept; ``unsaved.UnsavedFiles``: the overlay),
      unless the copy already holds exactly that text (a hash and the file's ``lstat``, recorded at
      the last write, tell);
   c. a file written earlier that is no longer pending or open is restored from the workspace (or
      removed when it is not there); files commands made are otherwise left alone;
3. ``prepare`` and ``changes_since`` tell what a command changed among the copy's reviewable files
   (``shadow_tree.reviewable_files``): from an index of them (``review_index``) kept current by the
   same watch, or by a walk of the copy when the watch cannot tell (a ``.gitignore`` changed);
4. ``close`` moves it aside and deletes it in a background thread. A session killed before it could
   is cleaned up by the next one to make a copy (``owned_temp_dirs``: each copy's directory is
   locked by its living process).

``trace`` (``SyncTrace``) says what the last sync and the last look for changes did.

``ShellRunner`` (``shell_runner.py``) runs commands in it; ``Overlay`` (``overlay.py``) searches it.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from agent_ls.core.errors import ToolError
from agent_ls.workspace import shadow_tree as tree
from agent_ls.workspace.dependency_folders import linked_dependency
from agent_ls.workspace.listing import is_ignored
from agent_ls.workspace.owned_temp_dirs import OwnedDir, make_owned_dir
from agent_ls.workspace.paths import PathPolicy
from agent_ls.workspace.review_index import Delta, ReviewIndex
from agent_ls.workspace.secret_scan import SCAN_MAX_ENTRIES, SecretScan, points_to_secret
from agent_ls.workspace.shadow_state import ShadowChanges, Snapshot, SyncTrace, WorkspaceSecrets
from agent_ls.workspace.tree_watch import Changes, TreeWatch
from agent_ls.workspace.unsaved import UnsavedFiles

T = TypeVar("T")


_RESHAPING = frozenset({".gitignore", ".gitmodules", "pyvenv.cfg", "conda-meta"})
"""Names whose change can change how other entries are treated (ignored, linked): the workspace is
walked again."""


class ShadowCopy:
    """A lazily created, incrementally synced copy of one workspace in a temporary directory.

    Args:
        root: the workspace root to copy (its real path is used).
        temp_parent: where to create the temporary directory; the system default when None.
        paths: the path policy whose secret patterns decide what is never copied; the default
            patterns when None. Share the session's with the ``Overlay``.
        max_scan_entries: the most entries the secret scan of one linked folder looks at before the
            folder is left out (``secret_scan.SCAN_MAX_ENTRIES``).
        watch: follow both trees with a file watch (``tree_watch``), so a sync copies what changed
            without walking the workspace and a command's changes are found without walking the copy;
            False walks both every time (as does a watch the kernel refuses).
    """

    def __init__(
        self,
        root: Path,
        *,
        temp_parent: Path | None = None,
        paths: PathPolicy | None = None,
        max_scan_entries: int = SCAN_MAX_ENTRIES,
        watch: bool = True,
    ) -> None:
        self._root = Path(os.path.realpath(root))
        self._paths = paths if paths is not None else PathPolicy(self._root)
        self._temp_parent = temp_parent
        self._temp: OwnedDir | None = None
        self._workdir: Path | None = None
        self._seen: dict[str, tuple[tree.Kind, tree.Key]] = {}
        self._written: tree.Written = {}
        self._stale: set[str] = set()
        self._lock = asyncio.Lock()
        self._linked_scan = SecretScan(self._root, self._paths.is_secret, max_entries=max_scan_entries)
        self._tree_scan = SecretScan(self._root, self._paths.is_secret, max_entries=max_scan_entries)
        self._linked: tuple[str, ...] = ()
        self._masked: tuple[str, ...] = ()
        self._left_out: tuple[str, ...] = ()
        self._use_watch = watch
        self._watch: TreeWatch | None = None
        self._reported = Changes()  # by the watch, not yet looked at
        self._walk_again = True
        self._opaque: set[str] = set()  # linked, split, masked and left-out entries: a change walks
        self._split_for: frozenset[str] = frozenset()  # pending files inside linked folders
        self._index: ReviewIndex | None = None
        self._index_stale = True
        self._syncs = 0
        self.trace = SyncTrace()

    @property
    def path(self) -> Path | None:
        """The copied workspace root, or None before the first ``sync`` and after ``close``."""
        return self._workdir

    @property
    def linked(self) -> tuple[Path, ...]:
        """The real folders and files the copy links to (dependency trees, ...), sorted; a split folder
        as a whole, not entry by entry (the sandbox mounts these read-only)."""
        return tuple(self._root / rel for rel in self._linked)

    @property
    def masked(self) -> tuple[Path, ...]:
        """The real paths of the secrets inside the ``linked`` folders, sorted (the sandbox masks them)."""
        return tuple(self._root / rel for rel in self._masked)

    @property
    def left_out(self) -> tuple[str, ...]:
        """The folders to link that were too large to scan for secrets at the last sync, so left out of
        the copy. Workspace-relative, sorted."""
        return self._left_out

    async def sync(self, overlay: UnsavedFiles) -> Path:
        """Create the copy if needed and bring it up to date (module docstring, step 2).

        The overlay is read on the event loop; the walk and the writes run in a worker thread.

        Returns:
            The copied workspace root, to use as the working directory.

        Raises:
            ToolError: the copy cannot be made or written (disk full, a directory where a file goes).
        """
        texts = overlay.unsaved_files()
        async with self._lock:
            return await self._in_thread(self._sync, texts)

    async def prepare(self, overlay: UnsavedFiles) -> tuple[Path, Snapshot]:
        """``sync``, then list the reviewable files, so that ``changes_since`` can tell what a command did."""
        texts = overlay.unsaved_files()
        async with self._lock:
            return await self._in_thread(self._prepare, texts)

    async def changes_since(self, snapshot: Snapshot) -> ShadowChanges:
        """The reviewable files changed (new or modified) and deleted since ``snapshot``: what the
        watch reported, or a walk of the copy compared with its index."""
        del snapshot  # the index is the state at the snapshot: only this call moves it on
        async with self._lock:
            workdir = self._workdir
            if workdir is None:
                return ShadowChanges()
            delta = await asyncio.to_thread(self._review, workdir)
        return ShadowChanges(delta.changed, delta.deleted)

    async def restore(self, rels: Sequence[str]) -> None:
        """Undo a command's change of ``rels`` at the next sync: copied again from the workspace, or
        rewritten from the overlay. A file in neither is left as the command made it."""
        async with self._lock:
            self._stale.update(rels)
            for rel in rels:
                if rel in self._written:
                    self._written[rel] = (b"", None)  # never matches: the text is written again

    def moved_since_sync(self, rel: str, unsaved: bytes | None) -> bool:
        """True when what the last sync copied for ``rel`` is no longer the workspace's version of it: the
        user saved or typed while a command ran, so the command's output rests on an older text.

        Args:
            unsaved: the pending edit's or open buffer's bytes of ``rel`` now (``Overlay.unsaved_file``),
                None when it has neither (then the disk file is compared, by ``lstat``).
        """
        if unsaved is not None:
            written = self._written.get(rel)
            return written is None or written[0] != hashlib.sha256(unsaved).digest()
        seen = self._seen.get(rel)
        now = tree.lstat_key(self._root / rel)
        if seen is None:
            return now is not None  # not in the workspace at the sync; there now
        return now is None or seen != ("file", now)

    def read_changed(self, rel: str, max_bytes: int) -> bytes | None:
        """The bytes of the copy's regular file ``rel`` when it has at most ``max_bytes``, else None.

        None too when ``rel`` leads through a link (a command may have planted one). Blocks.
        """
        if self._workdir is None:
            return None
        target = self._workdir / rel
        if Path(os.path.realpath(target)) != Path(os.path.realpath(self._workdir)) / rel:
            return None
        return tree.read_regular(target, max_bytes)

    def scratch_home(self) -> Path:
        """A private directory for ``HOME`` of unsandboxed commands; deleted by ``close``."""
        home = self._temp_dir() / "home"
        home.mkdir(mode=0o700, exist_ok=True)
        return home

    def secret_files(self) -> WorkspaceSecrets:
        """What workspace mode hides: every secret file and directory of the workspace, and the folders
        too large to scan for them. Blocks.

        The whole tree is walked (``walk_workspace(everything=True)``): dependency trees, caches,
        build outputs, gitignored folders and ``.git`` directories (but their objects) included.
        Listings are remembered between calls (``SecretScan``).
        """
        found = list(tree.walk_workspace(self._root, self._paths.is_secret, self._tree_scan, everything=True))
        self._tree_scan.forget_unused()
        hidden = sorted(entry.rel for entry in found if entry.kind in ("secret", "unchecked"))
        unchecked = sorted(entry.rel for entry in found if entry.kind == "unchecked")
        return WorkspaceSecrets(tuple(self._root / rel for rel in hidden), tuple(unchecked))

    def close(self) -> None:
        """Delete the copy: it is moved aside at once and deleted in a background thread, so closing a
        session never waits for thousands of files (``OwnedDir.remove_in_background``). Idempotent; a
        later ``sync`` makes a fresh one."""
        self._stop_watch()
        if self._temp is not None:
            self._temp.remove_in_background()
        self._temp = None
        self._workdir = None
        self._seen = {}
        self._written = {}
        self._stale = set()
        self._linked = self._masked = self._left_out = ()
        self._index = None
        self._index_stale = self._walk_again = True

    # -- internals (run in a worker thread, under the lock) --------------------------------------

    async def _in_thread(self, work: Callable[[Mapping[str, bytes]], T], texts: Mapping[str, bytes]) -> T:
        try:
            return await asyncio.to_thread(work, texts)
        except OSError as exc:
            raise ToolError(f"cannot prepare the workspace copy: {exc}") from None

    def _prepare(self, texts: Mapping[str, bytes]) -> tuple[Path, Snapshot]:
        workdir = self._sync(texts)
        self._review(workdir)  # the sync's own writes are not the command's
        return workdir, Snapshot(self._syncs)

    def _sync(self, texts: Mapping[str, bytes]) -> Path:
        workdir = self._ensure()
        on_disk = self._refresh(workdir, texts)
        for rel, text in texts.items():
            self._write_text(workdir, rel, text)
        for rel in self._written.keys() - texts.keys():
            if rel not in on_disk:
                tree.remove_inside(workdir, rel)
            del self._written[rel]
        return workdir

    def _refresh(self, workdir: Path, texts: Mapping[str, bytes]) -> Mapping[str, object]:
        """Bring the copy's workspace entries up to date: those the watch reported, or all by a walk.
        Returns the entries copied from the workspace (path to what they were)."""
        self._syncs += 1
        for rel in texts.keys() & self._seen.keys():
            del self._seen[rel]  # written from the overlay; copied again once no longer pending
        if self._drain() and not (self._walk_again or self._left_out):
            copied = self._refresh_changed(workdir, texts)
            if copied is not None:
                self.trace.walked_workspace, self.trace.copied = False, tuple(copied)
                return self._seen
        self._refresh_all(workdir, texts)
        return self._seen

    def _refresh_all(self, workdir: Path, texts: Mapping[str, bytes]) -> None:
        """Walk the workspace and copy the entries changed since the last sync, then watch it again."""
        now: dict[str, tuple[tree.Kind, tree.Key]] = {}
        todo: list[tree.Entry] = []
        splits: set[str] = set()
        linked: list[str] = []
        masked: list[str] = []
        left_out: list[str] = []
        dirs: dict[str, tree.Key] = {}
        walk = tree.walk_workspace(self._root, self._paths.is_secret, self._linked_scan)
        for entry in tree.split_around(self._root, walk, texts):
            inside_split = entry.rel.rpartition("/")[0] in splits
            if entry.kind == "split":
                splits.add(entry.rel)
            if entry.kind in ("linked", "split") and not inside_split:
                linked.append(entry.rel)
            elif entry.kind == "secret" and inside_split:
                masked.append(entry.rel)
            elif entry.kind == "unchecked":
                left_out.append(entry.rel)
            elif entry.kind == "dir":
                dirs[entry.rel] = entry.key
            if entry.kind in ("secret", "unchecked") or entry.rel in texts:
                continue  # a pending or open file is written from the overlay instead
            ident = (entry.kind, entry.key if entry.kind in ("file", "symlink") else (0, 0, 0, 0))
            now[entry.rel] = ident
            if self._seen.get(entry.rel) != ident or entry.rel in self._stale:
                todo.append(entry)
        for rel in sorted(self._seen.keys() - now.keys() - texts.keys(), reverse=True):
            tree.remove_inside(workdir, rel)
        for entry in todo:
            if self._workdir != workdir:  # closed meanwhile (the run was cancelled): stop copying
                raise OSError("the workspace copy was closed")
            try:
                self._materialize(workdir, entry)
            except OSError:
                del now[entry.rel]  # unreadable now: tried again at the next sync
        self._seen = now
        self._stale = set()
        self.trace.walked_workspace, self.trace.copied = True, tuple(entry.rel for entry in todo)
        self._opaque = {*linked, *splits, *masked, *left_out}
        self._split_for = self._pending_in_opaque(texts)
        self._index_stale = True
        self._watch_again(workdir, dirs)
        self._linked_scan.forget_unused()
        self._linked, self._masked, self._left_out = (
            tuple(sorted(linked)),
            tuple(sorted(masked)),
            tuple(sorted(left_out)),
        )

    def _refresh_changed(self, workdir: Path, texts: Mapping[str, bytes]) -> list[str] | None:
        """Copy the workspace entries the watch reported (and those to restore); the entries copied, or
        None when a change needs a walk (a directory made or removed, a ``.gitignore``, a linked folder)."""
        if self._pending_in_opaque(texts) != self._split_for:
            return None
        todo = self._reported.real | self._stale | (self._written.keys() - texts.keys())
        copied: list[str] = []
        for rel in sorted(todo):
            if not self._look_real(workdir, rel, texts, copied):
                return None
        self._reported.real = set()
        self._stale = set()
        return copied

    def _look_real(self, workdir: Path, rel: str, texts: Mapping[str, bytes], copied: list[str]) -> bool:
        """Bring the copy's ``rel`` up to date with the workspace; False when only a walk can."""
        if rel == ".":
            return True
        parent, _, name = rel.rpartition("/")
        if name in _RESHAPING or rel in self._opaque or any(p in self._opaque for p in tree.parents(rel)):
            return False
        if parent and self._seen.get(parent, _NOT_SEEN)[0] != "dir":
            return True  # inside a skipped or secret folder, or a new one (whose own change walks)
        try:
            st: os.stat_result | None = os.lstat(self._root / rel)
        except OSError:
            st = None
        known = self._seen.get(rel)
        is_dir = st is not None and stat.S_ISDIR(st.st_mode)
        if known is not None and known[0] == "dir":
            return is_dir  # its entries report their own changes
        if st is not None and is_dir:
            return known is None and self._skipped_dir(rel, parent or ".", name)
        kind: tree.Kind | None = None
        if rel in texts or st is None:
            kind = None
        elif stat.S_ISREG(st.st_mode):
            kind = tree.treatment(name, False, False, self._paths.is_secret(rel), st.st_size)
            if kind == "linked":
                return False
        elif stat.S_ISLNK(st.st_mode):
            secret = self._paths.is_secret(rel) or points_to_secret(
                self._root, self._root / rel, self._paths.is_secret
            )
            kind = "secret" if secret else "symlink"
        if st is None or kind not in ("file", "symlink"):
            if known is not None and rel not in texts:
                tree.remove_inside(workdir, rel)
                del self._seen[rel]
            return True
        ident: tuple[tree.Kind, tree.Key] = (kind, tree.key_of(st))
        if known != ident or rel in self._stale:
            try:
                self._materialize(workdir, tree.Entry(rel, kind, ident[1], stat.S_IMODE(st.st_mode)))
                self._seen[rel] = ident
                copied.append(rel)
            except OSError:
                self._seen.pop(rel, None)  # unreadable now: tried again at the next sync
        return True

    def _skipped_dir(self, rel: str, parent: str, name: str) -> bool:
        """Whether a directory new to the copy is one the walk skips (a cache, a build output, a secret)."""
        ignored = is_ignored(tree.ignore_chain(self._root, parent), rel, True)
        dependency = not ignored and linked_dependency(self._root / rel)
        kind = tree.treatment(name, True, ignored, self._paths.is_secret(rel), 0, dependency)
        return kind in (None, "secret")

    def _pending_in_opaque(self, texts: Mapping[str, bytes]) -> frozenset[str]:
        """The pending files inside linked folders (the walk splits those folders around them)."""
        return frozenset(rel for rel in texts if any(p in self._opaque for p in tree.parents(rel)))

    def _drain(self) -> bool:
        """Take what the watch reported up to now; False when there is no reliable watch (then walk)."""
        if self._watch is None:
            return False
        found = self._watch.collect()
        if found is None:
            self._stop_watch()
            return False
        self._reported.real |= found.real
        self._reported.copy |= found.copy
        self._reported.copy_removed |= found.copy_removed
        return True

    def _stop_watch(self) -> None:
        if self._watch is not None:
            self._watch.close()
        self._watch = None
        self._reported = Changes()
        self._walk_again = True

    def _watch_again(self, workdir: Path, dirs: Mapping[str, tree.Key]) -> None:
        """After a walk: watch the directories it entered, then check that nothing moved between the walk
        and the watch (an entry whose ``lstat`` changed is looked at again; a directory walks again)."""
        self._stop_watch()
        self._walk_again = False
        if not self._use_watch:
            return
        watched = [".", *dirs, *self._linked_scan.used()]
        self._watch = TreeWatch.start(self._root, watched, workdir, (), self._marker_dir())
        if self._watch is None:
            self._walk_again = True
            return
        for rel, (kind, key) in self._seen.items():
            if kind in ("file", "symlink") and tree.lstat_key(self._root / rel) != key:
                self._reported.real.add(rel)
        if self._linked_scan.moved() or any(
            tree.lstat_key(self._root / rel) != key for rel, key in dirs.items()
        ):
            self._walk_again = True

    def _review(self, workdir: Path) -> Delta:
        """Bring the index of the copy's reviewable files up to date: what changed since the last call."""
        index = self._index if self._index is not None else ReviewIndex(workdir)
        self._index = index
        delta: Delta | None = None
        if self._drain() and not self._index_stale:
            delta = index.update(self._reported.copy, self._reported.copy_removed)
        self._reported.copy, self._reported.copy_removed = set(), set()
        self.trace.walked_copy = delta is None
        if delta is None:
            delta = index.rebuild()
            self._index_stale = False
        if delta.new_dirs and self._watch is not None and not self._watch.add((), delta.new_dirs):
            self._stop_watch()
        return delta

    def _marker_dir(self) -> Path:
        """The watch's private marker directory, beside the copy (never the copy itself)."""
        name = ".watch" if self._root.name != ".watch" else ".watch-marker"
        return self._temp_dir() / name

    def _materialize(self, workdir: Path, entry: tree.Entry) -> None:
        target, source = workdir / entry.rel, self._root / entry.rel
        if entry.kind in ("dir", "split"):
            tree.make_dir(workdir, target)
        elif entry.kind == "file":
            tree.copy_file(workdir, target, source, entry.mode)
        elif entry.kind == "symlink":
            tree.make_symlink(workdir, target, os.readlink(source))
        elif entry.kind == "linked":
            tree.make_symlink(workdir, target, str(source))

    def _write_text(self, workdir: Path, rel: str, data: bytes) -> None:
        tree.write_unsaved(self._root, workdir, rel, data, self._written)

    def _temp_dir(self) -> Path:
        if self._temp is None:  # leftovers of dead sessions are removed first (owned_temp_dirs)
            self._temp = make_owned_dir("agent-ls-shadow-", self._temp_parent)
        return self._temp.path

    def _ensure(self) -> Path:
        if self._workdir is None:
            workdir = self._temp_dir() / (self._root.name or "workspace")
            workdir.mkdir(exist_ok=True)
            self._workdir = workdir
        return self._workdir


_NOT_SEEN: tuple[tree.Kind, tree.Key] = ("unchecked", (0, 0, 0, 0))
