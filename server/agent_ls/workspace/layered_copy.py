"""The session's private view of the workspace as an overlay, not a copy: ``LayeredCopy``.

The same contract as the shadow copy (``shadow.py``): commands see the workspace with the agent's
pending edits and the editor's unsaved text, and the user's files stay untouched. Instead of a copy,
each command runs in an overlay view (``layers``): the real tree as the read-only lower layer, the
session's upper folder on top. So the first command of a session costs what the tenth does, whatever
the repository's size. Its life:

1. ``prepare`` (before each command), in a worker thread:
   a. every pending edit and open buffer is written into the upper folder, byte for byte (in its
      file's encoding, line endings kept; ``unsaved.UnsavedFiles``), unless it already holds exactly
      that text; a file written earlier that is no longer pending or open is removed from it, so the
      workspace's version shows through again;
   b. the workspace's masks come from its ``SecretIndex`` (kept current by a file watch: no walk):
      secrets, ``.git``, special files and hard-linked files, each masked in the view by the sandbox;
   c. the upper folder's reviewable entries are noted (a walk of the upper folder only: what commands
      and pending edits put there, minus gitignored folders, caches and dependency trees);
2. the command runs in the view (``ShellRunner``, ``masked_inside`` and ``layers`` to ``execute``),
   which the sandbox shows at the workspace's own path: absolute paths into the workspace (a venv
   script's ``#!`` line) reach the view, and writes through them land in the upper folder;
3. ``changes_since`` compares the upper folder with what ``prepare`` noted: files new or changed in it
   are changed; whiteouts, opaque folders and files gone are deleted (a reviewable workspace file that
   the view no longer shows); ``restore`` undoes a change by removing it from the upper folder (and
   copying the workspace's file into an opaque folder), so the view shows the workspace again.
   Changes to gitignored folders, caches and dependency trees stay, as in the copy (a build output,
   an installed package);
4. ``close`` moves the session folder aside and deletes it in a background thread.

The upper folder is only changed between commands, never while a view is mounted (overlayfs leaves
that undefined); the workspace can change any time (the editor saves), and the view shows it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import stat
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent_ls.core.errors import ToolError
from agent_ls.workspace import shadow_tree as tree
from agent_ls.workspace.layers import MountLayers
from agent_ls.workspace.listing import IgnoreFile, is_ignored, scan_dir
from agent_ls.workspace.owned_temp_dirs import OwnedDir, make_owned_dir
from agent_ls.workspace.secret_index import Masks, SecretIndex
from agent_ls.workspace.shadow_state import ShadowChanges, Snapshot, SyncTrace
from agent_ls.workspace.unsaved import UnsavedFiles

_OPAQUE = "user.overlay.opaque"


@dataclass
class _Upper:
    """The upper folder's reviewable entries at one moment."""

    files: dict[str, tree.Key] = field(default_factory=dict)
    whiteouts: set[str] = field(default_factory=set)
    opaque: set[str] = field(default_factory=set)
    others: dict[str, tree.Key] = field(default_factory=dict)  # symlinks and other non-regular entries


class LayeredCopy:
    """An overlay view of one workspace for a session's commands (module docstring).

    Args:
        root: the workspace root (its real path is used).
        index: the workspace's ``SecretIndex`` (shared by its sessions).
        owns_index: ``close`` closes ``index`` too (an index made for this session alone).
        temp_parent: where to create the session folder; the system default when None.
    """

    def __init__(
        self, root: Path, index: SecretIndex, *, owns_index: bool = False, temp_parent: Path | None = None
    ) -> None:
        self._root = Path(os.path.realpath(root))
        self._index = index
        self._owns_index = owns_index
        self._temp_parent = temp_parent
        self._temp: OwnedDir | None = None
        self._layers: MountLayers | None = None
        self._written: tree.Written = {}
        self._before = _Upper()
        self._masks = Masks()
        self._synced_ns = 0
        self._syncs = 0
        self._lock = asyncio.Lock()
        self.trace = SyncTrace()

    @property
    def path(self) -> Path | None:
        """The view's path (where commands run), or None before the first ``prepare`` and after ``close``."""
        return self._layers.merged if self._layers is not None else None

    @property
    def index(self) -> SecretIndex:
        """The workspace's secret index the masks come from."""
        return self._index

    @property
    def layers(self) -> MountLayers | None:
        """The folders of the view, to mount for each command; None before the first ``prepare``."""
        return self._layers

    @property
    def masked_inside(self) -> tuple[tuple[str, bool], ...]:
        """The view's entries to mask at the last ``prepare`` (workspace-relative path, is a directory),
        those the view shows (not deleted by a command)."""
        if self._layers is None:
            return ()
        return tuple((rel, is_dir) for rel, _, is_dir in self._masks.entries if self._shown(rel))

    linked: tuple[Path, ...] = ()
    masked: tuple[Path, ...] = ()
    left_out: tuple[str, ...] = ()

    def masks(self) -> Masks:
        """The workspace's masks now (``SecretIndex.masks``). Blocks."""
        return self._index.masks()

    async def prepare(self, overlay: UnsavedFiles) -> tuple[Path, Snapshot]:
        """Write the pending texts into the upper folder, take the masks, note the upper folder."""
        texts = overlay.unsaved_files()
        async with self._lock:
            try:
                return await asyncio.to_thread(self._prepare, texts)
            except OSError as exc:
                raise ToolError(f"cannot prepare the workspace view: {exc}") from None

    async def changes_since(self, snapshot: Snapshot) -> ShadowChanges:
        """The reviewable files changed (new or modified) and deleted since ``prepare``."""
        del snapshot  # the upper folder as ``prepare`` noted it
        async with self._lock:
            if self._layers is None:
                return ShadowChanges()
            return await asyncio.to_thread(self._changes)

    async def restore(self, rels: Sequence[str]) -> None:
        """Undo a command's change of ``rels``: the view shows the workspace's file (or, at the next
        ``prepare``, the pending text) again."""
        async with self._lock:
            await asyncio.to_thread(self._restore, list(rels))

    def moved_since_sync(self, rel: str, unsaved: bytes | None) -> bool:
        """True when the workspace's version of ``rel`` changed since ``prepare`` (the user saved or typed
        while the command ran), so a command's output for it rests on an older text. Blocks."""
        if unsaved is not None:
            written = self._written.get(rel)
            return written is None or written[0] != hashlib.sha256(unsaved).digest()
        changed = self._index.changed_since(self._masks.generation)
        if "." not in changed:
            return rel in changed
        try:
            return os.lstat(self._root / rel).st_ctime_ns >= self._synced_ns
        except OSError:
            return False

    def read_changed(self, rel: str, max_bytes: int) -> bytes | None:
        """The bytes of the upper folder's regular file ``rel`` when it has at most ``max_bytes``, else
        None (None too when ``rel`` leads through a link a command planted). Blocks."""
        if self._layers is None:
            return None
        upper = self._layers.upper
        target = upper / rel
        if Path(os.path.realpath(target)) != Path(os.path.realpath(upper)) / rel:
            return None
        return tree.read_regular(target, max_bytes)

    def scratch_home(self) -> Path:
        """A private directory for ``HOME`` (views run sandboxed, so this is rarely used)."""
        home = self._session_dir() / "home"
        home.mkdir(mode=0o700, exist_ok=True)
        return home

    def close(self) -> None:
        """Delete the session folder in a background thread. Idempotent; a later ``prepare`` makes one."""
        if self._temp is not None:
            self._temp.remove_in_background()
        if self._owns_index:
            self._index.close()
        self._temp = None
        self._layers = None
        self._written = {}
        self._before = _Upper()

    # -- internals (in a worker thread, under the lock) ------------------------------------------

    def _prepare(self, texts: Mapping[str, bytes]) -> tuple[Path, Snapshot]:
        layers = self._ensure()
        upper = layers.upper
        self._syncs += 1
        for rel, data in texts.items():
            self._write_text(upper, rel, data)
        for rel in self._written.keys() - texts.keys():
            tree.remove_inside(upper, rel)
            self._uncover(rel)
            del self._written[rel]
        self._masks = self._index.masks()
        self._synced_ns = time.time_ns()
        self._before = self._walk_upper()
        self.trace.walked_workspace, self.trace.copied, self.trace.walked_copy = False, (), False
        return layers.merged, Snapshot(self._syncs)

    def _changes(self) -> ShadowChanges:
        before, after = self._before, self._walk_upper()
        self._before = after
        changed = sorted(rel for rel, key in after.files.items() if before.files.get(rel) != key)
        hidden = {rel for rel in before.files.keys() - after.files.keys()}
        for rel in after.whiteouts - before.whiteouts:
            hidden.update(self._reviewable_below(rel))
        for rel in after.opaque - before.opaque:
            hidden.update(self._reviewable_below(rel))
        for rel, key in after.others.items():
            if before.others.get(rel) != key:
                hidden.update(self._reviewable_below(rel))
        deleted = sorted(rel for rel in hidden if rel not in after.files and not self._shows_lower(rel))
        return ShadowChanges(tuple(changed), tuple(deleted))

    def _restore(self, rels: list[str]) -> None:
        if self._layers is None:
            return
        for rel in rels:
            tree.remove_inside(self._layers.upper, rel)
            self._written.pop(rel, None)
            self._uncover(rel)

    def _uncover(self, rel: str) -> None:
        """Make the view show the workspace's ``rel`` again: remove a whiteout or a non-directory on its
        way in the upper folder, or copy the file into an opaque folder that hides it."""
        assert self._layers is not None
        upper = self._layers.upper
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            ancestor = "/".join(parts[:depth])
            try:
                st = os.lstat(upper / ancestor)
            except OSError:
                return  # nothing above hides it
            if not stat.S_ISDIR(st.st_mode):
                tree.remove_inside(upper, ancestor)  # a whiteout or a file over a workspace folder
                return
            if _is_opaque(upper / ancestor):
                break
        else:
            return
        source = self._root / rel
        with contextlib.suppress(OSError):
            st = os.lstat(source)
            if stat.S_ISREG(st.st_mode):
                tree.copy_file(upper, upper / rel, source, stat.S_IMODE(st.st_mode))

    def _shows_lower(self, rel: str) -> bool:
        """Whether the view shows the workspace's ``rel`` (nothing in the upper folder hides it)."""
        assert self._layers is not None
        upper = self._layers.upper
        parts = rel.split("/")
        for depth in range(1, len(parts) + 1):
            try:
                st = os.lstat(upper / "/".join(parts[:depth]))
            except OSError:
                return os.path.lexists(self._root / rel)
            if depth == len(parts) or not stat.S_ISDIR(st.st_mode):
                return False
            if _is_opaque(upper / "/".join(parts[:depth])):
                return False
        return False

    def _shown(self, rel: str) -> bool:
        """Whether a mask's entry is in the view: not deleted or replaced by a command (bwrap would
        create its mount point in the upper folder)."""
        assert self._layers is not None
        upper = self._layers.upper
        parts = rel.split("/")
        for depth in range(1, len(parts) + 1):
            try:
                st = os.lstat(upper / "/".join(parts[:depth]))
            except OSError:
                return os.path.lexists(self._root / rel)
            if _is_whiteout(st) or (depth < len(parts) and not stat.S_ISDIR(st.st_mode)):
                return False
            if depth < len(parts) and _is_opaque(upper / "/".join(parts[:depth])):
                return os.path.lexists(upper / rel)
        return True

    def _reviewable_below(self, rel: str) -> list[str]:
        """The workspace's reviewable files at or under ``rel`` (a file, or a folder hidden whole)."""
        try:
            st = os.lstat(self._root / rel)
        except OSError:
            return []
        parent = rel.rpartition("/")[0] or "."
        chain = self._chain(parent)
        name = rel.rpartition("/")[2]
        if stat.S_ISREG(st.st_mode):
            return [] if is_ignored(chain, rel, False) else [rel]
        if not stat.S_ISDIR(st.st_mode) or tree.skipped_for_review(name) or is_ignored(chain, rel, True):
            return []
        return list(tree.reviewable_tree(self._root, rel, chain)[0])

    def _walk_upper(self) -> _Upper:
        assert self._layers is not None
        found = _Upper()
        self._walk_dir(self._layers.upper, ".", self._chain("."), found)
        return found

    def _walk_dir(self, upper: Path, rel_dir: str, ignores: list[IgnoreFile], found: _Upper) -> None:
        for rel, entry in scan_dir(upper, rel_dir):
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if tree.skipped_for_review(entry.name) or is_ignored(ignores, rel, True):
                    continue
                if _is_opaque(upper / rel):
                    found.opaque.add(rel)
                nested = self._ignore_file(rel)
                self._walk_dir(upper, rel, [*ignores, nested] if nested else ignores, found)
            elif is_ignored(ignores, rel, False):
                continue
            elif stat.S_ISREG(st.st_mode):
                found.files[rel] = tree.key_of(st)
            elif _is_whiteout(st):
                found.whiteouts.add(rel)
            else:
                found.others[rel] = tree.key_of(st)

    def _chain(self, rel_dir: str) -> list[IgnoreFile]:
        """The ``.gitignore`` files of the view that apply to ``rel_dir``'s entries, root first."""
        bases = ["."]
        if rel_dir != ".":
            parts = rel_dir.split("/")
            bases += ["/".join(parts[: i + 1]) for i in range(len(parts))]
        return [found for base in bases if (found := self._ignore_file(base)) is not None]

    def _ignore_file(self, base: str) -> IgnoreFile | None:
        """The view's ``base/.gitignore``: the upper folder's when it holds one, else the workspace's."""
        assert self._layers is not None
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.lstat(self._layers.upper / base / ".gitignore").st_mode):
                return IgnoreFile.load(self._layers.upper, base)
        return IgnoreFile.load(self._root, base)

    def _write_text(self, upper: Path, rel: str, data: bytes) -> None:
        tree.write_unsaved(self._root, upper, rel, data, self._written)

    def _session_dir(self) -> Path:
        if self._temp is None:  # leftovers of dead sessions are removed first (owned_temp_dirs)
            self._temp = make_owned_dir("agent-ls-shadow-", self._temp_parent)
        return self._temp.path

    def _ensure(self) -> MountLayers:
        if self._layers is None:
            layers = MountLayers.under(self._root, self._session_dir(), self._root.name or "workspace")
            if not layers.usable():
                raise OSError(f"overlayfs cannot name the session folder {layers.upper.parent}")
            layers.make()
            self._layers = layers
        return self._layers


def _is_whiteout(st: os.stat_result) -> bool:
    """An overlayfs whiteout: a character device 0/0 in the upper folder (a deleted entry)."""
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == 0


def _is_opaque(path: Path) -> bool:
    """Whether an upper folder hides the workspace's folder of that name whole (``rm -rf d; mkdir d``)."""
    try:
        return os.getxattr(path, _OPAQUE, follow_symlinks=False) == b"y"
    except OSError:
        return False
